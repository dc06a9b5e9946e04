/**
 * The reference kernels: plain JavaScript loops, generic over Float32Array and Float64Array. Float64
 * models run on them (the gradient checks differentiate these), and they are what the float32 SIMD
 * kernels are tested against. simd-ops.ts also borrows the cheap row-wise ones (LayerNorm, bias
 * gradients) that have no SIMD kernel yet.
 */
import type { Arr, AttentionShape, CachedAttentionShape, KvBlock, MatShape, Ops } from './ops.js';

/**
 * out (+)= a @ b^T (+ bias): a [m, k] and b [n, k] both contiguous along k. 4x4 register tiles:
 * each step of k loads 4 + 4 values and does 16 multiply-adds into local (double) accumulators.
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
  const M4 = M - (M % 4);
  const N4 = N - (N % 4);
  for (let i = 0; i < M4; i += 4) {
    const a0 = i * K;
    const a1 = a0 + K;
    const a2 = a1 + K;
    const a3 = a2 + K;
    const o0 = i * N;
    const o1 = o0 + N;
    const o2 = o1 + N;
    const o3 = o2 + N;
    for (let j = 0; j < N4; j += 4) {
      const b0 = j * K;
      const b1 = b0 + K;
      const b2 = b1 + K;
      const b3 = b2 + K;
      let s00 = 0;
      let s01 = 0;
      let s02 = 0;
      let s03 = 0;
      let s10 = 0;
      let s11 = 0;
      let s12 = 0;
      let s13 = 0;
      let s20 = 0;
      let s21 = 0;
      let s22 = 0;
      let s23 = 0;
      let s30 = 0;
      let s31 = 0;
      let s32 = 0;
      let s33 = 0;
      for (let k = 0; k < K; k++) {
        const x0 = a[a0 + k]!;
        const x1 = a[a1 + k]!;
        const x2 = a[a2 + k]!;
        const x3 = a[a3 + k]!;
        const y0 = b[b0 + k]!;
        const y1 = b[b1 + k]!;
        const y2 = b[b2 + k]!;
        const y3 = b[b3 + k]!;
        s00 += x0 * y0;
        s01 += x0 * y1;
        s02 += x0 * y2;
        s03 += x0 * y3;
        s10 += x1 * y0;
        s11 += x1 * y1;
        s12 += x1 * y2;
        s13 += x1 * y3;
        s20 += x2 * y0;
        s21 += x2 * y1;
        s22 += x2 * y2;
        s23 += x2 * y3;
        s30 += x3 * y0;
        s31 += x3 * y1;
        s32 += x3 * y2;
        s33 += x3 * y3;
      }
      if (bias) {
        const c0 = bias[j]!;
        const c1 = bias[j + 1]!;
        const c2 = bias[j + 2]!;
        const c3 = bias[j + 3]!;
        s00 += c0;
        s10 += c0;
        s20 += c0;
        s30 += c0;
        s01 += c1;
        s11 += c1;
        s21 += c1;
        s31 += c1;
        s02 += c2;
        s12 += c2;
        s22 += c2;
        s32 += c2;
        s03 += c3;
        s13 += c3;
        s23 += c3;
        s33 += c3;
      }
      if (accumulate) {
        out[o0 + j] = out[o0 + j]! + s00;
        out[o0 + j + 1] = out[o0 + j + 1]! + s01;
        out[o0 + j + 2] = out[o0 + j + 2]! + s02;
        out[o0 + j + 3] = out[o0 + j + 3]! + s03;
        out[o1 + j] = out[o1 + j]! + s10;
        out[o1 + j + 1] = out[o1 + j + 1]! + s11;
        out[o1 + j + 2] = out[o1 + j + 2]! + s12;
        out[o1 + j + 3] = out[o1 + j + 3]! + s13;
        out[o2 + j] = out[o2 + j]! + s20;
        out[o2 + j + 1] = out[o2 + j + 1]! + s21;
        out[o2 + j + 2] = out[o2 + j + 2]! + s22;
        out[o2 + j + 3] = out[o2 + j + 3]! + s23;
        out[o3 + j] = out[o3 + j]! + s30;
        out[o3 + j + 1] = out[o3 + j + 1]! + s31;
        out[o3 + j + 2] = out[o3 + j + 2]! + s32;
        out[o3 + j + 3] = out[o3 + j + 3]! + s33;
      } else {
        out[o0 + j] = s00;
        out[o0 + j + 1] = s01;
        out[o0 + j + 2] = s02;
        out[o0 + j + 3] = s03;
        out[o1 + j] = s10;
        out[o1 + j + 1] = s11;
        out[o1 + j + 2] = s12;
        out[o1 + j + 3] = s13;
        out[o2 + j] = s20;
        out[o2 + j + 1] = s21;
        out[o2 + j + 2] = s22;
        out[o2 + j + 3] = s23;
        out[o3 + j] = s30;
        out[o3 + j + 1] = s31;
        out[o3 + j + 2] = s32;
        out[o3 + j + 3] = s33;
      }
    }
  }
  // the edges: columns past N4 of the first M4 rows, plain dot products
  for (let i = 0; i < M4; i++) {
    const ar = i * K;
    const o = i * N;
    for (let j = N4; j < N; j++) {
      const br = j * K;
      let s = bias ? bias[j]! : 0;
      for (let k = 0; k < K; k++) s += a[ar + k]! * b[br + k]!;
      out[o + j] = accumulate ? out[o + j]! + s : s;
    }
  }
  // rows past M4 (and all of a matrix-vector product): 1x4 tiles
  for (let i = M4; i < M; i++) {
    const ar = i * K;
    const o = i * N;
    for (let j = 0; j < N; j += 4) {
      const w = Math.min(4, N - j);
      const b0 = j * K;
      if (w === 4) {
        const b1 = b0 + K;
        const b2 = b1 + K;
        const b3 = b2 + K;
        let s0 = 0;
        let s1 = 0;
        let s2 = 0;
        let s3 = 0;
        for (let k = 0; k < K; k++) {
          const x = a[ar + k]!;
          s0 += x * b[b0 + k]!;
          s1 += x * b[b1 + k]!;
          s2 += x * b[b2 + k]!;
          s3 += x * b[b3 + k]!;
        }
        if (bias) {
          s0 += bias[j]!;
          s1 += bias[j + 1]!;
          s2 += bias[j + 2]!;
          s3 += bias[j + 3]!;
        }
        out[o + j] = accumulate ? out[o + j]! + s0 : s0;
        out[o + j + 1] = accumulate ? out[o + j + 1]! + s1 : s1;
        out[o + j + 2] = accumulate ? out[o + j + 2]! + s2 : s2;
        out[o + j + 3] = accumulate ? out[o + j + 3]! + s3 : s3;
      } else {
        for (let jj = j; jj < j + w; jj++) {
          const br = jj * K;
          let s = bias ? bias[jj]! : 0;
          for (let k = 0; k < K; k++) s += a[ar + k]! * b[br + k]!;
          out[o + jj] = accumulate ? out[o + jj]! + s : s;
        }
      }
    }
  }
}

/** reusable transpose buffers, grown on demand */
const scratch: [Float64Array, Float64Array] = [new Float64Array(0), new Float64Array(0)];

function scratchOf(slot: 0 | 1, n: number): Float64Array {
  if (scratch[slot].length < n) scratch[slot] = new Float64Array(n);
  return scratch[slot];
}

/** dst[c*rows + r] = src[r*cols + c], in 32x32 blocks */
function transpose(dst: Arr, src: Arr, rows: number, cols: number): void {
  for (let r0 = 0; r0 < rows; r0 += 32) {
    const r1 = Math.min(rows, r0 + 32);
    for (let c0 = 0; c0 < cols; c0 += 32) {
      const c1 = Math.min(cols, c0 + 32);
      for (let r = r0; r < r1; r++) {
        const s = r * cols;
        for (let c = c0; c < c1; c++) dst[c * rows + r] = src[s + c]!;
      }
    }
  }
}

/**
 * For a few rows (decoding) an i-k-j loop straight over w; otherwise w is transposed once into a
 * scratch buffer for the 4x4-tiled a @ b^T kernel. Both sum k in order, so a row comes out the same
 * either way.
 */
function matmul(out: Arr, a: Arr, w: Arr, bias: Arr | null, s: MatShape): void {
  const { m: M, k: K, n: N } = s;
  if (M >= 8) {
    const wT = scratchOf(0, K * N);
    transpose(wT, w, K, N);
    gemmNT(out, a, wT, s, { bias });
    return;
  }
  // 8 output columns in registers per pass down w's rows
  const N8 = N - (N % 8);
  for (let i = 0; i < M; i++) {
    const o = i * N;
    const ar = i * K;
    for (let j = 0; j < N8; j += 8) {
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let s4 = 0;
      let s5 = 0;
      let s6 = 0;
      let s7 = 0;
      for (let k = 0; k < K; k++) {
        const x = a[ar + k]!;
        const wr = k * N + j;
        s0 += x * w[wr]!;
        s1 += x * w[wr + 1]!;
        s2 += x * w[wr + 2]!;
        s3 += x * w[wr + 3]!;
        s4 += x * w[wr + 4]!;
        s5 += x * w[wr + 5]!;
        s6 += x * w[wr + 6]!;
        s7 += x * w[wr + 7]!;
      }
      if (bias) {
        s0 += bias[j]!;
        s1 += bias[j + 1]!;
        s2 += bias[j + 2]!;
        s3 += bias[j + 3]!;
        s4 += bias[j + 4]!;
        s5 += bias[j + 5]!;
        s6 += bias[j + 6]!;
        s7 += bias[j + 7]!;
      }
      out[o + j] = s0;
      out[o + j + 1] = s1;
      out[o + j + 2] = s2;
      out[o + j + 3] = s3;
      out[o + j + 4] = s4;
      out[o + j + 5] = s5;
      out[o + j + 6] = s6;
      out[o + j + 7] = s7;
    }
    for (let j = N8; j < N; j++) {
      let sum = bias ? bias[j]! : 0;
      for (let k = 0; k < K; k++) sum += a[ar + k]! * w[k * N + j]!;
      out[o + j] = sum;
    }
  }
}

/** both operands transposed, for the tiled kernel */
function matmulTNAcc(g: Arr, a: Arr, d: Arr, s: MatShape): void {
  const { m: M, k: K, n: N } = s;
  const aT = scratchOf(0, K * M);
  const dT = scratchOf(1, N * M);
  transpose(aT, a, M, K);
  transpose(dT, d, M, N);
  gemmNT(g, aT, dT, { m: K, k: M, n: N }, { accumulate: true });
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

/** sum_d a[aOff + d] * b[bOff + d], four independent accumulators */
function dot(a: Arr, aOff: number, b: Arr, bOff: number, n: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let d = 0;
  for (; d + 4 <= n; d += 4) {
    s0 += a[aOff + d]! * b[bOff + d]!;
    s1 += a[aOff + d + 1]! * b[bOff + d + 1]!;
    s2 += a[aOff + d + 2]! * b[bOff + d + 2]!;
    s3 += a[aOff + d + 3]! * b[bOff + d + 3]!;
  }
  for (; d < n; d++) s0 += a[aOff + d]! * b[bOff + d]!;
  return s0 + s1 + s2 + s3;
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
