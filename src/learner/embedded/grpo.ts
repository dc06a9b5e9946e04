/**
 * The GRPO update of the embedded model (SEAL method doc, section 7): PPO-clip surrogate on the
 * token-level ratio to the sampler's logprobs, k3 KL estimator to a frozen reference, token-mean loss
 * over the masked (assistant) tokens of the whole batch, hand-written backward pass, global-norm
 * gradient clipping, Adam.
 *
 * Memory stays bounded by micro-batching: sequences are processed in micro-batches of
 * `microBatchSize` (their activations alive together), each micro-batch's gradient is accumulated
 * into one flat buffer and its activations dropped before the next; one optimiser step per update.
 */
import { addLogprobGrad, allocate, type Gpt, sequenceLogprobs } from '../../policy/embedded/model.js';
import { Adam, type AdamOptions, clipGradNorm } from './optim.js';
import { LazyGradientPool } from './parallel.js';

export interface GrpoSequence {
  /** prompt and completion token ids (the whole context the model saw) */
  readonly tokens: readonly number[];
  /** per token, 1 where the token carries loss (assistant tokens); lossMask[0] must be 0 */
  readonly lossMask: readonly number[];
  /** per token, the sampler's logprob (read where lossMask is 1) */
  readonly oldLogprobs: readonly number[];
  /**
   * the advantage (already group-normalised and diagnosis-weighted): one for the whole sequence, or
   * one per token (read where lossMask is 1), e.g. when only some turns of a rollout take its credit
   */
  readonly advantage: number | readonly number[];
  /** per token, the reference model's logprobs; computed from `reference` when absent */
  readonly refLogprobs?: readonly number[];
}

export interface GrpoOptions extends AdamOptions {
  /** PPO ratio clip; default 0.2 */
  readonly clipEps?: number;
  /** k3 KL-to-reference coefficient; default 0.001 */
  readonly klCoef?: number;
  /**
   * the sampling temperature the old logprobs were drawn at: the ratio compares like with like
   * (logits / T for both); default 1. The KL term always uses the untempered distributions.
   */
  readonly temperature?: number;
  /** global gradient-norm clip; default 1 */
  readonly maxGradNorm?: number;
  /** sequences whose activations are alive at once; default 1 */
  readonly microBatchSize?: number;
  /**
   * Worker threads computing each update's gradient (data parallel, see parallel.ts); default 1,
   * in process. With more, use `updateAsync` and `close`; results differ by float rounding only.
   */
  readonly workers?: number;
}

/** what shapes the loss (the rest of `GrpoOptions` is the optimiser's and the threads') */
export type GrpoLossOptions = Pick<GrpoOptions, 'clipEps' | 'klCoef' | 'microBatchSize' | 'temperature'>;

export interface GrpoStats {
  /** token-mean total loss (surrogate + klCoef * kl) before the step */
  readonly loss: number;
  readonly pgLoss: number;
  /** token-mean k3 KL to the reference */
  readonly kl: number;
  /** fraction of tokens whose surrogate was clipped (zero gradient) */
  readonly clipFrac: number;
  /** global gradient norm before clipping */
  readonly gradNorm: number;
  /** token-mean ratio pi/pi_old */
  readonly meanRatio: number;
  readonly tokens: number;
}

/** The summed parts of a batch's GRPO loss; divided by `tokens` they are the token means. */
export interface GrpoSums {
  readonly pgSum: number;
  readonly klSum: number;
  readonly clipped: number;
  readonly ratioSum: number;
  readonly tokens: number;
}

/** Checks a batch's shapes and counts its loss tokens (the token-mean denominator). */
export function grpoTargets(batch: readonly GrpoSequence[]): number {
  let n = 0;
  for (const s of batch) {
    if (
      s.lossMask.length !== s.tokens.length ||
      s.oldLogprobs.length !== s.tokens.length ||
      (typeof s.advantage !== 'number' && s.advantage.length !== s.tokens.length)
    ) {
      throw new Error(
        'GRPO: tokens, lossMask, oldLogprobs (and per-token advantages) must have the same length',
      );
    }
    if ((s.lossMask[0] ?? 0) > 0)
      throw new Error('GRPO: the first token cannot carry loss (nothing predicts it)');
    for (let t = 1; t < s.tokens.length; t++) if (s.lossMask[t]! > 0) n++;
  }
  return n;
}

/**
 * The summed GRPO loss parts of `batch`; when `grads` is given, ADDS the gradient of (summed loss
 * / `denominator`) into it. With the whole batch's token count as the denominator, a part of a
 * batch (one gradient worker's share) contributes exactly its share of the token-mean loss.
 */
export function grpoSumsAndGrad(
  model: Gpt,
  reference: Gpt | null,
  batch: readonly GrpoSequence[],
  opts: GrpoLossOptions,
  grads: Float32Array | Float64Array | null,
  denominator: number,
): GrpoSums {
  const eps = opts.clipEps ?? 0.2;
  const beta = opts.klCoef ?? 0.001;
  const micro = Math.max(1, Math.floor(opts.microBatchSize ?? 1));
  const T = opts.temperature ?? 1;
  if (!(T > 0)) throw new Error('GRPO: the sampling temperature must be above 0');
  const V = model.config.vocabSize;
  let n = 0;
  let pgSum = 0;
  let klSum = 0;
  let clipped = 0;
  let ratioSum = 0;
  for (let b0 = 0; b0 < batch.length; b0 += micro) {
    const mb = batch.slice(b0, b0 + micro);
    const fwd = mb.map((s) => model.forward(s.tokens));
    for (const [i, s] of mb.entries()) {
      const { logits, cache } = fwd[i]!;
      const lp = sequenceLogprobs(logits, V, s.tokens);
      // the ratio's logprobs at the sampling temperature; d/dz log softmax(z/T) = (1/T) (onehot - softmax(z/T))
      let tempered = logits;
      if (T !== 1) {
        tempered = allocate(model.dtype, logits.length);
        for (let j = 0; j < logits.length; j++) tempered[j] = logits[j]! / T;
      }
      const lpT = T === 1 ? lp : sequenceLogprobs(tempered, V, s.tokens);
      let ref: ArrayLike<number> | null = s.refLogprobs ?? null;
      if (!ref && beta !== 0) {
        if (!reference) throw new Error('GRPO: no reference model and no refLogprobs');
        ref = sequenceLogprobs(reference.forward(s.tokens).logits, V, s.tokens);
      }
      const dlogits = grads ? allocate(model.dtype, logits.length) : null;
      for (let t = 1; t < s.tokens.length; t++) {
        if (s.lossMask[t]! <= 0) continue;
        n++;
        const A = typeof s.advantage === 'number' ? s.advantage : s.advantage[t]!;
        const ratio = Math.exp(lpT[t]! - s.oldLogprobs[t]!);
        const cr = Math.min(Math.max(ratio, 1 - eps), 1 + eps);
        const unclipped = -A * ratio;
        const clippedLoss = -A * cr;
        ratioSum += ratio;
        let dlpT = 0;
        if (clippedLoss > unclipped) {
          pgSum += clippedLoss;
          clipped++;
        } else {
          pgSum += unclipped;
          dlpT = -A * ratio;
        }
        let dlp = 0;
        if (ref && beta !== 0) {
          const logp = lp[t]!;
          const d = ref[t]! - logp;
          const e = Math.exp(d);
          klSum += e - d - 1;
          dlp = beta * (1 - e);
        }
        if (dlogits && dlpT !== 0)
          addLogprobGrad(dlogits, tempered, V, t - 1, s.tokens[t]!, dlpT / T / denominator);
        if (dlogits && dlp !== 0) addLogprobGrad(dlogits, logits, V, t - 1, s.tokens[t]!, dlp / denominator);
      }
      if (grads && dlogits) model.backward(cache, dlogits, grads);
    }
  }
  return { pgSum, klSum, clipped, ratioSum, tokens: n };
}

/** The token-mean statistics of summed parts. */
export function grpoStats(sums: GrpoSums, klCoef = 0.001): Omit<GrpoStats, 'gradNorm'> {
  const n = sums.tokens;
  if (n === 0) return { loss: 0, pgLoss: 0, kl: 0, clipFrac: 0, meanRatio: 1, tokens: 0 };
  const pgLoss = sums.pgSum / n;
  const kl = sums.klSum / n;
  return {
    loss: pgLoss + klCoef * kl,
    pgLoss,
    kl,
    clipFrac: sums.clipped / n,
    meanRatio: sums.ratioSum / n,
    tokens: n,
  };
}

/**
 * The GRPO loss of `batch` under `model`; when `grads` is given, ADDS the gradient into it.
 * `reference` may be null when every sequence carries refLogprobs or klCoef is 0.
 */
export function grpoLossAndGrad(
  model: Gpt,
  reference: Gpt | null,
  batch: readonly GrpoSequence[],
  opts: GrpoLossOptions,
  grads: Float32Array | Float64Array | null,
): Omit<GrpoStats, 'gradNorm'> {
  const n = grpoTargets(batch);
  if (n === 0) return grpoStats({ pgSum: 0, klSum: 0, clipped: 0, ratioSum: 0, tokens: 0 });
  return grpoStats(grpoSumsAndGrad(model, reference, batch, opts, grads, n), opts.klCoef);
}

/** the learner: owns the Adam state and a gradient buffer of the trained model */
export class GrpoLearner {
  readonly optimizer: Adam;
  private readonly grads;
  readonly workers: number;
  private readonly pool: LazyGradientPool;

  constructor(
    readonly model: Gpt,
    readonly reference: Gpt | null,
    readonly opts: GrpoOptions,
  ) {
    if (reference && reference.numParams !== model.numParams)
      throw new Error('GRPO: reference has another shape');
    this.workers = Math.max(1, Math.floor(opts.workers ?? 1));
    this.optimizer = new Adam(model.numParams, opts);
    this.grads = model.zerosLike();
    this.pool = new LazyGradientPool(model, this.workers, reference);
  }

  /** one optimiser step on `batch` (a PPO mini-batch, in process); returns the stats before the step */
  update(batch: readonly GrpoSequence[]): GrpoStats {
    if (this.workers > 1) throw new Error('GrpoLearner: with workers > 1, call updateAsync');
    this.grads.fill(0);
    const s = grpoLossAndGrad(this.model, this.reference, batch, this.opts, this.grads);
    const gradNorm = clipGradNorm(this.grads, this.opts.maxGradNorm ?? 1);
    if (s.tokens > 0) this.optimizer.step(this.model.params, this.grads);
    return { ...s, gradNorm };
  }

  /**
   * `update` for any worker count: with one worker exactly `update`; with more, the gradient comes
   * from the worker pool (started on the first call; the reference is copied to shared memory once,
   * it never changes) and Adam updates the weights here, in place.
   */
  async updateAsync(batch: readonly GrpoSequence[]): Promise<GrpoStats> {
    if (this.workers === 1) return this.update(batch);
    const pool = await this.pool.ready();
    const s = await pool.grpo(batch, this.opts);
    const gradNorm = clipGradNorm(pool.grads, this.opts.maxGradNorm ?? 1);
    if (s.tokens > 0) this.optimizer.step(this.model.params, pool.grads);
    return { ...s, gradNorm };
  }

  /** stops the gradient workers, if any; idempotent */
  close(): Promise<void> {
    return this.pool.close();
  }

  /** the trained weights in the checkpoint format (`Gpt.serialize`; the Adam state is not included) */
  save(meta: Record<string, unknown> = {}): Uint8Array {
    return this.model.serialize(meta);
  }

  /** the embedded sampler reads `model` itself, so updated weights are live at once: nothing to copy */
  syncSampler(): void {
    // intentionally empty: learner and sampler share one Gpt
  }
}
