/**
 * The embedded policy on worker threads: sampling is synchronous CPU work, so one `EmbeddedPolicy`
 * serves concurrent requests one after another on one core; the pool runs one per thread.
 *
 * Each thread loads the checkpoint directory itself (no weights cross threads) and answers one
 * batch of requests at a time, decoded together (`sampleMany`: each completion is what it would be
 * alone). Requests wait in one queue; a free thread takes those whose chat opens like the ones it
 * serves (same system prompt and first user message: the same task; its prefix cache holds that
 * chat's earlier steps and its shared start), oldest first, up to `maxBatch` and its share of
 * what waits. When none waits, it takes those of the oldest request's thread. Requests made in the
 * same turn of the event loop (the rollouts a batch answered, asking again) are dispatched
 * together.
 * Completions do not depend on the thread or the order: a request without a seed gets
 * `derivedSeed(baseSeed, messages)` before it is sent, where the in-process policy would draw the
 * next seed of its stream, which depends on the order of the calls.
 */
import { createHash } from 'node:crypto';
import { CheckpointError } from '../../nn/checkpoint.js';
import { messageText } from '../../nn/tokenizer.js';
import { type ErrorClass, type RemoteError, ThreadPool } from '../../util/thread-pool.js';
import { type Waiter, WaitQueue } from '../../util/wait-queue.js';
import type { ChatMessage, Completion, CompletionRequest, Policy, PromptLength } from '../policy.js';
import { ContextOverflowError, type EmbeddedPolicyOptions } from './policy.js';

/** what a sampler thread is started with */
export interface SamplerWorkerData {
  readonly dir: string;
  readonly options: Omit<EmbeddedPolicyOptions, 'seed'>;
}

/** what a sampler thread reports once loaded */
export interface SamplerWorkerInfo {
  readonly modelSha256: string;
}

/** completions to sample as one batch, or another checkpoint to load in place of the thread's */
export type SamplerRequest =
  | { readonly complete: readonly CompletionRequest[] }
  | { readonly reload: string };
/** per request of a batch, its completion or why it failed (alone: the others still complete) */
export type SettledCompletion = { readonly completion: Completion } | { readonly error: RemoteError };
export type SamplerReply = readonly SettledCompletion[] | SamplerWorkerInfo;

export interface EmbeddedPolicyPoolOptions extends EmbeddedPolicyOptions {
  /** threads; default 2 */
  readonly workers?: number;
  /**
   * most requests a thread decodes together; default 8 here (64 in process): a batch answers when
   * its longest completion ends, so a large one holds back the rollouts of its shorter ones (a
   * round of 64 mini rollouts: 5.6-6.2 s at 8, 8.1-9.4 s at 64, 6.4-6.7 s one at a time)
   */
  readonly maxBatch?: number;
  /**
   * the prompt length in the threads' encoding (`embeddedPromptLength` on the same tokenizer and
   * context), measured in this thread: the pool's `promptLength`; absent, the pool has none
   */
  readonly promptLength?: (request: CompletionRequest) => PromptLength;
  /** likewise the prompt ids the threads would condition on: the pool's `promptTokenIds` */
  readonly promptTokenIds?: (request: CompletionRequest) => readonly number[];
}

/** the default `maxBatch` of a pool's threads */
export const POOL_MAX_BATCH = 8;

/**
 * The seed of a request that gives none: a hash of the base seed and of the messages as the model
 * sees them, so the same chat gets the same seed wherever and whenever it runs. Note that identical
 * chats therefore get identical samples; give explicit seeds to draw several samples of one chat.
 */
export function derivedSeed(baseSeed: number, messages: readonly ChatMessage[]): number {
  const h = createHash('sha256');
  h.update(JSON.stringify([baseSeed >>> 0, messages.map(messageText)]));
  return h.digest().readUInt32LE(0);
}

/** `request` with its seed filled in by `derivedSeed` when it has none */
export function withDerivedSeed(baseSeed: number, request: CompletionRequest): CompletionRequest {
  return request.seed !== undefined ? request : { ...request, seed: derivedSeed(baseSeed, request.messages) };
}

/**
 * A policy whose seedless requests get `derivedSeed`: the in-process counterpart of the pool, with
 * the same completions for the same requests.
 */
export class DerivedSeedPolicy implements Policy {
  readonly name: string;
  readonly promptLength?: (request: CompletionRequest) => PromptLength;
  readonly promptTokenIds?: (request: CompletionRequest) => readonly number[];

  constructor(
    private readonly inner: Policy,
    private readonly baseSeed = 0,
  ) {
    this.name = inner.name;
    if (inner.promptLength) this.promptLength = inner.promptLength;
    if (inner.promptTokenIds) this.promptTokenIds = inner.promptTokenIds;
  }

  complete(request: CompletionRequest, signal?: AbortSignal): Promise<Completion> {
    return this.inner.complete(withDerivedSeed(this.baseSeed, request), signal);
  }
}

/** errors the callers dispatch on (the CLI's exit codes), kept as their class across threads */
const ERROR_CLASSES: readonly ErrorClass[] = [CheckpointError, ContextOverflowError];

/** the thread a chat belongs to: a hash of how it opens (system prompt and first user message) */
export function homeThread(messages: readonly ChatMessage[], threads: number): number {
  const h = createHash('sha256');
  h.update(JSON.stringify(messages.slice(0, 2).map(messageText)));
  return h.digest().readUInt32LE(0) % threads;
}

/** a request waiting for a thread, and the thread its chat belongs to */
interface Waiting {
  readonly request: CompletionRequest;
  readonly home: number;
}

export class EmbeddedPolicyPool implements Policy {
  private readonly waiting = new WaitQueue<Waiting, Completion>();
  /** completions the threads are running */
  private readonly running = new Set<Promise<unknown>>();
  /** a reload under way: nothing is dispatched until it ends */
  private reloading: Promise<void> | null = null;
  /** a dispatch is scheduled for the next turn of the event loop */
  private scheduled = false;
  /** batches sent to the threads and the requests in them, so far (for benchmarks and tests) */
  readonly batching = { batches: 0, requests: 0 };

  private constructor(
    private current: string,
    private readonly baseSeed: number,
    private readonly threads: ThreadPool<SamplerRequest, SamplerReply, SamplerWorkerInfo>,
    private sha: string,
    private readonly maxBatch: number,
    readonly promptLength?: (request: CompletionRequest) => PromptLength,
    readonly promptTokenIds?: (request: CompletionRequest) => readonly number[],
  ) {}

  /** the policy's name (it changes with `reload`) */
  get name(): string {
    return this.current;
  }

  /** the sha256 of the weights every thread holds */
  get modelSha256(): string {
    return this.sha;
  }

  /**
   * Starts `workers` threads on the checkpoint in `dir`; resolves once all have loaded it. A
   * checkpoint that does not load rejects with its `CheckpointError`, and no thread is left.
   */
  static async start(dir: string, opts: EmbeddedPolicyPoolOptions = {}): Promise<EmbeddedPolicyPool> {
    const n = opts.workers ?? 2;
    if (!Number.isInteger(n) || n < 1)
      throw new Error('EmbeddedPolicyPool: workers must be a positive integer');
    // the meter is a function: it stays in this thread
    const { seed = 0, workers: _, promptLength, promptTokenIds, ...options } = opts;
    const threads = await ThreadPool.start<
      SamplerRequest,
      SamplerReply,
      SamplerWorkerInfo,
      SamplerWorkerData
    >({
      entry: new URL('./sampler-worker.js', import.meta.url),
      workerData: Array.from({ length: n }, () => ({ dir, options })),
      label: 'sampler worker',
      errorClasses: ERROR_CLASSES,
    });
    // a checkpoint rewritten while the threads loaded it would give a mix of models
    const shas = new Set(threads.info.map((i) => i.modelSha256));
    if (shas.size !== 1) {
      await threads.close();
      throw new CheckpointError(`${dir} changed while it was loading; try again once it is written`);
    }
    const maxBatch = Math.max(1, opts.maxBatch ?? POOL_MAX_BATCH);
    return new EmbeddedPolicyPool(
      opts.name ?? 'embedded',
      seed,
      threads,
      [...shas][0]!,
      maxBatch,
      promptLength,
      promptTokenIds,
    );
  }

  get workers(): number {
    return this.threads.workers;
  }

  /** threads not yet exited (0 after close() or a failure) */
  get liveWorkers(): number {
    return this.threads.liveWorkers;
  }

  /** the seed a request is sampled with */
  seedOf(request: CompletionRequest): number {
    return withDerivedSeed(this.baseSeed, request).seed!;
  }

  /**
   * As `EmbeddedPolicy.complete`, on the next free thread. An abort while the request waits for a
   * thread drops it; once running it finishes (sampling cannot be interrupted).
   */
  complete(request: CompletionRequest, signal?: AbortSignal): Promise<Completion> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    // a closed pool rejects with its reason
    if (this.threads.closed) return this.threads.submit({ complete: [request] }) as Promise<never>;
    const seeded = withDerivedSeed(this.baseSeed, request);
    const completion = this.waiting.wait(
      { request: seeded, home: homeThread(seeded.messages, this.threads.workers) },
      signal,
    );
    this.dispatchSoon();
    return completion;
  }

  /**
   * Loads the checkpoint in `dir` into every thread in place of the weights they hold, and takes
   * `name`: what a trainer does after each update, without starting threads (about 0.6 s each
   * time, and cold code after). Completions running finish on the old weights first; requests
   * made meanwhile wait and run on the new ones. A checkpoint that does not load (or changes while
   * it loads) rejects with its `CheckpointError` and closes the pool, whose threads may then hold
   * different weights.
   */
  async reload(dir: string, name: string = this.current): Promise<void> {
    if (this.reloading) throw new Error('EmbeddedPolicyPool: one reload at a time');
    // requests made before the reload go to the threads free for them now, as they would have
    // without it, and run on the old weights
    this.dispatch();
    let finish = () => {};
    this.reloading = new Promise<void>((resolve) => {
      finish = resolve;
    });
    try {
      await Promise.allSettled([...this.running]);
      const infos = (await Promise.all(
        Array.from({ length: this.threads.workers }, (_, i) => this.threads.call(i, { reload: dir })),
      )) as SamplerWorkerInfo[];
      const shas = new Set(infos.map((i) => i.modelSha256));
      if (shas.size !== 1)
        throw new CheckpointError(`${dir} changed while it was loading; try again once it is written`);
      this.sha = [...shas][0]!;
      this.current = name;
    } catch (e) {
      await this.close();
      throw e;
    } finally {
      this.reloading = null;
      finish();
      this.dispatchSoon();
    }
  }

  /** a dispatch once the event loop comes round, so that requests made meanwhile share a batch */
  private dispatchSoon(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  private dispatch(): void {
    if (this.reloading) return;
    for (let i = 0; i < this.threads.workers && this.waiting.length > 0; i++) {
      if (this.threads.busy(i)) continue;
      const batch = this.takeBatch(i);
      this.batching.batches++;
      this.batching.requests += batch.length;
      // a closed or failed pool rejects the call with its reason
      const call = this.threads.call(i, { complete: batch.map((w) => w.value.request) }) as Promise<
        readonly SettledCompletion[]
      >;
      this.running.add(call);
      call
        .then(
          (settled) => {
            for (const [k, s] of settled.entries()) {
              if ('completion' in s) batch[k]!.resolve(s.completion);
              else batch[k]!.reject(this.threads.remoteError(i, s.error, 'failed'));
            }
          },
          (e: unknown) => {
            for (const item of batch) item.reject(e);
          },
        )
        .finally(() => {
          this.running.delete(call);
          this.dispatchSoon();
        });
    }
  }

  /**
   * The waiting requests thread i samples next, taken off the queue: those of its own chats, else
   * those of the oldest request's thread, oldest first, at most `maxBatch` and a thread's share of
   * all that waits
   */
  private takeBatch(i: number): Waiter<Waiting, Completion>[] {
    const waiting = this.waiting.values();
    const home = waiting.some((w) => w.home === i) ? i : waiting[0]!.home;
    // a share of what waits, so that one thread taking all of it does not leave the others idle
    const limit = Math.min(this.maxBatch, Math.ceil(waiting.length / this.threads.workers));
    return this.waiting.take((w) => w.home === home, limit);
  }

  /** stops every thread; idempotent. Requests in flight or waiting reject. */
  close(): Promise<void> {
    const closing = this.threads.close();
    this.waiting.rejectAll(new Error('the sampler workers are closed'));
    return closing;
  }
}
