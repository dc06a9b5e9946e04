/**
 * A small decoder-only transformer (GPT-2 style: learned position embeddings, pre-LayerNorm,
 * causal multi-head attention, tanh-GELU MLP of width 4d, optional tied input/output embeddings) on
 * flat typed arrays, with a hand-written forward and backward pass and a KV-cache step for sampling.
 *
 * All parameters live in one flat array (`params`); gradients use the same layout, so optimisers,
 * gradient clipping and serialisation work on one vector. The kernels are generic over Float32Array
 * (training, sampling) and Float64Array (gradient checks): float32 products and the training
 * attention run in the WebAssembly SIMD kernels of ./kernels, float64 ones in the plain loops here
 * (which stay the reference the float32 path is tested against).
 */
import { createHash } from 'node:crypto';
import { attendCachedF32, attentionBackwardF32, attentionForwardF32 } from './kernels/attention.js';
import { gemmF32 } from './kernels/gemm.js';
import { addLogprobGradF32, geluBackwardF32, geluF32, tokenLogprobF32 } from './kernels/pointwise.js';
import { Rng } from './rng.js';

export type DType = 'float32' | 'float64';
export type Arr = Float32Array | Float64Array;

export interface GptConfig {
  readonly vocabSize: number;
  readonly contextLength: number;
  readonly nLayer: number;
  readonly nHead: number;
  readonly dModel: number;
  /** share the token embedding with the output projection */
  readonly tiedEmbeddings: boolean;
  /**
   * Add the PREVIOUS token's embedding, through a learned d x d map, to each position's input
   * (absent in older checkpoints: off). Copying a value from the context needs an induction head:
   * attend to where the current token occurred before and predict what followed it. With only
   * learned absolute positions, "which token preceded this position" must first be built by another
   * attention layer, and the demonstration-trained base never formed that circuit (0% on repeated
   * random tokens after 2,400 steps). With it in the residual stream, one layer can match on it.
   * The map reuses the token embedding rather than a table of its own: a separate table would have
   * to be lined up with the token embedding token by token, and a rare token would never be.
   */
  readonly previousTokenEmbedding?: boolean;
}

interface LayerOffsets {
  readonly ln1g: number;
  readonly ln1b: number;
  readonly wqkv: number;
  readonly bqkv: number;
  readonly wo: number;
  readonly bo: number;
  readonly ln2g: number;
  readonly ln2b: number;
  readonly w1: number;
  readonly b1: number;
  readonly w2: number;
  readonly b2: number;
}

export interface ParamSpec {
  readonly name: string;
  readonly offset: number;
  readonly shape: readonly number[];
  readonly init: 'normal' | 'residual' | 'ones' | 'zeros';
}

export interface ParamLayout {
  readonly wte: number;
  readonly wpe: number;
  /** the map [d, d] of the previous token's embedding, or -1 when the config has none */
  readonly prev: number;
  readonly layers: readonly LayerOffsets[];
  readonly lnfg: number;
  readonly lnfb: number;
  /** the untied output projection [d, vocab], or -1 when tied to wte */
  readonly head: number;
  readonly size: number;
  readonly specs: readonly ParamSpec[];
}

export function validateConfig(c: GptConfig): void {
  const ints: [string, number][] = [
    ['vocabSize', c.vocabSize],
    ['contextLength', c.contextLength],
    ['nLayer', c.nLayer],
    ['nHead', c.nHead],
    ['dModel', c.dModel],
  ];
  for (const [k, v] of ints) {
    if (!Number.isInteger(v) || v <= 0)
      throw new Error(`invalid model config: ${k} must be a positive integer`);
  }
  if (c.dModel % c.nHead !== 0) throw new Error('invalid model config: dModel must be divisible by nHead');
  for (const k of ['tiedEmbeddings', 'previousTokenEmbedding'] as const) {
    const v = c[k];
    if (v !== undefined && typeof v !== 'boolean')
      throw new Error(`invalid model config: ${k} must be a boolean`);
  }
}

export function paramLayout(c: GptConfig): ParamLayout {
  validateConfig(c);
  const d = c.dModel;
  const specs: ParamSpec[] = [];
  let off = 0;
  const add = (name: string, shape: number[], init: ParamSpec['init']): number => {
    const o = off;
    specs.push({ name, offset: o, shape, init });
    off += shape.reduce((a, b) => a * b, 1);
    return o;
  };
  const wte = add('wte', [c.vocabSize, d], 'normal');
  const wpe = add('wpe', [c.contextLength, d], 'normal');
  // zero at init: a fresh or grown model starts as one without it
  const prev = c.previousTokenEmbedding ? add('prev', [d, d], 'zeros') : -1;
  const layers: LayerOffsets[] = [];
  for (let l = 0; l < c.nLayer; l++) {
    const p = `h${l}.`;
    layers.push({
      ln1g: add(`${p}ln1.g`, [d], 'ones'),
      ln1b: add(`${p}ln1.b`, [d], 'zeros'),
      wqkv: add(`${p}attn.wqkv`, [d, 3 * d], 'normal'),
      bqkv: add(`${p}attn.bqkv`, [3 * d], 'zeros'),
      wo: add(`${p}attn.wo`, [d, d], 'residual'),
      bo: add(`${p}attn.bo`, [d], 'zeros'),
      ln2g: add(`${p}ln2.g`, [d], 'ones'),
      ln2b: add(`${p}ln2.b`, [d], 'zeros'),
      w1: add(`${p}mlp.w1`, [d, 4 * d], 'normal'),
      b1: add(`${p}mlp.b1`, [4 * d], 'zeros'),
      w2: add(`${p}mlp.w2`, [4 * d, d], 'residual'),
      b2: add(`${p}mlp.b2`, [d], 'zeros'),
    });
  }
  const lnfg = add('lnf.g', [d], 'ones');
  const lnfb = add('lnf.b', [d], 'zeros');
  const head = c.tiedEmbeddings ? -1 : add('head', [d, c.vocabSize], 'normal');
  return { wte, wpe, prev, layers, lnfg, lnfb, head, size: off, specs };
}

export function allocate(dtype: DType, n: number): Arr {
  return dtype === 'float64' ? new Float64Array(n) : new Float32Array(n);
}

// ---------------------------------------------------------------------------------------------
// kernels (row-major; no allocation inside)

function allF32(...xs: (Arr | null)[]): boolean {
  for (const x of xs) if (x !== null && !(x instanceof Float32Array)) return false;
  return true;
}

/**
 * The scalar kernel (float64, and the reference the SIMD one is tested against):
 * out[outOff + i*N + j] (+)= sum_k a[aOff + i*K + k] * b[bOff + j*K + k] (+ bias[j]), i.e. A @ B^T
 * with both operands contiguous along k. 4x4 register tiles: each step of k loads 4 + 4 values and
 * does 16 multiply-adds into local (double) accumulators.
 */
export function gemmNT(
  out: Arr,
  outOff: number,
  a: Arr,
  aOff: number,
  b: Arr,
  bOff: number,
  M: number,
  K: number,
  N: number,
  accumulate: boolean,
  bias: Arr | null,
  biasOff: number,
): void {
  const M4 = M - (M % 4);
  const N4 = N - (N % 4);
  for (let i = 0; i < M4; i += 4) {
    const a0 = aOff + i * K;
    const a1 = a0 + K;
    const a2 = a1 + K;
    const a3 = a2 + K;
    const o0 = outOff + i * N;
    const o1 = o0 + N;
    const o2 = o1 + N;
    const o3 = o2 + N;
    for (let j = 0; j < N4; j += 4) {
      const b0 = bOff + j * K;
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
        const c0 = bias[biasOff + j]!;
        const c1 = bias[biasOff + j + 1]!;
        const c2 = bias[biasOff + j + 2]!;
        const c3 = bias[biasOff + j + 3]!;
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
    const ar = aOff + i * K;
    const o = outOff + i * N;
    for (let j = N4; j < N; j++) {
      const br = bOff + j * K;
      let s = bias ? bias[biasOff + j]! : 0;
      for (let k = 0; k < K; k++) s += a[ar + k]! * b[br + k]!;
      out[o + j] = accumulate ? out[o + j]! + s : s;
    }
  }
  // rows past M4 (and all of a matrix-vector product): 1x4 tiles
  for (let i = M4; i < M; i++) {
    const ar = aOff + i * K;
    const o = outOff + i * N;
    for (let j = 0; j < N; j += 4) {
      const w = Math.min(4, N - j);
      const b0 = bOff + j * K;
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
          s0 += bias[biasOff + j]!;
          s1 += bias[biasOff + j + 1]!;
          s2 += bias[biasOff + j + 2]!;
          s3 += bias[biasOff + j + 3]!;
        }
        out[o + j] = accumulate ? out[o + j]! + s0 : s0;
        out[o + j + 1] = accumulate ? out[o + j + 1]! + s1 : s1;
        out[o + j + 2] = accumulate ? out[o + j + 2]! + s2 : s2;
        out[o + j + 3] = accumulate ? out[o + j + 3]! + s3 : s3;
      } else {
        for (let jj = j; jj < j + w; jj++) {
          const br = bOff + jj * K;
          let s = bias ? bias[biasOff + jj]! : 0;
          for (let k = 0; k < K; k++) s += a[ar + k]! * b[br + k]!;
          out[o + jj] = accumulate ? out[o + jj]! + s : s;
        }
      }
    }
  }
}

/** reusable transpose buffers (two per dtype), grown on demand */
const scratch: { f32: Float32Array[]; f64: Float64Array[] } = {
  f32: [new Float32Array(0), new Float32Array(0)],
  f64: [new Float64Array(0), new Float64Array(0)],
};

function scratchLike(like: Arr, slot: 0 | 1, n: number): Arr {
  if (like instanceof Float64Array) {
    if (scratch.f64[slot]!.length < n) scratch.f64[slot] = new Float64Array(n);
    return scratch.f64[slot]!;
  }
  if (scratch.f32[slot]!.length < n) scratch.f32[slot] = new Float32Array(n);
  return scratch.f32[slot]!;
}

/** dst[c*rows + r] = src[off + r*cols + c], in 32x32 blocks */
function transpose(dst: Arr, src: Arr, off: number, rows: number, cols: number): void {
  for (let r0 = 0; r0 < rows; r0 += 32) {
    const r1 = Math.min(rows, r0 + 32);
    for (let c0 = 0; c0 < cols; c0 += 32) {
      const c1 = Math.min(cols, c0 + 32);
      for (let r = r0; r < r1; r++) {
        const s = off + r * cols;
        for (let c = c0; c < c1; c++) dst[c * rows + r] = src[s + c]!;
      }
    }
  }
}

/**
 * out[M,N] = a[M,K] @ w[K,N] (+ bias[N]). For a few rows (decoding) an i-k-j loop straight over
 * w; otherwise w is transposed once into a scratch buffer and the 4x4-tiled A @ B^T kernel runs.
 * Float32 operands go to the SIMD kernel, which reads w as it is.
 */
export function matmul(
  out: Arr,
  a: Arr,
  aOff: number,
  w: Arr,
  wOff: number,
  bias: Arr | null,
  bOff: number,
  M: number,
  K: number,
  N: number,
): void {
  if (allF32(out, a, w, bias)) {
    gemmF32(
      'NN',
      out as Float32Array,
      0,
      a as Float32Array,
      aOff,
      w as Float32Array,
      wOff,
      M,
      K,
      N,
      false,
      bias as Float32Array | null,
      bOff,
    );
    return;
  }
  if (M >= 8) {
    const wT = scratchLike(w, 0, K * N);
    transpose(wT, w, wOff, K, N);
    gemmNT(out, 0, a, aOff, wT, 0, M, K, N, false, bias, bOff);
    return;
  }
  // a few rows (decoding): 8 output columns in registers per pass down w's rows
  const N8 = N - (N % 8);
  for (let i = 0; i < M; i++) {
    const o = i * N;
    const ar = aOff + i * K;
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
        const wr = wOff + k * N + j;
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
        s0 += bias[bOff + j]!;
        s1 += bias[bOff + j + 1]!;
        s2 += bias[bOff + j + 2]!;
        s3 += bias[bOff + j + 3]!;
        s4 += bias[bOff + j + 4]!;
        s5 += bias[bOff + j + 5]!;
        s6 += bias[bOff + j + 6]!;
        s7 += bias[bOff + j + 7]!;
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
      let sum = bias ? bias[bOff + j]! : 0;
      for (let k = 0; k < K; k++) sum += a[ar + k]! * w[wOff + k * N + j]!;
      out[o + j] = sum;
    }
  }
}

/**
 * out[M,N] = a[M,K] @ w[N,K]^T (the SIMD path transposes w into its layout, or takes dot products
 * for a few rows, or always when `rowwise`: then a row's result does not depend on M)
 */
export function matmulNT(
  out: Arr,
  a: Arr,
  aOff: number,
  w: Arr,
  wOff: number,
  M: number,
  K: number,
  N: number,
  rowwise = false,
): void {
  if (allF32(out, a, w)) {
    gemmF32(
      'NT',
      out as Float32Array,
      0,
      a as Float32Array,
      aOff,
      w as Float32Array,
      wOff,
      M,
      K,
      N,
      false,
      null,
      0,
      rowwise,
    );
    return;
  }
  gemmNT(out, 0, a, aOff, w, wOff, M, K, N, false, null, 0);
}

/**
 * g[gOff + (K,N)] += a[M,K]^T @ d[M,N] (weight gradients): in float64 both are transposed for the
 * tiled kernel; the SIMD kernel only needs a^T
 */
export function matmulTNAcc(g: Arr, gOff: number, a: Arr, d: Arr, M: number, K: number, N: number): void {
  if (allF32(g, a, d)) {
    gemmF32(
      'TN',
      g as Float32Array,
      gOff,
      a as Float32Array,
      0,
      d as Float32Array,
      0,
      K,
      M,
      N,
      true,
      null,
      0,
    );
    return;
  }
  const aT = scratchLike(a, 0, K * M);
  const dT = scratchLike(d, 1, N * M);
  transpose(aT, a, 0, M, K);
  transpose(dT, d, 0, M, N);
  gemmNT(g, gOff, aT, 0, dT, 0, K, M, N, true, null, 0);
}

function colSumAcc(g: Arr, gOff: number, d: Arr, M: number, N: number): void {
  for (let i = 0; i < M; i++) {
    const r = i * N;
    for (let j = 0; j < N; j++) g[gOff + j] = g[gOff + j]! + d[r + j]!;
  }
}

const LN_EPS = 1e-5;

function layerNorm(
  out: Arr,
  x: Arr,
  mean: Arr,
  rstd: Arr,
  p: Arr,
  gOff: number,
  bOff: number,
  T: number,
  D: number,
): void {
  for (let t = 0; t < T; t++) {
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
    for (let k = 0; k < D; k++) out[r + k] = (x[r + k]! - m) * s * p[gOff + k]! + p[bOff + k]!;
  }
}

/** dx += LN'(dh); dgamma, dbeta accumulated into grads */
function layerNormBackward(
  dx: Arr,
  dh: Arr,
  x: Arr,
  mean: Arr,
  rstd: Arr,
  p: Arr,
  grads: Arr,
  gOff: number,
  bOff: number,
  T: number,
  D: number,
): void {
  for (let t = 0; t < T; t++) {
    const r = t * D;
    const m = mean[t]!;
    const s = rstd[t]!;
    let m1 = 0;
    let m2 = 0;
    for (let k = 0; k < D; k++) {
      const xh = (x[r + k]! - m) * s;
      const dy = dh[r + k]!;
      const dxh = dy * p[gOff + k]!;
      grads[gOff + k] = grads[gOff + k]! + dy * xh;
      grads[bOff + k] = grads[bOff + k]! + dy;
      m1 += dxh;
      m2 += dxh * xh;
    }
    m1 /= D;
    m2 /= D;
    for (let k = 0; k < D; k++) {
      const xh = (x[r + k]! - m) * s;
      const dxh = dh[r + k]! * p[gOff + k]!;
      dx[r + k] = dx[r + k]! + s * (dxh - m1 - xh * m2);
    }
  }
}

const GELU_C = Math.sqrt(2 / Math.PI);

function gelu(out: Arr, u: Arr, n: number): void {
  if (allF32(out, u)) {
    geluF32(out as Float32Array, u as Float32Array, n);
    return;
  }
  for (let i = 0; i < n; i++) {
    const x = u[i]!;
    out[i] = 0.5 * x * (1 + Math.tanh(GELU_C * (x + 0.044715 * x * x * x)));
  }
}

/** du = dg * gelu'(u), in place on dg */
function geluBackward(dg: Arr, u: Arr, n: number): void {
  if (allF32(dg, u)) {
    geluBackwardF32(dg as Float32Array, u as Float32Array, n);
    return;
  }
  for (let i = 0; i < n; i++) {
    const x = u[i]!;
    const th = Math.tanh(GELU_C * (x + 0.044715 * x * x * x));
    const d = 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * GELU_C * (1 + 3 * 0.044715 * x * x);
    dg[i] = dg[i]! * d;
  }
}

// ---------------------------------------------------------------------------------------------

interface LayerCache {
  readonly x: Arr; // residual input [T,D]
  readonly mean1: Arr;
  readonly rstd1: Arr;
  readonly h1: Arr;
  readonly qkv: Arr; // [T,3D]
  readonly att: Arr; // [H,T,T] probabilities (s <= t)
  readonly y: Arr; // [T,D]
  readonly x1: Arr;
  readonly mean2: Arr;
  readonly rstd2: Arr;
  readonly h2: Arr;
  readonly u: Arr; // [T,4D] pre-activation
  readonly g: Arr; // [T,4D] GELU output
}

/** the activations of one sequence, kept for the backward pass */
export interface ForwardCache {
  readonly tokens: Int32Array;
  readonly layers: readonly LayerCache[];
  readonly xf: Arr;
  readonly meanf: Arr;
  readonly rstdf: Arr;
  readonly hf: Arr;
}

export interface ForwardResult {
  /** [T, vocab] row-major */
  readonly logits: Arr;
  readonly cache: ForwardCache;
}

/** keys and values of every layer for positions [0, length), for incremental decoding */
export interface KvCache {
  readonly k: readonly Arr[]; // per layer [context, D]
  readonly v: readonly Arr[];
  length: number;
  /** the token at position length - 1 (-1 while empty), for the previous-token map */
  last: number;
}

export class Gpt {
  readonly config: GptConfig;
  readonly dtype: DType;
  readonly layout: ParamLayout;
  readonly params: Arr;

  constructor(config: GptConfig, params?: Arr, dtype: DType = 'float32') {
    this.config = { ...config };
    this.dtype = dtype;
    this.layout = paramLayout(config);
    if (params) {
      if (params.length !== this.layout.size) {
        throw new Error(`parameter count mismatch: expected ${this.layout.size}, got ${params.length}`);
      }
      const want = dtype === 'float64' ? Float64Array : Float32Array;
      this.params = params instanceof want ? params : allocate(dtype, params.length);
      if (this.params !== params) this.params.set(params);
    } else {
      this.params = allocate(dtype, this.layout.size);
    }
  }

  /** GPT-2 init: N(0, 0.02), residual projections scaled by 1/sqrt(2 nLayer), LN gains 1 */
  static init(config: GptConfig, seed: number, dtype: DType = 'float32'): Gpt {
    const m = new Gpt(config, undefined, dtype);
    const rng = new Rng(seed);
    const resid = 0.02 / Math.sqrt(2 * config.nLayer);
    for (const s of m.layout.specs) {
      const n = s.shape.reduce((a, b) => a * b, 1);
      for (let i = 0; i < n; i++) {
        let v = 0;
        if (s.init === 'ones') v = 1;
        else if (s.init === 'normal') v = 0.02 * rng.normal();
        else if (s.init === 'residual') v = resid * rng.normal();
        m.params[s.offset + i] = v;
      }
    }
    return m;
  }

  /**
   * This model with the previous-token map added at zero, so it computes exactly what this one does
   * until training moves the map (continuing a checkpoint that lacks it).
   */
  withPreviousTokenEmbedding(): Gpt {
    if (this.layout.prev >= 0) return this.clone();
    const grown = new Gpt({ ...this.config, previousTokenEmbedding: true }, undefined, this.dtype);
    const from = new Map(this.layout.specs.map((s) => [s.name, s]));
    for (const s of grown.layout.specs) {
      const old = from.get(s.name);
      if (!old) continue; // the new map stays zero
      const n = s.shape.reduce((a, b) => a * b, 1);
      grown.params.set(this.params.subarray(old.offset, old.offset + n), s.offset);
    }
    return grown;
  }

  get numParams(): number {
    return this.layout.size;
  }

  clone(dtype: DType = this.dtype): Gpt {
    const p = allocate(dtype, this.params.length);
    p.set(this.params);
    return new Gpt(this.config, p, dtype);
  }

  /** a zeroed array shaped like the parameters (for gradients and optimiser state) */
  zerosLike(): Arr {
    return allocate(this.dtype, this.layout.size);
  }

  private checkTokens(tokens: ArrayLike<number>, start: number): void {
    const { vocabSize, contextLength } = this.config;
    if (tokens.length === 0) throw new Error('empty token sequence');
    if (start + tokens.length > contextLength) {
      throw new Error(`sequence of ${start + tokens.length} tokens exceeds the context of ${contextLength}`);
    }
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      if (!Number.isInteger(t) || t < 0 || t >= vocabSize) throw new Error(`token id ${t} out of range`);
    }
  }

  /** row `row` of x = token + position embedding */
  private embed(x: Arr, row: number, token: number, position: number): void {
    const D = this.config.dModel;
    const P = this.params;
    const e = this.layout.wte + token * D;
    const p = this.layout.wpe + position * D;
    const r = row * D;
    for (let k = 0; k < D; k++) x[r + k] = P[e + k]! + P[p + k]!;
  }

  /** the token embeddings of `previous` as rows [n, D]; a row whose id is -1 stays zero */
  private previousEmbeddings(previous: ArrayLike<number>): Arr {
    const D = this.config.dModel;
    const P = this.params;
    const out = allocate(this.dtype, previous.length * D);
    for (let t = 0; t < previous.length; t++) {
      const id = previous[t]!;
      if (id >= 0) out.set(P.subarray(this.layout.wte + id * D, this.layout.wte + (id + 1) * D), t * D);
    }
    return out;
  }

  /** x[t] += wte[previous[t]] @ prev, when the model has the previous-token map */
  private addPrevious(x: Arr, previous: ArrayLike<number>): void {
    const L = this.layout;
    if (L.prev < 0) return;
    const n = previous.length;
    const D = this.config.dModel;
    const add = allocate(this.dtype, n * D);
    matmul(add, this.previousEmbeddings(previous), 0, this.params, L.prev, null, 0, n, D, D);
    for (let i = 0; i < n * D; i++) x[i] = x[i]! + add[i]!;
  }

  /** full causal forward over one sequence; keeps the activations for `backward` */
  forward(tokens: ArrayLike<number>): ForwardResult {
    this.checkTokens(tokens, 0);
    const { nLayer, nHead, dModel: D, vocabSize: V } = this.config;
    const T = tokens.length;
    const P = this.params;
    const L = this.layout;
    const dt = this.dtype;
    const hd = D / nHead;
    const scale = 1 / Math.sqrt(hd);
    const tok = Int32Array.from(tokens);

    let x = allocate(dt, T * D);
    for (let t = 0; t < T; t++) this.embed(x, t, tok[t]!, t);
    this.addPrevious(x, previousIds(tok, -1));
    const layers: LayerCache[] = [];
    for (let l = 0; l < nLayer; l++) {
      const o = L.layers[l]!;
      const c: LayerCache = {
        x,
        mean1: allocate(dt, T),
        rstd1: allocate(dt, T),
        h1: allocate(dt, T * D),
        qkv: allocate(dt, T * 3 * D),
        att: allocate(dt, nHead * T * T),
        y: allocate(dt, T * D),
        x1: allocate(dt, T * D),
        mean2: allocate(dt, T),
        rstd2: allocate(dt, T),
        h2: allocate(dt, T * D),
        u: allocate(dt, T * 4 * D),
        g: allocate(dt, T * 4 * D),
      };
      layerNorm(c.h1, x, c.mean1, c.rstd1, P, o.ln1g, o.ln1b, T, D);
      matmul(c.qkv, c.h1, 0, P, o.wqkv, P, o.bqkv, T, D, 3 * D);
      attentionForward(c.y, c.att, c.qkv, T, D, nHead, hd, scale);
      matmul(c.x1, c.y, 0, P, o.wo, P, o.bo, T, D, D);
      for (let i = 0; i < T * D; i++) c.x1[i] = c.x1[i]! + x[i]!;
      layerNorm(c.h2, c.x1, c.mean2, c.rstd2, P, o.ln2g, o.ln2b, T, D);
      matmul(c.u, c.h2, 0, P, o.w1, P, o.b1, T, D, 4 * D);
      gelu(c.g, c.u, T * 4 * D);
      const x2 = allocate(dt, T * D);
      matmul(x2, c.g, 0, P, o.w2, P, o.b2, T, 4 * D, D);
      for (let i = 0; i < T * D; i++) x2[i] = x2[i]! + c.x1[i]!;
      layers.push(c);
      x = x2;
    }
    const meanf = allocate(dt, T);
    const rstdf = allocate(dt, T);
    const hf = allocate(dt, T * D);
    layerNorm(hf, x, meanf, rstdf, P, L.lnfg, L.lnfb, T, D);
    const logits = allocate(dt, T * V);
    if (L.head < 0) matmulNT(logits, hf, 0, P, L.wte, T, D, V);
    else matmul(logits, hf, 0, P, L.head, null, 0, T, D, V);
    return { logits, cache: { tokens: tok, layers, xf: x, meanf, rstdf, hf } };
  }

  /** backward from dLoss/dlogits [T, vocab]; gradients are ADDED into `grads` (same layout as params) */
  backward(cache: ForwardCache, dlogits: Arr, grads: Arr): void {
    const { nHead, dModel: D, vocabSize: V } = this.config;
    const T = cache.tokens.length;
    const P = this.params;
    const L = this.layout;
    const dt = this.dtype;
    const hd = D / nHead;
    const scale = 1 / Math.sqrt(hd);
    if (grads.length !== L.size) throw new Error('gradient buffer has the wrong size');

    const dhf = allocate(dt, T * D);
    if (L.head < 0) {
      matmul(dhf, dlogits, 0, P, L.wte, null, 0, T, V, D);
      matmulTNAcc(grads, L.wte, dlogits, cache.hf, T, V, D);
    } else {
      matmulNT(dhf, dlogits, 0, P, L.head, T, V, D);
      matmulTNAcc(grads, L.head, cache.hf, dlogits, T, D, V);
    }
    const dx = allocate(dt, T * D);
    layerNormBackward(dx, dhf, cache.xf, cache.meanf, cache.rstdf, P, grads, L.lnfg, L.lnfb, T, D);

    const dg = allocate(dt, T * 4 * D);
    const dh = allocate(dt, T * D);
    const dy = allocate(dt, T * D);
    const dqkv = allocate(dt, T * 3 * D);
    const tmp = allocate(dt, T);
    for (let l = cache.layers.length - 1; l >= 0; l--) {
      const c = cache.layers[l]!;
      const o = L.layers[l]!;
      // x2 = x1 + gelu(h2 W1 + b1) W2 + b2
      colSumAcc(grads, o.b2, dx, T, D);
      matmulTNAcc(grads, o.w2, c.g, dx, T, 4 * D, D);
      matmulNT(dg, dx, 0, P, o.w2, T, D, 4 * D);
      geluBackward(dg, c.u, T * 4 * D);
      colSumAcc(grads, o.b1, dg, T, 4 * D);
      matmulTNAcc(grads, o.w1, c.h2, dg, T, D, 4 * D);
      matmulNT(dh, dg, 0, P, o.w1, T, 4 * D, D);
      layerNormBackward(dx, dh, c.x1, c.mean2, c.rstd2, P, grads, o.ln2g, o.ln2b, T, D);
      // x1 = x + attn(h1) Wo + bo
      colSumAcc(grads, o.bo, dx, T, D);
      matmulTNAcc(grads, o.wo, c.y, dx, T, D, D);
      matmulNT(dy, dx, 0, P, o.wo, T, D, D);
      attentionBackward(dqkv, dy, c.att, c.qkv, tmp, T, D, nHead, hd, scale);
      colSumAcc(grads, o.bqkv, dqkv, T, 3 * D);
      matmulTNAcc(grads, o.wqkv, c.h1, dqkv, T, D, 3 * D);
      matmulNT(dh, dqkv, 0, P, o.wqkv, T, 3 * D, D);
      layerNormBackward(dx, dh, c.x, c.mean1, c.rstd1, P, grads, o.ln1g, o.ln1b, T, D);
    }
    const tok = cache.tokens;
    for (let t = 0; t < T; t++) {
      const e = L.wte + tok[t]! * D;
      const p = L.wpe + t * D;
      const r = t * D;
      for (let k = 0; k < D; k++) {
        const v = dx[r + k]!;
        grads[e + k] = grads[e + k]! + v;
        grads[p + k] = grads[p + k]! + v;
      }
    }
    if (L.prev >= 0) {
      // x[t] += wte[tok[t-1]] @ prev: the map's gradient, then the previous tokens' embedding rows
      matmulTNAcc(grads, L.prev, this.previousEmbeddings(previousIds(tok, -1)), dx, T, D, D);
      const de = allocate(dt, T * D);
      matmulNT(de, dx, 0, P, L.prev, T, D, D);
      for (let t = 1; t < T; t++) {
        const e = L.wte + tok[t - 1]! * D;
        for (let k = 0; k < D; k++) grads[e + k] = grads[e + k]! + de[t * D + k]!;
      }
    }
  }

  newKvCache(): KvCache {
    const { nLayer, contextLength, dModel } = this.config;
    const k: Arr[] = [];
    const v: Arr[] = [];
    for (let l = 0; l < nLayer; l++) {
      k.push(allocate(this.dtype, contextLength * dModel));
      v.push(allocate(this.dtype, contextLength * dModel));
    }
    return { k, v, length: 0, last: -1 };
  }

  /**
   * Incremental forward: appends `tokens` at positions [kv.length, kv.length + n) using the cached
   * keys and values, and returns the logits of the last new position ([vocab]) or of all new
   * positions ([n, vocab]) when `allLogits`.
   */
  step(kv: KvCache, tokens: ArrayLike<number>, allLogits = false): Arr {
    this.checkTokens(tokens, kv.length);
    const { nLayer, nHead, dModel: D, vocabSize: V } = this.config;
    const n = tokens.length;
    const p0 = kv.length;
    const P = this.params;
    const L = this.layout;
    const dt = this.dtype;
    const hd = D / nHead;
    const scale = 1 / Math.sqrt(hd);
    const x = allocate(dt, n * D);
    for (let t = 0; t < n; t++) this.embed(x, t, tokens[t]!, p0 + t);
    this.addPrevious(x, previousIds(tokens, kv.last));
    const mean = allocate(dt, n);
    const rstd = allocate(dt, n);
    const h = allocate(dt, n * D);
    const qkv = allocate(dt, n * 3 * D);
    const y = allocate(dt, n * D);
    const a = allocate(dt, n * D);
    const u = allocate(dt, n * 4 * D);
    const scores = allocate(dt, p0 + n);
    for (let l = 0; l < nLayer; l++) {
      const o = L.layers[l]!;
      const K = kv.k[l]!;
      const Vc = kv.v[l]!;
      layerNorm(h, x, mean, rstd, P, o.ln1g, o.ln1b, n, D);
      matmul(qkv, h, 0, P, o.wqkv, P, o.bqkv, n, D, 3 * D);
      for (let t = 0; t < n; t++) {
        const src = t * 3 * D;
        const dst = (p0 + t) * D;
        for (let k = 0; k < D; k++) {
          K[dst + k] = qkv[src + D + k]!;
          Vc[dst + k] = qkv[src + 2 * D + k]!;
        }
      }
      attendCached(y, qkv, K, Vc, scores, n, p0, D, nHead, hd, scale);
      matmul(a, y, 0, P, o.wo, P, o.bo, n, D, D);
      for (let i = 0; i < n * D; i++) x[i] = x[i]! + a[i]!;
      layerNorm(h, x, mean, rstd, P, o.ln2g, o.ln2b, n, D);
      matmul(u, h, 0, P, o.w1, P, o.b1, n, D, 4 * D);
      gelu(u, u, n * 4 * D);
      matmul(a, u, 0, P, o.w2, P, o.b2, n, 4 * D, D);
      for (let i = 0; i < n * D; i++) x[i] = x[i]! + a[i]!;
    }
    kv.length = p0 + n;
    kv.last = tokens[n - 1]!;
    const rows = allLogits ? n : 1;
    const first = n - rows;
    const xs = allLogits ? x : x.subarray(first * D);
    layerNorm(h, xs, mean, rstd, P, L.lnfg, L.lnfb, rows, D);
    const logits = allocate(dt, rows * V);
    if (L.head < 0) matmulNT(logits, h, 0, P, L.wte, rows, D, V);
    else matmul(logits, h, 0, P, L.head, null, 0, rows, D, V);
    return logits;
  }

  /**
   * Batched decoding: appends one token to each of several sequences (each with its own cache and
   * position) and returns their next-token logits [B, vocab]. The projections run as one B-row
   * matmul, so decoding a group of samples together is much faster than one at a time.
   */
  stepBatch(kvs: readonly KvCache[], tokens: readonly number[]): Arr {
    const B = kvs.length;
    if (tokens.length !== B) throw new Error('stepBatch: one token per cache');
    for (let b = 0; b < B; b++) this.checkTokens([tokens[b]!], kvs[b]!.length);
    const { nLayer, nHead, dModel: D, vocabSize: V } = this.config;
    const P = this.params;
    const L = this.layout;
    const dt = this.dtype;
    const hd = D / nHead;
    const scale = 1 / Math.sqrt(hd);
    const x = allocate(dt, B * D);
    for (let b = 0; b < B; b++) this.embed(x, b, tokens[b]!, kvs[b]!.length);
    this.addPrevious(
      x,
      kvs.map((kv) => kv.last),
    );
    const mean = allocate(dt, B);
    const rstd = allocate(dt, B);
    const h = allocate(dt, B * D);
    const qkv = allocate(dt, B * 3 * D);
    const y = allocate(dt, B * D);
    const a = allocate(dt, B * D);
    const u = allocate(dt, B * 4 * D);
    let maxLen = 0;
    for (const kv of kvs) maxLen = Math.max(maxLen, kv.length + 1);
    const scores = allocate(dt, maxLen);
    for (let l = 0; l < nLayer; l++) {
      const o = L.layers[l]!;
      layerNorm(h, x, mean, rstd, P, o.ln1g, o.ln1b, B, D);
      matmul(qkv, h, 0, P, o.wqkv, P, o.bqkv, B, D, 3 * D);
      for (let b = 0; b < B; b++) {
        const kv = kvs[b]!;
        const K = kv.k[l]!;
        const Vc = kv.v[l]!;
        const src = b * 3 * D;
        const dst = kv.length * D;
        for (let k = 0; k < D; k++) {
          K[dst + k] = qkv[src + D + k]!;
          Vc[dst + k] = qkv[src + 2 * D + k]!;
        }
        attendCached(y.subarray(b * D), qkv.subarray(src), K, Vc, scores, 1, kv.length, D, nHead, hd, scale);
      }
      matmul(a, y, 0, P, o.wo, P, o.bo, B, D, D);
      for (let i = 0; i < B * D; i++) x[i] = x[i]! + a[i]!;
      layerNorm(h, x, mean, rstd, P, o.ln2g, o.ln2b, B, D);
      matmul(u, h, 0, P, o.w1, P, o.b1, B, D, 4 * D);
      gelu(u, u, B * 4 * D);
      matmul(a, u, 0, P, o.w2, P, o.b2, B, 4 * D, D);
      for (let i = 0; i < B * D; i++) x[i] = x[i]! + a[i]!;
    }
    for (let b = 0; b < B; b++) {
      kvs[b]!.length++;
      kvs[b]!.last = tokens[b]!;
    }
    layerNorm(h, x, mean, rstd, P, L.lnfg, L.lnfb, B, D);
    const logits = allocate(dt, B * V);
    // rowwise: the logits of a sequence decoded in a batch are those `step` gives it alone
    if (L.head < 0) matmulNT(logits, h, 0, P, L.wte, B, D, V, true);
    else matmul(logits, h, 0, P, L.head, null, 0, B, D, V);
    return logits;
  }

  /** serialise: magic, header length, JSON header, float32 little-endian weights, sha256 of all before */
  serialize(meta: Record<string, unknown> = {}): Uint8Array {
    const header = JSON.stringify({
      format: 'seal-embedded-gpt',
      version: 1,
      config: this.config,
      dtype: 'float32',
      numParams: this.layout.size,
      meta,
    });
    const hb = new TextEncoder().encode(header);
    const pre = MAGIC.length + 4 + hb.length;
    const pad = (4 - (pre % 4)) % 4;
    const payloadOff = pre + pad;
    const total = payloadOff + this.layout.size * 4 + 32;
    const buf = new Uint8Array(total);
    buf.set(MAGIC, 0);
    new DataView(buf.buffer).setUint32(MAGIC.length, hb.length + pad, true);
    buf.set(hb, MAGIC.length + 4);
    buf.fill(0x20, pre, payloadOff); // pad the JSON with spaces
    const w = new DataView(buf.buffer, payloadOff, this.layout.size * 4);
    for (let i = 0; i < this.layout.size; i++) w.setFloat32(i * 4, this.params[i]!, true);
    const digest = createHash('sha256')
      .update(buf.subarray(0, total - 32))
      .digest();
    buf.set(digest, total - 32);
    return buf;
  }

  static deserialize(
    data: Uint8Array,
    dtype: DType = 'float32',
  ): { model: Gpt; meta: Record<string, unknown> } {
    const fail = (why: string): never => {
      throw new Error(`cannot load embedded model weights: ${why}`);
    };
    if (data.length < MAGIC.length + 4 + 32) fail('file too short');
    for (let i = 0; i < MAGIC.length; i++)
      if (data[i] !== MAGIC[i]) fail('not a seal embedded model file (bad magic)');
    const digest = createHash('sha256')
      .update(data.subarray(0, data.length - 32))
      .digest();
    const stored = data.subarray(data.length - 32);
    if (!Buffer.from(stored).equals(digest)) {
      fail(
        `checksum mismatch (the file is corrupt or truncated): stored sha256 ${Buffer.from(stored).toString('hex')}, computed ${digest.toString('hex')}`,
      );
    }
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    const hl = view.getUint32(MAGIC.length, true);
    const payloadOff = MAGIC.length + 4 + hl;
    if (payloadOff > data.length - 32) fail('header length out of range');
    let header: {
      format?: unknown;
      version?: unknown;
      config?: GptConfig;
      numParams?: unknown;
      meta?: unknown;
    };
    try {
      header = JSON.parse(new TextDecoder().decode(data.subarray(MAGIC.length + 4, payloadOff)));
    } catch {
      return fail('unreadable header');
    }
    if (header.format !== 'seal-embedded-gpt' || header.version !== 1) fail('unsupported format or version');
    const config = header.config;
    if (!config) return fail('header has no config');
    const layout = paramLayout(config);
    if (header.numParams !== layout.size) fail('parameter count does not match the config');
    if (data.length - 32 - payloadOff !== layout.size * 4) fail('payload size does not match the config');
    const params = allocate(dtype, layout.size);
    const pv = new DataView(data.buffer, data.byteOffset + payloadOff, layout.size * 4);
    for (let i = 0; i < layout.size; i++) params[i] = pv.getFloat32(i * 4, true);
    const meta = (typeof header.meta === 'object' && header.meta !== null ? header.meta : {}) as Record<
      string,
      unknown
    >;
    return { model: new Gpt(config, params, dtype), meta };
  }
}

/** the id before each of `tokens` (`before` for the first: -1 at the start of a sequence) */
function previousIds(tokens: ArrayLike<number>, before: number): Int32Array {
  const out = new Int32Array(tokens.length);
  for (let t = 0; t < tokens.length; t++) out[t] = t > 0 ? tokens[t - 1]! : before;
  return out;
}

const MAGIC = new TextEncoder().encode('SEALGPT\u0001');

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

/** attention of n new positions (queries in qkv [n,3D]) over cached keys/values [0, p0 + n) */
function attendCached(
  y: Arr,
  qkv: Arr,
  K: Arr,
  Vc: Arr,
  scores: Arr,
  n: number,
  p0: number,
  D: number,
  H: number,
  hd: number,
  scale: number,
): void {
  if (allF32(y, qkv, K, Vc)) {
    attendCachedF32(
      y as Float32Array,
      qkv as Float32Array,
      K as Float32Array,
      Vc as Float32Array,
      n,
      p0,
      D,
      H,
      hd,
      scale,
    );
    return;
  }
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

function attentionForward(
  y: Arr,
  att: Arr,
  qkv: Arr,
  T: number,
  D: number,
  H: number,
  hd: number,
  scale: number,
): void {
  if (allF32(y, att, qkv)) {
    attentionForwardF32(y as Float32Array, att as Float32Array, qkv as Float32Array, T, D, H, hd, scale);
    return;
  }
  const D3 = 3 * D;
  for (let h = 0; h < H; h++) {
    for (let t = 0; t < T; t++) {
      const q = t * D3 + h * hd;
      const ar = (h * T + t) * T;
      let max = Number.NEGATIVE_INFINITY;
      for (let s = 0; s <= t; s++) {
        const k = s * D3 + D + h * hd;
        const sc = dot(qkv, q, qkv, k, hd) * scale;
        att[ar + s] = sc;
        if (sc > max) max = sc;
      }
      let sum = 0;
      for (let s = 0; s <= t; s++) {
        const e = Math.exp(att[ar + s]! - max);
        att[ar + s] = e;
        sum += e;
      }
      const inv = 1 / sum;
      const yr = t * D + h * hd;
      for (let d = 0; d < hd; d++) y[yr + d] = 0;
      for (let s = 0; s <= t; s++) {
        const p = att[ar + s]! * inv;
        att[ar + s] = p;
        const v = s * D3 + 2 * D + h * hd;
        for (let d = 0; d < hd; d++) y[yr + d] = y[yr + d]! + p * qkv[v + d]!;
      }
    }
  }
}

function attentionBackward(
  dqkv: Arr,
  dy: Arr,
  att: Arr,
  qkv: Arr,
  tmp: Arr,
  T: number,
  D: number,
  H: number,
  hd: number,
  scale: number,
): void {
  if (allF32(dqkv, dy, att, qkv)) {
    attentionBackwardF32(
      dqkv as Float32Array,
      dy as Float32Array,
      att as Float32Array,
      qkv as Float32Array,
      T,
      D,
      H,
      hd,
      scale,
    );
    return;
  }
  const D3 = 3 * D;
  dqkv.fill(0);
  for (let h = 0; h < H; h++) {
    for (let t = 0; t < T; t++) {
      const ar = (h * T + t) * T;
      const yr = t * D + h * hd;
      const q = t * D3 + h * hd;
      let sum = 0;
      for (let s = 0; s <= t; s++) {
        const v = s * D3 + 2 * D + h * hd;
        const da = dot(dy, yr, qkv, v, hd);
        tmp[s] = da;
        sum += att[ar + s]! * da;
      }
      for (let s = 0; s <= t; s++) {
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
