import { describe, expect, it } from 'vitest';
import { type FamilyMessage, RenderRefused, textOf } from '../../../src/render/families/family.js';
import { chatFamily } from '../../../src/render/families/index.js';
import '../../../src/render/families/all.js';
import { describeGoldens } from './check.js';

describeGoldens('qwen3_5');
describeGoldens('qwen3_5_disable_thinking');

const NAMES = ['qwen3_5', 'qwen3_5_disable_thinking'] as const;
const user: FamilyMessage = { role: 'user', content: 'Book it.' };

/** what the model writes after the generation prompt, read off the training sequence */
function completionOf(name: string, messages: readonly FamilyMessage[]): string {
  const family = chatFamily(name);
  const prompt = textOf(family.generationPrompt(messages.slice(0, -1)));
  const full = textOf(family.supervised(messages));
  expect(full.startsWith(prompt)).toBe(true);
  return full.slice(prompt.length);
}

describe.each(NAMES)('%s', (name) => {
  const family = chatFamily(name);

  it('writes calls as <function=...> blocks and parses them back to the same names and arguments', () => {
    const calls = [
      {
        id: null,
        name: 'book_flight',
        arguments:
          '{"access_token": "abc", "travel_cost": 450.0, "passengers": ["Zoë", "東京"], "options": {"seat": "A", "meal": null}}',
      },
      {
        id: null,
        name: 'grep',
        arguments: '{"pattern": "two\\nlines", "file_name": "a b.txt", "count": 1e21}',
      },
      { id: null, name: 'logout', arguments: '{}' },
    ];
    const completion = completionOf(name, [
      user,
      { role: 'assistant', content: 'Booking.', toolCalls: calls },
    ]);
    expect(completion).toContain(
      '<tool_call>\n<function=book_flight>\n<parameter=access_token>\nabc\n</parameter>\n<parameter=travel_cost>\n450.0\n</parameter>\n<parameter=passengers>\n["Zo\\u00eb", "\\u6771\\u4eac"]\n</parameter>\n<parameter=options>\n{"seat": "A", "meal": null}\n</parameter>\n</function>\n</tool_call>',
    );
    expect(completion).toContain('<parameter=count>\n1e+21\n</parameter>');
    const parsed = family.parse(completion);
    expect(parsed.ok).toBe(true);
    expect(parsed.content.trim()).toBe('Booking.');
    expect(parsed.toolCalls.map((c) => c.name)).toEqual(['book_flight', 'grep', 'logout']);
    expect(parsed.toolCalls.map((c) => JSON.parse(c.arguments))).toEqual(
      calls.map((c) => JSON.parse(c.arguments)),
    );
    // a value that is JSON is kept as written
    expect(parsed.toolCalls[0]!.arguments).toContain('"travel_cost": 450.0');
  });

  it("types parameters as the cookbook does: a scalar by Python's str(), read back as JSON when it is", () => {
    const call = { id: null, name: 'f', arguments: '{"vegetarian": true, "zip": "02134", "code": "123"}' };
    const completion = completionOf(name, [user, { role: 'assistant', content: '', toolCalls: [call] }]);
    expect(completion).toContain('<parameter=vegetarian>\nTrue\n</parameter>');
    const [parsed] = family.parse(completion).toolCalls;
    // the cookbook's own round trip: True is not JSON, so it comes back a string; "123" is, so a number
    expect(JSON.parse(parsed!.arguments)).toEqual({ vegetarian: 'True', zip: '02134', code: 123 });
  });

  it("reads Qwen3's JSON form too, and puts back the prompt's <think> prefill", () => {
    const parsed = family.parse(
      'I should look.\n</think>\n\n<tool_call>\n{"name": "cd", "arguments": {"folder": "x"}}\n</tool_call><|im_end|>',
    );
    expect(parsed.reasoning).toBe('I should look.');
    expect(parsed.toolCalls).toEqual([{ id: null, name: 'cd', arguments: '{"folder": "x"}' }]);
    expect(parsed.ok).toBe(true);
  });

  it('gives malformed calls to unparsed, with their text and a reason, and never throws', () => {
    const cases: [string, RegExp][] = [
      [
        '<tool_call>\n<function=cd>\n<parameter=folder>\nx\n</parameter>\nstray\n</function>\n</tool_call>',
        /trailing/,
      ],
      [
        '<tool_call>\n<function=cd>\nstray<parameter=folder>\nx\n</parameter>\n</function>\n</tool_call>',
        /non-parameter/,
      ],
      ['<tool_call>\n<function=cd>\n<parameter=folder>\nx\n</parameter>\n</tool_call>', /Malformed/],
      [
        '<tool_call>\n<function=cd>\n<parameter= >\nx\n</parameter>\n</function>\n</tool_call>',
        /Empty parameter/,
      ],
      ['<tool_call>\n{"name": "cd", "arguments": [}\n</tool_call>', /^Invalid JSON/],
      [
        '<tool_call>\n<function=cd>\n<parameter=folder>\nx\n</parameter>\n</function>',
        /^unterminated tool block/,
      ],
    ];
    for (const [call, error] of cases) {
      const parsed = family.parse(`\n</think>\n\n${call}<|im_end|>`);
      expect(parsed.ok, call).toBe(false);
      expect(parsed.toolCalls).toEqual([]);
      expect(parsed.unparsed).toHaveLength(1);
      expect(parsed.unparsed[0]!.error).toMatch(error);
      expect(call).toContain(parsed.unparsed[0]!.raw);
    }
  });

  it('reads a completion cut off before <|im_end|> as not ok', () => {
    const cut = family.parse('\n</think>\n\n<tool_call>\n<function=logout>\n</function>\n</tool_call>');
    expect(cut.ok).toBe(false);
    expect(cut.toolCalls).toEqual([]);
    expect(family.parse('one<|im_end|>two<|im_end|>').ok).toBe(false);
  });

  it('keeps a run of tool results in one user turn, and trims string content', () => {
    const messages: FamilyMessage[] = [
      user,
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { name: 'a', arguments: '{}' },
          { name: 'b', arguments: '{}' },
        ],
      },
      { role: 'tool', content: ' first\n', toolCallId: '1' },
      { role: 'tool', content: 'second', toolCallId: '2' },
    ];
    expect(textOf(family.generationPrompt(messages))).toContain(
      '<|im_start|>user\n<tool_response>\nfirst\n</tool_response>\n<tool_response>\nsecond\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('declares tools before the system prompt', () => {
    const [system] = family.toolDeclaration(
      [{ name: 'logout', description: 'Bye.', parameters: {} }],
      'Be brief.',
    );
    expect(system!.content).toMatch(/^# Tools\n\nYou have access to the following functions:\n\n<tools>\n/);
    expect(system!.content).toContain(
      '\n{"name": "logout", "description": "Bye.", "parameters": {}}\n</tools>',
    );
    expect(system!.content).toMatch(/<\/IMPORTANT>\n\nBe brief\.$/);
    expect(family.toolDeclaration([], 'Be brief.')).toEqual([{ role: 'system', content: 'Be brief.' }]);
  });
});

describe('qwen3_5 reasoning', () => {
  const family = chatFamily('qwen3_5');
  const reasoned: FamilyMessage = { role: 'assistant', content: 'Done.', thinking: 'It worked.' };

  it('opens the reasoning in the prompt and closes an empty block for a turn that did not reason', () => {
    expect(textOf(family.generationPrompt([user]))).toMatch(/<\|im_start\|>assistant\n<think>\n$/);
    expect(completionOf('qwen3_5', [user, reasoned])).toBe('It worked.\n</think>\n\nDone.<|im_end|>');
    expect(completionOf('qwen3_5', [user, { role: 'assistant', content: 'Done.' }])).toBe(
      '\n</think>\n\nDone.<|im_end|>',
    );
    expect(family.parse('It worked.\n</think>\n\nDone.<|im_end|>')).toEqual({
      content: 'Done.',
      reasoning: 'It worked.',
      toolCalls: [],
      unparsed: [],
      ok: true,
    });
  });

  it('drops reasoning from history, and a reasoning history turn gets no empty block either', () => {
    const call = {
      role: 'assistant',
      content: '',
      thinking: 'Look first.',
      toolCalls: [{ name: 'ls', arguments: '{}' }],
    };
    // after the last user message: its reasoning goes, and no empty block takes its place
    const sameTurn = textOf(family.generationPrompt([user, call, { role: 'tool', content: 'a.txt' }]));
    expect(sameTurn).not.toContain('Look first.');
    expect(sameTurn).toContain('<|im_start|>assistant\n<tool_call>\n<function=ls>');
    // a turn that did not reason, in the same place, gets the empty block
    const plain = { ...call, thinking: undefined };
    expect(textOf(family.generationPrompt([user, plain, { role: 'tool', content: 'a.txt' }]))).toContain(
      '<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>',
    );
    const later = textOf(family.generationPrompt([user, reasoned, { role: 'user', content: 'ok' }]));
    expect(later).toContain('<|im_start|>assistant\nDone.<|im_end|>');
    expect(later).not.toContain('It worked.');
    expect(family.extension).toBe(false);
  });

  it('qwen3_5_disable_thinking closes the block in the prompt and refuses a turn that reasoned', () => {
    const off = chatFamily('qwen3_5_disable_thinking');
    expect(textOf(off.generationPrompt([user]))).toMatch(/assistant\n<think>\n\n<\/think>\n\n$/);
    expect(() => off.supervised([user, reasoned])).toThrow(RenderRefused);
    expect(completionOf('qwen3_5_disable_thinking', [user, { role: 'assistant', content: 'Done.' }])).toBe(
      'Done.<|im_end|>',
    );
  });
});
