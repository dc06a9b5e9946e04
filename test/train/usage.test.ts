import { describe, expect, it } from 'vitest';
import { estimateCost, hasPrices, samplingTokens, timesSince } from '../../src/train/usage.js';

const step = (prompt: number[], completion: number[]) => ({
  promptTokenIds: prompt,
  tokenIds: completion,
  logprobs: completion.map(() => -1),
});

describe('samplingTokens', () => {
  it('counts prompts, completions, and the prefix each prompt shares with the context before it', () => {
    const t = samplingTokens([
      step([1, 2, 3], [4, 5]),
      // the chat grew: 1 2 3 4 5 is the context so far, then a tool result 6 7
      step([1, 2, 3, 4, 5, 6, 7], [8]),
      // the window dropped the first message: nothing shared from the start
      step([9, 4, 5, 6, 7, 8], [10, 11, 12]),
    ]);
    expect(t).toEqual({ prompt: 3 + 7 + 6, shared: 0 + 5 + 0, sampled: 2 + 1 + 3, cached: undefined });
  });

  it('shares only up to the first difference, and never past the prompt', () => {
    expect(samplingTokens([step([1, 2, 3], [4]), step([1, 2, 9, 4], [5])]).shared).toBe(2);
    expect(samplingTokens([step([1, 2, 3], [4, 5]), step([1, 2], [6])]).shared).toBe(2);
    expect(samplingTokens([])).toEqual({ prompt: 0, shared: 0, sampled: 0, cached: undefined });
  });

  it('sums the cache hits the sampler reported, where any step reports them', () => {
    const cachedStep = (prompt: number[], n: number) => ({ ...step(prompt, [7]), cachedPromptTokens: n });
    expect(samplingTokens([cachedStep([1, 2], 0), cachedStep([1, 2, 7, 3], 3)]).cached).toBe(3);
  });
});

describe('estimateCost', () => {
  it('prices prompt and KL prefill at prefill, completions at sample, reads at train, per million', () => {
    const usage = {
      promptTokens: 2_000_000,
      klPrefillTokens: 1_000_000,
      sampledTokens: 500_000,
      trainReadTokens: 4_000_000,
    };
    // 3 M x 0.2 + 0.5 M x 0.6 + 4 M x 0.5 = 0.6 + 0.3 + 2.0
    expect(estimateCost(usage, { prefill: 0.2, sample: 0.6, train: 0.5 })).toBeCloseTo(2.9, 12);
    expect(hasPrices({ prefill: 0, sample: 0, train: 0 })).toBe(false);
    expect(hasPrices({ prefill: 0, sample: 0, train: 0.1 })).toBe(true);
  });
});

describe('timesSince', () => {
  it('gives what each request kind added between two snapshots, and leaves out kinds with nothing new', () => {
    const before = {
      asample: { count: 10, ms: 1000, afterAcceptMs: 900 },
      optim_step: { count: 1, ms: 50, afterAcceptMs: 40 },
    };
    const now = {
      asample: { count: 15, ms: 1600, afterAcceptMs: 1400 },
      optim_step: { count: 1, ms: 50, afterAcceptMs: 40 },
      save_weights: { count: 1, ms: 300, afterAcceptMs: 250 },
    };
    expect(timesSince(now, before)).toEqual({
      asample: { count: 5, ms: 600, afterAcceptMs: 500 },
      save_weights: { count: 1, ms: 300, afterAcceptMs: 250 },
    });
  });
});
