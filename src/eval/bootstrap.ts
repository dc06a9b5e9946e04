/**
 * The percentile bootstrap of a mean, pure and seeded: the same numbers and seed always give the
 * same interval, so a printed interval can be reproduced from the run folders alone.
 *
 * Used on paired per-task differences (src/eval/paired.ts): resampling tasks, not verdicts of one
 * run, keeps each task's two evaluations together, which is what makes the interval paired.
 */
import { Rng } from '../util/rng.js';

export interface BootstrapOptions {
  /** resamples of the data (default 10,000) */
  readonly resamples?: number;
  /** seeds the resampling (default 1) */
  readonly seed?: number;
  /** coverage of the interval (default 0.95) */
  readonly level?: number;
}

export interface Interval {
  readonly mean: number;
  readonly lo: number;
  readonly hi: number;
  readonly level: number;
  readonly resamples: number;
}

export const BOOTSTRAP_DEFAULTS = { resamples: 10_000, seed: 1, level: 0.95 } as const;

/**
 * The mean of `xs` and its percentile bootstrap interval: `resamples` means of n draws with
 * replacement, sorted; the bounds are the order statistics at ceil(R a / 2) and
 * ceil(R (1 - a / 2)) (1-based, a = 1 - level), i.e. the empirical a/2 and 1 - a/2 quantiles
 * (the inverse of the resampled means' distribution function).
 */
export function bootstrapMean(xs: readonly number[], options: BootstrapOptions = {}): Interval {
  const { resamples, seed, level } = { ...BOOTSTRAP_DEFAULTS, ...options };
  if (!Number.isInteger(resamples) || resamples < 1)
    throw new RangeError(`bootstrapMean: resamples must be a positive integer, got ${resamples}`);
  if (!(level > 0 && level < 1)) throw new RangeError(`bootstrapMean: level must be in (0, 1), got ${level}`);
  const n = xs.length;
  if (n === 0) return { mean: Number.NaN, lo: Number.NaN, hi: Number.NaN, level, resamples };
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const rng = new Rng(seed, 'mulberry32');
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += xs[Math.floor(rng.next() * n)]!;
    means[r] = sum / n;
  }
  means.sort();
  const a = 1 - level;
  // 1 - 0.95 is 0.05000000000000004 in floats: without the slack, R a / 2 = 250.0000000002 rounds up
  const rank = (q: number) => Math.min(resamples, Math.max(1, Math.ceil(resamples * q - 1e-9)));
  const at = (q: number) => means[rank(q) - 1]!;
  return { mean, lo: at(a / 2), hi: at(1 - a / 2), level, resamples };
}
