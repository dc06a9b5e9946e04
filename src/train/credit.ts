/**
 * Credit for one round (docs/method.md, sections 2 and 6), pure: the GRPO group advantage A_j of each
 * rollout, its diagnosis weight w_j (or 1 when the method does not reweight), the per-batch budget,
 * and the advantage each step of the rollout trains with.
 */
import { grpoAdvantages } from '../rl/advantages.js';
import { type Label, SUCCESS_LABELS } from '../seal/labels.js';
import type { Trajectory } from '../seal/trajectory.js';
import {
  applyWeights,
  budgetNormalise,
  rolloutWeight,
  type WeightMode,
  type WeightOptions,
} from '../seal/weighting.js';

export interface CreditInput {
  readonly group: number;
  readonly reward: number;
  /** one label per user turn */
  readonly labels: readonly Label[];
}

export interface CreditOptions {
  readonly reweight: boolean;
  readonly weights: WeightOptions;
  readonly mode: WeightMode;
  /** renormalise the weights of the nonzero-advantage rollouts to mean 1 (within the clip range) */
  readonly budget: boolean;
}

export interface RolloutCredit {
  readonly advantage: number;
  readonly weight: number;
  readonly weightedAdvantage: number;
}

export function roundCredit(rollouts: readonly CreditInput[], opts: CreditOptions): RolloutCredit[] {
  const advantages = grpoAdvantages(
    rollouts.map((r) => r.reward),
    rollouts.map((r) => r.group),
  );
  let weights = rollouts.map((r) => (opts.reweight ? rolloutWeight(r.labels, opts.weights) : 1));
  if (opts.reweight && opts.budget) {
    weights = budgetNormalise(
      weights,
      advantages.map((a) => a !== 0),
      { minScale: opts.weights.wMin ?? 0.5, maxScale: opts.weights.wMax ?? 2 },
    );
  }
  const weighted = applyWeights(advantages, weights, opts.mode);
  return rollouts.map((_, i) => ({
    advantage: advantages[i]!,
    weight: weights[i]!,
    weightedAdvantage: weighted[i]!,
  }));
}

export type CreditRule = 'rollout' | 'failed-turns' | 'diagnosed-turns';

/**
 * The advantage of each user turn of a rollout. `rollout` gives every turn the rollout's (the
 * paper). Beyond the paper, named as such: `failed-turns` keeps a negative advantage off the turns
 * the diagnosis passed, so a failed rollout's correct turns are not pushed down with the turn that
 * failed. `diagnosed-turns` also keeps a positive advantage off the turns the diagnosis failed: the
 * checker can pass a rollout with a failed turn in it (a read-only call where the user left a
 * parameter out changes no state), and that turn should not be made more likely.
 */
export function turnAdvantages(labels: readonly Label[], advantage: number, rule: CreditRule): number[] {
  if (rule === 'rollout' || advantage === 0) return labels.map(() => advantage);
  if (advantage < 0) return labels.map((l) => (SUCCESS_LABELS.has(l) ? 0 : advantage));
  if (rule === 'failed-turns') return labels.map(() => advantage);
  return labels.map((l) => (SUCCESS_LABELS.has(l) ? advantage : 0));
}

/**
 * The advantage of each step of a rollout, in play order: the advantage of the user turn the step
 * answered (turnAdvantages). A step of a turn past the labels trains with none.
 */
export function stepAdvantages(
  trajectory: Trajectory,
  labels: readonly Label[],
  advantage: number,
  rule: CreditRule,
): number[] {
  const perTurn = turnAdvantages(labels, advantage, rule);
  return trajectory.turns.flatMap((turn, i) => turn.steps.map(() => perTurn[i] ?? 0));
}
