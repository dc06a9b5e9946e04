/**
 * Float32 wrappers of the elementwise and row-wise SIMD kernels (vmath.ts, vnorm.ts): rows and
 * activations are copied into linear memory, processed there and copied back.
 */
import { layerNorm, layerNormBackward } from '../reference-ops.js';
import { heap, regions } from './heap.js';
import { vmath } from './module.js';

/**
 * Copies a row of logits to linear memory at float offset p (a region), with -inf in the lanes
 * that pad it to whole vectors (they must not win the max nor add to a sum); returns its max.
 */
function logitsIn(p: number, row: Float32Array): number {
  const h = heap();
  const V = row.length;
  h.set(row, p);
  h.fill(Number.NEGATIVE_INFINITY, p + V, p + ((V + 3) & ~3));
  return vmath.rowmax(p * 4, V);
}

/** log-softmax of logits[t*V, (t+1)*V) at `target` */
export function tokenLogprobF32(logits: Float32Array, V: number, t: number, target: number): number {
  const r = t * V;
  const [p] = regions(V);
  const max = logitsIn(p, logits.subarray(r, r + V));
  const sum = vmath.expsum(p * 4, V, max, 1, 0);
  return logits[r + target]! - max - Math.log(sum);
}

/**
 * out[j] = exp((x[j] - max x) * scale) for j < x.length (what sampling draws from, unnormalised);
 * returns their sum, taken in double precision over the values written
 */
export function softmaxWeightsF32(out: Float32Array, x: Float32Array, scale: number): number {
  const V = x.length;
  const [p] = regions(V);
  vmath.expsum(p * 4, V, logitsIn(p, x), scale, 1);
  out.set(heap().subarray(p, p + V));
  let sum = 0;
  for (let j = 0; j < V; j++) sum += out[j]!;
  return sum;
}

/**
 * dlogits row t += w * (onehot(target) - softmax(logits row t)); returns the row's log-softmax at
 * `target`, the bits of `tokenLogprobF32` (its sum of exps is the one the gradient uses), so a
 * caller that needs both reads the row once
 */
export function logprobAndGradF32(
  dlogits: Float32Array,
  logits: Float32Array,
  V: number,
  t: number,
  target: number,
  w: number,
): number {
  const r = t * V;
  const [px, pd] = regions(V, V);
  const h = heap();
  const max = logitsIn(px, logits.subarray(r, r + V));
  h.set(dlogits.subarray(r, r + V), pd);
  const sum = vmath.expsum(px * 4, V, max, 1, 1);
  vmath.axpy(pd * 4, px * 4, V, -w / sum);
  dlogits.set(h.subarray(pd, pd + V), r);
  dlogits[r + target] = dlogits[r + target]! + w;
  return logits[r + target]! - max - Math.log(sum);
}

export function geluF32(out: Float32Array, u: Float32Array, n: number): void {
  const [p] = regions(n);
  const h = heap();
  h.set(u.subarray(0, n), p);
  vmath.gelu(p * 4, p * 4, n);
  out.set(h.subarray(p, p + n));
}

/** dg *= gelu'(u) */
export function geluBackwardF32(dg: Float32Array, u: Float32Array, n: number): void {
  const [pd, pu] = regions(n, n);
  const h = heap();
  h.set(dg.subarray(0, n), pd);
  h.set(u.subarray(0, n), pu);
  vmath.geluBackward(pd * 4, pu * 4, n);
  dg.set(h.subarray(pd, pd + n));
}

/** g[j] += sum over rows of d[row, j] (width g.length) */
export function colSumAccF32(g: Float32Array, d: Float32Array, rows: number): void {
  const n = g.length;
  const [pg, pd] = regions(n, rows * n);
  const h = heap();
  h.set(g, pg);
  h.set(d.subarray(0, rows * n), pd);
  vmath.colSum(pg * 4, pd * 4, rows, n);
  g.set(h.subarray(pg, pg + n));
}

export function layerNormF32(
  out: Float32Array,
  x: Float32Array,
  mean: Float32Array,
  rstd: Float32Array,
  gain: Float32Array,
  bias: Float32Array,
  rows: number,
): void {
  const D = gain.length;
  if (D % 4 !== 0) {
    layerNorm(out, x, mean, rstd, gain, bias, rows);
    return;
  }
  const [px, po, pm, ps, pg, pb] = regions(rows * D, rows * D, rows, rows, D, D);
  const h = heap();
  h.set(x.subarray(0, rows * D), px);
  h.set(gain, pg);
  h.set(bias, pb);
  vmath.layerNorm(po * 4, px * 4, pm * 4, ps * 4, pg * 4, pb * 4, rows, D);
  out.set(h.subarray(po, po + rows * D));
  mean.set(h.subarray(pm, pm + rows));
  rstd.set(h.subarray(ps, ps + rows));
}

export function layerNormBackwardF32(
  dx: Float32Array,
  dh: Float32Array,
  x: Float32Array,
  mean: Float32Array,
  rstd: Float32Array,
  gain: Float32Array,
  dgain: Float32Array,
  dbias: Float32Array,
  rows: number,
): void {
  const D = gain.length;
  if (D % 4 !== 0) {
    layerNormBackward(dx, dh, x, mean, rstd, gain, dgain, dbias, rows);
    return;
  }
  const n = rows * D;
  const [pdx, pdh, px, pm, ps, pg, pdg, pdb] = regions(n, n, n, rows, rows, D, D, D);
  const h = heap();
  h.set(dx.subarray(0, n), pdx);
  h.set(dh.subarray(0, n), pdh);
  h.set(x.subarray(0, n), px);
  h.set(mean.subarray(0, rows), pm);
  h.set(rstd.subarray(0, rows), ps);
  h.set(gain, pg);
  h.set(dgain, pdg);
  h.set(dbias, pdb);
  vmath.layerNormBackward(pdx * 4, pdh * 4, px * 4, pm * 4, ps * 4, pg * 4, pdg * 4, pdb * 4, rows, D);
  dx.set(h.subarray(pdx, pdx + n));
  dgain.set(h.subarray(pdg, pdg + D));
  dbias.set(h.subarray(pdb, pdb + D));
}
