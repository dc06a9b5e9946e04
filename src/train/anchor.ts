/**
 * The supervised anchor (beyond the paper; InstructGPT's PPO-ptx): every round's update also takes the
 * cross-entropy of ground-truth demonstrations of freshly generated training tasks, the same kind
 * the base checkpoint was pre-trained on, so that what RL does not reward in this round's rollouts
 * (above all answering in text where a value is missing) is not unlearned for the sake of what it
 * does. The demonstrations are a function of (seed, round): a resumed run takes the same ones.
 * Generated tasks are never test scenarios (`generateForTraining`).
 */
import { CATEGORIES, type Category } from '../envs/bfcl/data/tasks.js';
import { buildDemonstrations } from '../learner/embedded/demonstrations.js';
import type { Learner, SupervisedDatum } from '../learner/learner.js';
import { mixSeed } from '../util/rng.js';

const ANCHOR_STREAM = 0xa4c1;

/**
 * the anchor's supervised data for `round`: `n` demonstrations spread over `categories` (an
 * experiment that trains a habit away by reward keeps the anchor to the categories the habit does
 * not touch, so that the anchor holds them without teaching the habit's fix directly)
 */
export async function anchorData(
  learner: Pick<Learner, 'renderSupervised'>,
  seed: number,
  round: number,
  n: number,
  categories: readonly Category[] = CATEGORIES,
): Promise<SupervisedDatum[]> {
  const demos = await buildDemonstrations({
    seed: mixSeed(seed, ANCHOR_STREAM, round),
    tasks: n,
    categories,
  });
  return demos.flatMap((d) => learner.renderSupervised(d.messages));
}
