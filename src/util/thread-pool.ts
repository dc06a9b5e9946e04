/**
 * A fixed set of worker threads answering one request at a time each, for CPU work that would
 * otherwise hold the event loop (gradients, sampling).
 *
 * Protocol (`serveRequests` is the worker side): a worker's first message says it is ready (with an
 * optional `info` value, e.g. what it loaded) or that it failed to start; then one reply or error
 * per request, in order. Failure semantics:
 * - a worker that fails to start fails `start()`, and every thread is stopped;
 * - an exception in a request handler rejects that call only; the thread keeps serving, since
 *   whether such an error is fatal is the caller's decision (`fail()` stops everything);
 * - a thread that crashes or exits stops every thread, rejects what was in flight or queued, and
 *   makes later calls fail with that first failure.
 * Idle threads are unref'd, so an open pool does not keep the process alive; a call in flight does.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { WaitQueue } from './wait-queue.js';

/** an error thrown in a worker, as it crosses to the main thread */
export interface RemoteError {
  /** the constructor's name, e.g. `CheckpointError` (an `Error` subclass's `name` is often just 'Error') */
  readonly type: string;
  readonly message: string;
  readonly stack?: string;
}

type WorkerMessage<Reply, Info> =
  | { readonly kind: 'ready'; readonly info: Info }
  | { readonly kind: 'reply'; readonly value: Reply }
  | { readonly kind: 'error'; readonly error: RemoteError };

export type ErrorClass = new (message: string) => Error;

export interface ThreadPoolOptions<Data> {
  /**
   * The worker module as compiled JavaScript, next to the caller: `new URL('./x-worker.js',
   * import.meta.url)`. When this project runs from its TypeScript sources the `.ts` file beside it
   * is started instead.
   */
  readonly entry: URL;
  /** one `workerData` per thread; its length is the number of threads */
  readonly workerData: readonly Data[];
  /** names the threads in errors: `${label} ${i} failed: ...` */
  readonly label: string;
  /**
   * Errors of these classes thrown by a worker are rethrown as the same class with the worker's
   * message unchanged (callers dispatch on them, e.g. to a CLI exit code); others are wrapped.
   */
  readonly errorClasses?: readonly ErrorClass[];
}

interface Pending<Reply> {
  readonly resolve: (r: WorkerMessage<Reply, unknown>) => void;
  readonly reject: (e: Error) => void;
}

interface Slot<Reply> {
  readonly worker: Worker;
  pending: Pending<Reply> | null;
  alive: boolean;
}

export class ThreadPool<Request, Reply, Info = undefined> {
  private readonly slots: Slot<Reply>[];
  private readonly queue = new WaitQueue<Request, Reply>();
  private infos: Info[] = [];
  private failed: Error | null = null;
  private closing: Promise<void> | null = null;

  private constructor(
    slots: Slot<Reply>[],
    private readonly label: string,
    private readonly errorClasses: readonly ErrorClass[],
  ) {
    this.slots = slots;
  }

  /** Starts one thread per `workerData` entry; resolves once all of them are ready. */
  static async start<Request, Reply, Info = undefined, Data = unknown>(
    opts: ThreadPoolOptions<Data>,
  ): Promise<ThreadPool<Request, Reply, Info>> {
    const n = opts.workerData.length;
    if (n < 1) throw new Error(`${opts.label}s: at least one thread is needed`);
    const entry = workerEntry(opts.entry);
    const slots: Slot<Reply>[] = [];
    try {
      for (const data of opts.workerData) {
        // no inherited flags: the parent's (e.g. the tsx CLI's loaders) are not meant for the thread
        const worker = new Worker(entry.entry, { workerData: data, eval: entry.eval, execArgv: [] });
        slots.push({ worker, pending: null, alive: true });
      }
    } catch (e) {
      await Promise.all(slots.map((s) => s.worker.terminate()));
      throw e;
    }
    const pool = new ThreadPool<Request, Reply, Info>(slots, opts.label, opts.errorClasses ?? []);
    // the first worker to fail decides the error, without waiting for the others to load
    const ready = slots.map((s, i) =>
      pool.listen(s, i).then((m) => {
        if (m.kind === 'error') throw pool.remoteError(i, m.error, 'failed to start');
        if (m.kind !== 'ready') throw new Error(`${opts.label} ${i} broke the protocol: no ready message`);
        return m.info as Info;
      }),
    );
    try {
      pool.infos = await Promise.all(ready);
    } catch (e) {
      await pool.fail(e as Error);
      throw e;
    }
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

  /** what each worker said when it was ready */
  get info(): readonly Info[] {
    return this.infos;
  }

  /** the first failure that stopped the pool, if any */
  get failure(): Error | null {
    return this.failed;
  }

  get closed(): boolean {
    return this.closing !== null;
  }

  /** whether thread `i` has a call in flight */
  busy(i: number): boolean {
    return this.slots[i]?.pending != null;
  }

  /** Sends `request` to thread `i`, which must not be busy. */
  call(i: number, request: Request): Promise<Reply> {
    const s = this.slots[i];
    if (!s) return Promise.reject(new Error(`${this.label} ${i} does not exist`));
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    if (s.pending) return Promise.reject(new Error(`${this.label} ${i} is busy: one call at a time`));
    try {
      // throws before anything is sent for a request that cannot be cloned; the thread stays free
      s.worker.postMessage(request);
    } catch (e) {
      return Promise.reject(e);
    }
    const reply = this.expect(s);
    s.worker.ref();
    return reply
      .finally(() => {
        if (s.alive) s.worker.unref();
        this.dispatch();
      })
      .then((m) => {
        if (m.kind === 'reply') return m.value;
        if (m.kind === 'error') throw this.remoteError(i, m.error, 'failed');
        throw new Error(`${this.label} ${i} broke the protocol: a second ready message`);
      });
  }

  /**
   * Sends `request` to a free thread, the lowest-numbered one, or queues it (first in, first out)
   * until one is free. A request whose `signal` aborts while it waits is dropped and rejects with
   * the signal's reason; once sent it runs to the end.
   */
  submit(request: Request, signal?: AbortSignal): Promise<Reply> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    const reply = this.queue.wait(request, signal);
    this.dispatch();
    return reply;
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const refused = this.refusal();
      if (refused) {
        this.queue.rejectAll(refused);
        return;
      }
      const i = this.slots.findIndex((s) => s.alive && !s.pending);
      if (i < 0) return;
      const q = this.queue.shift()!;
      this.call(i, q.value).then(q.resolve, q.reject);
    }
  }

  private refusal(): Error | null {
    if (this.failed)
      return new Error(`the ${this.label}s are stopped after a failure: ${this.failed.message}`);
    if (this.closing) return new Error(`the ${this.label}s are closed`);
    return null;
  }

  /** wires a slot's events and returns its first message */
  private listen(s: Slot<Reply>, i: number): Promise<WorkerMessage<Reply, unknown>> {
    const first = this.expect(s);
    s.worker.on('message', (m: WorkerMessage<Reply, unknown>) => {
      const p = s.pending;
      s.pending = null;
      p?.resolve(m);
    });
    s.worker.on('error', (e: Error) => {
      const err = new Error(`${this.label} ${i} crashed: ${e.message}`, { cause: e });
      const p = s.pending;
      s.pending = null;
      p?.reject(err);
      void this.fail(err);
    });
    s.worker.on('exit', (code) => {
      s.alive = false;
      const p = s.pending;
      s.pending = null;
      if (this.closing) {
        p?.reject(this.refusal() ?? new Error(`the ${this.label}s are closed`));
        return;
      }
      const err = new Error(`${this.label} ${i} exited unexpectedly (code ${code})`);
      p?.reject(err);
      void this.fail(err);
    });
    return first;
  }

  private expect(s: Slot<Reply>): Promise<WorkerMessage<Reply, unknown>> {
    return new Promise((resolve, reject) => {
      s.pending = { resolve, reject };
    });
  }

  /**
   * An error thread i sent (`toRemoteError` there), as the main thread throws it: as its own class
   * when it is one of `errorClasses`, with the message unchanged; otherwise an Error saying which
   * thread `what` (e.g. 'failed'). For callers whose replies carry errors of their own (one per
   * item of a batch).
   */
  remoteError(i: number, r: RemoteError, what: string): Error {
    const known = this.errorClasses.find((c) => c.name === r.type);
    const e = known ? new known(r.message) : new Error(`${this.label} ${i} ${what}: ${r.message}`);
    if (r.stack) e.stack = `${e.stack}\n${this.label} ${i} stack:\n${r.stack}`;
    return e;
  }

  /**
   * Stops every thread, recording `error` as the reason (the first failure wins: later calls
   * report it). Resolves once the threads have exited.
   */
  fail(error: Error): Promise<void> {
    this.failed ??= error;
    return this.close();
  }

  /** terminates every thread; idempotent, resolves once they have exited */
  close(): Promise<void> {
    if (!this.closing) {
      this.closing = Promise.all(this.slots.map((s) => s.worker.terminate())).then(() => {});
      this.dispatch();
    }
    return this.closing;
  }
}

/**
 * The worker side of the protocol, called once by a worker module: `init` builds the worker's
 * state from its `workerData` (an exception fails the pool's start), `handle` answers each request
 * with it, `describe` gives the `info` sent with the ready message.
 */
export function serveRequests<Data, State, Request, Reply, Info = undefined>(
  init: (data: Data) => State | Promise<State>,
  handle: (state: State, request: Request) => Reply | Promise<Reply>,
  describe?: (state: State) => Info,
): void {
  const port = parentPort;
  if (!port) throw new Error('serveRequests runs in a worker thread started by ThreadPool');
  const send = (m: WorkerMessage<Reply, Info | undefined>) => port.postMessage(m);
  const ready = (async () => {
    const state = await init(workerData as Data);
    send({ kind: 'ready', info: describe?.(state) });
    return state;
  })();
  ready.catch((e: unknown) => send({ kind: 'error', error: toRemoteError(e) }));
  // requests come one at a time, and only after the ready message
  port.on('message', (request: Request) => {
    ready
      .then((state) => handle(state, request))
      .then(
        (value) => send({ kind: 'reply', value }),
        (e: unknown) => send({ kind: 'error', error: toRemoteError(e) }),
      );
  });
}

/** an error as it crosses from a thread to the main thread (structured clone keeps no class) */
export function toRemoteError(e: unknown): RemoteError {
  if (!(e instanceof Error)) return { type: 'Error', message: String(e) };
  return {
    type: e.constructor?.name ?? e.name,
    message: e.message,
    ...(e.stack ? { stack: e.stack } : {}),
  };
}

/**
 * How to start a worker module. From compiled JavaScript, the file itself. From TypeScript sources
 * (vitest, tsx), a small JavaScript bootstrap that imports the `.ts` module through tsx's API:
 * Node 20 does not apply loader hooks given as the thread's `--import` to its entry file, while
 * `tsImport` registers them inside the thread and works.
 */
export function workerEntry(js: URL): { entry: URL | string; eval: boolean } {
  if (!import.meta.url.endsWith('.ts')) return { entry: js, eval: false };
  const file = js.href.replace(/\.js$/, '.ts');
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
    throw new Error('worker threads started from TypeScript sources need the tsx package', { cause: e });
  }
  return pathToFileURL(cjs.replace(/\.cjs$/, '.mjs')).href;
}
