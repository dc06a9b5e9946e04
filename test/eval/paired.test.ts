import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pairedChange, signTestP } from '../../src/eval/paired.js';

describe('pairedChange', () => {
  it('counts the tasks that changed, over the ids both evaluations hold', () => {
    const first = new Map([
      ['a', true],
      ['b', true],
      ['c', false],
      ['d', false],
      ['e', true],
    ]);
    // a kept, b lost, c won, d still failed; e only in the first, f only in the other
    const other = new Map([
      ['a', true],
      ['b', false],
      ['c', true],
      ['d', false],
      ['f', true],
    ]);
    expect(pairedChange(first, other)).toEqual({ shared: 4, won: 1, lost: 1 });
    expect(pairedChange(other, first)).toEqual({ shared: 4, won: 1, lost: 1 });
    expect(pairedChange(first, first)).toEqual({ shared: 5, won: 0, lost: 0 });
  });
});

describe('signTestP', () => {
  it('matches the binomial tail worked out by hand', () => {
    // 7 won, 13 lost: n = 20, P(X <= 7) = (1 + 20 + 190 + 1140 + 4845 + 15504 + 38760 + 77520)
    // / 2^20 = 137980 / 1048576; two-sided: twice that
    expect(signTestP(7, 13)).toBeCloseTo((2 * 137980) / 1048576, 12);
    // 0 won, 5 lost: 2 * 1/32
    expect(signTestP(0, 5)).toBeCloseTo(2 / 32, 14);
    // 1 against 1: the most even split there is
    expect(signTestP(1, 1)).toBe(1);
    expect(signTestP(0, 0)).toBe(1);
  });

  it('does not underflow for thousands of changed tasks', () => {
    // 2^-3000 is 0 in floats; the tail of an even split is still about 1
    expect(signTestP(1500, 1500)).toBe(1);
    expect(signTestP(1400, 1600)).toBeGreaterThan(0);
    expect(signTestP(1400, 1600)).toBeLessThan(1e-3);
  });

  it('is symmetric, in (0, 1], and falls as the split grows more uneven', () => {
    fc.assert(
      fc.property(fc.nat(300), fc.nat(300), (won, lost) => {
        const p = signTestP(won, lost);
        expect(p).toBeGreaterThan(0);
        expect(p).toBeLessThanOrEqual(1);
        expect(signTestP(lost, won)).toBeCloseTo(p, 12);
        // one more task to the larger side makes the split more uneven
        if (won !== lost) {
          const more = won > lost ? signTestP(won + 1, lost) : signTestP(won, lost + 1);
          expect(more).toBeLessThanOrEqual(p * (1 + 1e-12));
        }
      }),
    );
  });
});
