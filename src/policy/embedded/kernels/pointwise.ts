/**
 * Float32 wrappers of the elementwise SIMD kernels (vmath.ts): rows and activations are copied into
 * linear memory, processed there and copied back.
 */
import { heap, regions, vmath } from './gemm.js';

/** log-softmax of logits[t*V, (t+1)*V) at `target` */
export function tokenLogprobF32(logits: Float32Array, V: number, t: number, target: number): number {
  const r = t * V;
  const [p] = regions(V) as [number];
  const h = heap();
  h.set(logits.subarray(r, r + V), p);
  // the padding lanes must not win the max nor add to the sum
  h.fill(Number.NEGATIVE_INFINITY, p + V, p + ((V + 3) & ~3));
  const max = vmath.rowmax(p * 4, V);
  const sum = vmath.expsum(p * 4, V, max, 0);
  return logits[r + target]! - max - Math.log(sum);
}

/** dlogits row t += w * (onehot(target) - softmax(logits row t)) */
export function addLogprobGradF32(
  dlogits: Float32Array,
  logits: Float32Array,
  V: number,
  t: number,
  target: number,
  w: number,
): void {
  const r = t * V;
  const [px, pd] = regions(V, V) as [number, number];
  const h = heap();
  h.set(logits.subarray(r, r + V), px);
  h.fill(Number.NEGATIVE_INFINITY, px + V, px + ((V + 3) & ~3));
  h.set(dlogits.subarray(r, r + V), pd);
  const max = vmath.rowmax(px * 4, V);
  const sum = vmath.expsum(px * 4, V, max, 1);
  vmath.axpy(pd * 4, px * 4, V, -w / sum);
  dlogits.set(h.subarray(pd, pd + V), r);
  dlogits[r + target] = dlogits[r + target]! + w;
}

export function geluF32(out: Float32Array, u: Float32Array, n: number): void {
  const [p] = regions(n) as [number];
  const h = heap();
  h.set(u.subarray(0, n), p);
  vmath.gelu(p * 4, p * 4, n);
  out.set(h.subarray(p, p + n));
}

/** dg *= gelu'(u) */
export function geluBackwardF32(dg: Float32Array, u: Float32Array, n: number): void {
  const [pd, pu] = regions(n, n) as [number, number];
  const h = heap();
  h.set(dg.subarray(0, n), pd);
  h.set(u.subarray(0, n), pu);
  vmath.geluBackward(pd * 4, pu * 4, n);
  dg.set(h.subarray(pd, pd + n));
}
