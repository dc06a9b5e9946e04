/**
 * Large scratch arrays reused between passes. A training pass over a ~900-token sequence keeps
 * ~4 MB of attention probabilities per layer until its backward pass; a fresh array of that size
 * is fresh pages, which the kernel zeroes and faults in on first write, and which the collector
 * later has to find. That cost (about a sixth of a GRPO update, measured) is gone when the backward
 * pass hands the arrays back and the next forward pass takes them. An array that is never handed
 * back (a forward pass with no backward) is simply collected.
 */
import type { Arr } from './ops.js';

export class BufferPool {
  private readonly free: Arr[] = [];
  private freeBytes = 0;

  /**
   * `alloc` makes a new array; at most `maxBytes` wait in the pool (the largest go first when it is
   * full, since the next pass needs the most of the sizes it had)
   */
  constructor(
    private readonly alloc: (n: number) => Arr,
    private readonly maxBytes = 256 * 2 ** 20,
  ) {}

  /** an array of n elements whose contents are left over from earlier use */
  take(n: number): Arr {
    let best = -1;
    // an array at most twice as long as needed, the shortest such
    for (const [i, b] of this.free.entries())
      if (b.length >= n && b.length <= 2 * n && (best < 0 || b.length < this.free[best]!.length)) best = i;
    if (best < 0) return this.alloc(n);
    const [whole] = this.free.splice(best, 1);
    this.freeBytes -= whole!.byteLength;
    return whole!.subarray(0, n);
  }

  /** gives back an array `take` returned (it must not be used again) */
  give(a: Arr): void {
    const whole = a instanceof Float64Array ? new Float64Array(a.buffer) : new Float32Array(a.buffer);
    this.free.push(whole);
    this.freeBytes += whole.byteLength;
    while (this.freeBytes > this.maxBytes) {
      let largest = 0;
      for (const [i, b] of this.free.entries()) if (b.length > this.free[largest]!.length) largest = i;
      const [dropped] = this.free.splice(largest, 1);
      this.freeBytes -= dropped!.byteLength;
    }
  }
}
