/**
 * Where a server's instances live and how a route reaches one. `LocalInstances` keeps every
 * session in the thread that calls it and answers at once; `WorkerInstances` (worker-pool.ts)
 * spreads them over worker threads, each of which plays its sessions with a `LocalInstances` of
 * its own, so the episode code is the same in both. The routes see one interface: an instance is
 * looked up (400 when it is missing, unknown or expired), then asked; answers are the route's
 * `data` as JSON text, at once or later.
 */

import { CallRecorder } from '../bfcl/trajectory.js';
import type { BfclData, BfclTask } from '../envs/bfcl/data/tasks.js';
import type { AssistantMessage, InstanceOptions } from './protocol.js';
import { InstanceRegistry } from './registry.js';
import type { SessionSeal } from './seal-state.js';
import { ServeSession, type SessionShared, TextCache } from './session.js';

/** A route's `data` as JSON text, now or once the thread holding the instance has answered. */
export type JsonAnswer = string | Promise<string>;

/** One live instance, as a route asks it. */
export interface InstanceRef {
  step(message: AssistantMessage): JsonAnswer;
  evaluate(sparse: boolean): JsonAnswer;
  toolsInfo(): JsonAnswer;
}

export interface Instances {
  /** A new instance of `task` under `id` (an existing one is replaced); `/create`'s data. */
  create(id: string, task: BfclTask, options: InstanceOptions): JsonAnswer;
  /** The live instance, touched; 400 when the id is missing, unknown or expired. */
  get(id: string | null | undefined): InstanceRef;
  /** Drops the instance; false when the id is unknown or had expired. */
  release(id: string): boolean;
  /** the live ids (what the instance cap counts) */
  readonly registry: { peek(id: string): unknown; sweep(): number; readonly size: number };
  /** what `/stats` shows of the instances */
  stats(): Record<string, unknown>;
  /** resolves once every instance can be served (worker threads started); then the TTL sweep runs */
  start(): Promise<void>;
  /** stops the TTL sweep and whatever threads hold instances */
  close(): Promise<void>;
}

/** A session as a route asks it: its answers as JSON text. */
class LocalRef implements InstanceRef {
  constructor(private readonly session: ServeSession) {}
  step(message: AssistantMessage): string {
    return JSON.stringify(this.session.step(message));
  }
  evaluate(sparse: boolean): string {
    return JSON.stringify(this.session.evaluate(sparse));
  }
  toolsInfo(): string {
    return JSON.stringify(this.session.toolsInfo());
  }
}

/** Every session in this thread: the whole server with one thread, and each worker thread's share. */
export class LocalInstances implements Instances {
  readonly registry: InstanceRegistry<ServeSession>;
  private readonly shared: SessionShared;

  constructor(
    private readonly data: BfclData,
    seal: SessionSeal,
    ttlMs: number,
  ) {
    this.registry = new InstanceRegistry<ServeSession>(ttlMs);
    this.shared = { recorder: new CallRecorder(data), seal, prompts: new TextCache() };
  }

  create(id: string, task: BfclTask, options: InstanceOptions): string {
    const session = new ServeSession(id, task, this.data, options, this.shared);
    const start = session.startJson();
    this.registry.put(session);
    return start;
  }

  get(id: string | null | undefined): LocalRef {
    return new LocalRef(this.registry.get(id));
  }

  release(id: string): boolean {
    return this.registry.release(id);
  }

  stats(): Record<string, unknown> {
    return { ...this.registry.stats() };
  }

  async start(): Promise<void> {
    this.registry.start();
  }

  async close(): Promise<void> {
    this.registry.stop();
  }
}
