/**
 * The learner contract, shaped after the Tinker training API so that a remote trainer can drive the
 * same loop: `forwardBackward` on token-level data (the sampler's own token ids, per-token
 * advantages and sampling logprobs; nothing is re-tokenised between rollout and update), then
 * `optimStep` with Adam's parameters, then `samplingPolicy` for a sampler on the new weights.
 * The embedded GPT learner (learner/embedded/learner.ts) is the first implementation.
 */
import type { Policy } from '../policy/policy.js';

/** A supervised sequence (Tinker's Datum for its cross-entropy loss): tokens and target weights. */
export interface SupervisedDatum {
  readonly tokens: readonly number[];
  /** per token, its weight as a target of the token before it (0: none); the first token never is */
  readonly weights: readonly number[];
}

/** One training sequence (Tinker's Datum): the whole context the sampler saw and wrote. */
export interface TrainingDatum extends SupervisedDatum {
  /** prompt ids, then the sampled completion ids (and, when steps are packed, later ones) */
  readonly tokens: readonly number[];
  /** per token, 1 where it carries loss (a sampled token), else 0; the first token never does */
  readonly weights: readonly number[];
  /** per token, the sampler's logprob (read where weights is 1) */
  readonly samplingLogprobs: readonly number[];
  /** per token, the advantage (read where weights is 1) */
  readonly advantages: readonly number[];
}

/** the PPO-clip surrogate with a k3 KL to the reference policy (docs/method.md, section 7) */
export interface PpoLoss {
  readonly clipEps: number;
  readonly klCoef: number;
  /** the temperature the sampling logprobs were drawn at */
  readonly temperature: number;
}

/** the weighted token-mean negative log-likelihood, its gradient scaled by `coef` */
export interface CrossEntropyLoss {
  readonly coef: number;
}

export interface CrossEntropyResult {
  /** the weighted token-mean negative log-likelihood (unscaled) */
  readonly loss: number;
  readonly tokens: number;
}

/** a chat message as text, in the roles the policy's chat has */
export interface ChatText {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content: string;
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
  /**
   * sampler against trainer on the trained tokens, where the learner computes them: the k3
   * estimate of KL(sampler || trainer) (0 when both agree), and the sampler's entropy estimate
   * (the mean negative logprob of what it sampled)
   */
  readonly samplerKl?: number;
  readonly samplerEntropy?: number;
  readonly tokens: number;
}

export interface OptimStepResult {
  /** global gradient norm before clipping */
  readonly gradNorm: number;
  /** optimiser steps taken so far */
  readonly step: number;
}

/** a learner's running totals (Learner.usage) */
export interface LearnerUsage {
  /** the service session the learner works in (a resumed run has a new one) */
  readonly session?: string;
  /** base-model prefill tokens spent on the KL term */
  readonly klPrefillTokens: number;
  /** requests by kind: how many, their wall time, and the part after the service accepted them */
  readonly requests: Readonly<
    Record<string, { readonly count: number; readonly ms: number; readonly afterAcceptMs: number }>
  >;
}

/** a service's bill for a run's sessions (Learner.billed) */
export interface BilledUsage {
  /** the priced rows' estimated gross cost, USD */
  readonly costUsd: number;
  readonly rows: number;
  /** rows the service has not priced yet (its data lags by hours) */
  readonly unpriced: number;
  /** the window asked for, whole UTC hours */
  readonly startingOn: string;
  readonly endingBefore: string;
}

/** A sampler on the learner's current weights; `close` frees what it holds (threads). */
export interface SamplingPolicy extends Policy {
  close(): Promise<void>;
}

export interface Learner {
  /** the policy version: optimiser steps whose weights the next `samplingPolicy` carries */
  readonly version: number;
  /**
   * true: a call may be made before the one before it has resolved, and calls take effect in the
   * order they were made (a remote service's queue: sending a step's requests back to back saves
   * the service's clock cycles). Otherwise each call is awaited before the next is made.
   */
  readonly queuesCalls?: boolean;
  /** computes the loss of `data` and accumulates its gradient (token mean over `data`) */
  forwardBackward(data: readonly TrainingDatum[], loss: PpoLoss): Promise<ForwardBackwardResult>;
  /** computes the cross-entropy of `data` and accumulates coef x its gradient (Tinker's cross_entropy) */
  forwardBackwardCrossEntropy(
    data: readonly SupervisedDatum[],
    loss: CrossEntropyLoss,
  ): Promise<CrossEntropyResult>;
  /**
   * A chat in the learner's own chat template as supervised data, the assistant tokens its targets
   * (like a Tinker renderer's supervised example); a chat longer than the context becomes the
   * windows the policy would see.
   */
  renderSupervised(chat: readonly ChatText[]): SupervisedDatum[];
  /** applies the accumulated gradient and clears it */
  optimStep(adam: AdamParams): Promise<OptimStepResult>;
  /** a sampler on the current weights */
  samplingPolicy(): Promise<SamplingPolicy>;
  /**
   * A sampler on saved weights: a checkpoint `save` wrote (its folder), or null for the weights
   * before any step. What lets the loop sample a round ahead, while the learner trains.
   */
  samplingPolicyAt?(checkpoint: string | null): Promise<SamplingPolicy>;
  /**
   * A head start on data a later `forwardBackward` will be given (a remote learner's KL prefills):
   * nothing changes but when the work is done; data never given cost only that work.
   */
  prepare?(data: readonly TrainingDatum[]): void;
  /**
   * Optional: per sequence, the current weights' logprob at `temperature` of every token from
   * index `from` on, given the tokens before it (the guided update's ratio floor reads them)
   */
  logprobs?(
    sequences: readonly { readonly tokens: readonly number[]; readonly from: number }[],
    temperature: number,
  ): Promise<number[][]>;
  /** what the learner has spent so far, where it can say (a remote learner): counters, never reset */
  usage?(): LearnerUsage;
  /**
   * What the service bills the given sessions (LearnerUsage.session) from `from` to now, where a
   * remote learner's service says: rows it priced, and how many it has not priced yet
   */
  billed?(sessions: readonly string[], from: Date): Promise<BilledUsage>;
  /**
   * writes weights and optimiser state into `dir` so that `restore(dir)` continues exactly;
   * `keep: false` lets a learner that stores checkpoints elsewhere let this one expire once a later
   * one has replaced it (a Tinker service's TTL)
   */
  save(dir: string, opts?: { readonly keep?: boolean }): Promise<void>;
  close(): Promise<void>;
}
