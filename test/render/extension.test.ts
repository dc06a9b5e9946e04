/**
 * A multi-turn rollout in Qwen3's own format, token ids only: the sampler's completion (tool calls
 * as `<tool_call>` JSON) decodes through the hermes decoder, goes back into the chat as the
 * assistant's text, and the next prompt is checked against previous prompt + completion. Qwen3's
 * template keeps the reasoning of the current user turn and drops that of earlier turns, so a
 * rollout that thinks is one sequence within a turn and splits at the next user message; one that
 * does not think is one sequence throughout. With enable_thinking=false the generation prompt's
 * empty `<think>` block is dropped from history at once, so no step extends.
 */
import { describe, expect, it } from 'vitest';
import { hermesFormat } from '../../src/agent/formats/index.js';
import type { OpenAiTool } from '../../src/envs/tools.js';
import { Tokenizer } from '../../src/nn/tokenizer.js';
import { EmbeddedRenderer } from '../../src/render/embedded-renderer.js';
import { extension } from '../../src/render/extension.js';
import {
  type ChatInput,
  nullContentAsEmpty,
  type Renderer,
  type RenderMessage,
} from '../../src/render/renderer.js';
import { qwen3Renderer } from '../support/render.js';

const TOOLS: OpenAiTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_zipcode_based_on_city',
      description: 'The zip code of a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];

const CALL =
  '<tool_call>\n{"name": "get_zipcode_based_on_city", "arguments": {"city": "Rivermist"}}\n</tool_call>';

interface Step {
  /** what the model writes (its thinking included), before the stop token */
  readonly completion: string;
  /** the tool result, or the next user message */
  readonly reply: RenderMessage;
}

/**
 * Plays the steps: each prompt is rendered from the chat so far, the completion is what a sampler
 * would return (ids ending with the stop token), its decoded text goes back into the chat. Returns
 * the extension of each step's prompt over the previous prompt and completion.
 */
function play(
  r: Renderer,
  steps: readonly Step[],
  enableThinking?: boolean,
  tools: OpenAiTool[] | null = TOOLS,
) {
  const messages: RenderMessage[] = [{ role: 'user', content: 'What is the zip code of Rivermist?' }];
  const prompt = (): number[] => {
    const chat: ChatInput = {
      messages,
      tools,
      addGenerationPrompt: true,
      ...(enableThinking !== undefined ? { enableThinking } : {}),
    };
    return [...r.render(chat).tokens];
  };
  let previous = prompt();
  const results = [];
  for (const step of steps) {
    const completion = [...r.encode(step.completion), r.stopTokens[0]!];
    const text = r.completionText(completion);
    expect(text).toBe(step.completion);
    messages.push({ role: 'assistant', content: text }, step.reply);
    const next = prompt();
    results.push({ ext: extension(previous, completion, next), previous, completion, next, text });
    previous = next;
  }
  return results;
}

const toolResult: RenderMessage = { role: 'tool', content: '{"zipcode": "83214"}', tool_call_id: 'call_0' };
const nextQuery: RenderMessage = { role: 'user', content: 'And the zip code of Stonebrook?' };

describe('prefix extension on Qwen3', () => {
  it('a sampled <tool_call> completion decodes through the hermes decoder', () => {
    const r = qwen3Renderer();
    const [step] = play(r, [{ completion: `<think>\nLook it up.\n</think>\n\n${CALL}`, reply: toolResult }]);
    expect(hermesFormat.decode({ text: step!.text, latencyMs: 0 })).toEqual({
      kind: 'calls',
      calls: ["get_zipcode_based_on_city(city='Rivermist')"],
    });
  });

  it('with thinking: one sequence within a user turn, split where the next turn drops the reasoning', () => {
    const r = qwen3Renderer();
    const [call, answer] = play(r, [
      { completion: `<think>\nI need the zip code.\n</think>\n\n${CALL}`, reply: toolResult },
      { completion: '<think>\nThe tool answered.\n</think>\n\nThe zip code is 83214.', reply: nextQuery },
    ]);
    expect(call!.ext.extends).toBe(true);
    if (!call!.ext.extends) return;
    // the suffix is the tool result and the next generation prompt, nothing else
    expect(r.decode(call!.ext.suffix)).toBe(
      '\n<|im_start|>user\n<tool_response>\n{"zipcode": "83214"}\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
    );
    expect(answer!.ext.extends).toBe(false);
    if (answer!.ext.extends) return;
    // the first completion's <think> block is gone from the history
    expect(answer!.ext.at).toBe(
      r.render({
        messages: [{ role: 'user', content: 'What is the zip code of Rivermist?' }],
        tools: TOOLS,
        addGenerationPrompt: true,
      }).tokens.length,
    );
    expect(r.decode(answer!.next)).not.toContain('I need the zip code.');
  });

  it('without thinking: every step extends, across user turns too', () => {
    const r = qwen3Renderer();
    const steps = play(r, [
      { completion: CALL, reply: toolResult },
      { completion: 'The zip code is 83214.', reply: nextQuery },
      { completion: CALL.replace('Rivermist', 'Stonebrook'), reply: toolResult },
    ]);
    for (const s of steps) expect(s.ext.extends).toBe(true);
    // the sequence is the last prompt: every token of it was prompted or sampled
    const last = steps[steps.length - 1]!;
    expect(last.next.slice(0, last.previous.length)).toEqual(last.previous);
  });

  it("with enable_thinking=false: the prompt's empty <think> block leaves the history, so nothing extends", () => {
    const r = qwen3Renderer();
    const steps = play(
      r,
      [
        { completion: CALL, reply: toolResult },
        { completion: 'The zip code is 83214.', reply: nextQuery },
      ],
      false,
    );
    expect(r.decode(steps[0]!.previous).endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(
      true,
    );
    for (const s of steps) expect(s.ext.extends).toBe(false);
  });
});

describe('native tool calls', () => {
  it("render in Qwen's <tool_call> form; null content fails as in transformers unless made empty", () => {
    const r = qwen3Renderer();
    const messages: RenderMessage[] = [
      { role: 'user', content: 'What is the zip code of Rivermist?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_0',
            type: 'function',
            function: { name: 'get_zipcode_based_on_city', arguments: '{"city": "Rivermist"}' },
          },
        ],
      },
      toolResult,
    ];
    expect(() => r.render({ messages, tools: TOOLS })).toThrow(/chat template failed/);
    const { text } = r.render({ messages: nullContentAsEmpty(messages), tools: TOOLS });
    expect(text).toContain(`<|im_start|>assistant\n${CALL}<|im_end|>`);
  });
});

describe('extension', () => {
  it('returns the suffix, or where the sequences part and why', () => {
    expect(extension([1, 2], [3], [1, 2, 3, 4, 5])).toEqual({ extends: true, suffix: [4, 5] });
    expect(extension([1, 2], [3], [1, 2, 3])).toEqual({ extends: true, suffix: [] });
    const rewritten = extension([1, 2], [3], [1, 9, 3, 4]);
    expect(rewritten).toMatchObject({ extends: false, at: 1 });
    expect(extension([1, 2], [3], [1, 2, 7])).toMatchObject({
      extends: false,
      at: 2,
      reason: /sampled completion/,
    });
    expect(extension([1, 2], [3], [1, 2])).toMatchObject({ extends: false, at: 2, reason: /shorter/ });
  });
});

describe('the embedded tokenizer as a Renderer', () => {
  const tok = Tokenizer.train(['get_zipcode(city="Rivermist") returned 83214', 'What is the zip code?'], 300);
  const r = new EmbeddedRenderer(tok);

  it('renders the embedded prompt format, decodes back, and stops at <|end|>', () => {
    const chat: ChatInput = {
      messages: [
        { role: 'system', content: 'Use the tools.' },
        { role: 'user', content: 'What is the zip code?' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ function: { name: 'get_zipcode', arguments: { city: 'Rivermist' } } }],
        },
        { role: 'tool', content: '83214', tool_call_id: 'call_0' },
      ],
      addGenerationPrompt: true,
    };
    const { text, tokens } = r.render(chat);
    expect(text).toBe(
      '<|system|>Use the tools.<|end|><|user|>What is the zip code?<|end|>' +
        '<|assistant|>{"name":"get_zipcode","arguments":"{\\"city\\":\\"Rivermist\\"}"}<|end|><|tool|>83214<|end|><|assistant|>',
    );
    expect(r.decode(tokens)).toBe(text);
    expect(r.stopTokens).toEqual([tok.special('<|end|>')]);
    expect(r.completionText([...tok.encodeOrdinary('ok'), tok.special('<|end|>')])).toBe('ok');
  });

  it('never rewrites history: every step extends', () => {
    const steps = play(
      r,
      [
        { completion: 'get_zipcode(city="Rivermist")', reply: toolResult },
        { completion: '83214', reply: nextQuery },
      ],
      undefined,
      null,
    );
    for (const s of steps) expect(s.ext.extends).toBe(true);
  });
});
