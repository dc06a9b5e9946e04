import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nativeFormat } from '../../../src/agent/formats/native.js';
import { type FamilyMessage, RenderRefused, textOf } from '../../../src/render/families/family.js';
import { toolDefinition } from '../../../src/render/families/gpt-oss.js';
import { chatFamily } from '../../../src/render/families/index.js';
import '../../../src/render/families/all.js';
import { describeGoldens } from './check.js';
import { idsOf, realEncoder } from './goldens.js';

const NAMES = [
  'gpt_oss_no_sysprompt',
  'gpt_oss_low_reasoning',
  'gpt_oss_medium_reasoning',
  'gpt_oss_high_reasoning',
] as const;
for (const name of NAMES) describeGoldens(name);

const family = chatFamily('gpt_oss_no_sysprompt');

const user = (content: string): FamilyMessage => ({ role: 'user', content });
const call = (name: string, args: string) => ({ id: null, name, arguments: args });

describe('gpt-oss system message', () => {
  it('writes the reasoning effort and the given date, or none for gpt_oss_no_sysprompt', () => {
    for (const effort of ['low', 'medium', 'high']) {
      const f = chatFamily(`gpt_oss_${effort}_reasoning`, { today: '2031-02-03' });
      expect(textOf(f.generationPrompt([user('hi')]))).toBe(
        '<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n' +
          'Knowledge cutoff: 2024-06\nCurrent date: 2031-02-03\n\n' +
          `Reasoning: ${effort}\n\n` +
          '# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|>' +
          '<|start|>user<|message|>hi<|end|><|start|>assistant',
      );
    }
    expect(textOf(family.generationPrompt([user('hi')]))).toBe(
      '<|start|>user<|message|>hi<|end|><|start|>assistant',
    );
  });

  it("defaults the date to today's UTC date", () => {
    const today = new Date().toISOString().slice(0, 10);
    const text = textOf(chatFamily('gpt_oss_low_reasoning').generationPrompt([]));
    // a run across midnight UTC may see the next day
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect([today, tomorrow]).toContain(/Current date: (\S+)/.exec(text)?.[1]);
  });
});

describe('gpt-oss tool declaration', () => {
  it('is a routing system message and a developer message with instructions and tools', () => {
    const tools = [{ name: 'f', description: 'Does f.', parameters: { type: 'object', properties: {} } }];
    expect(family.toolDeclaration(tools, 'Be brief.')).toEqual([
      {
        role: '_gptoss_internal_system',
        content: "Calls to these tools must go to the commentary channel: 'functions'.",
      },
      {
        role: 'developer',
        content:
          '# Instructions\n\nBe brief.\n\n# Tools\n\n## functions\n\nnamespace functions {\n\n' +
          '// Does f.\ntype f = () => any;\n\n} // namespace functions',
      },
    ]);
    expect(family.toolDeclaration([], 'Be brief.')).toEqual([
      { role: 'developer', content: '# Instructions\n\nBe brief.' },
    ]);
    expect(family.toolDeclaration([], '')).toEqual([]);
    // the routing message is OpenAI's system role, not the user's system prompt (which is a developer message)
    const text = textOf(family.generationPrompt(family.toolDeclaration(tools, '')));
    expect(
      text.startsWith(
        "<|start|>system<|message|>Calls to these tools must go to the commentary channel: 'functions'.<|end|><|start|>developer<|message|># Tools",
      ),
    ).toBe(true);
  });

  // Expected texts: the cookbook's _format_tool_definition run on these same schemas.
  it('writes every JSON-schema construct as the cookbook does', () => {
    const kitchen = {
      name: 'kitchen',
      description: 'Every construct.',
      parameters: {
        type: 'object',
        description: 'The whole order.\nTwo lines.',
        properties: {
          s: {
            type: 'string',
            title: 'A title',
            description: 'A string',
            examples: ['hello', 'wörld', 1.5e-7, { a: [1, true, null] }],
          },
          e: { type: 'string', enum: ['a', 'b"q', 'é'], default: 'a' },
          ie: { type: 'integer', enum: [1, 2], default: 3 },
          n: { type: 'number', default: 0.5, nullable: true },
          big: { type: 'number', default: 1e21 },
          tiny: { type: 'number', default: 0.00001 },
          b: { type: 'boolean', default: false },
          arr: {
            type: 'array',
            items: {
              type: 'object',
              properties: { x: { type: 'integer' }, y: { type: 'string', enum: ['p'] } },
              required: ['x'],
            },
          },
          arr2: { type: 'array' },
          arr3: { type: 'array', items: { type: 'array', items: { type: 'number' } }, default: [[1, 2], []] },
          obj: {
            type: 'object',
            properties: {
              inner: { type: 'object', properties: { deep: { type: 'boolean', description: 'ignored' } } },
              list: { type: 'array', items: { type: 'string' } },
            },
            required: ['inner'],
            default: { inner: { deep: true } },
          },
          emptyobj: { type: 'object' },
          one: { oneOf: [{ type: 'string' }, { type: 'integer', nullable: true }], description: 'a oneOf' },
          any: { anyOf: [{ type: 'string', enum: ['x'] }, { type: 'null' }] },
          multi: { type: ['string', 'null', 'array'] },
          untyped: { description: 'no type' },
          nul: { type: 'null', default: null },
          empty_desc: { type: 'string', description: '', title: '' },
          exd: { type: 'string', examples: { k1: 1, k2: 2 } },
          exs: { type: 'string', examples: 'ab' },
        },
        required: ['s', 'arr', 'one'],
      },
    };
    expect(toolDefinition(kitchen)).toBe(
      [
        '// Every construct.',
        'type kitchen = (_: // The whole order.',
        'Two lines.',
        '{',
        '// A title',
        '// ',
        '// A string',
        '// Examples:',
        '// - "hello"',
        '// - "w\\u00f6rld"',
        '// - 1.5e-07',
        '// - {"a": [1, true, null]}',
        's: string,',
        'e?: "a" | "b\\"q" | "\\u00e9", // default: "a"',
        'ie?: number, // default: 3',
        'n?: number | null, // default: 0.5',
        'big?: number, // default: 1e+21',
        'tiny?: number, // default: 1e-05',
        'b?: boolean, // default: false',
        'arr: { x: number, y?: "p" }[],',
        'arr2?: any[],',
        'arr3?: number[][], // default: [[1, 2], []]',
        'obj?: { inner: { deep?: boolean }, list?: string[] }, // default: {"inner": {"deep": true}}',
        'emptyobj?: {  },',
        '// a oneOf',
        'one: string | number | null,',
        'any?: "x" | any,',
        'multi?: string | any | any[],',
        '// no type',
        'untyped?: any,',
        'nul?: any, // default: null',
        'empty_desc?: string,',
        '// Examples:',
        '// - "k1"',
        '// - "k2"',
        'exd?: string,',
        '// Examples:',
        '// - "a"',
        '// - "b"',
        'exs?: string,',
        '}) => any;',
      ].join('\n'),
    );
    expect(
      toolDefinition({ name: 'noparams', description: '', parameters: { type: 'object', properties: {} } }),
    ).toBe('type noparams = () => any;');
    expect(toolDefinition({ name: 'notobject', description: 'N.', parameters: { type: 'string' } })).toBe(
      '// N.\ntype notobject = () => any;',
    );
    expect(toolDefinition({ name: 'missing', description: 'M.', parameters: {} })).toBe(
      '// M.\ntype missing = () => any;',
    );
    expect(
      toolDefinition({
        name: 'titled',
        description: 'd',
        parameters: { type: 'object', properties: { q: { type: 'integer', description: 3, default: 2.5 } } },
      }),
    ).toBe('// d\ntype titled = (_:\n{\n// 3\nq?: number, // default: 2.5\n}) => any;');
  });
});

// Expected texts: the cookbook's GptOssRenderer on the same conversations.
describe('gpt-oss rendering', () => {
  it('writes a system message as developer instructions, wherever it stands', () => {
    const messages: FamilyMessage[] = [
      { role: 'system', content: 'Be brief.' },
      user('hi'),
      { role: 'system', content: 'Now in French.' },
      { role: 'assistant', content: 'Salut' },
    ];
    expect(textOf(family.supervised(messages))).toBe(
      '<|start|>developer<|message|># Instructions\n\nBe brief.\n\n<|end|><|start|>user<|message|>hi<|end|>' +
        '<|start|>developer<|message|># Instructions\n\nNow in French.\n\n<|end|>' +
        '<|start|>assistant<|channel|>final<|message|>Salut<|return|>',
    );
  });

  it('names a tool result by its function, functions.unknown without a name', () => {
    const messages: FamilyMessage[] = [
      user('x'),
      { role: 'assistant', content: '', toolCalls: [call('f', '{"a": 1}')] },
      { role: 'tool', content: 'r1' },
      { role: 'tool', name: 'functions.g', content: 'r2' },
    ];
    expect(textOf(family.generationPrompt(messages))).toBe(
      '<|start|>user<|message|>x<|end|>' +
        '<|start|>assistant to=functions.f<|channel|>commentary <|constrain|>json<|message|>{"a": 1}<|call|>' +
        '<|start|>functions.unknown to=assistant<|channel|>commentary<|message|>r1<|end|>' +
        '<|start|>functions.g to=assistant<|channel|>commentary<|message|>r2<|end|><|start|>assistant',
    );
  });

  it('keeps reasoning, a preamble and each call of every turn in history; an answer in history ends <|end|>', () => {
    const messages: FamilyMessage[] = [
      user('q'),
      {
        role: 'assistant',
        thinking: 'think',
        content: 'Let me look.',
        toolCalls: [call('a', '{}'), call('b', '{"k": [1, 2.50]}')],
      },
      { role: 'tool', name: 'a', content: 'A' },
      { role: 'tool', name: 'b', content: 'B' },
      { role: 'assistant', thinking: 'ok', content: 'Answer' },
      user('more'),
      { role: 'assistant', content: 'plain' },
    ];
    const full = textOf(family.supervised(messages));
    expect(full).toBe(
      '<|start|>user<|message|>q<|end|><|start|>assistant<|channel|>analysis<|message|>think<|end|>' +
        '<|start|>assistant<|channel|>commentary<|message|>Let me look.<|end|>' +
        '<|start|>assistant to=functions.a<|channel|>commentary <|constrain|>json<|message|>{}<|call|>' +
        '<|start|>assistant to=functions.b<|channel|>commentary <|constrain|>json<|message|>{"k": [1, 2.50]}<|call|>' +
        '<|start|>functions.a to=assistant<|channel|>commentary<|message|>A<|end|>' +
        '<|start|>functions.b to=assistant<|channel|>commentary<|message|>B<|end|>' +
        '<|start|>assistant<|channel|>analysis<|message|>ok<|end|><|start|>assistant<|channel|>final<|message|>Answer<|end|>' +
        '<|start|>user<|message|>more<|end|><|start|>assistant<|channel|>final<|message|>plain<|return|>',
    );
    // the same answer as the last message of a prompt ends <|return|>, as the cookbook writes it
    expect(textOf(family.generationPrompt(messages)).endsWith('plain<|return|><|start|>assistant')).toBe(
      true,
    );
  });

  it('refuses a reasoning part on a message that is not the assistant', () => {
    expect(() => family.supervised([{ role: 'user', content: 'x', thinking: 'y' }])).toThrow(RenderRefused);
    expect(() => family.supervised([{ role: 'tool', name: 'f', content: 'x', thinking: '' }])).toThrow(
      RenderRefused,
    );
  });

  it("encodes the stop strings as single tokens of gpt-oss's tokenizer", () => {
    const enc = realEncoder('gpt_oss_no_sysprompt')!;
    expect(enc).toBeDefined();
    for (const s of family.stop) expect(enc.tokenId(s)).toBeDefined();
    const ids = idsOf(enc, family.supervised([user('hi'), { role: 'assistant', content: 'yo' }]));
    expect(ids.at(-1)).toBe(enc.tokenId('<|return|>'));
    expect(enc.decode(ids)).toBe(
      '<|start|>user<|message|>hi<|end|><|start|>assistant<|channel|>final<|message|>yo<|return|>',
    );
  });
});

/** what the model writes for the last message: the full sequence after the generation prompt */
function completionOf(messages: readonly FamilyMessage[]): string {
  const prompt = textOf(family.generationPrompt(messages.slice(0, -1)));
  const full = textOf(family.supervised(messages));
  expect(full.startsWith(prompt)).toBe(true);
  return full.slice(prompt.length);
}

describe('gpt-oss parsing', () => {
  it('reads back its own rendered calls, reasoning and answers', () => {
    const turns: FamilyMessage[] = [
      { role: 'assistant', content: '', toolCalls: [call('cd', '{"folder": "a b"}')] },
      {
        role: 'assistant',
        content: '',
        thinking: 'Need it.\nNow.',
        toolCalls: [call('place_order', '{"price": 30.0, "n": 1e21}')],
      },
      { role: 'assistant', content: 'Checking.', toolCalls: [call('logout', '{}')] },
      { role: 'assistant', content: 'Réservé : 東京.', thinking: 'Booked.' },
      { role: 'assistant', content: 'Plain.' },
    ];
    for (const t of turns) {
      const parsed = family.parse(completionOf([user('go'), t]));
      expect(parsed.toolCalls).toEqual(t.toolCalls ?? []);
      expect(parsed.reasoning).toBe(t.thinking ?? null);
      if (t.toolCalls === undefined || t.content) expect(parsed.content).toBe(t.content);
      expect(parsed.unparsed).toEqual([]);
      expect(parsed.ok).toBe(true);
    }
  });

  it('reads parallel calls back, but flags the completion: sampling ends at the first <|call|>', () => {
    const calls = [call('a', '{"x": 1}'), call('b', '{"y": 30.0}')];
    const text = completionOf([user('go'), { role: 'assistant', content: 'Both.', toolCalls: calls }]);
    const parsed = family.parse(text);
    expect(parsed.toolCalls).toEqual(calls);
    expect(parsed.content).toBe('Both.');
    expect(parsed.ok).toBe(false);
    expect(parsed.unparsed).toEqual([{ raw: text, error: expect.stringMatching(/2 <\|call\|>/) }]);
  });

  it('reads a call header in either order, with or without a space before <|constrain|>', () => {
    for (const text of [
      '<|channel|>commentary to=functions.w <|constrain|>json<|message|>{"c": "Oslo"}<|call|>',
      '<|start|>assistant to=functions.w<|channel|>commentary<|constrain|>json<|message|>{"c": "Oslo"}<|call|>',
      '<|start|>assistant<|channel|>commentary to=functions.w<|constrain|>json<|message|>{"c": "Oslo"}<|call|>',
    ]) {
      const parsed = family.parse(text);
      expect(parsed.toolCalls).toEqual([call('w', '{"c": "Oslo"}')]);
      expect(parsed.ok).toBe(true);
    }
  });

  it('keeps analysis as reasoning and final or commentary text as content, as the cookbook does', () => {
    expect(
      family.parse(
        '<|channel|>analysis<|message|>One.<|end|><|start|>assistant<|channel|>analysis<|message|>Two.<|end|>' +
          '<|start|>assistant<|channel|>final<|message|>Done.<|return|>',
      ),
    ).toEqual({ content: 'Done.', reasoning: 'One.Two.', toolCalls: [], unparsed: [], ok: true });
    // no channel message: the text itself is the content
    expect(family.parse('Plain, no channels.<|return|>')).toEqual({
      content: 'Plain, no channels.',
      reasoning: null,
      toolCalls: [],
      unparsed: [],
      ok: true,
    });
  });

  it('records a call outside the functions namespace as unparsed, which a rollout counts as a parse error', () => {
    for (const text of [
      // the bare tool name, header in either order; harmony's built-in tools, on any channel
      '<|channel|>commentary to=get_weather <|constrain|>json<|message|>{"location": "Paris"}<|call|>',
      ' to=get_weather<|channel|>commentary <|constrain|>json<|message|>{"location": "Paris"}<|call|>',
      '<|channel|>analysis<|message|>look<|end|><|start|>assistant<|channel|>commentary to=browser.search code<|message|>{"q": 1}<|call|>',
      '<|channel|>analysis to=python code<|message|>print(1)<|call|>',
    ]) {
      const parsed = family.parse(text);
      expect(parsed.ok, text).toBe(false);
      expect(parsed.toolCalls, text).toEqual([]);
      expect(parsed.content, text).toBe('');
      expect(parsed.unparsed, text).toHaveLength(1);
      expect(parsed.unparsed[0]!.error, text).toMatch(/a call to \S+, outside the functions namespace/);
      expect(text.includes(parsed.unparsed[0]!.raw), text).toBe(true);
      expect(parsed.unparsed[0]!.raw, text).toContain(' to=');
      // what the Tinker policy hands the native format: the step is the turn's parse error
      const decoded = nativeFormat.decode({
        text: parsed.content,
        unparsedToolCalls: parsed.unparsed,
        latencyMs: 0,
      });
      expect(decoded.kind, text).toBe('parse_error');
    }
    // text after the stop token is still not read
    expect(
      family.parse(
        '<|channel|>commentary to=browser.search code<|message|>{"q": 1}<|call|><|start|>assistant<|channel|>final<|message|>x',
      ).unparsed,
    ).toHaveLength(1);
  });

  it('records malformed calls as unparsed with their raw text, never throwing', () => {
    const cases: [string, RegExp][] = [
      ['<|channel|>commentary to=functions.f <|constrain|>json<|message|>not json<|call|>', /invalid JSON/],
      ['<|channel|>commentary to=functions.f <|constrain|>json<|message|>[1, 2]<|call|>', /not an object/],
      ['<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": NaN}<|call|>', /invalid JSON/],
      [
        '<|channel|>commentary to=functions. <|constrain|>json<|message|>{"a": 1}<|call|>',
        /without a function name/,
      ],
      // a call header whose arguments never came: empty, blank, or the model returned first
      [
        ' to=functions.f<|channel|>commentary <|constrain|>json<|message|><|call|>',
        /unterminated tool block/,
      ],
      [
        ' to=functions.f<|channel|>commentary <|constrain|>json<|message|> \n <|call|>',
        /unterminated tool block/,
      ],
      [
        '<|channel|>analysis<|message|>hm<|end|><|start|>assistant to=functions.f<|channel|>commentary<|return|>',
        /unterminated/,
      ],
      [
        '<|channel|>final<|message|>one<|return|><|start|>assistant<|channel|>final<|message|>two<|return|>',
        /2 <\|return\|>/,
      ],
    ];
    for (const [text, error] of cases) {
      const parsed = family.parse(text);
      expect(parsed.ok, text).toBe(false);
      expect(parsed.toolCalls, text).toEqual([]);
      expect(parsed.unparsed, text).toHaveLength(1);
      expect(parsed.unparsed[0]!.error, text).toMatch(error);
      expect(text.includes(parsed.unparsed[0]!.raw), text).toBe(true);
    }
    expect(
      family.parse('<|channel|>commentary to=functions.f <|constrain|>json<|message|>bad<|call|>')
        .unparsed[0]!.raw,
    ).toBe('<|channel|>commentary to=functions.f <|constrain|>json<|message|>bad');
  });

  it('is not ok for a completion cut off before <|return|> or <|call|>, and reads nothing out of it', () => {
    for (const text of [
      '<|channel|>analysis<|message|>thinking<|end|><|start|>assistant<|channel|>final<|message|>ans',
      '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": 1}',
      '<|channel|>final<|message|>x<|end|>',
      '',
    ])
      expect(family.parse(text)).toEqual({
        content: text,
        reasoning: null,
        toolCalls: [],
        unparsed: [],
        ok: false,
      });
  });
});

// openai/harmony's own test data, where a local git copy of that repository is at hand (it is not
// part of seal; HARMONY_GIT_DIR names its git directory): the cases whose format the cookbook shares.
const HARMONY = process.env.HARMONY_GIT_DIR ?? '';
const harmonyFile = (name: string): string =>
  execFileSync('git', ['--git-dir', HARMONY, 'show', `HEAD:test-data/${name}`], {
    encoding: 'utf8',
  }).trimEnd();

interface HarmonyPart {
  role: string;
  channel?: string;
  recipient?: string;
  body: string;
}

/** harmony text cut into its messages, each `<|start|>HEADER<|message|>BODY<|end marker|>` */
function harmonyParts(text: string): HarmonyPart[] {
  return text
    .split('<|start|>')
    .filter((s) => s.includes('<|message|>'))
    .map((s) => {
      const [header, rest] = s.split('<|message|>') as [string, string];
      return {
        role: header.split(/[\s<]/)[0]!,
        channel: /<\|channel\|>(\w+)/.exec(header)?.[1],
        recipient: /to=([^\s<]+)/.exec(header)?.[1],
        body: rest.replace(/<\|(end|call|return)\|>$/, ''),
      };
    });
}

/** consecutive assistant messages as one message: analysis its reasoning, final its content, calls its calls */
function familyMessagesOf(parts: readonly HarmonyPart[]): FamilyMessage[] {
  const out: FamilyMessage[] = [];
  for (const p of parts) {
    if (p.role !== 'assistant') {
      out.push({ role: p.role, content: p.body });
      continue;
    }
    const prev = out.at(-1);
    const m: FamilyMessage =
      prev?.role === 'assistant' && !prev.content ? out.pop()! : { role: 'assistant', content: '' };
    if (p.recipient?.startsWith('functions.'))
      out.push({ ...m, toolCalls: [...(m.toolCalls ?? []), call(p.recipient.slice(10), p.body)] });
    else if (p.channel === 'analysis') out.push({ ...m, thinking: p.body });
    else out.push({ ...m, content: p.body });
  }
  return out;
}

describe.skipIf(HARMONY === '' || !existsSync(HARMONY))("gpt-oss against openai/harmony's test data", () => {
  it('writes the system message harmony writes for medium reasoning and no tools (test_no_tools)', () => {
    const text = harmonyFile('test_no_tools.txt');
    const date = /Current date: (\S+)/.exec(text)![1]!;
    expect(textOf(chatFamily('gpt_oss_medium_reasoning', { today: date }).generationPrompt([]))).toBe(text);
  });

  it("keeps an earlier turn's reasoning as harmony does with auto_drop_analysis off (test_preserve_cot)", () => {
    const text = harmonyFile('test_preserve_cot.txt');
    const messages = familyMessagesOf(harmonyParts(text));
    expect(messages.some((m) => m.thinking)).toBe(true);
    expect(textOf(family.generationPrompt(messages))).toBe(text);
  });

  it('writes a training sequence as harmony does, ending <|return|> (test_keep_analysis_between_finals)', () => {
    const text = harmonyFile('test_keep_analysis_between_finals.txt');
    expect(textOf(family.supervised(familyMessagesOf(harmonyParts(text))))).toBe(
      text.replace(/<\|end\|>$/, '<|return|>'),
    );
  });

  it('writes reasoning and a call as harmony does; the tool result header differs (test_does_not_drop_if_ongoing_analysis)', () => {
    const text = harmonyFile('test_does_not_drop_if_ongoing_analysis.txt');
    const cut = text.indexOf('<|call|>') + '<|call|>'.length;
    const messages = familyMessagesOf(harmonyParts(text.slice(0, cut)));
    expect(textOf(family.supervised(messages))).toBe(text.slice(0, cut));
    // harmony: <|start|>functions.NAME<|message|>; the cookbook adds ` to=assistant<|channel|>commentary`
    const result = harmonyParts(text.slice(cut))[0]!;
    const ours = textOf(family.supervised([{ role: 'tool', name: result.role, content: result.body }]));
    expect(text.slice(cut)).toContain(`<|start|>${result.role}<|message|>${result.body}<|end|>`);
    expect(ours).toBe(
      `<|start|>${result.role} to=assistant<|channel|>commentary<|message|>${result.body}<|end|>`,
    );
  });

  const enc = realEncoder('gpt_oss_no_sysprompt')!;
  const decoded = (name: string) => enc.decode(harmonyFile(name).split(/\s+/).map(Number));

  // harmony's samples end a message with <|return|> and go on; sampling stops there, and the
  // cookbook (so seal) reads a completion up to its first stop token
  it('reads a reasoning response up to its first stop token (test_simple_reasoning_response)', () => {
    const text = decoded('test_simple_reasoning_response.txt');
    const [analysis, final] = harmonyParts(`<|start|>assistant${text}`);
    expect(final!.channel).toBe('final');
    expect(family.parse(text)).toEqual({
      content: '',
      reasoning: analysis!.body,
      toolCalls: [],
      unparsed: [],
      ok: true,
    });
  });

  it('records a call to a recipient outside `functions` as unparsed (test_simple_tool_call)', () => {
    const text = decoded('test_simple_tool_call.txt');
    const [analysis, lookup] = harmonyParts(`<|start|>assistant${text}`);
    expect(family.parse(text).reasoning).toBe(analysis!.body);
    expect(lookup!.recipient?.startsWith('functions.')).toBe(false);
    const alone = `${text.slice(text.lastIndexOf('<|start|>'))}<|call|>`;
    expect(family.parse(alone)).toEqual({
      content: '',
      reasoning: null,
      toolCalls: [],
      unparsed: [
        {
          raw: expect.stringContaining(lookup!.body),
          error: expect.stringMatching(/outside the functions namespace/),
        },
      ],
      ok: false,
    });
  });

  it('reads a browsing completion up to its <|call|>, the browser call unparsed (test_streamable_parser)', () => {
    const text = harmonyFile('test_streamable_parser.txt');
    const [analysis, search] = harmonyParts(`<|start|>assistant${text}`);
    expect(family.parse(text)).toEqual({
      content: '',
      reasoning: analysis!.body,
      toolCalls: [],
      unparsed: [
        { raw: expect.stringContaining(search!.body), error: expect.stringMatching(/a call to browser\./) },
      ],
      ok: false,
    });
  });
});
