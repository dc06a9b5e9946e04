import { describe, expect, it } from 'vitest';
import { KeyError_, ValueError_ } from '../../../src/envs/py/errors.js';
import { parsePyJson } from '../../../src/envs/py/json.js';
import type { PyDict, PyValue } from '../../../src/envs/py/values.js';
import {
  anyDict,
  dict,
  field,
  float,
  int,
  list,
  literal,
  type Model,
  model,
  optional,
  str,
  union,
} from '../../../src/envs/tau2/pydantic.js';
import { NO_TOOL_DOCS } from '../../../src/envs/tau2/tool-docs.js';
import { Toolkit, ToolkitEnvironment, type ToolSpec, toJsonStr } from '../../../src/envs/tau2/toolkit.js';
import type { ToolDocs } from '../../../src/envs/tau2/types.js';

const args = (json: string) => parsePyJson(json) as PyDict;

interface Card {
  source: string;
  id: string;
  balance: number;
}
const Card = model<Card>('Card', [
  field('source', literal('card')),
  field('id', str),
  field('balance', float),
]);
interface Cash {
  source: string;
}
const Cash = model<Cash>('Cash', [field('source', literal('cash'))]);
interface Leg {
  flight_number: string;
  date: string;
}
const Leg = model<Leg>('Leg', [field('flight_number', str), field('date', str)]);
interface Db {
  wallets: Map<string, Model<Card> | Model<Cash>>;
  counts: Map<string, bigint>;
  note: string | null;
}
const DbModel = model<Db>(
  'ToyDB',
  [
    field('wallets', dict(str, union<Model<Card> | Model<Cash>>(Card, Cash))),
    field('counts', dict(str, int)),
    field('note', optional(str), null),
  ],
  true,
);

type Kit = Toolkit<Model<Db>>;
const tools: ToolSpec<Kit>[] = [
  {
    name: 'get_wallet',
    kind: 'read',
    params: [field('wallet_id', str)],
    run: (kit, a) => {
      const w = kit.db.wallets.get(a.get('wallet_id') as string);
      if (!w) throw KeyError_(`'${a.get('wallet_id')}'`);
      return w;
    },
  },
  {
    name: 'echo',
    kind: 'generic',
    params: [field('a', str), field('b', list(str)), field('c', int), field('d', optional(str), null)],
    run: (_kit, a) => a.get('a')!,
  },
  {
    name: 'book',
    kind: 'write',
    params: [field('legs', list(union<Model<Leg> | PyDict>(Leg, anyDict))), field('count', int, 1n)],
    run: (kit, a) => {
      const legs = a.get('legs') as PyValue[];
      const parsed = legs.map((l) => Leg.parse(l));
      kit.db.counts.set('booked', (kit.db.counts.get('booked') ?? 0n) + BigInt(parsed.length));
      return parsed;
    },
  },
  {
    name: 'fail',
    kind: 'read',
    params: [],
    run: () => {
      throw ValueError_('Order not found');
    },
  },
];

function makeKit(docs: ToolDocs = NO_TOOL_DOCS): Kit {
  const db = DbModel.parse(
    args(
      '{"wallets": {"w1": {"source": "card", "id": "w1", "balance": 10, "extra": 1}}, "counts": {"x": 2.0}}',
    ),
  );
  return new Toolkit({ className: 'ToyTools', dbModel: DbModel, db, tools, docs });
}
const env = (kit = makeKit()) => new ToolkitEnvironment({ domain: 'retail', policy: 'p', tools: kit });
const call = (name: string, json: string, requestor: 'assistant' | 'user' = 'assistant') =>
  ({ id: '1', name, arguments: args(json), requestor }) as const;

describe('tau2 toolkit: calls as the reference makes them', () => {
  it('binds keyword arguments with CPython 3.10+ errors', () => {
    const e = env();
    expect(e.respond(call('echo', '{"a": "x", "b": [], "c": 1, "zz": 2}'))).toEqual({
      content: "Error: ToyTools.echo() got an unexpected keyword argument 'zz'",
      error: true,
    });
    expect(e.respond(call('echo', '{"b": []}')).content).toBe(
      "Error: ToyTools.echo() missing 2 required positional arguments: 'a' and 'c'",
    );
    expect(e.respond(call('echo', '{}')).content).toBe(
      "Error: ToyTools.echo() missing 3 required positional arguments: 'a', 'b', and 'c'",
    );
    expect(e.respond(call('echo', '{"a": "x", "b": []}')).content).toBe(
      "Error: ToyTools.echo() missing 1 required positional argument: 'c'",
    );
    expect(e.respond(call('echo', '{"a": "x", "b": [], "c": 1}'))).toEqual({ content: 'x', error: false });
    expect(e.respond(call('nope', '{}')).content).toBe("Error: Tool 'nope' not found.");
    expect(e.respond(call('echo', '{"self": 1}')).content).toBe(
      "Error: Environment.make_tool_call() got multiple values for argument 'self'",
    );
    expect(e.respond(call('echo', '{"requestor": 1}')).content).toBe(
      "Error: tau2.environment.environment.Environment.make_tool_call() got multiple values for keyword argument 'requestor'",
    );
    expect(e.respond(call('echo', '{}', 'user')).content).toBe('Error: User tools not available');
  });

  it('writes results with to_json_str and errors with str(e)', () => {
    expect(toJsonStr('plain "text"')).toBe('plain "text"');
    expect(toJsonStr(5n)).toBe('"5"');
    expect(toJsonStr(2.0)).toBe('"2.0"');
    expect(toJsonStr(true)).toBe('"True"');
    expect(toJsonStr(null)).toBe('null');
    expect(toJsonStr(args('[1, "a", null, {"k": 2.5, "é": [false]}]'))).toBe(
      '["1", "a", null, {"k": "2.5", "\\u00e9": ["False"]}]',
    );
    const e = env();
    // a model is dumped as it is (no str() of its numbers); the extra key is gone, the int became a float
    expect(e.respond(call('get_wallet', '{"wallet_id": "w1"}'))).toEqual({
      content: '{"source": "card", "id": "w1", "balance": 10.0}',
      error: false,
    });
    expect(e.respond(call('get_wallet', '{"wallet_id": "w9"}')).content).toBe("Error: 'w9'");
    expect(e.respond(call('fail', '{}'))).toEqual({ content: 'Error: Order not found', error: true });
    expect(e.respond(call('book', '{"legs": [{"flight_number": "A1", "date": "d"}]}')).content).toBe(
      '[{"flight_number": "A1", "date": "d"}]',
    );
    expect(e.respond(call('book', '{"legs": [{"flight_number": 7}]}')).content).toBe(
      [
        'Error: 2 validation errors for Leg',
        'flight_number',
        '  Input should be a valid string [type=string_type, input_value=7, input_type=int]',
        '    For further information visit https://errors.pydantic.dev/2.11/v/string_type',
        'date',
        "  Field required [type=missing, input_value={'flight_number': 7}, input_type=dict]",
        '    For further information visit https://errors.pydantic.dev/2.11/v/missing',
      ].join('\n'),
    );
  });

  it('keeps the database as pydantic holds it and updates it as addict merges', () => {
    const e = env();
    expect(e.dbText('assistant')).toBe(
      '{"counts": {"x": 2}, "note": null, "wallets": {"w1": {"balance": 10.0, "id": "w1", "source": "card"}}}',
    );
    expect(e.dbText('user')).toBeNull();
    e.updateDb(
      'assistant',
      args('{"wallets": {"w1": {"balance": "3.5"}, "w2": {"source": "cash"}}, "note": "n"}'),
    );
    expect(e.dbText('assistant')).toBe(
      '{"counts": {"x": 2}, "note": "n", "wallets": {"w1": {"balance": 3.5, "id": "w1", "source": "card"}, "w2": {"source": "cash"}}}',
    );
    expect(() => e.updateDb('assistant', args('{"bogus": 1}'))).toThrow(
      /1 validation error for ToyDB\nbogus\n {2}Extra inputs are not permitted \[type=extra_forbidden, input_value=1, input_type=int\]/,
    );
    // pydantic's lax mode: ints from "1_000" and "2.0", never from 2.5; every failing field reported
    e.updateDb('assistant', args('{"counts": {"y": "1_000", "z": "2.0"}}'));
    expect(e.dbText('assistant')).toContain('"counts": {"x": 2, "y": 1000, "z": 2}');
    expect(() =>
      e.updateDb('assistant', args('{"counts": {"q": 2.5}, "wallets": {"w3": {"source": "card"}}}')),
    ).toThrow(
      [
        '4 validation errors for ToyDB',
        'wallets.w3.Card.id',
        "  Field required [type=missing, input_value={'source': 'card'}, input_type=dict]",
        '    For further information visit https://errors.pydantic.dev/2.11/v/missing',
        'wallets.w3.Card.balance',
        "  Field required [type=missing, input_value={'source': 'card'}, input_type=dict]",
        '    For further information visit https://errors.pydantic.dev/2.11/v/missing',
        'wallets.w3.Cash.source',
        "  Input should be 'cash' [type=literal_error, input_value='card', input_type=str]",
        '    For further information visit https://errors.pydantic.dev/2.11/v/literal_error',
        'counts.q',
        '  Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=2.5, input_type=float]',
      ].join('\n'),
    );
    expect(
      e.runFunction({
        env_type: 'assistant',
        func_name: 'echo',
        arguments: args('{"a": "r", "b": [], "c": 0}'),
      }),
    ).toBe('r');
    expect(() => e.runFunction({ env_type: 'assistant', func_name: 'zap', arguments: new Map() })).toThrow(
      "'ToyTools' object has no attribute 'zap'",
    );
    expect(e.toolKind('assistant', 'book')).toBe('write');
    expect(e.toolKind('user', 'book')).toBeUndefined();
  });

  it('gives the OpenAI schema pydantic writes, described by the docs or by the name', () => {
    const bare = env().agentTools();
    expect(bare.map((t) => t.function.name)).toEqual(['get_wallet', 'echo', 'book', 'fail']);
    expect(bare[3]).toEqual({
      type: 'function',
      function: {
        name: 'fail',
        description: 'fail',
        parameters: { properties: {}, title: 'parameters', type: 'object' },
      },
    });
    const docs: ToolDocs = {
      available: true,
      tool: (owner, name) =>
        owner === 'ToyTools' && name === 'echo'
          ? { short: 'Echo.', long: 'More.', params: new Map([['a', 'The a.']]) }
          : owner === 'ToyTools' && name === 'book'
            ? { short: 'Book.', long: '', params: new Map() }
            : undefined,
      field: (m, f) => (m === 'Leg' && f === 'date' ? 'The date.' : undefined),
      model: () => undefined,
    };
    const tools = env(makeKit(docs)).agentTools();
    expect(JSON.stringify(tools[1])).toBe(
      JSON.stringify({
        type: 'function',
        function: {
          name: 'echo',
          description: 'Echo.\n\nMore.',
          parameters: {
            properties: {
              a: { description: 'The a.', title: 'A', type: 'string' },
              b: { items: { type: 'string' }, title: 'B', type: 'array' },
              c: { title: 'C', type: 'integer' },
              d: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, title: 'D' },
            },
            required: ['a', 'b', 'c'],
            title: 'parameters',
            type: 'object',
          },
        },
      }),
    );
    expect(JSON.stringify(tools[2]!.function)).toBe(
      JSON.stringify({
        name: 'book',
        description: 'Book.',
        parameters: {
          $defs: {
            Leg: {
              properties: {
                flight_number: { title: 'Flight Number', type: 'string' },
                date: { description: 'The date.', title: 'Date', type: 'string' },
              },
              required: ['flight_number', 'date'],
              title: 'Leg',
              type: 'object',
            },
          },
          properties: {
            legs: {
              items: { anyOf: [{ $ref: '#/$defs/Leg' }, { additionalProperties: true, type: 'object' }] },
              title: 'Legs',
              type: 'array',
            },
            count: { default: 1, title: 'Count', type: 'integer' },
          },
          required: ['legs'],
          title: 'parameters',
          type: 'object',
        },
      }),
    );
  });
});
