/**
 * GRPO's group-relative advantages (docs/method.md, section 7: Policy optimisation), as verl's
 * `compute_grpo_outcome_advantage` computes them from one scalar outcome reward per rollout,
 * and their diagnosis weighting. Pure; float64 where verl uses float32.
 */
import { applyWeights } from '../seal/weighting.js';

export type GroupId = string | number;

export interface GrpoOptions {
  /** divide by the group's standard deviation (GRPO); false gives Dr. GRPO's mean-centring only */
  readonly normaliseStd?: boolean;
  readonly epsilon?: number;
  /**
   * A group holding a single rollout has no baseline. 'zero' gives it advantage 0: it carries no
   * group-relative signal. 'verl' reproduces verl, which sets that group's mean to 0 and std to
   * 1, so the advantage is r / (1 + epsilon) (or r without std normalisation).
   */
  readonly singleton?: 'zero' | 'verl';
}

/**
 * A_j = (r_j - mean_g) / (std_g + epsilon) over the rollouts j of each group g, with the
 * unbiased (n - 1) standard deviation, as `torch.std` gives verl. A group whose rewards are all
 * equal gets 0 everywhere. Groups are told apart by `===` on their ids (so 1 and '1' differ).
 */
export function grpoAdvantages(
  rewards: readonly number[],
  groupIds: readonly GroupId[],
  opts: GrpoOptions = {},
): number[] {
  const { normaliseStd = true, epsilon = 1e-6, singleton = 'zero' } = opts;
  if (rewards.length !== groupIds.length) {
    throw new RangeError(`grpoAdvantages: ${rewards.length} rewards but ${groupIds.length} group ids`);
  }
  if (!(epsilon >= 0 && Number.isFinite(epsilon))) {
    throw new RangeError(`grpoAdvantages: epsilon must be finite and >= 0, got ${epsilon}`);
  }
  rewards.forEach((reward, i) => {
    if (!Number.isFinite(reward)) throw new RangeError(`grpoAdvantages: reward ${i} is ${reward}`);
  });

  const members = new Map<GroupId, number[]>();
  groupIds.forEach((id, i) => {
    const group = members.get(id);
    if (group) group.push(i);
    else members.set(id, [i]);
  });

  const advantages = new Array<number>(rewards.length);
  for (const indices of members.values()) {
    const n = indices.length;
    let mean: number;
    let std: number;
    if (n === 1) {
      if (singleton === 'zero') {
        advantages[indices[0]!] = 0;
        continue;
      }
      mean = 0;
      std = 1;
    } else if (indices.every((i) => rewards[i] === rewards[indices[0]!])) {
      // Decided before any arithmetic: the float mean of equal rewards can miss them by an ulp,
      // and that residue divided by a residual std (or by 0 when epsilon is 0) is noise, not 0.
      for (const i of indices) advantages[i] = 0;
      continue;
    } else {
      mean = indices.reduce((sum, i) => sum + rewards[i]!, 0) / n;
      const squares = indices.reduce((sum, i) => sum + (rewards[i]! - mean) ** 2, 0);
      std = Math.sqrt(squares / (n - 1));
    }
    for (const i of indices) {
      const centred = rewards[i]! - mean;
      advantages[i] = normaliseStd ? centred / (std + epsilon) : centred;
    }
  }
  return advantages;
}

/**
 * The advantages the policy update uses, w_j * A_j (only where the mode applies). The same
 * function as `seal/weighting`'s `applyWeights`, named for the trainer's side.
 */
export const weightedAdvantages = applyWeights;
