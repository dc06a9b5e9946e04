/**
 * Diagnosis-guided advantage reweighting (docs/method.md, section 6): each rollout's advantage is
 * scaled by w_j = clip(sum_z p_j(z) rho(z), w_min, w_max), where p_j(z) is the share of the
 * rollout's turns labelled z. Every w_j is positive, so the verifier's verdict (the sign of the
 * advantage) is never overturned; only the step size per rollout changes.
 *
 * Pure functions over plain data; the dynamic weights live in a serialisable state value.
 */
import { EXCLUDED_LABELS, LABELS, type Label } from './labels.js';
import type { ProfileScope } from './profile.js';

/** Labels that carry a weight: all but those blaming the checker or the ground truth. */
export type WeightedLabel = Exclude<Label, 'checker_error' | 'gt_error'>;

/** A utility rho(z) for every weighted label. */
export type Rho = Readonly<Record<WeightedLabel, number>>;

export function isWeightedLabel(label: Label): label is WeightedLabel {
  return !EXCLUDED_LABELS.has(label);
}

export const WEIGHTED_LABELS: readonly WeightedLabel[] = LABELS.filter(isWeightedLabel);

/**
 * The paper's utilities, plus our values for the three labels it names without a number. It
 * asks for >= 1.5 for concrete executable failures: `invalid_tool_call` 1.6 (the clearest action
 * error, one notch above `argument_mismatch`), `argument_mismatch` 1.5; `recovery_failure` 1.2
 * sits between the executable failures and the downstream `state_mismatch`, because the tool's
 * error message already told the policy what went wrong.
 */
export const DEFAULT_RHO: Rho = Object.freeze({
  pass: 1.0,
  invalid_tool_call: 1.6,
  argument_mismatch: 1.5,
  state_mismatch: 1.0,
  instance_mismatch: 0.6,
  recovery_failure: 1.2,
  missing_tool_call: 1.5,
  spurious_tool_call: 2.0,
  correct_abstention: 1.8,
  response_mismatch: 0.9,
});

export const DEFAULT_W_MIN = 0.5;
export const DEFAULT_W_MAX = 2.0;

export interface WeightOptions {
  readonly rho?: Rho;
  readonly wMin?: number;
  readonly wMax?: number;
}

function clip(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

function checkBounds(lo: number, hi: number, what: string): void {
  // A bound <= 0 would let a weight flip or erase an advantage's sign.
  if (!(Number.isFinite(lo) && Number.isFinite(hi) && lo > 0 && lo <= hi)) {
    throw new RangeError(`${what}: need finite bounds with 0 < min <= max, got [${lo}, ${hi}]`);
  }
}

function rhoOf(rho: Rho, label: WeightedLabel): number {
  const value = rho[label];
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new RangeError(`rho.${label} must be a finite number, got ${value}`);
  }
  return value;
}

/**
 * w_j for one rollout from its per-turn labels. Excluded labels are dropped before the shares
 * are taken; a rollout with no countable label is left alone (w = 1, not clipped, as in the
 * reference: there is nothing to weight it by).
 */
export function rolloutWeight(labels: readonly Label[], opts: WeightOptions = {}): number {
  const { rho = DEFAULT_RHO, wMin = DEFAULT_W_MIN, wMax = DEFAULT_W_MAX } = opts;
  checkBounds(wMin, wMax, 'rolloutWeight');
  const counts = new Map<WeightedLabel, number>();
  let countable = 0;
  for (const label of labels) {
    if (!isWeightedLabel(label)) continue;
    counts.set(label, (counts.get(label) ?? 0) + 1);
    countable += 1;
  }
  if (countable === 0) return 1;
  // Summing in a fixed label order keeps w independent of the turn order, bit for bit.
  let weighted = 0;
  for (const label of WEIGHTED_LABELS) {
    const count = counts.get(label);
    if (count !== undefined) weighted += count * rhoOf(rho, label);
  }
  return clip(weighted / countable, wMin, wMax);
}

/** Which advantages the weights touch: all, or only those of better- or worse-than-group rollouts. */
export type WeightMode = 'all' | 'positive' | 'negative';

/** Scales advantage i by weight i where the mode applies to it; the others pass unchanged. */
export function applyWeights(
  advantages: readonly number[],
  weights: readonly number[],
  mode: WeightMode = 'all',
): number[] {
  if (advantages.length !== weights.length) {
    throw new RangeError(`applyWeights: ${advantages.length} advantages but ${weights.length} weights`);
  }
  return advantages.map((advantage, i) => {
    const weight = weights[i]!;
    if (!(Number.isFinite(weight) && weight > 0)) {
      throw new RangeError(`applyWeights: weight ${i} is ${weight}; weights must be positive and finite`);
    }
    const applies = mode === 'all' || (mode === 'positive' ? advantage > 0 : advantage < 0);
    return applies ? advantage * weight : advantage;
  });
}

// ---------------------------------------------------------------------------------------------
// Dynamic weights: rho follows the current failure profile, so labels the policy keeps failing
// on get a larger step, and the boost fades again as the policy masters them.

export interface DynamicRhoState {
  readonly version: 1;
  readonly rho: Rho;
  /** how many updates moved the weights (updates without evidence do not count) */
  readonly updates: number;
}

export function initialDynamicRho(base: Rho = DEFAULT_RHO): DynamicRhoState {
  const rho = Object.fromEntries(WEIGHTED_LABELS.map((label) => [label, rhoOf(base, label)])) as Record<
    WeightedLabel,
    number
  >;
  return { version: 1, rho, updates: 0 };
}

/** Reads a state saved as JSON; throws on anything that is not one. */
export function dynamicRhoFromJSON(json: unknown): DynamicRhoState {
  if (typeof json !== 'object' || json === null) throw new TypeError('dynamic rho: expected an object');
  const { version, rho, updates } = json as Record<string, unknown>;
  if (version !== 1) throw new TypeError(`dynamic rho: expected version 1, got ${JSON.stringify(version)}`);
  if (typeof updates !== 'number' || !Number.isSafeInteger(updates) || updates < 0) {
    throw new TypeError(
      `dynamic rho: updates must be a non-negative integer, got ${JSON.stringify(updates)}`,
    );
  }
  if (typeof rho !== 'object' || rho === null) throw new TypeError('dynamic rho: rho must be an object');
  const table = rho as Record<string, unknown>;
  for (const key of Object.keys(table)) {
    if (!(WEIGHTED_LABELS as readonly string[]).includes(key)) {
      throw new TypeError(`dynamic rho: unknown label ${JSON.stringify(key)}`);
    }
  }
  const restored = initialDynamicRho(table as Rho);
  return { ...restored, updates };
}

export interface DynamicRhoOptions {
  /** EMA rate toward the target, in [0, 1] */
  readonly beta?: number;
  /** how strongly pressure raises a label's target */
  readonly alpha?: number;
  /** turns of a label needed before its pressure counts in full */
  readonly confidenceSamples?: number;
  readonly wMin?: number;
  readonly wMax?: number;
  /** the static utilities the targets scale */
  readonly base?: Rho;
}

/**
 * One EMA step of the label weights toward targets read off a profile scope (normally the
 * window's `overall`):
 *
 *   target(z) = clip(base(z) * (1 + alpha * prevalence(z) * (1 - meanReward(z)) * min(1, count(z) / confidenceSamples)))
 *   rho'(z)   = clip((1 - beta) * rho(z) + beta * target(z))
 *
 * As in the reference, `pass` keeps its base as target (success needs no extra push) while every
 * other weighted label, `correct_abstention` included, can be boosted; a label absent from the
 * scope has pressure 0 and drifts back to its base. Prevalence is recomputed over the countable
 * turns only (excluded labels out of the denominator), as the reference does; meanReward is the
 * profile's per-rollout mean, the quantity docs/method.md names (the reference averages per
 * turn). A scope with no countable turn carries no evidence and returns the state unchanged
 * (the reference falls back to the base weights for that step instead).
 */
export function updateDynamicRho(
  state: DynamicRhoState,
  scope: ProfileScope,
  opts: DynamicRhoOptions = {},
): DynamicRhoState {
  const {
    beta = 0.25,
    alpha = 1.0,
    confidenceSamples = 32,
    wMin = DEFAULT_W_MIN,
    wMax = DEFAULT_W_MAX,
    base = DEFAULT_RHO,
  } = opts;
  checkBounds(wMin, wMax, 'updateDynamicRho');
  if (!(beta >= 0 && beta <= 1))
    throw new RangeError(`updateDynamicRho: beta must be in [0, 1], got ${beta}`);
  if (!Number.isFinite(alpha)) throw new RangeError(`updateDynamicRho: alpha must be finite, got ${alpha}`);
  if (!(confidenceSamples >= 1 && Number.isFinite(confidenceSamples))) {
    throw new RangeError(`updateDynamicRho: confidenceSamples must be >= 1, got ${confidenceSamples}`);
  }

  let countableTurns = 0;
  for (const label of WEIGHTED_LABELS) countableTurns += scope.labels[label]?.count ?? 0;
  if (countableTurns === 0) return state;

  const rho = {} as Record<WeightedLabel, number>;
  for (const label of WEIGHTED_LABELS) {
    const baseWeight = rhoOf(base, label);
    let target = baseWeight;
    const stats = scope.labels[label];
    if (label !== 'pass' && stats && stats.count > 0) {
      const prevalence = stats.count / countableTurns;
      const stagnation = 1 - stats.meanReward;
      const confidence = Math.min(1, stats.count / confidenceSamples);
      target = baseWeight * (1 + alpha * prevalence * stagnation * confidence);
    }
    const previous = rhoOf(state.rho, label);
    rho[label] = clip((1 - beta) * previous + beta * clip(target, wMin, wMax), wMin, wMax);
  }
  return { version: 1, rho, updates: state.updates + 1 };
}

// ---------------------------------------------------------------------------------------------
// Per-batch budget: keeps the reweighting a residual signal. Without it a batch full of
// boosted failures would take a larger total step than vanilla GRPO would.

export interface BudgetOptions {
  readonly minScale: number;
  readonly maxScale: number;
  /** 1 keeps each scale's deviation from 1, 0 flattens all to 1 before normalising, in between shrinks */
  readonly strength?: number;
  readonly targetMean?: number;
  /** rescale the tagged scales to `targetMean` (after softening and clipping) */
  readonly normaliseMean?: boolean;
}

/**
 * The reference's budget: for the tagged rollouts, s <- 1 + strength * (s - 1), clip; then
 * s <- s * targetMean / mean(s), clip again. Untagged scales are returned unchanged. The final
 * clip can leave the mean off target when a scale hits a bound.
 */
export function budgetNormalise(
  scales: readonly number[],
  tagged: readonly boolean[],
  opts: BudgetOptions,
): number[] {
  const { minScale, maxScale, strength = 1, targetMean = 1, normaliseMean = true } = opts;
  if (scales.length !== tagged.length) {
    throw new RangeError(`budgetNormalise: ${scales.length} scales but ${tagged.length} tags`);
  }
  checkBounds(minScale, maxScale, 'budgetNormalise');
  if (!(strength >= 0 && Number.isFinite(strength))) {
    throw new RangeError(`budgetNormalise: strength must be finite and >= 0, got ${strength}`);
  }
  if (!(targetMean > 0 && Number.isFinite(targetMean))) {
    throw new RangeError(`budgetNormalise: targetMean must be positive, got ${targetMean}`);
  }
  const indices = tagged.flatMap((isTagged, i) => (isTagged ? [i] : []));
  const out = [...scales];
  if (indices.length === 0) return out;
  let selected = indices.map((i) => clip(1 + strength * (scales[i]! - 1), minScale, maxScale));
  if (normaliseMean) {
    const mean = selected.reduce((sum, s) => sum + s, 0) / selected.length;
    // Scales are clipped to a positive range, so this floor only guards against underflow.
    const factor = targetMean / Math.max(mean, 1e-6);
    selected = selected.map((s) => clip(s * factor, minScale, maxScale));
  }
  indices.forEach((index, k) => {
    out[index] = selected[k]!;
  });
  return out;
}
