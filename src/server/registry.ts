/**
 * The live instances by id, with idle expiry. An instance is plain memory (no actor, no
 * process), so releasing it is dropping the reference; a trainer that crashes mid-episode
 * leaves instances behind, which the TTL sweep reclaims.
 */
import { badRequest } from './errors.js';
import type { ServeSession } from './session.js';

export interface RegistryStats {
  readonly instances: number;
  readonly created: number;
  readonly released: number;
  readonly expired: number;
  readonly replaced: number;
}

interface Entry {
  readonly session: ServeSession;
  lastAccess: number;
}

export class InstanceRegistry {
  private readonly entries = new Map<string, Entry>();
  private timer: NodeJS.Timeout | undefined;
  private created = 0;
  private released = 0;
  private expired = 0;
  private replaced = 0;

  /**
   * @param ttlMs idle time after which an instance is dropped
   * @param now the clock (tests may move it)
   */
  constructor(
    readonly ttlMs: number,
    private readonly now: () => number = Date.now,
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
  put(session: ServeSession): void {
    if (this.entries.delete(session.id)) this.replaced++;
    this.entries.set(session.id, { session, lastAccess: this.now() });
    this.created++;
  }

  /** The live instance, touched; 400 when the id is missing, unknown or expired. */
  get(id: string | null | undefined): ServeSession {
    if (!id) throw badRequest('instance_id is required');
    const e = this.entries.get(id);
    if (!e || this.isExpired(e)) {
      if (e) this.expire(id);
      throw badRequest(`Instance ${id} not found (never created, released, or idle for more than the TTL)`);
    }
    e.lastAccess = this.now();
    return e.session;
  }

  release(id: string): boolean {
    const e = this.entries.get(id);
    if (!e) return false;
    this.entries.delete(id);
    if (this.isExpired(e)) {
      this.expired++;
      return false;
    }
    this.released++;
    return true;
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

  private isExpired(e: Entry): boolean {
    return this.now() - e.lastAccess > this.ttlMs;
  }

  private expire(id: string): void {
    this.entries.delete(id);
    this.expired++;
  }
}
