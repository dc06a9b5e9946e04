import { describe, expect, it } from 'vitest';
import { BASE_CHECKPOINT_DIR, loadCheckpoint } from '../../src/nn/checkpoint.js';
import { EmbeddedPolicy } from '../../src/policy/embedded/policy.js';
import type { ChatMessage } from '../../src/policy/policy.js';

describe('the embedded prompt length', () => {
  const { model, tokenizer } = loadCheckpoint(BASE_CHECKPOINT_DIR);
  const policy = new EmbeddedPolicy(model, tokenizer);
  const ctx = model.config.contextLength;
  const chat = (words: number): ChatMessage[] => [
    { role: 'system', content: 'You can call tools: ls(), cd(folder: str).' },
    { role: 'user', content: Array.from({ length: words }, (_, i) => `file${i}`).join(' ') },
  ];

  it('counts what promptIds keeps, and a prompt over the budget is exactly one promptIds cuts', () => {
    const short = policy.promptLength({ messages: chat(5) });
    expect(short.budget).toBe(ctx - Math.min(128, ctx >> 2) - 1);
    // the ids end with the generation prompt, which the length leaves out
    expect(policy.promptIds(chat(5)).length).toBe(short.tokens + 1);

    let words = 5;
    while (policy.promptLength({ messages: chat(words) }).tokens <= short.budget) words *= 2;
    const long = policy.promptLength({ messages: chat(words) });
    expect(long.tokens).toBeGreaterThan(long.budget);
    const ids = policy.promptIds(chat(words));
    expect(ids.length).toBe(long.budget + 1);
    // cut from the left: the system prompt's opening is gone
    const head = policy.promptIds(chat(5)).slice(0, 8);
    expect(ids.slice(0, 8)).not.toEqual(head);
  });

  it('a small completion budget leaves more of the context to the prompt', () => {
    const wide = policy.promptLength({ messages: chat(5), maxTokens: 16 });
    expect(wide.budget).toBe(ctx - 16 - 1);
  });
});
