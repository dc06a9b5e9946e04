/**
 * The project's one seeded PRNG: 32-bit integer arithmetic only, so a seed gives the same stream
 * on every platform, and never Math.random. Two generators sit behind the one class, because
 * streams already drawn must not change: `sfc32` (seeded through splitmix32; the embedded model's
 * parameter init and sampling) and `mulberry32` (the mini suite's tasks, task orders, pre-training
 * demonstrations). The helpers above the 32-bit draw are the same for both.
 */
export type RngAlgorithm = 'sfc32' | 'mulberry32';

export class Rng {
  /** sfc32's four words; mulberry32 keeps its one word in `a` */
  private a: number;
  private b = 0;
  private c = 0;
  private d = 0;
  private readonly sfc: boolean;
  private spare: number | null = null;

  constructor(seed: number, algorithm: RngAlgorithm = 'sfc32') {
    this.sfc = algorithm === 'sfc32';
    let s = seed >>> 0;
    if (!this.sfc) {
      this.a = s;
      return;
    }
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.nextU32();
  }

  /** a uniform 32-bit unsigned integer */
  nextU32(): number {
    if (!this.sfc) {
      this.a = (this.a + 0x6d2b79f5) >>> 0;
      let t = this.a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return (t ^ (t >>> 14)) >>> 0;
    }
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** a uniform float in [0, 1) with 32 bits of randomness */
  next(): number {
    return this.nextU32() / 4294967296;
  }

  /** a standard normal sample (Box-Muller, the second value kept for the next call) */
  normal(): number {
    if (this.spare !== null) {
      const v = this.spare;
      this.spare = null;
      return v;
    }
    let u = this.next();
    while (u <= 0) u = this.next();
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** an integer in [lo, hi], both inclusive */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick on an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  /** `n` distinct items in random order */
  sample<T>(items: readonly T[], n: number): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    return copy.slice(0, n);
  }
}

/** A 32-bit mix of several integers (splitmix-style), for deriving per-task seeds. */
export function mixSeed(...parts: readonly number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    // the high bits of large seeds
    h = Math.imul(h ^ Math.floor(p / 4294967296), 0x27d4eb2f);
    h ^= h >>> 15;
  }
  return h >>> 0;
}
