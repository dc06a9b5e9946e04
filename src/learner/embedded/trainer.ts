/**
 * The one training core of the embedded model, for supervised pretraining and GRPO alike: the loss
 * and gradient of a batch (on this thread, or split over the gradient workers of parallel.ts),
 * accumulated until an optimiser step clips the global gradient norm and moves the weights with
 * Adam, in place.
 *
 * Every step is asynchronous whatever the worker count, so a caller never chooses a method by where
 * the gradient is computed. With one worker the gradient is computed here; with more, each worker's
 * share is summed in worker order (see parallel.ts), which differs from one worker by float
 * rounding only.
 */
import { type Arr, type Gpt, type Kernels, withWeightsPinned } from '../../nn/model.js';
import { type Loss, type LossSums, lossAndGrad, type TokenSequence } from './losses.js';
import { Adam, type AdamOptions, clipGradNorm } from './optim.js';
import { LazyGradientPool } from './parallel.js';

export interface TrainerOptions extends AdamOptions {
  /** global gradient-norm clip of `step` (and of `optimStep` when not given); default 1 */
  readonly maxGradNorm?: number;
  /** threads computing the gradient (data parallel, see parallel.ts); default 1, this thread */
  readonly workers?: number;
  /**
   * the float32 kernels the gradient is computed on (default the model's): the model's weights
   * are read and updated in place either way
   */
  readonly kernels?: Kernels;
}

export class Trainer {
  readonly optimizer: Adam;
  readonly workers: number;
  /** the gradient accumulated since the last optimiser step */
  private readonly grads: Arr;
  private readonly pool: LazyGradientPool;
  /** the model and reference the gradient is computed with: the same weights, on `opts.kernels` */
  private readonly compute: { readonly model: Gpt; readonly reference: Gpt | null };
  /** loss tokens behind the accumulated gradient: none, and a step leaves Adam untouched */
  private pending = 0;

  /** `reference` is the frozen model of GRPO's KL term (none for supervised training). */
  constructor(
    readonly model: Gpt,
    readonly opts: TrainerOptions,
    readonly reference: Gpt | null = null,
  ) {
    if (reference && reference.numParams !== model.numParams)
      throw new Error('Trainer: the reference model has another shape');
    this.workers = Math.max(1, Math.floor(opts.workers ?? 1));
    this.optimizer = new Adam(model.numParams, opts);
    this.grads = model.zerosLike();
    const kernels = opts.kernels ?? model.kernels;
    this.compute = { model: model.withKernels(kernels), reference: reference?.withKernels(kernels) ?? null };
    this.pool = new LazyGradientPool(this.compute.model, this.workers, this.compute.reference);
  }

  /** The statistics of `batch` under `loss`; its gradient is added to the accumulated one. */
  async forwardBackward<S extends TokenSequence, P extends LossSums, R extends { readonly tokens: number }>(
    batch: readonly S[],
    loss: Loss<S, P, R>,
  ): Promise<R> {
    let stats: R;
    if (this.workers > 1) {
      const pool = await this.pool.ready();
      stats = await pool.lossAndGrad(batch, loss);
      const g = this.grads;
      for (let i = 0; i < g.length; i++) g[i] = g[i]! + pool.grads[i]!;
    } else {
      const { model, reference } = this.compute;
      stats = withWeightsPinned([model, reference], () =>
        lossAndGrad(loss, model, reference, batch, this.grads),
      );
    }
    this.pending += stats.tokens;
    return stats;
  }

  /**
   * Applies the accumulated gradient (clipped to `maxGradNorm`) with Adam at `lr` (the optimiser's
   * own when not given) and clears it; returns the gradient norm before clipping.
   */
  optimStep(step: { readonly lr?: number; readonly maxGradNorm?: number } = {}): number {
    if (step.lr !== undefined) this.optimizer.lr = step.lr;
    const gradNorm = clipGradNorm(this.grads, step.maxGradNorm ?? this.opts.maxGradNorm ?? 1);
    if (this.pending > 0) this.optimizer.step(this.model.params, this.grads);
    this.grads.fill(0);
    this.pending = 0;
    return gradNorm;
  }

  /** one optimiser step on `batch`; the statistics are those before the step */
  async step<S extends TokenSequence, P extends LossSums, R extends { readonly tokens: number }>(
    batch: readonly S[],
    loss: Loss<S, P, R>,
  ): Promise<R & { readonly gradNorm: number }> {
    const stats = await this.forwardBackward(batch, loss);
    return { ...stats, gradNorm: this.optimStep() };
  }

  /** stops the gradient workers, if any were started; idempotent */
  close(): Promise<void> {
    return this.pool.close();
  }
}
