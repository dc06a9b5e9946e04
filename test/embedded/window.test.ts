import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { trainingWindows, type WindowMessage, windowStart } from '../../src/policy/embedded/window.js';

const chat = (...spec: [string, number][]): WindowMessage[] =>
  spec.map(([role, tokens]) => ({ role, tokens }));

describe('context window of the embedded policy', () => {
  it('keeps everything that fits, else drops the oldest messages after the system prompt', () => {
    const m = chat(
      ['system', 50],
      ['user', 20],
      ['assistant', 10],
      ['user', 30],
      ['assistant', 10],
      ['user', 20],
    );
    expect(windowStart(m, 1000)).toBe(1);
    // 50 + 10 + 30 + 10 + 20 = 120 fits from index 2, but an assistant message does not open a window
    expect(windowStart(m, 120)).toBe(3);
    expect(windowStart(m, 70)).toBe(5);
    expect(windowStart(m, 69)).toBeUndefined();
    expect(windowStart(chat(['user', 5], ['assistant', 5], ['user', 5]), 10)).toBe(2);
  });

  it('training windows cover every assistant message once, each within the budget', () => {
    const role = fc.constantFrom('user', 'assistant');
    fc.assert(
      fc.property(
        fc.integer({ min: 5, max: 60 }),
        fc.array(fc.tuple(role, fc.integer({ min: 1, max: 80 })), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 60, max: 300 }),
        (system, rest, budget) => {
          const m = chat(['system', system], ...(rest as [string, number][]));
          const windows = trainingWindows(m, budget);
          const targets: number[] = [];
          for (const w of windows) {
            const size = system + m.slice(w.start, w.end).reduce((a, x) => a + x.tokens, 0);
            expect(size).toBeLessThanOrEqual(budget);
            expect(w.start).toBeGreaterThanOrEqual(1);
            expect(w.from).toBeGreaterThanOrEqual(w.start);
            for (let i = w.from; i < w.end; i++) if (m[i]!.role === 'assistant') targets.push(i);
          }
          const fitting = m
            .map((x, i) => ({ x, i }))
            .filter(({ x, i }) => i > 0 && x.role === 'assistant' && system + x.tokens <= budget)
            .map(({ i }) => i);
          expect(targets).toEqual(fitting);
        },
      ),
    );
  });

  it('a chat that fits is one window', () => {
    const m = chat(['system', 10], ['user', 10], ['assistant', 10]);
    expect(trainingWindows(m, 30)).toEqual([{ start: 1, end: 3, from: 1 }]);
  });
});
