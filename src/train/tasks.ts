/**
 * Which tasks a round trains on and which ones validation scores, as pure functions of the seed:
 * a resumed run draws exactly what an uninterrupted one would, with no random state to save.
 */
import type { BfclData, BfclTask } from '../envs/bfcl/data/tasks.js';
import { CATEGORIES } from '../envs/bfcl/data/tasks.js';
import { mixSeed } from '../envs/mini/index.js';
import { Rng } from '../envs/mini/util.js';

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
      order = new Rng(mixSeed(seed, 0x7a5c, epoch)).sample(train, train.length);
      epochOrder.set(epoch, order);
    }
    out.push(order[k % train.length]!);
  }
  return out;
}

/** `n` test tasks, the same number per category (as near as `n` allows), fixed by the seed */
export function validationTasks(data: BfclData, seed: number, n: number): BfclTask[] {
  const test = data.split.test.map((id) => data.byId.get(id)!).filter(Boolean);
  const out: BfclTask[] = [];
  CATEGORIES.forEach((c, i) => {
    const share = Math.floor(n / CATEGORIES.length) + (i < n % CATEGORIES.length ? 1 : 0);
    const pool = test.filter((t) => t.category === c);
    out.push(...new Rng(mixSeed(seed, 0x5a11d, i)).sample(pool, Math.min(share, pool.length)));
  });
  return out;
}
