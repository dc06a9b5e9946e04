/**
 * CPython's `random.Random` for the calls the BFCL classes make: integer seeding,
 * `getrandbits`, `randint` (via `_randbelow`) and `random`/`uniform`. Ground truths quote the
 * ids these produce, so the stream must be bit-identical to CPython's MT19937.
 */
import { repr } from './format.js';
import type { PyValue } from './values.js';

const N = 624;
const M = 397;

export class PyRandom {
  private readonly mt = new Uint32Array(N);
  private index = N;

  constructor(seed: bigint | number) {
    this.seed(seed);
  }

  /** `random.seed(int)`: |seed| split into 32-bit words, least significant first. */
  seed(seed: bigint | number): void {
    let s = BigInt(seed);
    if (s < 0n) s = -s;
    const key: number[] = [];
    do {
      key.push(Number(s & 0xffffffffn));
      s >>= 32n;
    } while (s > 0n);
    this.initByArray(key);
  }

  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30);
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
    this.index = N;
  }

  private initByArray(key: number[]): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30);
      mt[i] = ((mt[i]! ^ Math.imul(prev, 1664525)) + key[j]! + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30);
      mt[i] = ((mt[i]! ^ Math.imul(prev, 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
    }
    mt[0] = 0x80000000;
    this.index = N;
  }

  private twist(): void {
    const mt = this.mt;
    for (let k = 0; k < N; k++) {
      const y = (mt[k]! & 0x80000000) | (mt[(k + 1) % N]! & 0x7fffffff);
      mt[k] = mt[(k + M) % N]! ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
    }
    this.index = 0;
  }

  /** One raw 32-bit output (genrand_uint32). */
  nextUint32(): number {
    if (this.index >= N) this.twist();
    let y = this.mt[this.index++]!;
    y ^= y >>> 11;
    y = (y ^ ((y << 7) & 0x9d2c5680)) >>> 0;
    y = (y ^ ((y << 15) & 0xefc60000)) >>> 0;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `getrandbits(k)` */
  getrandbits(k: number): bigint {
    if (k <= 0) return 0n;
    if (k <= 32) return BigInt(this.nextUint32() >>> (32 - k));
    let result = 0n;
    let shift = 0n;
    for (let remaining = k; remaining > 0; remaining -= 32) {
      let r = this.nextUint32();
      if (remaining < 32) r >>>= 32 - remaining;
      result |= BigInt(r) << shift;
      shift += 32n;
    }
    return result;
  }

  /** `_randbelow(n)`: rejection sampling on `bit_length(n)` bits. */
  randbelow(n: bigint): bigint {
    if (n <= 0n) return 0n;
    const k = n.toString(2).length;
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  /** `randint(a, b)`, both ends included. */
  randint(a: bigint | number, b: bigint | number): bigint {
    const lo = BigInt(a);
    const hi = BigInt(b);
    if (hi < lo) throw new RangeError(`empty range for randint(${lo}, ${hi})`);
    return lo + this.randbelow(hi - lo + 1n);
  }

  /** `random()` in [0, 1) with 53 bits. */
  random(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** `uniform(a, b)` */
  uniform(a: number, b: number): number {
    return a + (b - a) * this.random();
  }
}

/**
 * The generator a class builds from its scenario's `random_seed`. Integers (and what Python
 * hashes to the same integer: bools, integral floats) seed as `random.Random(seed)` does. No BFCL
 * task sets a seed; anything else (None means OS entropy in Python) would make runs
 * irreproducible, so it is refused with a clear error.
 */
export function randomFromScenarioSeed(seed: PyValue, owner: string): PyRandom {
  if (typeof seed === 'bigint') return new PyRandom(seed);
  if (typeof seed === 'boolean') return new PyRandom(seed ? 1n : 0n);
  if (typeof seed === 'number' && Number.isInteger(seed)) return new PyRandom(BigInt(seed));
  throw new Error(`${owner}: random_seed ${repr(seed)} is not supported; give an integer seed`);
}
