/**
 * Single-precision matrix kernels in WebAssembly SIMD (f32x4), generated at load time by `asm.ts`.
 *
 * `sgemm` computes C (+)= A @ B (+ bias) with B contiguous along the output columns: each step of k
 * broadcasts one A value per tile row and multiplies it into a few f32x4 vectors of one B row, so
 * the inner loop needs no horizontal sums. A is addressed through two strides, which covers
 * strided slices (attention heads) and A^T without packing; `gemmF32` still transposes A^T and
 * B^T operands once (O(n^2), in wasm), since unit-stride rows run faster. `sdotnt` is the
 * dot-product form (B contiguous along k) for a handful of rows, where transposing B would cost as
 * much as the product itself.
 *
 * Operands are copied into the module's linear memory (O(n^2) against O(n^3) work), which is one
 * scratch area reused by every call (see `regions`). The wasm functions take byte pointers and
 * element strides; the TypeScript wrappers exported here take float offsets.
 */
import type { MatShape } from '../ops.js';
import { assemble, F32, Fn, I32, Op, Simd, V128 } from './asm.js';
import { buildVmath } from './vmath.js';

/** tile rows and f32x4 column vectors of the main register tile (4 x 8: 8 accumulators, no spills) */
const TILE_ROWS = 4;
const TILE_VECS = 2;

/** causal restrictions of `sgemm`, per block of tile rows starting at row i0 */
export const Causal = {
  none: 0,
  /** only columns j < i0 + rows (scores = Q K^T: later columns are masked anyway) */
  columns: 1,
  /** only k < i0 + rows (P V with P lower triangular) */
  kUpTo: 2,
  /** only k >= i0 (P^T dY with P lower triangular) */
  kFrom: 3,
} as const;

const FLAG_ACCUMULATE = 1;
const FLAG_BIAS = 2;

function buildSgemm(RM: number, VW: number): Fn {
  const f = new Fn('sgemm', Array(12).fill(I32));
  const [c, ldc, a, rsA, csA, b, ldb, bias, M, K, N, flags] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] as const;
  const i0 = f.local(I32);
  const j = f.local(I32);
  const kbeg = f.local(I32);
  const kend = f.local(I32);
  const jend = f.local(I32);
  const kk = f.local(I32);
  const pb = f.local(I32);
  const cp = f.local(I32);
  const bp = f.local(I32);
  const mode = f.local(I32);
  const tmp = f.local(I32);
  const pa = Array.from({ length: RM }, () => f.local(I32));
  const acc = Array.from({ length: RM * VW }, () => f.local(V128));
  const bv = Array.from({ length: VW }, () => f.local(V128));
  const s = f.local(V128);
  const sacc = Array.from({ length: RM }, () => f.local(F32));
  const sb = f.local(F32);

  for (const x of [ldc, rsA, csA, ldb]) f.get(x).i32(2).op(Op.i32Shl).set(x);
  f.get(flags).i32(2).op(Op.i32ShrU).i32(3).op(Op.i32And).set(mode);

  const minInto = (dst: number, x: number, y: number) => {
    f.get(x).get(y).get(x).get(y).op(Op.i32LtS, Op.select).set(dst);
  };
  const flag = (bit: number) => () => f.get(flags).i32(bit).op(Op.i32And);

  /** R rows x V vectors of 4 columns at (i0, j); V = 0 is a single scalar column */
  const tile = (R: number, V: number) => {
    f.get(b).get(kbeg).get(ldb).op(Op.i32Mul, Op.i32Add).get(j).i32(2).op(Op.i32Shl, Op.i32Add).set(pb);
    for (let r = 0; r < R; r++) {
      f.get(a).get(i0).i32(r).op(Op.i32Add).get(rsA).op(Op.i32Mul, Op.i32Add);
      f.get(kbeg).get(csA).op(Op.i32Mul, Op.i32Add).set(pa[r]!);
    }
    for (let r = 0; r < R; r++) {
      if (V === 0) f.f32(0).set(sacc[r]!);
      else for (let v = 0; v < V; v++) f.v128Zero().set(acc[r * VW + v]!);
    }
    f.get(kend).get(kbeg).op(Op.i32Sub).set(kk);
    f.while(
      () => f.get(kk).i32(0).op(Op.i32GtS),
      () => {
        if (V === 0) {
          f.get(pb).mem(Op.f32Load, 0, false).set(sb);
          for (let r = 0; r < R; r++) {
            f.get(sacc[r]!)
              .get(pa[r]!)
              .mem(Op.f32Load, 0, false)
              .get(sb)
              .op(Op.f32Mul, Op.f32Add)
              .set(sacc[r]!);
          }
        } else {
          for (let v = 0; v < V; v++)
            f.get(pb)
              .mem(Simd.load, 16 * v, true)
              .set(bv[v]!);
          for (let r = 0; r < R; r++) {
            f.get(pa[r]!).mem(Simd.load32Splat, 0, true).set(s);
            for (let v = 0; v < V; v++) {
              const x = acc[r * VW + v]!;
              f.get(x).get(s).get(bv[v]!).simd(Simd.f32x4Mul).simd(Simd.f32x4Add).set(x);
            }
          }
        }
        for (let r = 0; r < R; r++) f.inc(pa[r]!, () => f.get(csA));
        f.inc(pb, () => f.get(ldb));
        f.inc(kk, -1);
      },
    );
    f.when(flag(FLAG_BIAS), () => {
      f.get(bias).get(j).i32(2).op(Op.i32Shl, Op.i32Add).set(bp);
      if (V === 0) {
        f.get(bp).mem(Op.f32Load, 0, false).set(sb);
        for (let r = 0; r < R; r++) f.get(sacc[r]!).get(sb).op(Op.f32Add).set(sacc[r]!);
      } else {
        for (let v = 0; v < V; v++) {
          f.get(bp)
            .mem(Simd.load, 16 * v, true)
            .set(bv[v]!);
          for (let r = 0; r < R; r++) {
            const x = acc[r * VW + v]!;
            f.get(x).get(bv[v]!).simd(Simd.f32x4Add).set(x);
          }
        }
      }
    });
    for (let r = 0; r < R; r++) {
      f.get(c).get(i0).i32(r).op(Op.i32Add).get(ldc).op(Op.i32Mul, Op.i32Add);
      f.get(j).i32(2).op(Op.i32Shl, Op.i32Add).set(cp);
      if (V === 0) {
        f.when(flag(FLAG_ACCUMULATE), () => {
          f.get(sacc[r]!).get(cp).mem(Op.f32Load, 0, false).op(Op.f32Add).set(sacc[r]!);
        });
        f.get(cp).get(sacc[r]!).mem(Op.f32Store, 0, false);
      } else {
        f.when(flag(FLAG_ACCUMULATE), () => {
          for (let v = 0; v < V; v++) {
            const x = acc[r * VW + v]!;
            f.get(x)
              .get(cp)
              .mem(Simd.load, 16 * v, true)
              .simd(Simd.f32x4Add)
              .set(x);
          }
        });
        for (let v = 0; v < V; v++)
          f.get(cp)
            .get(acc[r * VW + v]!)
            .mem(Simd.store, 16 * v, true);
      }
    }
  };

  const rowBlock = (R: number) => {
    f.i32(0).set(kbeg).get(K).set(kend).get(N).set(jend);
    const isMode = (m: number) => () => f.get(mode).i32(m).op(Op.i32Eq);
    f.get(i0).i32(R).op(Op.i32Add).set(tmp);
    f.when(isMode(Causal.columns), () => minInto(jend, N, tmp));
    f.when(isMode(Causal.kUpTo), () => minInto(kend, K, tmp));
    f.when(isMode(Causal.kFrom), () => minInto(kbeg, K, i0));
    f.i32(0).set(j);
    f.steps(j, jend, 4 * VW, () => tile(R, VW));
    if (VW > 1) f.steps(j, jend, 4, () => tile(R, 1));
    f.steps(j, jend, 1, () => tile(R, 0));
  };

  f.i32(0).set(i0);
  f.steps(i0, M, RM, () => rowBlock(RM));
  f.steps(i0, M, 1, () => rowBlock(1));
  return f;
}

/** C[i,j] (+)= dot(A row i, B row j) (+ bias[j]); one row by Q columns, k in f32x4 steps */
function buildSdotnt(): Fn {
  const f = new Fn('sdotnt', Array(11).fill(I32));
  const [c, ldc, a, lda, b, ldb, bias, M, K, N, flags] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] as const;
  const i = f.local(I32);
  const j = f.local(I32);
  const kk = f.local(I32);
  const pa = f.local(I32);
  const cp = f.local(I32);
  const pb = Array.from({ length: 4 }, () => f.local(I32));
  const acc = Array.from({ length: 4 }, () => f.local(V128));
  const av = f.local(V128);
  const sum = Array.from({ length: 4 }, () => f.local(F32));
  const x = f.local(F32);
  for (const s of [ldc, lda, ldb]) f.get(s).i32(2).op(Op.i32Shl).set(s);

  const cols = (Q: number) => {
    f.get(a).get(i).get(lda).op(Op.i32Mul, Op.i32Add).set(pa);
    for (let q = 0; q < Q; q++) {
      f.get(b).get(j).i32(q).op(Op.i32Add).get(ldb).op(Op.i32Mul, Op.i32Add).set(pb[q]!);
      f.v128Zero().set(acc[q]!);
    }
    f.get(K).set(kk);
    f.while(
      () => f.get(kk).i32(4).op(Op.i32GeS),
      () => {
        f.get(pa).mem(Simd.load, 0, true).set(av);
        for (let q = 0; q < Q; q++) {
          f.get(acc[q]!).get(av).get(pb[q]!).mem(Simd.load, 0, true);
          f.simd(Simd.f32x4Mul).simd(Simd.f32x4Add).set(acc[q]!);
          f.inc(pb[q]!, 16);
        }
        f.inc(pa, 16);
        f.inc(kk, -4);
      },
    );
    for (let q = 0; q < Q; q++) {
      for (let l = 0; l < 4; l++) {
        f.get(acc[q]!).simd(Simd.f32x4ExtractLane).lane(l);
        if (l > 0) f.op(Op.f32Add);
      }
      f.set(sum[q]!);
    }
    f.while(
      () => f.get(kk).i32(0).op(Op.i32GtS),
      () => {
        f.get(pa).mem(Op.f32Load, 0, false).set(x);
        for (let q = 0; q < Q; q++) {
          f.get(sum[q]!).get(x).get(pb[q]!).mem(Op.f32Load, 0, false).op(Op.f32Mul, Op.f32Add).set(sum[q]!);
          f.inc(pb[q]!, 4);
        }
        f.inc(pa, 4);
        f.inc(kk, -1);
      },
    );
    f.get(c).get(i).get(ldc).op(Op.i32Mul, Op.i32Add).get(j).i32(2).op(Op.i32Shl, Op.i32Add).set(cp);
    f.when(
      () => f.get(flags).i32(FLAG_BIAS).op(Op.i32And),
      () => {
        for (let q = 0; q < Q; q++) {
          f.get(sum[q]!)
            .get(bias)
            .get(j)
            .i32(2)
            .op(Op.i32Shl, Op.i32Add)
            .mem(Op.f32Load, 4 * q, false);
          f.op(Op.f32Add).set(sum[q]!);
        }
      },
    );
    f.when(
      () => f.get(flags).i32(FLAG_ACCUMULATE).op(Op.i32And),
      () => {
        for (let q = 0; q < Q; q++) {
          f.get(sum[q]!)
            .get(cp)
            .mem(Op.f32Load, 4 * q, false)
            .op(Op.f32Add)
            .set(sum[q]!);
        }
      },
    );
    for (let q = 0; q < Q; q++)
      f.get(cp)
        .get(sum[q]!)
        .mem(Op.f32Store, 4 * q, false);
  };

  f.i32(0).set(i);
  f.while(
    () => f.get(i).get(M).op(Op.i32LtS),
    () => {
      f.i32(0).set(j);
      f.steps(j, N, 4, () => cols(4));
      f.steps(j, N, 1, () => cols(1));
      f.inc(i, 1);
    },
  );
  return f;
}

/**
 * transpose(dst, src, rows, cols, ld): dst[c*rows + r] = src[r*ld + c]. Eight source rows are read
 * side by side so each step writes eight consecutive floats of one destination row.
 */
function buildTranspose(): Fn {
  const f = new Fn('transpose', [I32, I32, I32, I32, I32]);
  const [dst, src, rows, cols, ld] = [0, 1, 2, 3, 4] as const;
  const RB = 8;
  const r0 = f.local(I32);
  const c = f.local(I32);
  const pd = f.local(I32);
  const rowBytes = f.local(I32);
  const ps = Array.from({ length: RB }, () => f.local(I32));
  f.get(ld).i32(2).op(Op.i32Shl).set(ld);
  f.get(rows).i32(2).op(Op.i32Shl).set(rowBytes);
  const block = (R: number) => {
    for (let r = 0; r < R; r++)
      f.get(src).get(r0).i32(r).op(Op.i32Add).get(ld).op(Op.i32Mul, Op.i32Add).set(ps[r]!);
    f.get(dst).get(r0).i32(2).op(Op.i32Shl, Op.i32Add).set(pd);
    f.get(cols).set(c);
    f.while(
      () => f.get(c).i32(0).op(Op.i32GtS),
      () => {
        for (let r = 0; r < R; r++) {
          f.get(pd)
            .get(ps[r]!)
            .mem(Op.f32Load, 0, false)
            .mem(Op.f32Store, 4 * r, false);
          f.inc(ps[r]!, 4);
        }
        f.inc(pd, () => f.get(rowBytes));
        f.inc(c, -1);
      },
    );
  };
  f.i32(0).set(r0);
  f.steps(r0, rows, RB, () => block(RB));
  f.steps(r0, rows, 1, () => block(1));
  return f;
}

type Kernel = (...args: number[]) => void;

/** the slice of the WebAssembly JS API used here (the project's TypeScript libs do not declare it) */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

const { WebAssembly: wasm } = globalThis as unknown as { WebAssembly: WasmApi };
const instance = new wasm.Instance(
  new wasm.Module(
    assemble([buildSgemm(TILE_ROWS, TILE_VECS), buildSdotnt(), buildTranspose(), ...buildVmath()], 16),
  ),
  {},
);
const memory = instance.exports.memory as WasmMemory;
const sgemmRaw = instance.exports.sgemm as Kernel;
const sdotntRaw = instance.exports.sdotnt as Kernel;
const transposeRaw = instance.exports.transpose as Kernel;

/** in linear memory (float offsets): dst[d + c*rows + r] = src[s + r*ld + c] for r < rows, c < cols */
export function stranspose(d: number, s: number, rows: number, cols: number, ld: number): void {
  transposeRaw(d * 4, s * 4, rows, cols, ld);
}

/** the elementwise kernels of vmath.ts (byte pointers, element counts) */
export const vmath = instance.exports as unknown as {
  rowmax(x: number, n: number): number;
  expsum(x: number, n: number, shift: number, write: number): number;
  axpy(y: number, x: number, n: number, alpha: number): void;
  gelu(out: number, u: number, n: number): void;
  geluBackward(dg: number, u: number, n: number): void;
  softmaxCausal(s: number, T: number, ld: number, scale: number, offset: number): void;
  softmaxCausalBackward(p: number, d: number, T: number, ld: number, scale: number): void;
};
let heapView = new Float32Array(memory.buffer);

/**
 * Lays out regions of the given float counts (16-byte aligned) in linear memory, growing it if
 * needed, and returns their float offsets. The memory is reused by every call: regions are only
 * valid until the next `regions` call, and views of the old buffer die when memory grows.
 */
export function regions(...sizes: number[]): number[] {
  const offs: number[] = [];
  let end = 0;
  for (const n of sizes) {
    offs.push(end);
    end += (n + 3) & ~3;
  }
  const bytes = end * 4;
  if (memory.buffer.byteLength < bytes) memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / 65536));
  if (heapView.buffer !== memory.buffer) heapView = new Float32Array(memory.buffer);
  return offs;
}

/** the current view of linear memory (refetch after every `regions` call) */
export function heap(): Float32Array {
  return heapView;
}

/**
 * Raw kernel on linear memory (float offsets, element strides): for i < M, j < N
 * C[c + i*ldc + j] (+)= sum_k A[a + i*rsA + k*csA] * B[b + k*ldb + j] (+ bias[j]), k and j limited
 * per block of rows by `causal`.
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
): void {
  const flags = (accumulate ? FLAG_ACCUMULATE : 0) | (hasBias ? FLAG_BIAS : 0) | (causal << 2);
  sgemmRaw(c * 4, ldc, a * 4, rsA, csA, b * 4, ldb, bias * 4, M, K, N, flags);
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
  sdotntRaw(c * 4, ldc, a * 4, lda, b * 4, ldb, bias * 4, M, K, N, flags);
}

/** below this many rows an A @ B^T product uses the dot-product kernel instead of transposing B */
const DOT_ROWS = 4;

/** floats of B per panel (128 KiB, well inside a 512 KiB L2 next to A and C) */
const PANEL_FLOATS = 32768;

/** from this many rows on, B is worth rearranging into panels */
const PANEL_ROWS = 16;

export interface GemmOptions {
  readonly bias?: Float32Array | null;
  /** add into out instead of overwriting it */
  readonly accumulate?: boolean;
  /** 'NT' only: dot products whatever m, so each row is summed as a lone row would be */
  readonly rowwise?: boolean;
}

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
  const rowwise = opts.rowwise ?? false;
  if (M === 0 || N === 0) return;
  const nA = M * K;
  const nB = K * N;
  const nC = M * N;
  const dot = layout === 'NT' && (M < DOT_ROWS || rowwise);
  const transposing = layout === 'NT' && !dot;
  const rawSize = transposing ? nB : layout === 'TN' ? nA : 0;
  const [pa, pb, pc, pbias, praw] = regions(nA, nB, nC, bias ? N : 0, rawSize) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const h = heapView;
  if (layout === 'TN') {
    // broadcasting A^T straight from a would step a whole row of a per k; transposed, each tile
    // row reads consecutive floats
    h.set(a.subarray(0, nA), praw);
    stranspose(pa, praw, K, M, M);
  } else h.set(a.subarray(0, nA), pa);
  if (accumulate) h.set(out.subarray(0, nC), pc);
  if (bias) h.set(bias.subarray(0, N), pbias);
  if (dot) {
    h.set(b.subarray(0, nB), pb);
    sdotnt(pc, N, pa, K, pb, K, pbias, M, K, N, accumulate, bias !== null);
  } else {
    // B goes in as column panels [K, nc], each contiguous: small enough to stay in L2 while all
    // row blocks of A stream past, and with a short row stride (a long power-of-two stride makes
    // the k loop's loads collide in a few L1 sets). A few rows read B only once anyway, so there
    // it goes in whole, with one copy. The k blocking does not depend on M: it sets the order in
    // which a row's sum is taken, and a row must come out the same whether it runs alone
    // (decoding) or with others (prefill), for the prefix cache to be exact.
    const kc = K <= 512 ? K : 256;
    const nc =
      M < PANEL_ROWS ? N : Math.min(N, Math.max(8, Math.floor(PANEL_FLOATS / Math.max(1, kc) / 8) * 8));
    if (transposing) h.set(b.subarray(0, nB), praw);
    for (let j0 = 0; j0 < N; j0 += nc) {
      const w = Math.min(nc, N - j0);
      const panel = pb + j0 * K;
      if (transposing) stranspose(panel, praw + j0 * K, w, K, K);
      else if (w === N) h.set(b.subarray(0, nB), panel);
      else {
        for (let k = 0; k < K; k++) {
          const src = k * N + j0;
          h.set(b.subarray(src, src + w), panel + k * w);
        }
      }
    }
    for (let k0 = 0; k0 === 0 || k0 < K; k0 += kc) {
      const kn = Math.min(kc, K - k0);
      for (let j0 = 0; j0 < N; j0 += nc) {
        const w = Math.min(nc, N - j0);
        const first = k0 === 0;
        const panel = pb + j0 * K + k0 * w;
        const acc = accumulate || !first;
        sgemm(pc + j0, N, pa + k0, K, 1, panel, w, pbias + j0, M, kn, w, acc, first && bias !== null);
      }
      if (K === 0) break;
    }
  }
  out.set(h.subarray(pc, pc + nC));
}
