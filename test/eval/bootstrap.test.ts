import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bootstrapMean } from '../../src/eval/bootstrap.js';

/**
 * The exact distribution of the bootstrap mean of data holding a values +1, b values -1 and c
 * zeros (n = a + b + c), scaled by `unit`: a resample draws (i, j, n - i - j) of them with the
 * multinomial probability, and its mean is unit (i - j) / n. Computed by enumeration, in log
 * space, independently of any resampling.
 */
function exactBootstrap(a: number, b: number, c: number, unit: number): Map<number, number> {
  const n = a + b + c;
  const logFact = [0];
  for (let k = 1; k <= n; k++) logFact.push(logFact[k - 1]! + Math.log(k));
  const lp = (x: number) => (x === 0 ? Number.NEGATIVE_INFINITY : Math.log(x / n));
  const dist = new Map<number, number>();
  for (let i = 0; i <= n; i++)
    for (let j = 0; i + j <= n; j++) {
      const k = n - i - j;
      const terms = [i && lp(a) * i, j && lp(b) * j, k && lp(c) * k];
      if (terms.some((t) => t === Number.NEGATIVE_INFINITY || Number.isNaN(t))) continue;
      const p = Math.exp(
        logFact[n]! - logFact[i]! - logFact[j]! - logFact[k]! + terms.reduce((s, t) => s + t, 0),
      );
      const m = (unit * (i - j)) / n;
      dist.set(m, (dist.get(m) ?? 0) + p);
    }
  return dist;
}

/** the smallest value whose distribution function reaches q */
function quantile(dist: Map<number, number>, q: number): number {
  let cum = 0;
  for (const m of [...dist.keys()].sort((x, y) => x - y)) {
    cum += dist.get(m)!;
    if (cum >= q - 1e-12) return m;
  }
  return Math.max(...dist.keys());
}

const data = (a: number, b: number, c: number, unit: number) => [
  ...Array<number>(a).fill(unit),
  ...Array<number>(b).fill(-unit),
  ...Array<number>(c).fill(0),
];

describe('bootstrapMean', () => {
  it('gives the worked interval of two tasks', () => {
    // resampled means of [0, 100]: 0 with 1/4, 50 with 1/2, 100 with 1/4; the 2.5% and 97.5%
    // quantiles are therefore 0 and 100, and the mean is 50
    const r = bootstrapMean([0, 100], { seed: 7 });
    expect(r).toEqual({ mean: 50, lo: 0, hi: 100, level: 0.95, resamples: 10_000 });
  });

  it('is a point for constant data and NaN for none', () => {
    expect(bootstrapMean([2.5, 2.5, 2.5])).toMatchObject({ mean: 2.5, lo: 2.5, hi: 2.5 });
    expect(Number.isNaN(bootstrapMean([]).mean)).toBe(true);
  });

  it('matches the exact bootstrap distribution of won / lost / unchanged tasks', () => {
    // 400 tasks a method changed the way a trained run does: 19 won, 10 lost, in points
    for (const [a, b, c] of [
      [19, 10, 371],
      [10, 2, 388],
      [30, 30, 340],
    ] as const) {
      const exact = exactBootstrap(a, b, c, 100);
      const step = 100 / (a + b + c);
      const r = bootstrapMean(data(a, b, c, 100), { seed: 3 });
      expect(r.mean).toBeCloseTo((100 * (a - b)) / (a + b + c), 12);
      // 10,000 resamples put an empirical 2.5% quantile within a grid step of the exact one
      expect(Math.abs(r.lo - quantile(exact, 0.025))).toBeLessThanOrEqual(step + 1e-9);
      expect(Math.abs(r.hi - quantile(exact, 0.975))).toBeLessThanOrEqual(step + 1e-9);
    }
  });

  it('is a function of the seed', () => {
    const xs = data(19, 10, 371, 100);
    expect(bootstrapMean(xs, { seed: 11 })).toEqual(bootstrapMean(xs, { seed: 11 }));
    // a 99% interval holds the 95% one
    const wide = bootstrapMean(xs, { seed: 11, level: 0.99 });
    const narrow = bootstrapMean(xs, { seed: 11 });
    expect(wide.lo).toBeLessThanOrEqual(narrow.lo);
    expect(wide.hi).toBeGreaterThanOrEqual(narrow.hi);
  });

  it('brackets the mean and stays within the data', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -100, max: 100 }), { minLength: 1, maxLength: 40 }),
        fc.nat(1000),
        (xs, seed) => {
          const r = bootstrapMean(xs, { seed, resamples: 500 });
          expect(r.lo).toBeLessThanOrEqual(r.hi);
          expect(r.lo).toBeGreaterThanOrEqual(Math.min(...xs));
          expect(r.hi).toBeLessThanOrEqual(Math.max(...xs));
        },
      ),
    );
  });

  it('refuses a nonsense number of resamples or level', () => {
    expect(() => bootstrapMean([1], { resamples: 0 })).toThrow(/resamples/);
    expect(() => bootstrapMean([1], { level: 1 })).toThrow(/level/);
  });
});
