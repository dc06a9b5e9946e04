/**
 * `seal serve --workers N`: the instances live in N worker threads, the HTTP server and the SEAL
 * state stay in the main thread.
 *
 * - An instance is assigned on `/create` to the ready worker holding the fewest instances (ties:
 *   the lowest index) and stays there: its `/step`, `/evaluate`, `/get_info` and `/release` go to
 *   that worker, and re-creating its id creates the new instance on the same worker, which
 *   replaces the old one as the in-process server does (a create that fails leaves the old one).
 * - The main thread keeps the registry (ids, TTL, counters) and decides at each request's arrival,
 *   so the answers to one instance's requests follow the order they came in, as in process. A
 *   worker answers its messages in the order it gets them.
 * - A worker's sessions read a `SealMirror` of the main thread's SEAL state; every rollout they
 *   evaluate comes back with the answer and joins the main thread's one profile before the answer
 *   is sent. Every round's interface and rho go to every worker at once, so an instance created
 *   after a round, wherever it lands, sees the new interface, and running ones keep theirs.
 * - An exception in a session is that request's 500. A worker that dies takes its instances with
 *   it (their ids answer 400, as for any unknown instance; requests it was answering get 500) and
 *   is replaced by a new one; the server goes on.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { BfclData, BfclTask, SuiteName } from '../envs/bfcl/data/tasks.js';
import { workerEntry } from '../util/thread-pool.js';
import { badRequest, HttpError } from './errors.js';
import type { InstanceRef, Instances } from './instances.js';
import type { AssistantMessage, InstanceOptions } from './protocol.js';
import { InstanceRegistry } from './registry.js';
import type { RolloutWeight, SealState, SealView } from './seal-state.js';

/** The default worker count: one per core but the one the HTTP thread keeps busy, at most this many. */
export const MAX_DEFAULT_WORKERS = 8;

/**
 * `--workers`' default: with one or two cores a worker only adds message passing to one thread's
 * work (1: in process); with more, each core but the HTTP thread's gets a worker.
 */
export function defaultWorkers(cores = availableParallelism()): number {
  return Math.max(1, Math.min(MAX_DEFAULT_WORKERS, cores - 1));
}

/** What a worker is started with (its `workerData`). */
export interface ServeWorkerData {
  readonly suite: SuiteName;
  /** the data directory (bfcl) */
  readonly dataDir: string | undefined;
  readonly seal: SealView;
}

type Ask =
  | { readonly op: 'create'; readonly id: string; readonly taskId: string; readonly options: InstanceOptions }
  | { readonly op: 'step'; readonly id: string; readonly message: AssistantMessage }
  | { readonly op: 'evaluate'; readonly id: string; readonly sparse: boolean }
  | { readonly op: 'info'; readonly id: string };

/** A request for a worker to answer, with the sequence number its answer carries back. */
export type WorkerRequest = Ask & { readonly seq: number };

/** Main thread to worker: a request to answer, or news to take in. */
export type ToWorker =
  | WorkerRequest
  | { readonly op: 'release'; readonly id: string }
  | { readonly op: 'seal'; readonly view: SealView };

/** Worker to main thread. */
export type FromWorker =
  | { readonly kind: 'ready' }
  | { readonly kind: 'failed'; readonly error: WorkerError }
  | {
      readonly kind: 'answer';
      readonly seq: number;
      readonly json?: string;
      readonly error?: WorkerError;
      /** training rollouts evaluated while answering, for the main thread's profile */
      readonly observed?: readonly RolloutWeight[];
    };

/** An exception in a worker, as it crosses to the main thread. */
export interface WorkerError {
  /** an HttpError's status (400, 409); absent: a 500 */
  readonly status?: number;
  readonly message: string;
  readonly stack?: string;
}

export function workerError(e: unknown): WorkerError {
  if (e instanceof HttpError) return { status: e.status, message: e.message };
  if (e instanceof Error) return { message: e.message, ...(e.stack ? { stack: e.stack } : {}) };
  return { message: String(e) };
}

function fromWorkerError(e: WorkerError, worker: number): Error {
  if (e.status !== undefined) return new HttpError(e.status, e.message);
  const err = new Error(e.message);
  // The worker's stack goes to the operator's log with the 500.
  err.stack = `${e.stack ?? `Error: ${e.message}`}\n    (in serve worker ${worker})`;
  return err;
}

interface Pending {
  readonly resolve: (json: string) => void;
  readonly reject: (e: Error) => void;
}

/** One worker thread and what the main thread knows of it. */
class Slot {
  readonly pending = new Map<number, Pending>();
  /** instances assigned to it (creates in flight included) */
  instances = 0;
  ready = false;
  alive = true;
  /** settles when the worker is ready, or has failed to start */
  readonly started: Promise<void>;

  constructor(
    readonly index: number,
    readonly worker: Worker,
  ) {
    this.started = new Promise((resolve, reject) => {
      worker.once('message', (m: FromWorker) => {
        if (m.kind === 'ready') {
          this.ready = true;
          resolve();
        } else if (m.kind === 'failed') reject(fromWorkerError(m.error, index));
        else reject(new Error(`serve worker ${index} broke the protocol: no ready message`));
      });
      worker.once('exit', (code) =>
        reject(new Error(`serve worker ${index} exited (code ${code}) while starting`)),
      );
    });
    this.started.catch(() => {}); // seen by whoever awaits it; a replacement's failure is only logged
  }
}

/** A registry entry: an instance's id and the worker that holds it. */
class WorkerRef implements InstanceRef {
  constructor(
    readonly id: string,
    readonly slot: Slot,
    private readonly pool: WorkerInstances,
  ) {}
  step(message: AssistantMessage): Promise<string> {
    return this.pool.ask(this.slot, { op: 'step', id: this.id, message });
  }
  evaluate(sparse: boolean): Promise<string> {
    return this.pool.ask(this.slot, { op: 'evaluate', id: this.id, sparse });
  }
  toolsInfo(): Promise<string> {
    return this.pool.ask(this.slot, { op: 'info', id: this.id });
  }
}

export interface WorkerInstancesOptions {
  readonly workers: number;
  readonly data: BfclData;
  readonly seal: SealState;
  readonly ttlMs: number;
}

/** A replacement for a worker that died before it was ready waits this long: no restart loop. */
const RESTART_DELAY_MS = 1000;

export class WorkerInstances implements Instances {
  readonly registry: InstanceRegistry<WorkerRef>;
  private slots: Slot[] = [];
  private readonly count: number;
  private readonly seal: SealState;
  private readonly init: Omit<ServeWorkerData, 'seal'>;
  private seq = 0;
  private closing = false;
  private running = false;
  private restarts = 0;
  private lost = 0;

  constructor(options: WorkerInstancesOptions) {
    if (!Number.isInteger(options.workers) || options.workers < 2)
      throw new Error(`WorkerInstances needs at least 2 workers, got ${options.workers}`);
    this.seal = options.seal;
    this.init = { suite: options.data.suite, dataDir: options.data.dir || undefined };
    this.registry = new InstanceRegistry<WorkerRef>(options.ttlMs, Date.now, (ref) => this.dropped(ref));
    this.count = options.workers;
    // Every round's interface reaches every worker before any later request does.
    this.seal.onRound((view) => {
      for (const s of this.slots) if (s.alive) s.worker.postMessage({ op: 'seal', view } satisfies ToWorker);
    });
  }

  /** The worker threads, by index (a replaced one's successor stands at its index). */
  get workers(): readonly Worker[] {
    return this.slots.map((s) => s.worker);
  }

  /** The worker index holding instance `id`, if it is known. */
  workerOf(id: string): number | undefined {
    return this.registry.peek(id)?.slot.index;
  }

  /** Starts the workers; resolves once every one has loaded the suite. */
  async start(): Promise<void> {
    this.slots = Array.from({ length: this.count }, (_, i) => this.spawn(i));
    try {
      await Promise.all(this.slots.map((s) => s.started));
    } catch (e) {
      await this.close();
      throw e;
    }
    this.running = true;
    this.registry.start();
  }

  async close(): Promise<void> {
    this.closing = true;
    this.registry.stop();
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  create(id: string, task: BfclTask, options: InstanceOptions): Promise<string> {
    const old = this.registry.peek(id);
    const slot = old?.slot ?? this.pick();
    const ref = new WorkerRef(id, slot, this);
    this.registry.put(ref);
    if (!old) slot.instances++;
    return this.ask(slot, { op: 'create', id, taskId: task.id, options }).catch((e: unknown) => {
      // As in process: no new instance; one it was to replace stays.
      if (this.registry.unput(ref, old !== undefined) && !old) slot.instances--;
      throw e;
    });
  }

  get(id: string | null | undefined): WorkerRef {
    return this.registry.get(id);
  }

  release(id: string): boolean {
    return this.registry.release(id);
  }

  stats(): Record<string, unknown> {
    return {
      ...this.registry.stats(),
      workers: this.count,
      workers_ready: this.slots.filter((s) => s.alive && s.ready).length,
      worker_instances: this.slots.map((s) => s.instances),
      worker_restarts: this.restarts,
      instances_lost: this.lost,
    };
  }

  /** Sends `ask` to the worker in `slot`; resolves with its JSON answer. */
  ask(slot: Slot, ask: Ask): Promise<string> {
    if (!slot.alive) return Promise.reject(badRequest(`Instance ${ask.id} not found (its worker stopped)`));
    const seq = ++this.seq;
    return new Promise<string>((resolve, reject) => {
      slot.pending.set(seq, { resolve, reject });
      slot.worker.postMessage({ ...ask, seq } satisfies ToWorker);
    });
  }

  /** The ready worker with the fewest instances (a starting one when none is ready). */
  private pick(): Slot {
    let best: Slot | undefined;
    for (const s of this.slots) if (s.alive && s.ready && (!best || s.instances < best.instances)) best = s;
    if (best) return best;
    for (const s of this.slots) if (s.alive && (!best || s.instances < best.instances)) best = s;
    if (!best) throw new Error('no serve worker is running');
    return best;
  }

  private dropped(ref: WorkerRef): void {
    ref.slot.instances--;
    if (ref.slot.alive) ref.slot.worker.postMessage({ op: 'release', id: ref.id } satisfies ToWorker);
  }

  private spawn(index: number): Slot {
    const entry = workerEntry(new URL('./worker.js', import.meta.url));
    const data: ServeWorkerData = { ...this.init, seal: this.seal.view() };
    // no inherited flags: the parent's (e.g. the tsx CLI's loaders) are not meant for the thread
    const worker = new Worker(entry.entry, { workerData: data, eval: entry.eval, execArgv: [] });
    const slot = new Slot(index, worker);
    worker.on('message', (m: FromWorker) => {
      if (m.kind !== 'answer') return;
      const p = slot.pending.get(m.seq);
      if (!p) return;
      slot.pending.delete(m.seq);
      // The rollouts join the profile before the answer goes out, as in process.
      if (m.observed) for (const r of m.observed) this.seal.observe(r);
      if (m.error) p.reject(fromWorkerError(m.error, index));
      else p.resolve(m.json!);
    });
    worker.on('error', (e) => {
      if (!this.closing) console.error(`seal serve: worker ${index} crashed:`, e);
    });
    worker.on('exit', (code) => this.exited(slot, code));
    return slot;
  }

  private exited(slot: Slot, code: number): void {
    slot.alive = false;
    const failure = this.closing
      ? new Error('the server is stopping')
      : new Error(`serve worker ${slot.index} stopped (exit code ${code}) while answering`);
    for (const p of slot.pending.values()) p.reject(failure);
    slot.pending.clear();
    if (this.closing || !this.running) return;
    const lost = this.registry.forget((ref) => ref.slot === slot);
    this.lost += lost;
    console.error(
      `seal serve: worker ${slot.index} stopped (exit code ${code}); ${lost} instance(s) lost; starting a new one`,
    );
    const replace = () => {
      if (this.closing) return;
      this.restarts++;
      const next = this.spawn(slot.index);
      this.slots[slot.index] = next;
      next.started.catch((e: unknown) =>
        console.error(
          `seal serve: worker ${slot.index} failed to start:`,
          e instanceof Error ? e.message : e,
        ),
      );
    };
    if (slot.ready) replace();
    else setTimeout(replace, RESTART_DELAY_MS).unref();
  }
}
