import { describe, expect, it } from 'vitest';
import {
  type FamilyMessage,
  RenderRefused,
  type ToolSpec,
  textOf,
} from '../../../src/render/families/family.js';
import { chatFamily } from '../../../src/render/families/index.js';
import '../../../src/render/families/all.js';
import { describeGoldens } from './check.js';
import { describeGoldenPieces } from './golden-pieces.js';

for (const name of ['nemotron3', 'nemotron3_disable_thinking']) {
  describeGoldens(name);
  describeGoldenPieces(name);
}

const on = chatFamily('nemotron3');
const off = chatFamily('nemotron3_disable_thinking');

const CALLS: FamilyMessage[] = [
  { role: 'user', content: 'Book it' },
  {
    role: 'assistant',
    content: 'Booking.',
    toolCalls: [
      {
        id: 'c0',
        name: 'book_flight',
        arguments:
          '{"access_token": "abc", "travel_cost": 30.0, "amount": 1e21, "passengers": ["Zoë", "東京"], "options": {"seat": "aisle"}}',
      },
      { name: 'logout', arguments: '{}' },
    ],
  },
];

describe('nemotron3 tool declaration', () => {
  it("writes every schema key as the template does (text from the cookbook's _format_nemotron3_tool_declaration)", () => {
    const tool = {
      name: 'weird',
      description: '  spaced é  ',
      parameters: {
        type: 'object',
        additionalProperties: false,
        properties: {
          x: {
            type: ['string', 'null'],
            description: ' d ',
            minimum: 1.5,
            default: null,
            title: 'X é',
            items: { a: 'é' },
          },
        },
      },
      strict: true,
    } as unknown as ToolSpec;
    const [system] = on.toolDeclaration([tool], 'Sys');
    expect(system!.role).toBe('system');
    expect(
      system!.content.startsWith(
        'Sys\n\n# Tools\n\nYou have access to the following functions:\n\n<tools>\n',
      ),
    ).toBe(true);
    expect(system!.content).toContain(
      '<function>\n<name>weird</name>\n<description>spaced é</description>\n<parameters>\n<parameter>\n<name>x</name>\n<type>[\'string\', \'null\']</type>\n<description>d</description>\n<minimum>1.5</minimum>\n<default>None</default>\n<title>X é</title>\n<items>{"a": "\\u00e9"}</items>\n</parameter>\n<additionalProperties>False</additionalProperties>\n</parameters>\n<strict>True</strict>\n</function>\n</tools>\n\nIf you choose to call a function ONLY reply',
    );
    expect(system!.content.endsWith('</IMPORTANT>')).toBe(true);
    expect(on.toolDeclaration([], 'Sys')).toEqual([{ role: 'system', content: 'Sys' }]);
  });
});

describe('nemotron3 rendering', () => {
  it('writes call parameters as the template does: JSON for objects and lists, str() for the rest', () => {
    const body = on.supervised(CALLS).at(-1)!.text;
    expect(body).toBe(
      'Booking.\n<tool_call>\n<function=book_flight>\n<parameter=access_token>\nabc\n</parameter>\n' +
        '<parameter=travel_cost>\n30.0\n</parameter>\n<parameter=amount>\n1e+21\n</parameter>\n' +
        '<parameter=passengers>\n["Zo\\u00eb", "\\u6771\\u4eac"]\n</parameter>\n<parameter=options>\n{"seat": "aisle"}\n</parameter>\n' +
        '</function>\n</tool_call>\n<tool_call>\n<function=logout>\n</function>\n</tool_call>\n<|im_end|>',
    );
    expect(() =>
      on.supervised([
        CALLS[0]!,
        { role: 'assistant', content: '', toolCalls: [{ name: 'f', arguments: '[1]' }] },
      ]),
    ).toThrow(RenderRefused);
  });

  it('always starts with a system turn, and puts consecutive tool results in one user turn', () => {
    const text = textOf(
      on.generationPrompt([
        ...CALLS,
        { role: 'tool', content: ' r1 ', toolCallId: 'c0' },
        { role: 'tool', content: 'r2', toolCallId: 'c1' },
      ]),
    );
    expect(text.startsWith('<|im_start|>system\n<|im_end|>\n<|im_start|>user\nBook it<|im_end|>')).toBe(true);
    expect(
      text.endsWith(
        '<|im_start|>user\n<tool_response>\nr1\n</tool_response>\n<tool_response>\nr2\n</tool_response>\n<|im_end|>\n<|im_start|>assistant\n<think>\n',
      ),
    ).toBe(true);
  });

  it('drops reasoning before the last user message, keeps it after, and writes <think></think> where there is none', () => {
    const text = textOf(
      on.generationPrompt([
        { role: 'user', content: 'q1' },
        { role: 'assistant', content: 'a1', thinking: 'old' },
        { role: 'user', content: 'q2' },
        {
          role: 'assistant',
          content: '',
          thinking: 'step',
          toolCalls: [{ name: 'logout', arguments: '{}' }],
        },
        { role: 'tool', content: 'ok' },
        { role: 'assistant', content: 'no reasoning here' },
        { role: 'tool', content: 'ok' },
      ]),
    );
    expect(text).toContain('<|im_start|>assistant\n<think></think>\na1<|im_end|>');
    expect(text).toContain('<|im_start|>assistant\n<think>\nstep\n</think>\n<tool_call>\n<function=logout>');
    expect(text).toContain('<|im_start|>assistant\n<think></think>no reasoning here<|im_end|>');
    expect(text).not.toContain('old');
  });

  it('disable_thinking ends the prompt with a closed think block and refuses to train on reasoning', () => {
    expect(off.generationPrompt(CALLS.slice(0, 1)).at(-1)!.text).toBe(
      '\n<|im_start|>assistant\n<think></think>',
    );
    const reasoning: FamilyMessage[] = [CALLS[0]!, { role: 'assistant', content: 'x', thinking: 'why' }];
    expect(() => off.supervised(reasoning)).toThrow(RenderRefused);
    expect(() => on.supervised(reasoning)).not.toThrow();
    expect(textOf(off.supervised(CALLS)).startsWith(textOf(off.generationPrompt(CALLS.slice(0, 1))))).toBe(
      true,
    );
  });
});

describe('nemotron3 parsing', () => {
  it.each([
    ['nemotron3', on],
    ['nemotron3_disable_thinking', off],
  ] as const)('%s reads its own rendered calls back, numbers as written', (_, family) => {
    const parsed = family.parse(family.supervised(CALLS).at(-1)!.text);
    expect(parsed.ok).toBe(true);
    expect(parsed.unparsed).toEqual([]);
    expect(parsed.content.trim()).toBe('Booking.');
    expect(parsed.toolCalls.map((c) => c.name)).toEqual(['book_flight', 'logout']);
    expect(parsed.toolCalls.map((c) => JSON.parse(c.arguments))).toEqual(
      CALLS[1]!.toolCalls!.map((c) => JSON.parse(c.arguments)),
    );
    expect(parsed.toolCalls[0]!.arguments).toContain('"travel_cost": 30.0');
    expect(parsed.toolCalls[0]!.arguments).toContain('"amount": 1e+21');
  });

  it('restores the open <think> of the prompt and strips the framing newlines', () => {
    expect(on.parse('Plan.\n</think>\nAnswer.<|im_end|>')).toEqual({
      content: 'Answer.',
      reasoning: 'Plan.',
      toolCalls: [],
      unparsed: [],
      ok: true,
    });
  });

  it('reads a JSON call in <tool_call> too, keeping its arguments text and id', () => {
    const parsed = on.parse(
      '<tool_call>{"name": "cd", "arguments": {"folder": 1.50}, "id": "c1"}</tool_call><|im_end|>',
    );
    expect(parsed.toolCalls).toEqual([{ id: 'c1', name: 'cd', arguments: '{"folder": 1.50}' }]);
  });

  it('as the template writes booleans True, they come back as the strings the cookbook reads', () => {
    const body = on.supervised([
      CALLS[0]!,
      { role: 'assistant', content: '', toolCalls: [{ name: 'f', arguments: '{"v": true}' }] },
    ]);
    expect(body.at(-1)!.text).toContain('<parameter=v>\nTrue\n</parameter>');
    expect(JSON.parse(on.parse(body.at(-1)!.text).toolCalls[0]!.arguments)).toEqual({ v: 'True' });
  });

  const call = (inner: string) => `<tool_call>\n${inner}\n</tool_call>`;
  it.each([
    [
      'an unterminated block',
      '<tool_call>\n<function=cd>\n<parameter=folder>\nx\n</parameter>\n</function>\n',
      /unterminated tool block/,
    ],
    [
      'text between parameters',
      call('<function=cd>\nstray\n<parameter=folder>\nx\n</parameter>\n</function>'),
      /non-parameter/,
    ],
    [
      'trailing text in the function',
      call('<function=cd>\n<parameter=folder>\nx\n</parameter>\nmore\n</function>'),
      /trailing/,
    ],
    ['a blank function name', call('<function= >\n</function>'), /function name/],
    [
      'a blank parameter name',
      call('<function=f>\n<parameter= >\nx\n</parameter>\n</function>'),
      /parameter name/,
    ],
    ['no closing function tag', call('<function=f>\n<parameter=a>\nx\n</parameter>'), /Malformed/],
    ['JSON that is not an object', call('[1]'), /not a JSON object/],
    ['JSON without arguments', call('{"name": "f"}'), /arguments/],
    ['neither JSON nor XML', call('call f please'), /Invalid JSON/],
  ])('reports %s as unparsed, without throwing', (_, completion, error) => {
    for (const family of [on, off]) {
      const parsed = family.parse(`${completion}<|im_end|>`);
      expect(parsed.ok).toBe(false);
      expect(parsed.toolCalls).toEqual([]);
      expect(parsed.unparsed.map((u) => u.error).join('\n')).toMatch(error);
    }
  });

  it('a completion cut before <|im_end|>, or with two of them, is not ok and yields no calls', () => {
    const cut = on.parse(call('<function=logout>\n</function>'));
    expect(cut.ok).toBe(false);
    expect(cut.toolCalls).toEqual([]);
    expect(on.parse('a<|im_end|>b<|im_end|>').ok).toBe(false);
  });
});
