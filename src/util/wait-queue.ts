/**
 * Requests waiting for a worker, oldest first, each with the promise its caller holds: a request
 * whose abort signal fires while it waits leaves the queue and rejects with the signal's reason;
 * once taken it belongs to whoever took it (the signal no longer drops it). `ThreadPool.submit`
 * queues on one in arrival order; the embedded policy pool takes batches out of one by the thread
 * a chat belongs to.
 */

export interface Waiter<T, R> {
  readonly value: T;
  readonly resolve: (r: R) => void;
  readonly reject: (e: unknown) => void;
}

interface Entry<T, R> extends Waiter<T, R> {
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

export class WaitQueue<T, R> {
  private readonly entries: Entry<T, R>[] = [];

  get length(): number {
    return this.entries.length;
  }

  /** the waiting values, oldest first */
  values(): T[] {
    return this.entries.map((e) => e.value);
  }

  /** queues `value`; the promise settles when whoever takes it settles it, or on an abort while it waits */
  wait(value: T, signal?: AbortSignal): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const entry: Entry<T, R> = {
        value,
        resolve,
        reject,
        signal,
        onAbort: () => {
          const k = this.entries.indexOf(entry);
          if (k >= 0) {
            this.entries.splice(k, 1);
            reject(signal!.reason);
          }
        },
      };
      signal?.addEventListener('abort', entry.onAbort, { once: true });
      this.entries.push(entry);
    });
  }

  /** the oldest waiter taken off the queue, or undefined */
  shift(): Waiter<T, R> | undefined {
    return this.take(() => true, 1)[0];
  }

  /** up to `limit` waiters whose values pass `keep`, oldest first, taken off the queue */
  take(keep: (value: T) => boolean, limit: number): Waiter<T, R>[] {
    const taken: Entry<T, R>[] = [];
    for (let k = 0; k < this.entries.length && taken.length < limit; ) {
      if (keep(this.entries[k]!.value)) taken.push(...this.entries.splice(k, 1));
      else k++;
    }
    for (const e of taken) e.signal?.removeEventListener('abort', e.onAbort);
    return taken;
  }

  /** empties the queue, rejecting every waiter with `reason` */
  rejectAll(reason: unknown): void {
    for (const e of this.take(() => true, this.entries.length)) e.reject(reason);
  }
}
