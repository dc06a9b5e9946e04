/**
 * Two strict evaluations of the same tasks compared task by task, pure. A policy nudged by a few
 * updates passes some tasks it failed and fails some it passed; the difference of two averages
 * hides that churn, and only the tasks that changed say whether one policy is better (McNemar's
 * test: the tasks both pass or both fail carry no information about which is better).
 */
import { BOOTSTRAP_DEFAULTS, type BootstrapOptions, bootstrapMean, type Interval } from './bootstrap.js';

export interface PairedChange {
  /** tasks evaluated by both */
  readonly shared: number;
  /** passed by the other, failed by the first */
  readonly won: number;
  /** passed by the first, failed by the other */
  readonly lost: number;
}

/** won / lost of `other` against `first`, over the task ids both hold (verdict per id) */
export function pairedChange(
  first: ReadonlyMap<string, boolean>,
  other: ReadonlyMap<string, boolean>,
): PairedChange {
  let shared = 0;
  let won = 0;
  let lost = 0;
  for (const [id, a] of first) {
    const b = other.get(id);
    if (b === undefined) continue;
    shared++;
    if (b && !a) won++;
    if (a && !b) lost++;
  }
  return { shared, won, lost };
}

/**
 * The exact two-sided sign test on `won` against `lost` (McNemar's exact test): the probability
 * that two equally good policies, each changed task going either way with chance 1/2, split at
 * least this unevenly. 1 when nothing changed. Summed in log space, so that thousands of changed
 * tasks do not underflow 2^-n.
 */
export function signTestP(won: number, lost: number): number {
  const n = won + lost;
  if (n === 0) return 1;
  const k = Math.min(won, lost);
  // log C(n, i) - n log 2, for i = 0..k, built up term by term; C(n, i) grows with i up to n / 2
  // and k <= n / 2, so the last term is the largest
  const logs = [-n * Math.LN2];
  for (let i = 0; i < k; i++) logs.push(logs[i]! + Math.log(n - i) - Math.log(i + 1));
  const top = logs[k]!;
  return Math.min(1, 2 * Math.exp(top) * logs.reduce((s, l) => s + Math.exp(l - top), 0));
}

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Two evaluations of the same tasks: verdict per task id of the first and of the other. */
export interface EvaluationPair {
  readonly first: ReadonlyMap<string, boolean>;
  readonly other: ReadonlyMap<string, boolean>;
}

export interface PooledComparison {
  /** pairs pooled (one per seed) */
  readonly pairs: number;
  /** tasks every pair evaluated on both sides */
  readonly tasks: number;
  /** won / lost of `other` against `first`, summed over the pairs */
  readonly won: number;
  readonly lost: number;
  /** the exact two-sided sign test on the pooled won / lost */
  readonly p: number;
  /** the mean difference other - first, in points, with its paired bootstrap interval over tasks */
  readonly diff: Interval;
}

/**
 * Several pairs of evaluations (e.g. a method's final policy against the base, one pair per seed)
 * pooled over the tasks every pair holds. Each task's difference is the mean over the pairs of
 * (other - first) x 100, so the mean over tasks is the mean over seeds of the difference of the
 * averages (the suite's average when its categories hold as many test tasks each, as the mini and
 * BFCL test splits do); the bootstrap resamples tasks with their differences, and the sign test takes every
 * changed (pair, task) as one trial. Pooling seeds that share the test tasks makes the trials less
 * than independent (a task one seed flips, another may too): the pooled p is a summary, the
 * interval over tasks the safer guide.
 */
export function pooledComparison(
  pairs: readonly EvaluationPair[],
  options: BootstrapOptions = {},
): PooledComparison {
  // sorted by id (code units, not the locale): the bootstrap draws tasks by position, so the
  // interval must not depend on the order of the lines in a results file
  const ids = pairs.length
    ? [...pairs[0]!.first.keys()]
        .filter((id) => pairs.every((q) => q.first.has(id) && q.other.has(id)))
        .sort(byCodeUnits)
    : [];
  let won = 0;
  let lost = 0;
  const diffs = ids.map((id) => {
    let sum = 0;
    for (const q of pairs) {
      const a = q.first.get(id)!;
      const b = q.other.get(id)!;
      if (b && !a) won++;
      if (a && !b) lost++;
      sum += Number(b) - Number(a);
    }
    return (100 * sum) / pairs.length;
  });
  return {
    pairs: pairs.length,
    tasks: ids.length,
    won,
    lost,
    p: signTestP(won, lost),
    diff: bootstrapMean(diffs, options),
  };
}

/** a difference in points, its sign always written: `+1.25`, `-0.50` */
export const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(2)}`;

/** the columns of a paired comparison, after its name */
export const PAIRED_HEAD = ['tasks', 'won', 'lost', 'p', 'mean diff', '95% interval'] as const;

/** one comparison as table cells (PAIRED_HEAD) */
export function pairedCells(c: PooledComparison): string[] {
  const interval = c.tasks > 0 ? `[${signed(c.diff.lo)}, ${signed(c.diff.hi)}]` : '-';
  return [
    String(c.tasks),
    String(c.won),
    String(c.lost),
    formatP(c.p),
    c.tasks > 0 ? signed(c.diff.mean) : '-',
    interval,
  ];
}

/** p to three decimals, and small ones in scientific notation rather than 0.000 */
export function formatP(p: number): string {
  return p >= 0.001 ? p.toFixed(3) : p.toExponential(1);
}

/** What the paired columns mean, for the line under a table; `against` names the reference. */
export function pairedNote(against: string, pooled: boolean): string {
  const over = pooled ? ', summed over the seeds' : '';
  return `won / lost: tasks passed that ${against} fails, and the reverse${over}; p: the exact two-sided sign test on them (McNemar), the chance that two equally good policies split at least this unevenly; mean diff: the difference of the averages in points${pooled ? ' (mean over seeds)' : ''}, with the 95% paired bootstrap interval (${BOOTSTRAP_DEFAULTS.resamples.toLocaleString('en-US')} resamples of the tasks, seed ${BOOTSTRAP_DEFAULTS.seed}).`;
}
