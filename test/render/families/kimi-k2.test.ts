import { readFileSync } from 'node:fs';
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

for (const name of ['kimi_k2', 'kimi_k25', 'kimi_k25_disable_thinking']) {
  describeGoldens(name);
  describeGoldenPieces(name);
}

const k2 = chatFamily('kimi_k2');
const k25 = chatFamily('kimi_k25');
const k25off = chatFamily('kimi_k25_disable_thinking');
const DEFAULT_SYSTEM =
  '<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>';

const CALLS: FamilyMessage[] = [
  { role: 'user', content: 'Buy and look' },
  {
    role: 'assistant',
    content: 'Doing both.',
    thinking: 'Two calls.',
    toolCalls: [
      {
        id: 'functions.place_order:0',
        name: 'place_order',
        arguments: '{"symbol": "Zoë", "price": 30.0, "amount": 1e21}',
      },
      { name: 'grep', arguments: '{"file_name": "a.txt", "pattern": "x\\"y"}' },
    ],
  },
];

describe('kimi tool declarations', () => {
  const tool: ToolSpec = {
    name: 'f',
    description: 'Café',
    parameters: {
      type: 'object',
      properties: { b: { type: 'string' }, a: { type: 'integer', default: 1.5 } },
    },
  };

  it('K2: the OpenAI tool list as compact JSON with sorted keys and ASCII escapes, before the system prompt', () => {
    expect(k2.toolDeclaration([tool], 'Be brief.')).toEqual([
      {
        role: 'tool_declare',
        content:
          '[{"function":{"description":"Caf\\u00e9","name":"f","parameters":{"properties":{"a":{"default":1.5,"type":"integer"},"b":{"type":"string"}},"type":"object"}},"type":"function"}]',
      },
      { role: 'system', content: 'Be brief.' },
    ]);
  });

  it("no tools: only the system message, Kimi's default one when the prompt is empty", () => {
    expect(k2.toolDeclaration([], '')).toEqual([
      { role: 'system', content: 'You are Kimi, an AI assistant created by Moonshot AI.' },
    ]);
  });

  it("K2.5: TypeScript types, as the cookbook's encoder writes them for refs, unions, enums, constraints and defaults", () => {
    const fixture = JSON.parse(
      readFileSync(new URL('../../fixtures/renderers/kimi-k25-tools.json', import.meta.url), 'utf8'),
    ) as { tools: ToolSpec[]; expected: string };
    const [declare, system] = k25.toolDeclaration(fixture.tools, 'S');
    expect(declare).toEqual({ role: 'tool_declare', content: fixture.expected });
    expect(system).toEqual({ role: 'system', content: 'S' });
  });

  it('K2.5 refuses a schema the encoder cannot read instead of writing something else', () => {
    const bad = (properties: Record<string, unknown>): ToolSpec => ({
      name: 'g',
      description: '',
      parameters: { type: 'object', properties },
    });
    expect(() => k25.toolDeclaration([bad({ x: { description: 'no type' } })], '')).toThrow(RenderRefused);
    expect(() => k25.toolDeclaration([bad({ x: { $ref: '#/$defs/Missing' } })], '')).toThrow(RenderRefused);
    expect(() => k25.toolDeclaration([bad({ x: { type: 'string', enum: [1] } })], '')).toThrow(RenderRefused);
  });
});

describe('kimi rendering', () => {
  it("adds Kimi's default system message where none is given, after a tool declaration", () => {
    const user: FamilyMessage = { role: 'user', content: 'hi' };
    expect(textOf(k2.generationPrompt([user]))).toBe(
      `${DEFAULT_SYSTEM}<|im_user|>user<|im_middle|>hi<|im_end|><|im_assistant|>assistant<|im_middle|>`,
    );
    const declared = textOf(k2.generationPrompt([{ role: 'tool_declare', content: 'T' }, user]));
    expect(declared.startsWith(`<|im_system|>tool_declare<|im_middle|>T<|im_end|>${DEFAULT_SYSTEM}`)).toBe(
      true,
    );
  });

  it('ends the prompt with the assistant header (K2), an open think (K2.5), a closed one (disable_thinking)', () => {
    const user: FamilyMessage[] = [{ role: 'user', content: 'hi' }];
    const last = (pieces: { text: string }[]) => pieces.slice(-2).map((p) => p.text);
    expect(k2.generationPrompt(user).at(-1)!.text).toBe('<|im_assistant|>assistant<|im_middle|>');
    expect(last(k25.generationPrompt(user))).toEqual(['<|im_assistant|>assistant<|im_middle|>', '<think>']);
    expect(last(k25off.generationPrompt(user))).toEqual([
      '<|im_assistant|>assistant<|im_middle|>',
      '<think></think>',
    ]);
  });

  it('keeps reasoning from the last assistant message that called no tool on, empties it before', () => {
    const conversation: FamilyMessage[] = [
      { role: 'user', content: 'q1' },
      { role: 'assistant', content: 'a1', thinking: 'old' },
      { role: 'user', content: 'q2' },
      { role: 'assistant', content: '', thinking: 'step', toolCalls: [{ name: 'cd', arguments: '{}' }] },
      { role: 'tool', content: 'ok', name: 'cd', toolCallId: 'functions.cd:0' },
    ];
    const text = textOf(k2.generationPrompt(conversation));
    expect(text).toContain('<think></think>a1<|im_end|>');
    expect(text).toContain(
      '<think>step</think><|tool_calls_section_begin|><|tool_call_begin|>functions.cd:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>',
    );
    expect(text).toContain('<|im_system|>cd<|im_middle|>## Return of functions.cd:0\nok<|im_end|>');
    // a tool result without a name is written under `tool`
    expect(textOf(k2.generationPrompt([{ role: 'tool', content: 'r', toolCallId: 'x:1' }]))).toContain(
      '<|im_system|>tool<|im_middle|>## Return of x:1\nr<|im_end|>',
    );
  });

  it('disable_thinking refuses to train on a turn with reasoning, and trains one without', () => {
    expect(() => k25off.supervised(CALLS)).toThrow(RenderRefused);
    expect(() => k25.supervised(CALLS)).not.toThrow();
    const plain: FamilyMessage[] = [CALLS[0]!, { ...CALLS[1]!, thinking: undefined }];
    const prompt = textOf(k25off.generationPrompt(plain.slice(0, 1)));
    expect(textOf(k25off.supervised(plain)).startsWith(prompt)).toBe(true);
  });
});

describe('kimi parsing', () => {
  it.each([
    ['kimi_k2', k2],
    ['kimi_k25', k25],
    ['kimi_k25_disable_thinking', k25off],
  ] as const)(
    '%s reads its own rendered calls back: names from the ids, arguments as written',
    (_, family) => {
      const messages = family === k25off ? [CALLS[0]!, { ...CALLS[1]!, thinking: undefined }] : CALLS;
      const completion = family.supervised(messages).at(-1)!.text;
      const parsed = family.parse(completion);
      expect(parsed.ok).toBe(true);
      expect(parsed.unparsed).toEqual([]);
      expect(parsed.content).toBe('Doing both.');
      expect(parsed.reasoning).toBe(family === k25off ? null : 'Two calls.');
      expect(parsed.toolCalls).toEqual([
        {
          id: 'functions.place_order:0',
          name: 'place_order',
          arguments: '{"symbol": "Zoë", "price": 30.0, "amount": 1e21}',
        },
        { id: 'functions.grep:1', name: 'grep', arguments: '{"file_name": "a.txt", "pattern": "x\\"y"}' },
      ]);
    },
  );

  it("K2.5 restores the prompt's open <think>; K2 reads the text as it is", () => {
    expect(k25.parse('plan</think>answer<|im_end|>')).toMatchObject({
      content: 'answer',
      reasoning: 'plan',
      ok: true,
    });
    expect(k2.parse('plan</think>answer<|im_end|>')).toMatchObject({
      content: 'plan</think>answer',
      reasoning: null,
    });
  });

  it('reads the singular section spelling and spaces around ids and arguments', () => {
    const parsed = k2.parse(
      '<|tool_call_section_begin|><|tool_call_begin|> functions.cd:3 <|tool_call_argument_begin|> {"folder": "a"} <|tool_call_end|><|tool_call_section_end|><|im_end|>',
    );
    expect(parsed.toolCalls).toEqual([{ id: 'functions.cd:3', name: 'cd', arguments: '{"folder": "a"}' }]);
    expect(parsed.ok).toBe(true);
  });

  const S = '<|tool_calls_section_begin|>';
  const E = '<|tool_calls_section_end|>';
  const call = (id: string, args: string) =>
    `<|tool_call_begin|>${id}<|tool_call_argument_begin|>${args}<|tool_call_end|>`;
  it.each([
    ['bad JSON', `${S}${call('functions.cd:0', '{bad')}${E}<|im_end|>`, /Invalid JSON/],
    ['arguments not an object', `${S}${call('functions.cd:0', '[1]')}${E}<|im_end|>`, /not a JSON object/],
    ['no name in the id', `${S}${call('functions.:0', '{}')}${E}<|im_end|>`, /no function name/],
    ['an id without its index', `${S}${call('functions.cd', '{}')}${E}<|im_end|>`, /not a tool call/],
    ['an unterminated section', `${S}${call('functions.cd:0', '{}')}<|im_end|>`, /unterminated tool block/],
    [
      'an unterminated call',
      `${S}<|tool_call_begin|>functions.cd:0<|tool_call_argument_begin|>{}${E}<|im_end|>`,
      /unterminated tool block/,
    ],
  ])('reports %s as unparsed, without throwing', (_, completion, error) => {
    for (const family of [k2, k25, k25off]) {
      const parsed = family.parse(completion);
      expect(parsed.ok).toBe(false);
      expect(parsed.unparsed.length).toBeGreaterThan(0);
      expect(parsed.unparsed.map((u) => u.error).join('\n')).toMatch(error);
      expect(parsed.unparsed.every((u) => u.raw.length > 0)).toBe(true);
    }
  });

  it('keeps the good calls beside a bad one', () => {
    const parsed = k2.parse(
      `${S}${call('functions.cd:0', '{"folder": "a"}')}${call('functions.cd:1', '{')}${E}<|im_end|>`,
    );
    expect(parsed.toolCalls.map((c) => c.id)).toEqual(['functions.cd:0']);
    expect(parsed.unparsed).toHaveLength(1);
    expect(parsed.ok).toBe(false);
  });

  it('a completion cut before <|im_end|>, or with two of them, is not ok and yields no calls', () => {
    const cut = k25.parse(`x</think>${S}${call('functions.cd:0', '{}')}${E}`);
    expect(cut.ok).toBe(false);
    expect(cut.toolCalls).toEqual([]);
    expect(k2.parse('a<|im_end|>b<|im_end|>').ok).toBe(false);
    expect(k2.parse('').ok).toBe(false);
  });
});
