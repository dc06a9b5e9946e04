/**
 * The reference kernels: plain JavaScript loops, generic over Float32Array and Float64Array. Float64
 * models run on them (the gradient checks differentiate these), and they are what the float32 SIMD
 * kernels are tested against. simd-ops.ts also borrows the cheap row-wise ones (LayerNorm, bias
 * gradients) that have no SIMD kernel yet.
 */
import type { Arr, AttentionShape, CachedAttentionShape, KvBlock, MatShape, Ops } from './ops.js';

/**
 * out (+)= a @ b^T (+ bias): a [m, k] and b [n, k] both contiguous along k. Every element is its
 * own sum over k in order, then the bias added, then (accumulating) the old value: a row comes out
 * the same whatever the rows computed with it.
 */
export function gemmNT(
  out: Arr,
  a: Arr,
  b: Arr,
  s: MatShape,
  opts: { readonly bias?: Arr | null; readonly accumulate?: boolean } = {},
): void {
  const { m: M, k: K, n: N } = s;
  const bias = opts.bias ?? null;
  const accumulate = opts.accumulate ?? false;
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      let sum = 0;
      for (let k = 0; k < K; k++) sum += a[i * K + k]! * b[j * K + k]!;
      if (bias) sum += bias[j]!;
      out[i * N + j] = accumulate ? out[i * N + j]! + sum : sum;
    }
  }
}

/** out = a @ w (+ bias): a [m, k], w [k, n]; summed as `gemmNT` sums */
function matmul(out: Arr, a: Arr, w: Arr, bias: Arr | null, s: MatShape): void {
  const { m: M, k: K, n: N } = s;
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      let sum = 0;
      for (let k = 0; k < K; k++) sum += a[i * K + k]! * w[k * N + j]!;
      if (bias) sum += bias[j]!;
      out[i * N + j] = sum;
    }
  }
}

/** g += a^T @ d: a [m, k], d [m, n], g [k, n]; each sum over the m rows in order */
function matmulTNAcc(g: Arr, a: Arr, d: Arr, s: MatShape): void {
  const { m: M, k: K, n: N } = s;
  for (let i = 0; i < K; i++) {
    for (let j = 0; j < N; j++) {
      let sum = 0;
      for (let r = 0; r < M; r++) sum += a[r * K + i]! * d[r * N + j]!;
      g[i * N + j] = g[i * N + j]! + sum;
    }
  }
}

export function colSumAcc(g: Arr, d: Arr, rows: number): void {
  const N = g.length;
  for (let i = 0; i < rows; i++) {
    const r = i * N;
    for (let j = 0; j < N; j++) g[j] = g[j]! + d[r + j]!;
  }
}

const LN_EPS = 1e-5;

export function layerNorm(out: Arr, x: Arr, mean: Arr, rstd: Arr, gain: Arr, bias: Arr, rows: number): void {
  const D = gain.length;
  for (let t = 0; t < rows; t++) {
    const r = t * D;
    let m = 0;
    for (let k = 0; k < D; k++) m += x[r + k]!;
    m /= D;
    let v = 0;
    for (let k = 0; k < D; k++) {
      const c = x[r + k]! - m;
      v += c * c;
    }
    const s = 1 / Math.sqrt(v / D + LN_EPS);
    mean[t] = m;
    rstd[t] = s;
    for (let k = 0; k < D; k++) out[r + k] = (x[r + k]! - m) * s * gain[k]! + bias[k]!;
  }
}

export function layerNormBackward(
  dx: Arr,
  dh: Arr,
  x: Arr,
  mean: Arr,
  rstd: Arr,
  gain: Arr,
  dgain: Arr,
  dbias: Arr,
  rows: number,
): void {
  const D = gain.length;
  for (let t = 0; t < rows; t++) {
    const r = t * D;
    const m = mean[t]!;
    const s = rstd[t]!;
    let m1 = 0;
    let m2 = 0;
    for (let k = 0; k < D; k++) {
      const xh = (x[r + k]! - m) * s;
      const dy = dh[r + k]!;
      const dxh = dy * gain[k]!;
      dgain[k] = dgain[k]! + dy * xh;
      dbias[k] = dbias[k]! + dy;
      m1 += dxh;
      m2 += dxh * xh;
    }
    m1 /= D;
    m2 /= D;
    for (let k = 0; k < D; k++) {
      const xh = (x[r + k]! - m) * s;
      const dxh = dh[r + k]! * gain[k]!;
      dx[r + k] = dx[r + k]! + s * (dxh - m1 - xh * m2);
    }
  }
}

const GELU_C = Math.sqrt(2 / Math.PI);

function gelu(out: Arr, u: Arr, n: number): void {
  for (let i = 0; i < n; i++) {
    const x = u[i]!;
    out[i] = 0.5 * x * (1 + Math.tanh(GELU_C * (x + 0.044715 * x * x * x)));
  }
}

function geluBackward(dg: Arr, u: Arr, n: number): void {
  for (let i = 0; i < n; i++) {
    const x = u[i]!;
    const th = Math.tanh(GELU_C * (x + 0.044715 * x * x * x));
    const d = 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * GELU_C * (1 + 3 * 0.044715 * x * x);
    dg[i] = dg[i]! * d;
  }
}

/** sum_d a[aOff + d] * b[bOff + d], in order */
function dot(a: Arr, aOff: number, b: Arr, bOff: number, n: number): number {
  let sum = 0;
  for (let d = 0; d < n; d++) sum += a[aOff + d]! * b[bOff + d]!;
  return sum;
}

/** keys and values in plain arrays, per layer [rows, d] */
class ArrayKv implements KvBlock {
  constructor(
    readonly rows: number,
    readonly k: readonly Float64Array[],
    readonly v: readonly Float64Array[],
  ) {}
}

function arrayKv(kv: KvBlock): ArrayKv {
  if (!(kv instanceof ArrayKv)) throw new Error('a KV block of another backend');
  return kv;
}

function kvAlloc(layers: number, rows: number, d: number): KvBlock {
  const per = () => Array.from({ length: layers }, () => new Float64Array(rows * d));
  return new ArrayKv(rows, per(), per());
}

function kvWrite(kv: KvBlock, layer: number, pos: number, qkv: Arr, row: number): void {
  const b = arrayKv(kv);
  const D = b.k[layer]!.length / b.rows;
  const o = row * 3 * D;
  b.k[layer]!.set(qkv.subarray(o + D, o + 2 * D), pos * D);
  b.v[layer]!.set(qkv.subarray(o + 2 * D, o + 3 * D), pos * D);
}

/** the plain-array blocks copy: the reference kernels are for checking, not for speed */
function kvShare(src: KvBlock, n: number, rows: number): KvBlock {
  const s = arrayKv(src);
  if (n > rows) throw new Error(`cannot share ${n} positions into a KV block of ${rows}`);
  const d = arrayKv(kvAlloc(s.k.length, rows, s.k[0]!.length / s.rows));
  for (let l = 0; l < s.k.length; l++) {
    const w = (n * s.k[l]!.length) / s.rows;
    d.k[l]!.set(s.k[l]!.subarray(0, w));
    d.v[l]!.set(s.v[l]!.subarray(0, w));
  }
  return d;
}

function attendCachedRows(
  y: Arr,
  qkv: Arr,
  kvs: readonly KvBlock[],
  positions: ArrayLike<number>,
  layer: number,
  s: { readonly d: number; readonly heads: number },
): void {
  const D = s.d;
  for (const [b, kv] of kvs.entries()) {
    const shape = { n: 1, cached: positions[b]!, d: D, heads: s.heads };
    attendCached(y.subarray(b * D), qkv.subarray(b * 3 * D), kv, layer, shape);
  }
}

function attendCached(y: Arr, qkv: Arr, kv: KvBlock, layer: number, s: CachedAttentionShape): void {
  const K = arrayKv(kv).k[layer]!;
  const Vc = arrayKv(kv).v[layer]!;
  const { n, cached: p0, d: D, heads: H } = s;
  const hd = D / H;
  const scale = 1 / Math.sqrt(hd);
  const scores = new Float64Array(p0 + n);
  for (let t = 0; t < n; t++) {
    const last = p0 + t;
    for (let hh = 0; hh < H; hh++) {
      const q = t * 3 * D + hh * hd;
      let max = Number.NEGATIVE_INFINITY;
      for (let s = 0; s <= last; s++) {
        const kr = s * D + hh * hd;
        const sc = dot(qkv, q, K, kr, hd) * scale;
        scores[s] = sc;
        if (sc > max) max = sc;
      }
      let sum = 0;
      for (let s = 0; s <= last; s++) {
        const e = Math.exp(scores[s]! - max);
        scores[s] = e;
        sum += e;
      }
      const inv = 1 / sum;
      const yr = t * D + hh * hd;
      for (let d = 0; d < hd; d++) y[yr + d] = 0;
      for (let s = 0; s <= last; s++) {
        const pr = scores[s]! * inv;
        const vr = s * D + hh * hd;
        for (let d = 0; d < hd; d++) y[yr + d] = y[yr + d]! + pr * Vc[vr + d]!;
      }
    }
  }
}

function attention(y: Arr, kept: Arr | null, qkv: Arr, s: AttentionShape): void {
  const { t: T, d: D, heads: H } = s;
  const P0 = s.past ?? 0;
  const L = P0 + T;
  const att = kept ?? new Float64Array(H * T * L);
  const hd = D / H;
  const scale = 1 / Math.sqrt(hd);
  const D3 = 3 * D;
  att.fill(0, 0, H * T * L);
  for (let h = 0; h < H; h++) {
    for (let t = 0; t < T; t++) {
      const last = P0 + t;
      const q = last * D3 + h * hd;
      const ar = (h * T + t) * L;
      let max = Number.NEGATIVE_INFINITY;
      for (let s = 0; s <= last; s++) {
        const k = s * D3 + D + h * hd;
        const sc = dot(qkv, q, qkv, k, hd) * scale;
        att[ar + s] = sc;
        if (sc > max) max = sc;
      }
      let sum = 0;
      for (let s = 0; s <= last; s++) {
        const e = Math.exp(att[ar + s]! - max);
        att[ar + s] = e;
        sum += e;
      }
      const inv = 1 / sum;
      const yr = t * D + h * hd;
      for (let d = 0; d < hd; d++) y[yr + d] = 0;
      for (let s = 0; s <= last; s++) {
        const p = att[ar + s]! * inv;
        att[ar + s] = p;
        const v = s * D3 + 2 * D + h * hd;
        for (let d = 0; d < hd; d++) y[yr + d] = y[yr + d]! + p * qkv[v + d]!;
      }
    }
  }
}

function attentionBackward(dqkv: Arr, dy: Arr, att: Arr, qkv: Arr, s: AttentionShape): void {
  const { t: T, d: D, heads: H } = s;
  const P0 = s.past ?? 0;
  const L = P0 + T;
  const hd = D / H;
  const scale = 1 / Math.sqrt(hd);
  const D3 = 3 * D;
  const tmp = new Float64Array(L);
  dqkv.fill(0, 0, L * D3);
  for (let h = 0; h < H; h++) {
    for (let t = 0; t < T; t++) {
      const last = P0 + t;
      const ar = (h * T + t) * L;
      const yr = t * D + h * hd;
      const q = last * D3 + h * hd;
      let sum = 0;
      for (let s = 0; s <= last; s++) {
        const v = s * D3 + 2 * D + h * hd;
        const da = dot(dy, yr, qkv, v, hd);
        tmp[s] = da;
        sum += att[ar + s]! * da;
      }
      for (let s = 0; s <= last; s++) {
        const p = att[ar + s]!;
        const k = s * D3 + D + h * hd;
        const v = k + D;
        const ds = p * (tmp[s]! - sum) * scale;
        for (let d = 0; d < hd; d++) {
          dqkv[v + d] = dqkv[v + d]! + p * dy[yr + d]!;
          dqkv[q + d] = dqkv[q + d]! + ds * qkv[k + d]!;
          dqkv[k + d] = dqkv[k + d]! + ds * qkv[q + d]!;
        }
      }
    }
  }
}

function softmaxWeights(out: Arr, x: Arr, scale: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let j = 0; j < x.length; j++) if (x[j]! > max) max = x[j]!;
  let sum = 0;
  for (let j = 0; j < x.length; j++) {
    out[j] = Math.exp((x[j]! - max) * scale);
    sum += out[j]!;
  }
  return sum;
}

export const referenceOps: Ops = {
  dtype: 'float64',
  alloc: (n) => new Float64Array(n),
  matmul,
  matmulNT: (out, a, w, s) => gemmNT(out, a, w, s),
  matmulTNAcc,
  colSumAcc,
  layerNorm,
  layerNormBackward,
  gelu,
  geluBackward,
  softmaxWeights,
  attentionStride: (keys) => keys,
  attention,
  attentionBackward,
  attendCached,
  attendCachedRows,
  kvAlloc,
  kvWrite,
  kvShare,
  kvFree: () => {},
  pin: () => () => {},
};
