/**
 * Optimisation helpers on flat parameter vectors: global-norm gradient clipping and Adam (bias
 * corrected, optional decoupled weight decay).
 */
import type { Arr } from '../../policy/embedded/model.js';

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
