/**
 * Supervised (next-token cross-entropy) training of the embedded model, for the base checkpoint:
 * token-mean loss over the masked target tokens, gradients accumulated one sequence at a time.
 */
import { type Arr, addLogprobGrad, allocate, type Gpt, tokenLogprob } from '../../policy/embedded/model.js';
import { Adam, type AdamOptions, clipGradNorm } from './optim.js';
import { LazyGradientPool } from './parallel.js';

export interface SupervisedSequence {
  readonly tokens: readonly number[];
  /**
   * per token, its weight as a training target: 0 for none, 1 for a full target, in between for a
   * token that should count less (default: every token after the first, weight 1)
   */
  readonly lossMask?: readonly number[];
}

/** the number of target tokens of `batch` (the denominator of its token-mean loss) */
export function countTargets(batch: readonly SupervisedSequence[]): number {
  let n = 0;
  for (const s of batch) for (let t = 1; t < s.tokens.length; t++) if ((s.lossMask?.[t] ?? 1) > 0) n++;
  return n;
}

/** the summed target weights of `batch`: the denominator of its weighted token-mean loss */
export function targetWeight(batch: readonly SupervisedSequence[]): number {
  let w = 0;
  for (const s of batch)
    for (let t = 1; t < s.tokens.length; t++) {
      const m = s.lossMask?.[t] ?? 1;
      if (m > 0) w += m;
    }
  return w;
}

/**
 * The summed weighted negative log-likelihood of the targets of `batch`; when `grads` is given, ADDS the
 * gradient of (that sum / `denominator`) into it. Taking the denominator as an argument lets a
 * part of a batch (one gradient worker's share) contribute exactly its share of the whole batch's
 * token-mean loss.
 */
export function crossEntropySumAndGrad(
  model: Gpt,
  batch: readonly SupervisedSequence[],
  grads: Arr | null,
  denominator: number,
): { lossSum: number; tokens: number } {
  const V = model.config.vocabSize;
  let loss = 0;
  let n = 0;
  for (const s of batch) {
    const { logits, cache } = model.forward(s.tokens);
    const dlogits = grads ? allocate(model.dtype, logits.length) : null;
    for (let t = 1; t < s.tokens.length; t++) {
      const w = s.lossMask?.[t] ?? 1;
      if (w <= 0) continue;
      const y = s.tokens[t]!;
      loss -= w * tokenLogprob(logits, V, t - 1, y);
      n++;
      if (dlogits) addLogprobGrad(dlogits, logits, V, t - 1, y, -w / denominator);
    }
    if (grads && dlogits) model.backward(cache, dlogits, grads);
  }
  return { lossSum: loss, tokens: n };
}

/**
 * Mean cross-entropy over the targets of `batch`; when `grads` is given, ADDS its gradient into it.
 * Returns the loss and the number of target tokens.
 */
export function crossEntropyLossAndGrad(
  model: Gpt,
  batch: readonly SupervisedSequence[],
  grads: Arr | null,
): { loss: number; tokens: number } {
  const w = targetWeight(batch);
  if (w === 0) return { loss: 0, tokens: 0 };
  const r = crossEntropySumAndGrad(model, batch, grads, w);
  return { loss: r.lossSum / w, tokens: r.tokens };
}

/** Teacher-forced fit of a model on sequences it is not trained on. */
export interface HeldOutScore {
  /** mean negative log-likelihood of the target tokens */
  readonly loss: number;
  /** share of target tokens that are the model's most likely next token (what greedy decoding writes) */
  readonly accuracy: number;
  readonly tokens: number;
}

/** Scores the targets (mask > 0, each counted once whatever its weight) of `sequences`. */
export function heldOutScore(model: Gpt, sequences: readonly SupervisedSequence[]): HeldOutScore {
  const V = model.config.vocabSize;
  let loss = 0;
  let hits = 0;
  let n = 0;
  for (const s of sequences) {
    const { logits } = model.forward(s.tokens);
    for (let t = 1; t < s.tokens.length; t++) {
      if ((s.lossMask?.[t] ?? 1) <= 0) continue;
      const y = s.tokens[t]!;
      loss -= tokenLogprob(logits, V, t - 1, y);
      const row = (t - 1) * V;
      let best = 0;
      for (let j = 1; j < V; j++) if (logits[row + j]! > logits[row + best]!) best = j;
      if (best === y) hits++;
      n++;
    }
  }
  return { loss: n > 0 ? loss / n : 0, accuracy: n > 0 ? hits / n : 0, tokens: n };
}

export interface SupervisedOptions extends AdamOptions {
  /** global gradient-norm clip; default 1 */
  readonly maxGradNorm?: number;
  /**
   * Worker threads computing the gradient of a batch (data parallel, see parallel.ts); default 1,
   * the in-process path. With more than one, use `stepAsync` and `close`. Results with different
   * worker counts differ by float rounding only (the gradient is summed in another order).
   */
  readonly workers?: number;
}

export class SupervisedTrainer {
  readonly optimizer: Adam;
  private readonly grads;
  readonly workers: number;
  private readonly pool: LazyGradientPool;

  constructor(
    readonly model: Gpt,
    readonly opts: SupervisedOptions,
  ) {
    this.workers = Math.max(1, Math.floor(opts.workers ?? 1));
    this.optimizer = new Adam(model.numParams, opts);
    this.grads = model.zerosLike();
    this.pool = new LazyGradientPool(model, this.workers);
  }

  /** one optimiser step on `batch` (in process); returns the loss before the step */
  step(batch: readonly SupervisedSequence[]): { loss: number; tokens: number; gradNorm: number } {
    if (this.workers > 1) throw new Error('SupervisedTrainer: with workers > 1, call stepAsync');
    this.grads.fill(0);
    const r = crossEntropyLossAndGrad(this.model, batch, this.grads);
    const gradNorm = clipGradNorm(this.grads, this.opts.maxGradNorm ?? 1);
    if (r.tokens > 0) this.optimizer.step(this.model.params, this.grads);
    return { ...r, gradNorm };
  }

  /**
   * `step` for any worker count: with one worker exactly `step`; with more, the gradient comes from
   * the worker pool (started on the first call) and Adam updates the weights here, in place.
   */
  async stepAsync(
    batch: readonly SupervisedSequence[],
  ): Promise<{ loss: number; tokens: number; gradNorm: number }> {
    if (this.workers === 1) return this.step(batch);
    const pool = await this.pool.ready();
    const r = await pool.supervised(batch);
    const gradNorm = clipGradNorm(pool.grads, this.opts.maxGradNorm ?? 1);
    if (r.tokens > 0) this.optimizer.step(this.model.params, pool.grads);
    return { ...r, gradNorm };
  }

  /** stops the gradient workers, if any; idempotent */
  close(): Promise<void> {
    return this.pool.close();
  }
}
