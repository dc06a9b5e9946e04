/** A counting semaphore: at most `limit` calls of `run` at once, the rest wait in arrival order. */
export class Semaphore {
  private readonly waiting: (() => void)[] = [];

  constructor(private free: number) {}

  async run<T>(f: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((r) => this.waiting.push(r));
    try {
      return await f();
    } finally {
      // the slot passes straight to the next waiter, so a late arrival cannot overtake it
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}

/** Run `work` over `items` with at most `limit` in flight, preserving nothing but completion order. */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!, i);
    }
  });
  await Promise.all(lanes);
  return out;
}
