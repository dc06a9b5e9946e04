/**
 * The agent metrics of τ²-bench v0.2.0 (`metrics/agent_metrics.py`): the average reward over every
 * conversation and pass^k, the chance that k trials of a task drawn from its n all succeed
 * (C(successes, k) / C(n, k)), averaged over tasks, for k up to the trials every task has.
 *
 * The reference averages with pandas, whose float sums are numpy's pairwise sums; they are kept so
 * the figures agree to the last bit. One order is the reference's own accident: it sorts the tasks
 * by their number of gold actions with an unstable sort before averaging pass^k, so among tasks with
 * as many actions the order here (by task id, as pandas groups them) may differ, which can move a
 * non-dyadic average (thirds, sixths) by one unit in the last place.
 */
import { UserError } from '../../../util/errors.js';
import { compareCodePoints } from '../../py/format.js';
import { ratioToDouble } from '../../py/libm.js';
import type { Tau2Task } from '../types.js';

/** A reward counts as a success within 1e-6 of 1. */
export function isSuccessful(reward: number): boolean {
  return 1 - 1e-6 <= reward && reward <= 1 + 1e-6;
}

function comb(n: number, k: number): bigint {
  if (k < 0 || k > n) return 0n;
  let out = 1n;
  for (let i = 0; i < k; i++) out = (out * BigInt(n - i)) / BigInt(i + 1);
  return out;
}

/** pass^k of one task: C(successes, k) / C(trials, k), one correctly rounded division as Python's. */
export function passHatK(numTrials: number, successes: number, k: number): number {
  if (numTrials < k) throw new RangeError(`Number of trials ${numTrials} is less than k ${k}.`);
  return ratioToDouble(comb(successes, k), comb(numTrials, k));
}

/** numpy's pairwise summation of float64 (`np.add.reduce`), which pandas' mean uses. */
export function pairwiseSum(a: readonly number[], start = 0, n = a.length): number {
  if (n < 8) {
    let res = 0;
    for (let i = 0; i < n; i++) res += a[start + i]!;
    return res;
  }
  if (n <= 128) {
    const r = a.slice(start, start + 8);
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j]! += a[start + i + j]!;
    let res = r[0]! + r[1]! + (r[2]! + r[3]!) + (r[4]! + r[5]! + (r[6]! + r[7]!));
    for (; i < n; i++) res += a[start + i]!;
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwiseSum(a, start, n2) + pairwiseSum(a, start + n2, n - n2);
}

function mean(values: readonly number[]): number {
  return pairwiseSum(values) / values.length;
}

/** One scored conversation, as the metrics read it. */
export interface ScoredTrial {
  readonly task_id: string;
  readonly reward: number;
  readonly agent_cost?: number | null;
}

export interface Tau2Metrics {
  readonly avg_reward: number;
  /** pass^k by k, from 1 to the trials every task has (at most the run's number of trials) */
  readonly pass_hat_ks: Readonly<Record<number, number>>;
  /** the mean of the known agent costs; null when none is known */
  readonly avg_agent_cost: number | null;
  readonly num_simulations: number;
  readonly num_tasks: number;
}

/** The number of gold actions the reference sorts tasks by (-1 for a task whose one action is a transfer). */
function numActions(task: Tau2Task | undefined): number {
  const actions = task?.evaluation_criteria?.actions;
  if (!actions) return 0;
  if (actions.length === 1 && actions[0]!.name.toLowerCase().includes('transfer')) return -1;
  return actions.length;
}

/**
 * `compute_metrics` over the conversations of one domain. `numTrials` is the run's number of trials
 * (`info.num_trials`); `tasks` are the tasks the conversations are of (they set the averaging order).
 */
export function computeMetrics(
  trials: readonly ScoredTrial[],
  numTrials: number,
  tasks: readonly Tau2Task[] = [],
): Tau2Metrics {
  if (trials.length === 0) throw new UserError('no conversations to compute metrics over');
  const byTask = new Map<string, boolean[]>();
  for (const t of trials) {
    const list = byTask.get(t.task_id) ?? [];
    list.push(isSuccessful(t.reward));
    byTask.set(t.task_id, list);
  }
  let maxK = numTrials;
  const minCount = Math.min(...[...byTask.values()].map((l) => l.length));
  if (minCount < maxK) maxK = minCount;

  const taskById = new Map(tasks.map((t) => [t.id, t]));
  const order = [...byTask.keys()].sort(compareCodePoints);
  const keyed = order.map((id) => ({ id, n: numActions(taskById.get(id)) }));
  keyed.sort((a, b) => a.n - b.n);

  const passHatKs: Record<number, number> = {};
  for (let k = 1; k <= maxK; k++) {
    const perTask = keyed.map(({ id }) => {
      const results = byTask.get(id)!;
      return passHatK(results.length, results.filter(Boolean).length, k);
    });
    passHatKs[k] = mean(perTask);
  }
  const costs = trials
    .map((t) => t.agent_cost)
    .filter((c): c is number => typeof c === 'number' && !Number.isNaN(c));
  return {
    avg_reward: mean(trials.map((t) => t.reward)),
    pass_hat_ks: passHatKs,
    avg_agent_cost: costs.length > 0 ? mean(costs) : null,
    num_simulations: trials.length,
    num_tasks: byTask.size,
  };
}
