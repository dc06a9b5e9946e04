/**
 * Optimisation helpers on flat parameter vectors: global-norm gradient clipping and Adam (bias
 * corrected, optional decoupled weight decay).
 */
import { createHash } from 'node:crypto';
import type { Arr } from '../../nn/model.js';

const ADAM_MAGIC = new TextEncoder().encode('SEALADAM');
/** the same layout with float64 moments: a resume that continues bit for bit */
const ADAM_MAGIC_EXACT = new TextEncoder().encode('SEALADM8');

/**
 * Learning rate at `step` (0-based) of `steps`: linear warm-up over `warmup` steps, then a cosine
 * decay to `floor` times the peak at the last step.
 */
export function warmupCosine(peak: number, step: number, steps: number, warmup: number, floor = 0.1): number {
  if (step < warmup) return (peak * (step + 1)) / warmup;
  const progress = steps > warmup ? Math.min(1, (step - warmup) / (steps - warmup)) : 1;
  return peak * (floor + (1 - floor) * 0.5 * (1 + Math.cos(Math.PI * progress)));
}

/** the L2 norm of `g` */
export function globalNorm(g: Arr): number {
  let s = 0;
  for (let i = 0; i < g.length; i++) s += g[i]! * g[i]!;
  return Math.sqrt(s);
}

/** scale `g` in place so its norm is at most `maxNorm`; returns the norm before clipping */
export function clipGradNorm(g: Arr, maxNorm: number): number {
  const n = globalNorm(g);
  if (Number.isFinite(maxNorm) && maxNorm > 0 && n > maxNorm) {
    const s = maxNorm / (n + 1e-12);
    for (let i = 0; i < g.length; i++) g[i] = g[i]! * s;
  }
  return n;
}

export interface AdamOptions {
  readonly lr: number;
  readonly beta1?: number;
  readonly beta2?: number;
  readonly eps?: number;
  /** decoupled (AdamW) weight decay; default 0 */
  readonly weightDecay?: number;
}

export class Adam {
  lr: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
  private readonly m: Float64Array;
  private readonly v: Float64Array;
  private t = 0;

  constructor(size: number, opts: AdamOptions) {
    this.lr = opts.lr;
    this.beta1 = opts.beta1 ?? 0.9;
    this.beta2 = opts.beta2 ?? 0.999;
    this.eps = opts.eps ?? 1e-8;
    this.weightDecay = opts.weightDecay ?? 0;
    this.m = new Float64Array(size);
    this.v = new Float64Array(size);
  }

  get steps(): number {
    return this.t;
  }

  /**
   * The moments and step count as bytes with a sha256 trailer. By default the moments are float32
   * (half the size; resuming from them differs from never stopping only by that rounding); with
   * `exact`, float64, so that a resumed run continues bit for bit (what `seal train` needs).
   */
  serialize(opts: { readonly exact?: boolean } = {}): Uint8Array {
    const n = this.m.length;
    const magic = opts.exact ? ADAM_MAGIC_EXACT : ADAM_MAGIC;
    const width = opts.exact ? 8 : 4;
    const body = new Uint8Array(magic.length + 8 + 2 * n * width);
    body.set(magic);
    const view = new DataView(body.buffer);
    view.setUint32(magic.length, this.t, true);
    view.setUint32(magic.length + 4, n, true);
    const moments = opts.exact
      ? new Float64Array(body.buffer, magic.length + 8, 2 * n)
      : new Float32Array(body.buffer, magic.length + 8, 2 * n);
    moments.set(this.m);
    moments.set(this.v, n);
    const digest = createHash('sha256').update(body).digest();
    const out = new Uint8Array(body.length + 32);
    out.set(body);
    out.set(digest, body.length);
    return out;
  }

  /** restore what `serialize` wrote (either width); a damaged file or another model size is an error */
  restore(bytes: Uint8Array): void {
    const fail = (why: string): never => {
      throw new Error(`cannot restore the optimizer state: ${why}`);
    };
    const n = this.m.length;
    const is = (magic: Uint8Array) => magic.every((b, i) => bytes[i] === b);
    const exact = is(ADAM_MAGIC_EXACT);
    if (!exact && !is(ADAM_MAGIC)) fail('bad magic');
    const width = exact ? 8 : 4;
    if (bytes.length !== ADAM_MAGIC.length + 8 + 2 * n * width + 32)
      fail(`size differs from a model of ${n} parameters`);
    const body = bytes.subarray(0, bytes.length - 32);
    const digest = createHash('sha256').update(body).digest();
    if (!Buffer.from(bytes.subarray(bytes.length - 32)).equals(digest))
      fail('checksum mismatch (corrupt file)');
    const copy = body.slice();
    const view = new DataView(copy.buffer);
    this.t = view.getUint32(ADAM_MAGIC.length, true);
    const moments = exact
      ? new Float64Array(copy.buffer, ADAM_MAGIC.length + 8, 2 * n)
      : new Float32Array(copy.buffer, ADAM_MAGIC.length + 8, 2 * n);
    this.m.set(moments.subarray(0, n));
    this.v.set(moments.subarray(n));
  }

  /** one update of `params` with gradient `g` */
  step(params: Arr, g: Arr): void {
    if (params.length !== this.m.length || g.length !== this.m.length) throw new Error('Adam: size mismatch');
    this.t++;
    const { beta1: b1, beta2: b2, eps, lr } = this;
    const c1 = 1 / (1 - b1 ** this.t);
    const c2 = 1 / (1 - b2 ** this.t);
    const decay = 1 - lr * this.weightDecay;
    const m = this.m;
    const v = this.v;
    for (let i = 0; i < params.length; i++) {
      const gi = g[i]!;
      const mi = b1 * m[i]! + (1 - b1) * gi;
      const vi = b2 * v[i]! + (1 - b2) * gi * gi;
      m[i] = mi;
      v[i] = vi;
      params[i] = params[i]! * decay - (lr * (mi * c1)) / (Math.sqrt(vi * c2) + eps);
    }
  }
}
