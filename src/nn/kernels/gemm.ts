/**
 * The products of the float32 kernels, on Float32Arrays and on linear memory: `gemmF32` (every
 * matrix product of the model) copies its operands in, packs them for the panel kernel (or, for a
 * few rows, runs the strided or dot-product kernel instead), and copies the result out; `sgemm`,
 * `sdotnt`, `stranspose` and `scopy` are the kernels on linear memory (float offsets, element
 * strides) that the attention kernels call on slices of their operands. What each kernel computes
 * is emitted in gemm-code.ts; heap.ts holds the memory and the pinned weights.
 */
import type { MatShape } from '../ops.js';
import { BLOCK_ROWS, Causal, FLAG_ACCUMULATE, FLAG_BIAS, FLAG_CONTINUE, STRIP_COLS } from './gemm-code.js';
import { heap, pinnedAt, pinOf, regions, residentAlloc } from './heap.js';
import { copyRaw, pack4, pack8, panel, sdotntRaw, sgemmRaw, transposeRaw } from './module.js';

/**
 * in linear memory (float offsets): dst[d + c*ldd + r] = src[s + r*ld + c] for r < rows, c < cols
 * (ldd: rows unless given)
 */
export function stranspose(d: number, s: number, rows: number, cols: number, ld: number, ldd = rows): void {
  transposeRaw(d * 4, s * 4, rows, cols, ld, ldd);
}

/** in linear memory (float offsets): dst[d + r*ldd + c] = src[s + r*lds + c] for r < rows, c < cols */
export function scopy(d: number, ldd: number, s: number, lds: number, rows: number, cols: number): void {
  copyRaw(d * 4, ldd, s * 4, lds, rows, cols);
}

/**
 * Raw kernel on linear memory (float offsets, element strides): for i < M, j < N
 * C[c + i*ldc + j] (+)= sum_k A[a + i*rsA + k*csA] * B[b + k*ldb + j] (+ bias[j]), k and j limited
 * per block of rows by `causal` and its diagonal's `offset`. `continued`: each sum starts from C,
 * so a product over k in two calls (the second continuing the first) gives the bits of one call.
 */
export function sgemm(
  c: number,
  ldc: number,
  a: number,
  rsA: number,
  csA: number,
  b: number,
  ldb: number,
  bias: number,
  M: number,
  K: number,
  N: number,
  accumulate: boolean,
  hasBias: boolean,
  causal: number = Causal.none,
  offset = 0,
  continued = false,
): void {
  const flags =
    (accumulate ? FLAG_ACCUMULATE : 0) |
    (hasBias ? FLAG_BIAS : 0) |
    (causal << 2) |
    (continued ? FLAG_CONTINUE : 0);
  sgemmRaw(c * 4, ldc, a * 4, rsA, csA, b * 4, ldb, bias * 4, M, K, N, flags, offset);
}

/** raw dot-product kernel: C[c + i*ldc + j] (+)= sum_k A[a + i*lda + k] * B[b + j*ldb + k] (+ bias[j]) */
export function sdotnt(
  c: number,
  ldc: number,
  a: number,
  lda: number,
  b: number,
  ldb: number,
  bias: number,
  M: number,
  K: number,
  N: number,
  accumulate: boolean,
  hasBias: boolean,
): void {
  const flags = (accumulate ? FLAG_ACCUMULATE : 0) | (hasBias ? FLAG_BIAS : 0);
  // every row passes a chunk of B's rows while it is in cache: the kernel runs row by row, and a
  // row of A against all of a large B (the vocabulary) would stream B from memory once per row.
  // Each output is the same dot product whichever chunk computes it.
  const chunk = M === 1 ? N : Math.max(4, Math.floor(DOT_CHUNK_FLOATS / Math.max(1, K)) & ~3);
  for (let j0 = 0; j0 < N; j0 += chunk) {
    const n = Math.min(chunk, N - j0);
    sdotntRaw((c + j0) * 4, ldc, a * 4, lda, (b + j0 * ldb) * 4, ldb, (bias + j0) * 4, M, K, n, flags);
  }
}

/** floats of B per chunk of `sdotnt` (16 KiB: a chunk stays in L1 while the rows pass it) */
const DOT_CHUNK_FLOATS = 4096;

/** below this many rows an A @ B^T product uses the dot-product kernel instead of packing B */
const DOT_ROWS = 4;

/** from this many rows of A on, B is worth packing into strips */
const PACK_ROWS = 16;

/** floats of A per pass over B's strips (128 KiB: a chunk of rows stays in L2 while B streams by) */
const CHUNK_FLOATS = 32768;

export interface GemmOptions {
  readonly bias?: Float32Array | null;
  /** add into out instead of overwriting it */
  readonly accumulate?: boolean;
  /** 'NT' only: dot products whatever m, so each row is summed as a lone row would be */
  readonly rowwise?: boolean;
}

const roundUp = (n: number, to: number) => Math.ceil(n / to) * to;

/**
 * out [m, n] (+)= op(a) @ op(b) (+ bias [n]) on Float32Arrays, where 'NN': a [m, k] @ b [k, n];
 * 'NT': a [m, k] @ b [n, k]^T; 'TN': a [k, m]^T @ b [k, n].
 */
export function gemmF32(
  layout: 'NN' | 'NT' | 'TN',
  out: Float32Array,
  a: Float32Array,
  b: Float32Array,
  s: MatShape,
  opts: GemmOptions = {},
): void {
  const { m: M, k: K, n: N } = s;
  const bias = opts.bias ?? null;
  const accumulate = opts.accumulate ?? false;
  if (M === 0 || N === 0) return;
  const nA = M * K;
  const nB = K * N;
  if (layout === 'NT' && (M < DOT_ROWS || (opts.rowwise ?? false))) {
    const pinned = pinnedAt(b);
    const [pa, pcopy, pc, pbias] = regions(nA, pinned < 0 ? nB : 0, M * N, bias ? N : 0);
    const pb = pinned < 0 ? pcopy : pinned;
    const h = heap();
    h.set(a.subarray(0, nA), pa);
    if (pinned < 0) h.set(b.subarray(0, nB), pb);
    if (accumulate) h.set(out.subarray(0, M * N), pc);
    if (bias) h.set(bias.subarray(0, N), pbias);
    sdotnt(pc, N, pa, K, pb, K, pbias, M, K, N, accumulate, bias !== null);
    out.set(h.subarray(pc, pc + M * N));
    return;
  }
  const Np = roundUp(N, STRIP_COLS);
  const kc = K <= 512 ? K : 256;
  if (layout === 'NN' && M < PACK_ROWS) {
    // A few rows read B once: B stays row-major (rows padded to whole strips, one copy), A as it
    // is, and the strided kernel runs rows one by one past its last block of 4, where the panel
    // kernel would compute whole blocks. Its tiles take every sum in the panel kernel's order
    // (and, with the padding, only in vectors), so a row comes out the same bits either way.
    const pinned = Np === N ? pinnedAt(b) : -1;
    const [pA, pcopy, pC, pbias] = regions(nA, pinned < 0 ? Np * K : 0, M * Np, Np);
    const pB = pinned < 0 ? pcopy : pinned;
    const h = heap();
    h.set(a.subarray(0, nA), pA);
    if (pinned < 0) copyRows(h, pB, Np, b, 0, N, K, true);
    if (accumulate) copyRows(h, pC, Np, out, 0, N, M, true);
    if (bias) setBias(h, pbias, bias, N, Np);
    for (let k0 = 0; k0 === 0 || k0 < K; k0 += kc) {
      const first = k0 === 0;
      const kn = Math.min(kc, K - k0);
      sgemm(pC, Np, pA + k0, K, 1, pB + k0 * Np, Np, pbias, M, kn, Np, accumulate || !first, first && !!bias);
      if (K === 0) break;
    }
    copyRows(h, pC, Np, out, 0, N, M, false);
    return;
  }
  // Both operands are packed for the panel kernel, padded to whole row blocks and column strips
  // (the padding computes values nobody reads). C keeps rows of N floats when N fills whole strips.
  const Mp = roundUp(M, BLOCK_ROWS);
  const packed = packedPinned(b, layout, K, N);
  const [praw, pA, pScratchB, pC, pbias] = regions(
    Math.max(nA, packed < 0 ? nB : 0),
    Mp * K,
    packed < 0 ? Np * K : 0,
    Mp * Np,
    Np,
  );
  const h = heap();
  // A as row blocks [k][row]: a [M, K] is strided along the rows, a^T (TN) consecutive
  h.set(a.subarray(0, nA), praw);
  const fullA = Math.floor(M / BLOCK_ROWS);
  const [akStride, aRowStride] = layout === 'TN' ? [M, 1] : [1, K];
  pack4(pA * 4, praw * 4, fullA, K, akStride, aRowStride);
  packEdge(h, pA + fullA * BLOCK_ROWS * K, praw, fullA * BLOCK_ROWS, M, BLOCK_ROWS, K, akStride, aRowStride);
  // B as column strips [k][column]: b [K, N] is consecutive along the columns, b^T (NT) strided
  let pB = packed;
  if (pB < 0) {
    pB = pScratchB;
    h.set(b.subarray(0, nB), praw);
    packB(pB, praw, layout, K, N);
  }
  if (accumulate) copyRows(h, pC, Np, out, 0, N, M, true);
  if (bias) setBias(h, pbias, bias, N, Np);
  // The k blocking does not depend on M: it sets the order in which a row's sum is taken, and a
  // row must come out the same whether it runs alone (decoding) or with others (prefill), for
  // the prefix cache to be exact.
  const mc = Math.max(BLOCK_ROWS, Math.floor(CHUNK_FLOATS / Math.max(1, kc) / BLOCK_ROWS) * BLOCK_ROWS);
  for (let k0 = 0; k0 === 0 || k0 < K; k0 += kc) {
    const kn = Math.min(kc, K - k0);
    const first = k0 === 0;
    const flags = (accumulate || !first ? FLAG_ACCUMULATE : 0) | (first && bias ? FLAG_BIAS : 0);
    for (let i0 = 0; i0 < Mp; i0 += mc) {
      const rows = Math.min(mc, Mp - i0);
      panel(
        (pC + i0 * Np) * 4,
        Np,
        (pA + i0 * K + k0 * BLOCK_ROWS) * 4,
        K * BLOCK_ROWS * 4,
        (pB + k0 * STRIP_COLS) * 4,
        K * STRIP_COLS * 4,
        rows / BLOCK_ROWS,
        kn,
        Np / STRIP_COLS,
        flags,
        pbias * 4,
      );
    }
    if (K === 0) break;
  }
  copyRows(h, pC, Np, out, 0, N, M, false);
}

/** the bias in linear memory, zero-padded to whole strips */
function setBias(h: Float32Array, p: number, bias: Float32Array, N: number, Np: number): void {
  h.set(bias.subarray(0, N), p);
  h.fill(0, p + N, p + Np);
}

/**
 * The last, partial block of a packed operand: lines [from, to) of `width`, zero past `to`
 * (what `pack4`/`pack8` do for whole blocks, one value at a time)
 */
function packEdge(
  h: Float32Array,
  dst: number,
  src: number,
  from: number,
  to: number,
  width: number,
  K: number,
  kStride: number,
  lineStride: number,
): void {
  if (from >= to) return;
  for (let k = 0; k < K; k++)
    for (let w = 0; w < width; w++)
      h[dst + k * width + w] = from + w < to ? h[src + k * kStride + (from + w) * lineStride]! : 0;
}

/** rows of n floats between linear memory (row stride ld) and a dense array, either way */
function copyRows(
  h: Float32Array,
  p: number,
  ld: number,
  x: Float32Array,
  xOff: number,
  n: number,
  rows: number,
  toHeap: boolean,
): void {
  if (ld === n) {
    if (toHeap) h.set(x.subarray(xOff, xOff + rows * n), p);
    else x.set(h.subarray(p, p + rows * n), xOff);
    return;
  }
  for (let r = 0; r < rows; r++) {
    if (toHeap) h.set(x.subarray(xOff + r * n, xOff + (r + 1) * n), p + r * ld);
    else x.set(h.subarray(p + r * ld, p + r * ld + n), xOff + r * n);
  }
}

/**
 * B of a panel product as the kernel reads it (column strips [k][column], zero past N), from
 * linear memory at float offset src: b [K, N] for NN and TN, b^T [N, K] for NT
 */
function packB(dst: number, src: number, layout: 'NN' | 'NT' | 'TN', K: number, N: number): void {
  const fullB = Math.floor(N / STRIP_COLS);
  const [bkStride, bColStride] = layout === 'NT' ? [1, K] : [N, 1];
  pack8(dst * 4, src * 4, fullB, K, bkStride, bColStride);
  packEdge(
    heap(),
    dst + fullB * STRIP_COLS * K,
    src,
    fullB * STRIP_COLS,
    N,
    STRIP_COLS,
    K,
    bkStride,
    bColStride,
  );
}

/**
 * The float offset of b packed for the panel kernel when b is a view of a pinned array (packed
 * now if this is its first product of this layout and shape while pinned), else -1. Call before
 * `regions`: a new block moves the scratch area.
 */
function packedPinned(b: Float32Array, layout: 'NN' | 'NT' | 'TN', K: number, N: number): number {
  const found = pinOf(b);
  if (!found) return -1;
  const key = `${layout === 'NT' ? 'T' : 'N'} ${found.at} ${K} ${N}`;
  let p = found.pin.packed.get(key);
  if (!p) {
    const floats = roundUp(N, STRIP_COLS) * K;
    p = { at: residentAlloc(floats), floats };
    packB(p.at, found.at, layout, K, N);
    found.pin.packed.set(key, p);
  }
  return p.at;
}
