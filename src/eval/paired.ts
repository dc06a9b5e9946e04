/**
 * Two strict evaluations of the same tasks compared task by task, pure. A policy nudged by a few
 * updates passes some tasks it failed and fails some it passed; the difference of two averages
 * hides that churn, and only the tasks that changed say whether one policy is better (McNemar's
 * test: the tasks both pass or both fail carry no information about which is better).
 */

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
