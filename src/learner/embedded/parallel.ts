/**
 * Data-parallel gradients of the embedded model on worker threads.
 *
 * The weights live in ONE SharedArrayBuffer: every worker's `Gpt` is a view on it, so an optimiser
 * step on the main thread (in place) is what the workers compute with next, without copying. Each
 * worker accumulates into its own gradient buffer, also shared; the main thread sums them into
 * `grads` in worker order. A batch is split by tokens (longest sequence first, to the least-loaded
 * worker), a pure function of the sequence lengths, so the same batch and worker count always give
 * bit-identical results. Each worker scales by the whole batch's target count, so the summed loss
 * and gradient are the single-thread token mean up to float rounding (the summation order differs).
 *
 * Any failure (an exception in a worker, a worker exiting) terminates every thread of the pool and
 * rejects the call; the pool is then closed.
 */
import { type Arr, allocate, type DType, Gpt, type GptConfig } from '../../policy/embedded/model.js';
import { ThreadPool } from '../../util/thread-pool.js';
import { countTargets, type SupervisedSequence, targetWeight } from './supervised.js';

/** what a worker is started with (worker_threads `workerData`) */
export interface GradientWorkerData {
  readonly config: GptConfig;
  readonly dtype: DType;
  readonly params: SharedView;
  readonly grads: SharedView;
}

export interface SharedView {
  readonly buffer: SharedArrayBuffer;
  readonly byteOffset: number;
  readonly length: number;
}

export type GradientRequest = {
  readonly kind: 'supervised';
  readonly sequences: readonly SupervisedSequence[];
  /** the whole batch's summed target weight */
  readonly denominator: number;
};

export interface GradientReply {
  readonly lossSum: number;
  readonly tokens: number;
}

export const isShared = (a: Arr): boolean => a.buffer instanceof SharedArrayBuffer;

/** a zeroed array of `n` elements in shared memory */
export function sharedArray(dtype: DType, n: number): Arr {
  return dtype === 'float64'
    ? new Float64Array(new SharedArrayBuffer(n * 8))
    : new Float32Array(new SharedArrayBuffer(n * 4));
}

/** a copy of `model` whose weights are in shared memory, for a `GradientPool` without copies */
export function sharedModel(model: Gpt): Gpt {
  const p = sharedArray(model.dtype, model.numParams);
  p.set(model.params);
  return new Gpt(model.config, p, model.dtype);
}

/**
 * Deterministic balanced split of sequences (given by their lengths) over `parts` workers: the
 * longest first (ties by index), each to the worker with the fewest tokens so far (ties to the lower
 * index). Within a worker, sequences keep batch order. Tokens are the work proxy: the matmuls, the
 * bulk of the cost, are linear in them.
 */
export function splitByTokens(lengths: readonly number[], parts: number): number[][] {
  const order = lengths.map((_, i) => i).sort((a, b) => lengths[b]! - lengths[a]! || a - b);
  const load = new Array<number>(parts).fill(0);
  const out: number[][] = Array.from({ length: parts }, () => []);
  for (const i of order) {
    let w = 0;
    for (let k = 1; k < parts; k++) if (load[k]! < load[w]!) w = k;
    load[w] = load[w]! + lengths[i]!;
    out[w]!.push(i);
  }
  for (const o of out) o.sort((a, b) => a - b);
  return out;
}

const view = (a: Arr): SharedView => ({
  buffer: a.buffer as SharedArrayBuffer,
  byteOffset: a.byteOffset,
  length: a.length,
});

export interface GradientPoolOptions {
  /** worker threads; default 2 */
  readonly workers?: number;
}

export class GradientPool {
  /** the batch gradient after `supervised` (the sum of the workers' buffers) */
  readonly grads: Arr;
  private busy = false;

  private constructor(
    readonly config: GptConfig,
    readonly params: Arr,
    private readonly threads: ThreadPool<GradientRequest, GradientReply>,
    /** each worker's own gradient buffer, in worker order */
    private readonly workerGrads: readonly Arr[],
  ) {
    this.grads = allocate(params instanceof Float64Array ? 'float64' : 'float32', params.length);
  }

  /**
   * Start `workers` threads computing with `params` (in shared memory, the layout of `config`;
   * its element type sets the dtype). Resolves once every thread has built its model.
   */
  static async start(config: GptConfig, params: Arr, opts: GradientPoolOptions = {}): Promise<GradientPool> {
    const n = opts.workers ?? 2;
    if (!Number.isInteger(n) || n < 1) throw new Error(`GradientPool: workers must be a positive integer`);
    if (!isShared(params)) throw new Error('GradientPool: params must be a view on a SharedArrayBuffer');
    const dtype: DType = params instanceof Float64Array ? 'float64' : 'float32';
    const size = new Gpt(config, params, dtype).numParams; // validates config and size without copying
    const grads = Array.from({ length: n }, () => sharedArray(dtype, size));
    const threads = await ThreadPool.start<GradientRequest, GradientReply, undefined, GradientWorkerData>({
      entry: new URL('./gradient-worker.js', import.meta.url),
      workerData: grads.map((g) => ({ config, dtype, params: view(params), grads: view(g) })),
      label: 'gradient worker',
    });
    return new GradientPool(config, params, threads, grads);
  }

  get workers(): number {
    return this.threads.workers;
  }

  /** threads not yet exited (0 after close() or a failure) */
  get liveWorkers(): number {
    return this.threads.liveWorkers;
  }

  /**
   * The token-mean cross-entropy of `batch` and (into `grads`) its gradient, as
   * `crossEntropyLossAndGrad` computes them in process. One call at a time.
   */
  async supervised(batch: readonly SupervisedSequence[]): Promise<{ loss: number; tokens: number }> {
    const failure = this.threads.failure;
    if (failure) throw new Error(`GradientPool is closed after a failure: ${failure.message}`);
    if (this.threads.closed) throw new Error('GradientPool is closed');
    if (this.busy) throw new Error('GradientPool: one call at a time');
    this.busy = true;
    try {
      const n = countTargets(batch);
      const weight = targetWeight(batch);
      this.grads.fill(0);
      if (n === 0) return { loss: 0, tokens: 0 };
      const parts = splitByTokens(
        batch.map((s) => s.tokens.length),
        this.workers,
      );
      const used = parts.flatMap((p, i) => (p.length > 0 ? [i] : []));
      let replies: GradientReply[];
      try {
        replies = await Promise.all(
          used.map((i) =>
            this.threads.call(i, {
              kind: 'supervised',
              sequences: parts[i]!.map((j) => batch[j]!),
              denominator: weight,
            }),
          ),
        );
      } catch (e) {
        // a half-computed gradient is of no use, and a worker that threw may hold a broken state
        await this.threads.fail(e as Error);
        throw e;
      }
      let lossSum = 0;
      for (let k = 0; k < used.length; k++) {
        lossSum += replies[k]!.lossSum;
        const g = this.workerGrads[used[k]!]!;
        const out = this.grads;
        for (let j = 0; j < out.length; j++) out[j] = out[j]! + g[j]!;
      }
      return { loss: lossSum / weight, tokens: n };
    } finally {
      this.busy = false;
    }
  }

  /** terminates every thread; idempotent, resolves once they have exited */
  close(): Promise<void> {
    return this.threads.close();
  }
}
