/**
 * The live instances by id, with idle expiry. An instance is plain memory (no actor, no
 * process), so releasing it is dropping the reference; a trainer that crashes mid-episode
 * leaves instances behind, which the TTL sweep reclaims. What is kept per id is the session
 * itself in process, or where it lives when worker threads hold the sessions.
 */
import { badRequest } from './errors.js';

export interface RegistryStats {
  readonly instances: number;
  readonly created: number;
  readonly released: number;
  readonly expired: number;
  readonly replaced: number;
}

interface Entry<T> {
  readonly value: T;
  lastAccess: number;
}

export class InstanceRegistry<T extends { readonly id: string }> {
  private readonly entries = new Map<string, Entry<T>>();
  private timer: NodeJS.Timeout | undefined;
  private created = 0;
  private released = 0;
  private expired = 0;
  private replaced = 0;

  /**
   * @param ttlMs idle time after which an instance is dropped
   * @param now the clock (tests may move it)
   * @param onDrop called for each instance released or expired (not for one replaced by `put`)
   */
  constructor(
    readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly onDrop?: (value: T) => void,
  ) {}

  /** Sweeps expired instances periodically; the timer never keeps the process alive. */
  start(): void {
    const every = Math.max(10, Math.min(60_000, this.ttlMs / 2));
    this.timer = setInterval(() => this.sweep(), every);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Adds an instance; an existing one with the same id is released first (the reference's clients reuse ids). */
  put(value: T): void {
    if (this.entries.delete(value.id)) this.replaced++;
    this.entries.set(value.id, { value, lastAccess: this.now() });
    this.created++;
  }

  /**
   * Takes back a `put` whose instance could not be made after all: an instance it replaced stays
   * (under `value`, which stands for the same place), a new id goes. Nothing happens when the id
   * has changed hands since. Returns whether it took the put back.
   */
  unput(value: T, replaced: boolean): boolean {
    if (this.entries.get(value.id)?.value !== value) return false;
    this.created--;
    if (replaced) this.replaced--;
    else this.entries.delete(value.id);
    return true;
  }

  /** The instance under `id` as it is: not touched, expired or not. */
  peek(id: string): T | undefined {
    return this.entries.get(id)?.value;
  }

  /** The live instance, touched; 400 when the id is missing, unknown or expired. */
  get(id: string | null | undefined): T {
    if (!id) throw badRequest('instance_id is required');
    const e = this.entries.get(id);
    if (!e || this.isExpired(e)) {
      if (e) this.expire(id);
      throw badRequest(`Instance ${id} not found (never created, released, or idle for more than the TTL)`);
    }
    e.lastAccess = this.now();
    return e.value;
  }

  release(id: string): boolean {
    const e = this.entries.get(id);
    if (!e) return false;
    this.entries.delete(id);
    this.onDrop?.(e.value);
    if (this.isExpired(e)) {
      this.expired++;
      return false;
    }
    this.released++;
    return true;
  }

  /** Forgets every instance `lost` picks (their memory is gone already); returns how many. */
  forget(lost: (value: T) => boolean): number {
    let n = 0;
    for (const [id, e] of this.entries)
      if (lost(e.value)) {
        this.entries.delete(id);
        n++;
      }
    return n;
  }

  sweep(): number {
    let n = 0;
    for (const [id, e] of this.entries)
      if (this.isExpired(e)) {
        this.expire(id);
        n++;
      }
    return n;
  }

  get size(): number {
    return this.entries.size;
  }

  stats(): RegistryStats {
    return {
      instances: this.entries.size,
      created: this.created,
      released: this.released,
      expired: this.expired,
      replaced: this.replaced,
    };
  }

  private isExpired(e: Entry<T>): boolean {
    return this.now() - e.lastAccess > this.ttlMs;
  }

  private expire(id: string): void {
    const e = this.entries.get(id);
    if (!e) return;
    this.entries.delete(id);
    this.onDrop?.(e.value);
    this.expired++;
  }
}
