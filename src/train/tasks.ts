/**
 * Which tasks a round trains on and which ones validation scores, as pure functions of the seed:
 * a resumed run draws exactly what an uninterrupted one would, with no random state to save.
 */
import type { BfclData, BfclTask } from '../envs/bfcl/data/tasks.js';
import { CATEGORIES } from '../envs/bfcl/data/tasks.js';
import { mixSeed, Rng } from '../util/rng.js';
import { SettingsError } from '../util/settings.js';

/**
 * The `perRound` tasks of round `round` (1-based): epochs over the training split, each in its own
 * seeded order, so every task is seen once per epoch.
 */
export function roundTasks(
  train: readonly BfclTask[],
  seed: number,
  round: number,
  perRound: number,
): BfclTask[] {
  if (train.length === 0) throw new RangeError('roundTasks: the training split is empty');
  const out: BfclTask[] = [];
  const epochOrder = new Map<number, BfclTask[]>();
  for (let k = (round - 1) * perRound; k < round * perRound; k++) {
    const epoch = Math.floor(k / train.length);
    let order = epochOrder.get(epoch);
    if (!order) {
      order = new Rng(mixSeed(seed, 0x7a5c, epoch), 'mulberry32').sample(train, train.length);
      epochOrder.set(epoch, order);
    }
    out.push(order[k % train.length]!);
  }
  return out;
}

/**
 * The latest observed success rate of each task trained on so far: its id -> the mean reward of
 * the last group sampled on it. Only a task strictly between 0 and 1 gives GRPO a signal.
 */
export type TaskRates = Readonly<Record<string, number>>;

/**
 * A round's tasks when a share of them is drawn again from earlier tasks whose last group had
 * some but not all rollouts succeed (beyond the paper, named `revisit`): with a sparse reward most
 * fresh groups are all failures and carry no group-relative signal, while a task the policy
 * sometimes solves is where an update can move it. The revisited tasks replace the last fresh
 * ones; with too few such tasks the fresh ones stay. A pure function of its inputs, so a resumed
 * run (whose state holds the rates) draws what an uninterrupted one would.
 */
export function withRevisits(
  fresh: readonly BfclTask[],
  byId: ReadonlyMap<string, BfclTask>,
  rates: TaskRates,
  share: number,
  seed: number,
  round: number,
): BfclTask[] {
  const want = Math.round(share * fresh.length);
  if (want === 0) return [...fresh];
  const freshIds = new Set(fresh.map((t) => t.id));
  const pool = Object.keys(rates)
    .filter((id) => rates[id]! > 0 && rates[id]! < 1 && !freshIds.has(id) && byId.has(id))
    .sort();
  const picked = new Rng(mixSeed(seed, 0x4e715, round), 'mulberry32').sample(
    pool,
    Math.min(want, pool.length),
  );
  return [...fresh.slice(0, fresh.length - picked.length), ...picked.map((id) => byId.get(id)!)];
}

/**
 * The validation subset: `n` tasks of the development split, the same number per category (as near
 * as `n` allows), fixed by the seed. Never test tasks: validation is what settings are chosen on.
 * A suite without a development split (BFCL) gives held-out training tasks instead, which
 * `trainingTasks` then leaves out of training.
 */
export function validationTasks(data: BfclData, seed: number, n: number): BfclTask[] {
  const pool = (data.split.dev ?? data.split.train).map((id) => data.byId.get(id)!).filter(Boolean);
  const out: BfclTask[] = [];
  CATEGORIES.forEach((c, i) => {
    const share = Math.floor(n / CATEGORIES.length) + (i < n % CATEGORIES.length ? 1 : 0);
    const inCategory = pool.filter((t) => t.category === c);
    out.push(
      ...new Rng(mixSeed(seed, 0x5a11d, i), 'mulberry32').sample(
        inCategory,
        Math.min(share, inCategory.length),
      ),
    );
  });
  return out;
}

/** The training split without the validation subset (which is drawn from it only on suites without a dev split). */
export function trainingTasks(data: BfclData, validation: readonly BfclTask[]): BfclTask[] {
  const held = new Set(validation.map((t) => t.id));
  return data.split.train
    .filter((id) => !held.has(id))
    .map((id) => data.byId.get(id)!)
    .filter(Boolean);
}

/** What the validation subset is, for the record: `40 dev tasks` or `40 held-out training tasks`. */
export function validationSource(data: BfclData, n: number): string {
  return `${n} ${data.split.dev ? 'dev' : 'held-out training'} tasks`;
}

/**
 * The training tasks a pool names (`trainPool`), in the pool's order; every id must be one of
 * `train` (a test or development task in a pool would leak it into training, a typo would
 * silently shrink it).
 */
export function poolTasks(train: readonly BfclTask[], ids: readonly string[], source: string): BfclTask[] {
  if (ids.length === 0)
    throw new SettingsError(`${source} names no task; give at least one training task id`);
  const byId = new Map(train.map((t) => [t.id, t]));
  const missing = ids.filter((id) => !byId.has(id));
  if (missing.length > 0)
    throw new SettingsError(
      `${source}: ${missing.length} id(s) are not tasks of the training split (${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', ...' : ''}); a pool may name training tasks only`,
    );
  return [...new Set(ids)].map((id) => byId.get(id)!);
}

/** the ids of a pool file's text: one a line, blank lines and `#` comments skipped */
export function poolIds(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line !== '');
}
