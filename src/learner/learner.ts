/**
 * The learner contract, shaped after the Tinker training API so that a remote trainer can drive the
 * same loop: `forwardBackward` on token-level data (the sampler's own token ids, per-token
 * advantages and sampling logprobs; nothing is re-tokenised between rollout and update), then
 * `optimStep` with Adam's parameters, then `samplingPolicy` for a sampler on the new weights.
 * The embedded GPT learner (learner/embedded/learner.ts) is the first implementation.
 */
import type { Policy } from '../policy/policy.js';

/** One training sequence (Tinker's Datum): the whole context the sampler saw and wrote. */
export interface TrainingDatum {
  /** prompt ids, then the sampled completion ids (and, when steps are packed, later ones) */
  readonly tokens: readonly number[];
  /** per token, 1 where it carries loss (a sampled token), else 0; the first token never does */
  readonly weights: readonly number[];
  /** per token, the sampler's logprob (read where weights is 1) */
  readonly samplingLogprobs: readonly number[];
  /** per token, the advantage (read where weights is 1) */
  readonly advantages: readonly number[];
}

/** the PPO-clip surrogate with a k3 KL to the reference policy (method doc section 7) */
export interface PpoLoss {
  readonly clipEps: number;
  readonly klCoef: number;
  /** the temperature the sampling logprobs were drawn at */
  readonly temperature: number;
}

export interface AdamParams {
  readonly lr: number;
  readonly beta1?: number;
  readonly beta2?: number;
  readonly eps?: number;
  readonly weightDecay?: number;
  /** global gradient-norm clip */
  readonly maxGradNorm?: number;
}

/** token means over the batch */
export interface ForwardBackwardResult {
  /** the total loss (surrogate + klCoef * kl) */
  readonly loss: number;
  /** the PPO-clip surrogate */
  readonly pgLoss: number;
  /** the k3 KL to the reference */
  readonly kl: number;
  /** the share of tokens whose surrogate was clipped (zero gradient) */
  readonly clipFrac: number;
  /** the ratio pi/pi_old */
  readonly meanRatio: number;
  readonly tokens: number;
}

export interface OptimStepResult {
  /** global gradient norm before clipping */
  readonly gradNorm: number;
  /** optimiser steps taken so far */
  readonly step: number;
}

/** A sampler on the learner's current weights; `close` frees what it holds (threads). */
export interface SamplingPolicy extends Policy {
  close(): Promise<void>;
}

export interface Learner {
  /** the policy version: optimiser steps whose weights the next `samplingPolicy` carries */
  readonly version: number;
  /** computes the loss of `data` and accumulates its gradient (token mean over `data`) */
  forwardBackward(data: readonly TrainingDatum[], loss: PpoLoss): Promise<ForwardBackwardResult>;
  /** applies the accumulated gradient and clears it */
  optimStep(adam: AdamParams): Promise<OptimStepResult>;
  /** a sampler on the current weights */
  samplingPolicy(): Promise<SamplingPolicy>;
  /** writes weights and optimiser state into `dir` so that `restore(dir)` continues exactly */
  save(dir: string): Promise<void>;
  close(): Promise<void>;
}
