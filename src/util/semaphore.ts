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
