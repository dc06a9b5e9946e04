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
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { type Arr, allocate, type DType, Gpt, type GptConfig } from '../../policy/embedded/model.js';
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

export type GradientReply =
  | { readonly ok: true; readonly lossSum: number; readonly tokens: number }
  | { readonly ok: false; readonly message: string; readonly stack?: string };

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

/**
 * How to start the worker entry next to this module. From the compiled JavaScript, the file itself.
 * From TypeScript sources (vitest, tsx), a small JavaScript bootstrap that imports the `.ts` entry
 * through tsx's API: Node 20 does not apply loader hooks given as the thread's `--import` to its
 * entry file, while `tsImport` registers them inside the thread and works.
 */
function workerEntry(): { entry: URL | string; eval: boolean } {
  if (!import.meta.url.endsWith('.ts'))
    return { entry: new URL('./gradient-worker.js', import.meta.url), eval: false };
  const file = new URL('./gradient-worker.ts', import.meta.url).href;
  const code = `import(${JSON.stringify(tsxApi())}).then((tsx) => tsx.tsImport(${JSON.stringify(file)}, ${JSON.stringify(file)}))`;
  return { entry: code, eval: true };
}

/** tsx's ESM API, found from this file so the thread needs no particular working directory */
function tsxApi(): string {
  const viaImport = (() => {
    try {
      return import.meta.resolve?.('tsx/esm/api');
    } catch {
      return undefined;
    }
  })();
  if (viaImport?.endsWith('.mjs')) return viaImport;
  // require() resolves the CommonJS build, which fails to import TypeScript in a thread; the ESM
  // build sits next to it
  let cjs: string;
  try {
    cjs = createRequire(import.meta.url).resolve('tsx/esm/api');
  } catch (e) {
    throw new Error('gradient workers started from TypeScript sources need the tsx package', { cause: e });
  }
  return pathToFileURL(cjs.replace(/\.cjs$/, '.mjs')).href;
}

const view = (a: Arr): SharedView => ({
  buffer: a.buffer as SharedArrayBuffer,
  byteOffset: a.byteOffset,
  length: a.length,
});

interface Pending {
  readonly resolve: (r: GradientReply) => void;
  readonly reject: (e: Error) => void;
}

interface Slot {
  readonly worker: Worker;
  readonly grads: Arr;
  pending: Pending | null;
  alive: boolean;
}

export interface GradientPoolOptions {
  /** worker threads; default 2 */
  readonly workers?: number;
}

export class GradientPool {
  /** the batch gradient after `supervised` (the sum of the workers' buffers) */
  readonly grads: Arr;
  private readonly slots: Slot[];
  private failure: Error | null = null;
  private closing: Promise<void> | null = null;
  private busy = false;

  private constructor(
    readonly config: GptConfig,
    readonly params: Arr,
    slots: Slot[],
  ) {
    this.slots = slots;
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
    const entry = workerEntry();
    const slots: Slot[] = [];
    try {
      for (let i = 0; i < n; i++) {
        const grads = sharedArray(dtype, size);
        const data: GradientWorkerData = { config, dtype, params: view(params), grads: view(grads) };
        // no inherited flags: the parent's (e.g. the tsx CLI's loaders) are not meant for the thread
        const worker = new Worker(entry.entry, { workerData: data, eval: entry.eval, execArgv: [] });
        slots.push({ worker, grads, pending: null, alive: true });
      }
    } catch (e) {
      await Promise.all(slots.map((s) => s.worker.terminate()));
      throw e;
    }
    const pool = new GradientPool(config, params, slots);
    // the first message of a worker is its 'ready' (or a failure to build the model)
    const ready = slots.map((s, i) => pool.listen(s, i));
    try {
      const replies = await Promise.all(ready);
      const bad = replies.findIndex((r) => !r.ok);
      if (bad >= 0) throw pool.workerError(bad, replies[bad]!, 'failed to start');
    } catch (e) {
      await pool.fail(e as Error);
      throw e;
    }
    // idle workers must not keep the process alive; a running call refs them (see call())
    for (const s of slots) s.worker.unref();
    return pool;
  }

  get workers(): number {
    return this.slots.length;
  }

  /** threads not yet exited (0 after close() or a failure) */
  get liveWorkers(): number {
    return this.slots.filter((s) => s.alive).length;
  }

  /** wires a slot's events and returns its first reply */
  private listen(s: Slot, i: number): Promise<GradientReply> {
    const first = this.expect(s);
    s.worker.on('message', (m: GradientReply) => {
      const p = s.pending;
      s.pending = null;
      p?.resolve(m);
    });
    s.worker.on('error', (e: Error) => {
      const err = new Error(`gradient worker ${i} crashed: ${e.message}`, { cause: e });
      const p = s.pending;
      s.pending = null;
      p?.reject(err);
      void this.fail(err);
    });
    s.worker.on('exit', (code) => {
      s.alive = false;
      const p = s.pending;
      s.pending = null;
      const err = new Error(`gradient worker ${i} exited unexpectedly (code ${code})`);
      p?.reject(err);
      if (!this.closing) void this.fail(err);
    });
    return first;
  }

  private expect(s: Slot): Promise<GradientReply> {
    return new Promise((resolve, reject) => {
      s.pending = { resolve, reject };
    });
  }

  private workerError(i: number, r: GradientReply, what: string): Error {
    const detail = r.ok ? '' : r.message;
    const e = new Error(`gradient worker ${i} ${what}: ${detail}`);
    if (!r.ok && r.stack) e.stack = `${e.stack}\nworker stack:\n${r.stack}`;
    return e;
  }

  /** first failure wins: it is what later calls report; every thread is stopped */
  private fail(e: Error): Promise<void> {
    this.failure ??= e;
    return this.close();
  }

  private call(i: number, req: GradientRequest): Promise<GradientReply> {
    const s = this.slots[i]!;
    const reply = this.expect(s);
    s.worker.ref();
    s.worker.postMessage(req);
    return reply.finally(() => {
      if (s.alive) s.worker.unref();
    });
  }

  /**
   * The token-mean cross-entropy of `batch` and (into `grads`) its gradient, as
   * `crossEntropyLossAndGrad` computes them in process. One call at a time.
   */
  async supervised(batch: readonly SupervisedSequence[]): Promise<{ loss: number; tokens: number }> {
    if (this.failure) throw new Error(`GradientPool is closed after a failure: ${this.failure.message}`);
    if (this.closing) throw new Error('GradientPool is closed');
    if (this.busy) throw new Error('GradientPool: one call at a time');
    this.busy = true;
    try {
      const n = countTargets(batch);
      const weight = targetWeight(batch);
      this.grads.fill(0);
      if (n === 0) return { loss: 0, tokens: 0 };
      const parts = splitByTokens(
        batch.map((s) => s.tokens.length),
        this.slots.length,
      );
      const used = parts.flatMap((p, i) => (p.length > 0 ? [i] : []));
      let replies: GradientReply[];
      try {
        replies = await Promise.all(
          used.map((i) =>
            this.call(i, {
              kind: 'supervised',
              sequences: parts[i]!.map((j) => batch[j]!),
              denominator: weight,
            }),
          ),
        );
      } catch (e) {
        await this.fail(e as Error);
        throw e;
      }
      const bad = replies.findIndex((r) => !r.ok);
      if (bad >= 0) {
        const err = this.workerError(used[bad]!, replies[bad]!, 'failed');
        await this.fail(err);
        throw err;
      }
      let lossSum = 0;
      for (let k = 0; k < used.length; k++) {
        const r = replies[k]!;
        if (r.ok) lossSum += r.lossSum;
        const g = this.slots[used[k]!]!.grads;
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
    this.closing ??= Promise.all(this.slots.map((s) => s.worker.terminate())).then(() => {});
    return this.closing;
  }
}
