/**
 * From sampled steps to training data, pure. Every step of a rollout is the sampler's prompt ids
 * and completion ids. When a step's prompt begins with the previous step's prompt and completion
 * (the chat grew and nothing was cut from its window), the two are one sequence: one forward pass
 * gives both completions the logprobs they were sampled with, so a rollout whose chat fits the
 * context costs one sequence instead of one per step. A step whose prompt does not extend the
 * last one (the window dropped old messages) starts a new sequence.
 */
import type { TrainingDatum } from '../learner/learner.js';
import { startsWith } from '../util/id-sequences.js';

export interface SampledStep {
  readonly promptTokenIds: readonly number[];
  readonly tokenIds: readonly number[];
  readonly logprobs: readonly number[];
  /** prompt tokens the sampler says it served from its prefix cache, when it says */
  readonly cachedPromptTokens?: number;
}

interface Building {
  tokens: number[];
  weights: number[];
  samplingLogprobs: number[];
  advantages: number[];
}

/** The fewest sequences that hold every step, each step's completion carrying its advantage. */
export function packSteps(steps: readonly SampledStep[], advantages: readonly number[]): TrainingDatum[] {
  if (steps.length !== advantages.length)
    throw new RangeError(`packSteps: ${steps.length} steps but ${advantages.length} advantages`);
  const out: Building[] = [];
  let cur: Building | undefined;
  steps.forEach((step, i) => {
    if (step.tokenIds.length !== step.logprobs.length)
      throw new RangeError(
        `packSteps: step ${i} has ${step.tokenIds.length} ids but ${step.logprobs.length} logprobs`,
      );
    if (step.promptTokenIds.length === 0) throw new RangeError(`packSteps: step ${i} has an empty prompt`);
    if (!cur || !startsWith(step.promptTokenIds, cur.tokens)) {
      cur = { tokens: [], weights: [], samplingLogprobs: [], advantages: [] };
      out.push(cur);
    }
    for (let t = cur.tokens.length; t < step.promptTokenIds.length; t++) {
      cur.tokens.push(step.promptTokenIds[t]!);
      cur.weights.push(0);
      cur.samplingLogprobs.push(0);
      cur.advantages.push(0);
    }
    step.tokenIds.forEach((id, t) => {
      cur!.tokens.push(id);
      cur!.weights.push(1);
      cur!.samplingLogprobs.push(step.logprobs[t]!);
      cur!.advantages.push(advantages[i]!);
    });
  });
  return out;
}

/** tokens that carry loss, and tokens a forward pass reads, over `data` */
export function dataTokens(data: readonly TrainingDatum[]): { trained: number; read: number } {
  let trained = 0;
  let read = 0;
  for (const d of data) {
    read += d.tokens.length;
    for (const w of d.weights) if (w > 0) trained++;
  }
  return { trained, read };
}

export type LossAggregation = 'token-mean' | 'rollout-mean';

/**
 * How much each rollout's tokens weigh in the policy-gradient term. The learner's loss is a mean
 * over every trained token of the batch (`token-mean`), so a rollout weighs as much as it is long:
 * with a sparse reward the long failures (retries after parse errors) outweigh the short success
 * that gave the group its signal, and since Adam's step follows the gradient's direction rather
 * than its size, the update mostly pushes garbage down. `rollout-mean` (the original GRPO
 * objective's per-sequence mean; verl's seq-mean-token-mean) scales each rollout's advantages by
 * N / (R * n_i), N the batch's trained tokens, R its rollouts and n_i rollout i's, so that every
 * rollout weighs the same while the mean |scale| per token stays 1. Scaling an advantage by a
 * positive factor scales its surrogate term and leaves the clipping decision alone, so this is
 * exactly a per-rollout loss weight (the KL term keeps its token mean). Pure; `rollouts[i]` is
 * rollout i's packed data.
 */
export function aggregateRollouts(
  rollouts: readonly (readonly TrainingDatum[])[],
  mode: LossAggregation,
): TrainingDatum[] {
  if (mode === 'token-mean') return rollouts.flat();
  const counts = rollouts.map((ds) => dataTokens(ds).trained);
  const total = counts.reduce((a, b) => a + b, 0);
  const used = counts.filter((n) => n > 0).length;
  return rollouts.flatMap((ds, i) => {
    if (counts[i] === 0) return [...ds];
    const scale = total / (used * counts[i]!);
    return ds.map((d) => ({ ...d, advantages: d.advantages.map((a) => a * scale) }));
  });
}
