import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pairedChange, pooledComparison, signTestP } from '../../src/eval/paired.js';

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

describe('pooledComparison', () => {
  const v = (s: string) => new Map([...'abcd'].map((id, i) => [id, s[i] === '1']));
  it('pools won / lost over seeds and averages each task over them', () => {
    const base = v('1100');
    // seed 1: b lost, c and d won; seed 2: a lost, c won. An id held by one side only is left out.
    const s1 = new Map([...v('1011'), ['e', true]]);
    const s2 = v('0110');
    const c = pooledComparison([
      { first: base, other: s1 },
      { first: base, other: s2 },
    ]);
    expect(c).toMatchObject({ pairs: 2, tasks: 4, won: 3, lost: 2 });
    // 2 x P(X <= 2), n = 5: 2 x (1 + 5 + 10) / 32 = 1
    expect(c.p).toBeCloseTo(1, 12);
    // per task (mean over seeds, points): a -50, b -50, c +100, d +50; mean 12.5, which is the
    // mean over seeds of the averages' difference: (+25 + 0) / 2
    expect(c.diff.mean).toBeCloseTo(12.5, 12);
    expect(c.diff.lo).toBeGreaterThanOrEqual(-50);
    expect(c.diff.hi).toBeLessThanOrEqual(100);
  });

  it('gives the sign test of a one-sided split', () => {
    const ids = Array.from({ length: 10 }, (_, i) => `t${i}`);
    const first = new Map(ids.map((id) => [id, false]));
    const other = new Map(ids.map((id) => [id, true]));
    const c = pooledComparison([{ first, other }]);
    // 10 won, 0 lost: 2 / 2^10
    expect(c.p).toBeCloseTo(2 / 1024, 14);
    expect(c.diff).toMatchObject({ mean: 100, lo: 100, hi: 100 });
  });

  it('is empty without pairs', () => {
    expect(pooledComparison([])).toMatchObject({ pairs: 0, tasks: 0, won: 0, lost: 0, p: 1 });
  });
});
