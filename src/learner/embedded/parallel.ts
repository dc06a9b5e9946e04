/**
 * Data-parallel gradients of the embedded model on worker threads.
 *
 * The weights live in ONE SharedArrayBuffer: every worker's `Gpt` is a view on it, so an optimiser
 * step on the main thread (in place) is what the workers compute with next, without copying. Each
 * worker accumulates into its own gradient buffer, also shared; the main thread sums them into
 * `grads` in worker order. A batch is split by tokens (the costliest first, to the least-loaded
 * worker), sequences that share a prompt the loss runs once (`Loss.groups`) going to one worker
 * together; a pure function of the batch, so the same batch and worker count always give
 * bit-identical results. Each worker scales by the whole batch's target count, so the summed loss
 * and gradient are the single-thread token mean up to float rounding (the summation order differs).
 *
 * Any failure (an exception in a worker, a worker exiting) terminates every thread of the pool and
 * rejects the call; the pool is then closed.
 */
import { type Arr, allocate, type DType, Gpt, type GptConfig, type Kernels } from '../../nn/model.js';
import { ThreadPool } from '../../util/thread-pool.js';
import { addSums, type Loss, type LossSpec, type LossSums, type TokenSequence } from './losses.js';
import { eachAlone, type PromptGroup } from './shared-prompts.js';

/** what a worker is started with (worker_threads `workerData`) */
export interface GradientWorkerData {
  readonly config: GptConfig;
  readonly dtype: DType;
  readonly kernels: Kernels;
  readonly params: SharedView;
  readonly grads: SharedView;
  /** the frozen reference of GRPO's KL term, when the pool has one */
  readonly reference?: SharedView;
}

export interface SharedView {
  readonly buffer: SharedArrayBuffer;
  readonly byteOffset: number;
  readonly length: number;
}

/** one worker's share of a batch, and the loss to sum over it */
export interface GradientRequest {
  readonly loss: LossSpec;
  readonly sequences: readonly TokenSequence[];
  /** the whole batch's token-mean denominator */
  readonly denominator: number;
}

/** the share's summed loss parts (its gradient is in the worker's buffer) */
export type GradientReply = LossSums;

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
  return new Gpt(model.config, p, model.dtype, model.kernels);
}

/**
 * Deterministic balanced split of units of work (given by their token counts) over `parts` workers:
 * the largest first (ties by index), each to the worker with the fewest tokens so far (ties to the
 * lower index). Within a worker, units keep batch order. Tokens are the work proxy: the matmuls,
 * the bulk of the cost, are linear in them.
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

/**
 * The split of a batch whose `groups` of sequences share a prompt: each group goes to one worker
 * whole, its prompt counted once, unless it alone costs more than a worker's share of the batch
 * (one task's rollouts can be most of a round's); such a group is cut into `parts` runs of
 * consecutive members, and each worker that gets one runs the prompt once. Otherwise one worker
 * would do most of the batch while the others wait.
 */
export function splitGroups(
  lengths: readonly number[],
  groups: readonly PromptGroup[],
  parts: number,
): number[][] {
  const cost = (members: readonly number[], shared: number) =>
    members.reduce((sum, i) => sum + lengths[i]!, 0) - (members.length - 1) * shared;
  const total = groups.reduce((sum, g) => sum + cost(g.members, g.shared), 0);
  const units: (readonly number[])[] = [];
  const costs: number[] = [];
  for (const g of groups) {
    const m = g.members.length;
    const k = m > 1 && cost(g.members, g.shared) > total / parts ? Math.min(parts, m) : 1;
    for (let q = 0; q < k; q++) {
      const run = g.members.slice(Math.floor((q * m) / k), Math.floor(((q + 1) * m) / k));
      units.push(run);
      costs.push(cost(run, g.shared));
    }
  }
  return splitByTokens(costs, parts).map((us) => us.flatMap((u) => units[u]!).sort((a, b) => a - b));
}

const view = (a: Arr): SharedView => ({
  buffer: a.buffer as SharedArrayBuffer,
  byteOffset: a.byteOffset,
  length: a.length,
});

export interface GradientPoolOptions {
  /** worker threads; default 2 */
  readonly workers?: number;
  /** GRPO's frozen reference weights (shared memory, the same layout), for the KL term */
  readonly reference?: Arr;
  /** the float32 kernels each worker's models run; default wasm */
  readonly kernels?: Kernels;
}

export class GradientPool {
  /** the batch gradient after `lossAndGrad` (the sum of the workers' buffers) */
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
    const reference = opts.reference;
    if (reference) {
      if (!isShared(reference))
        throw new Error('GradientPool: the reference must be a view on a SharedArrayBuffer');
      if (reference.length !== size || reference instanceof Float64Array !== (dtype === 'float64'))
        throw new Error('GradientPool: the reference has another shape or element type');
    }
    const grads = Array.from({ length: n }, () => sharedArray(dtype, size));
    const threads = await ThreadPool.start<GradientRequest, GradientReply, undefined, GradientWorkerData>({
      entry: new URL('./gradient-worker.js', import.meta.url),
      workerData: grads.map((g) => ({
        config,
        dtype,
        kernels: opts.kernels ?? 'wasm',
        params: view(params),
        grads: view(g),
        ...(reference ? { reference: view(reference) } : {}),
      })),
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
   * The statistics of `batch` under `loss` and (into `grads`) its gradient, as `lossAndGrad`
   * computes them on one thread; GRPO's KL term needs the pool's `reference` unless every sequence
   * carries its reference logprobs. One call at a time.
   */
  async lossAndGrad<S extends TokenSequence, P extends LossSums, R extends { readonly tokens: number }>(
    batch: readonly S[],
    loss: Loss<S, P, R>,
  ): Promise<R> {
    const targets = loss.targets(batch);
    const groups = loss.groups?.(batch) ?? eachAlone(batch.length);
    const parts = await this.run(batch, groups, targets.count, (sequences) => ({
      loss: loss.spec,
      sequences,
      denominator: targets.denominator,
    }));
    return loss.stats(addSums(loss.zero, parts as P[]), targets);
  }

  /**
   * Splits `batch` over the workers by tokens, each of `groups` whole (its shared prompt counted
   * once), sends each its share, and sums their gradients into `grads` in worker order. `targets`
   * 0 skips the workers (zero gradient).
   */
  private async run<S extends TokenSequence>(
    batch: readonly S[],
    groups: readonly PromptGroup[],
    targets: number,
    request: (sequences: S[]) => GradientRequest,
  ): Promise<GradientReply[]> {
    const failure = this.threads.failure;
    if (failure) throw new Error(`GradientPool is closed after a failure: ${failure.message}`);
    if (this.threads.closed) throw new Error('GradientPool is closed');
    if (this.busy) throw new Error('GradientPool: one call at a time');
    this.busy = true;
    try {
      this.grads.fill(0);
      if (targets === 0) return [];
      const parts = splitGroups(
        batch.map((s) => s.tokens.length),
        groups,
        this.workers,
      );
      const used = parts.flatMap((p, i) => (p.length > 0 ? [i] : []));
      let replies: GradientReply[];
      try {
        replies = await Promise.all(
          used.map((i) => this.threads.call(i, request(parts[i]!.map((j) => batch[j]!)))),
        );
      } catch (e) {
        // a half-computed gradient is of no use, and a worker that threw may hold a broken state
        await this.threads.fail(e as Error);
        throw e;
      }
      for (const w of used) {
        const g = this.workerGrads[w]!;
        const out = this.grads;
        for (let j = 0; j < out.length; j++) out[j] = out[j]! + g[j]!;
      }
      return replies;
    } finally {
      this.busy = false;
    }
  }

  /** terminates every thread; idempotent, resolves once they have exited */
  close(): Promise<void> {
    return this.threads.close();
  }
}

/**
 * A trainer's gradient pool: started on first use over the model's weights. Weights outside shared
 * memory are copied into the pool's own buffer before every use (correct, but `sharedModel()`
 * avoids the copy); GRPO's reference, which never changes, is copied once.
 */
export class LazyGradientPool {
  private pool: Promise<GradientPool> | undefined;
  private mirror: Arr | undefined;

  constructor(
    private readonly model: Gpt,
    private readonly workers: number,
    private readonly reference: Gpt | null = null,
  ) {}

  /** the pool, started if needed, computing with the model's current weights */
  async ready(): Promise<GradientPool> {
    if (!this.pool) {
      let params = this.model.params;
      if (!isShared(params)) {
        this.mirror = sharedArray(this.model.dtype, params.length);
        params = this.mirror;
      }
      const reference = this.reference ? sharedModel(this.reference).params : undefined;
      this.pool = GradientPool.start(this.model.config, params, {
        workers: this.workers,
        kernels: this.model.kernels,
        ...(reference ? { reference } : {}),
      });
    }
    const pool = await this.pool;
    if (this.mirror) this.mirror.set(this.model.params);
    return pool;
  }

  /** stops the workers, if any were started; idempotent */
  async close(): Promise<void> {
    const pool = this.pool;
    if (!pool) return;
    // a pool that failed to start has already stopped its threads
    await pool.then(
      (p) => p.close(),
      () => {},
    );
  }
}
