/**
 * Single-precision matrix kernels in WebAssembly SIMD (f32x4), generated at load time by `asm.ts`.
 *
 * `gemmF32` (every matrix product of the model) packs both operands the way its inner loop reads
 * them, as BLAS libraries do: A in blocks of 4 rows ([k][row]), B in strips of 8 columns
 * ([k][column]). The panel kernel then keeps a 4 x 8 tile of C in registers, and each step of k
 * broadcasts 4 consecutive A values into 2 consecutive B vectors: no strides, no horizontal sums,
 * and a B strip that stays in L1 while every block of A passes it. Packing costs O(n^2) against
 * O(n^3) work, and replaced a kernel that read B with a long power-of-two stride. Multiply-adds
 * are fused where the runtime allows it (fma.ts).
 *
 * `sgemm` is the strided form the attention kernels use on slices of their operands (heads,
 * transposes), with causal limits; `sdotnt` the dot-product form (B contiguous along k) for a
 * handful of rows, where packing B would cost as much as the product itself.
 *
 * Operands are copied into the module's linear memory, one scratch area reused by every call (see
 * `regions`); only what kernels read again and again across calls (a sequence's keys and values)
 * stays there, in resident blocks below the scratch area (`residentAlloc`). The wasm functions
 * take byte pointers and element strides; the TypeScript wrappers exported here take float offsets.
 */
import type { MatShape } from '../ops.js';
import { Pins } from '../pins.js';
import { assemble, F32, Fn, I32, Op, Simd, V128 } from './asm.js';
import { FUSED } from './fma.js';
import { buildVmath } from './vmath.js';
import { buildVnorm } from './vnorm.js';

/**
 * rows and f32x4 column vectors of the register tile (4 x 8: 8 accumulators; V8 gives a wasm
 * function 15 vector registers, and a wider tile spills some to the stack, which costs more than
 * its extra accumulators gain)
 */
const TILE_ROWS = 4;
const TILE_VECS = 2;
/** the panel kernel's tile: A in blocks of this many rows, B in strips of this many columns */
const BLOCK_ROWS = TILE_ROWS;
const STRIP_COLS = 4 * TILE_VECS;

/**
 * causal restrictions of `sgemm`, per block of tile rows starting at row i0, with the diagonal
 * moved right by `offset` (the earlier positions every row also sees)
 */
export const Causal = {
  none: 0,
  /** only columns j < i0 + rows + offset (scores = Q K^T: later columns are masked anyway) */
  columns: 1,
  /** only k < i0 + rows + offset (P V with P lower triangular) */
  kUpTo: 2,
  /** only k >= i0 - offset (P^T dY with P lower triangular) */
  kFrom: 3,
  /**
   * `columns`, the limit rounded up to whole vectors of 4 (at most N): with N a multiple of 4,
   * every column is a vector lane, summed the same way whatever the rows of the block (a scalar
   * tail would not fuse its multiply-adds), so a row's scores do not depend on the rows run with it
   */
  columnVectors: 4,
} as const;

const FLAG_ACCUMULATE = 1;
const FLAG_BIAS = 2;
/** `sgemm` only: the sums start from C instead of zero (above the causal mode's bits 2-4) */
const FLAG_CONTINUE = 32;

/**
 * Stores the vectors `accs` at the byte pointer in local `cp`, one after another, first adding what
 * is there when `flags` asks to accumulate
 */
function storeRow(f: Fn, cp: number, accs: readonly number[], flags: number): void {
  f.when(
    () => f.get(flags).i32(FLAG_ACCUMULATE).op(Op.i32And),
    () => {
      accs.forEach((x, v) => {
        f.get(x)
          .get(cp)
          .mem(Simd.load, 16 * v, true)
          .simd(Simd.f32x4Add)
          .set(x);
      });
    },
  );
  accs.forEach((x, v) => {
    f.get(cp)
      .get(x)
      .mem(Simd.store, 16 * v, true);
  });
}

function buildSgemm(RM: number, VW: number, fused: boolean): Fn {
  const ROW_VECS = RM * VW;
  const f = new Fn('sgemm', Array(13).fill(I32));
  const [c, ldc, a, rsA, csA, b, ldb, bias, M, K, N, flags, off] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
  ] as const;
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
  f.get(flags).i32(2).op(Op.i32ShrU).i32(7).op(Op.i32And).set(mode);

  const minInto = (dst: number, x: number, y: number) => {
    f.get(x).get(y).get(x).get(y).op(Op.i32LtS, Op.select).set(dst);
  };
  const flag = (bit: number) => () => f.get(flags).i32(bit).op(Op.i32And);

  /**
   * R rows x V vectors of 4 columns at (i0, j); V = 0 is a single scalar column. A single row
   * (decoding: one query against the cached keys, one row of weights against the values) takes
   * ROW_VECS vectors at a time: with one row, a narrow tile spends more instructions on pointers
   * and the loop than on multiply-adds, and a wide one needs no more registers, since each
   * vector of B is used once as it is loaded.
   */
  const tile = (R: number, V: number) => {
    const bvec = (v: number) => (R === 1 ? bv[0]! : bv[v]!);
    f.get(b).get(kbeg).get(ldb).op(Op.i32Mul, Op.i32Add).get(j).i32(2).op(Op.i32Shl, Op.i32Add).set(pb);
    for (let r = 0; r < R; r++) {
      f.get(a).get(i0).i32(r).op(Op.i32Add).get(rsA).op(Op.i32Mul, Op.i32Add);
      f.get(kbeg).get(csA).op(Op.i32Mul, Op.i32Add).set(pa[r]!);
    }
    for (let r = 0; r < R; r++) {
      if (V === 0) f.f32(0).set(sacc[r]!);
      else for (let v = 0; v < V; v++) f.v128Zero().set(acc[r * VW + v]!);
    }
    // a sum continued from C: the same chain of multiply-adds as one call over all of k
    f.when(flag(FLAG_CONTINUE), () => {
      for (let r = 0; r < R; r++) {
        f.get(c).get(i0).i32(r).op(Op.i32Add).get(ldc).op(Op.i32Mul, Op.i32Add);
        f.get(j).i32(2).op(Op.i32Shl, Op.i32Add).set(cp);
        if (V === 0) f.get(cp).mem(Op.f32Load, 0, false).set(sacc[r]!);
        else
          for (let v = 0; v < V; v++)
            f.get(cp)
              .mem(Simd.load, 16 * v, true)
              .set(acc[r * VW + v]!);
      }
    });
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
          if (R === 1) {
            f.get(pa[0]!).mem(Simd.load32Splat, 0, true).set(s);
            for (let v = 0; v < V; v++) {
              f.get(pb)
                .mem(Simd.load, 16 * v, true)
                .set(bv[0]!);
              f.madd(acc[v]!, s, bv[0]!, fused);
            }
          } else {
            for (let v = 0; v < V; v++)
              f.get(pb)
                .mem(Simd.load, 16 * v, true)
                .set(bv[v]!);
            for (let r = 0; r < R; r++) {
              f.get(pa[r]!).mem(Simd.load32Splat, 0, true).set(s);
              for (let v = 0; v < V; v++) f.madd(acc[r * VW + v]!, s, bv[v]!, fused);
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
            .set(bvec(v));
          for (let r = 0; r < R; r++) {
            const x = acc[r * VW + v]!;
            f.get(x).get(bvec(v)).simd(Simd.f32x4Add).set(x);
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
      } else storeRow(f, cp, acc.slice(r * VW, r * VW + V), flags);
    }
  };

  const rowBlock = (R: number) => {
    f.i32(0).set(kbeg).get(K).set(kend).get(N).set(jend);
    const isMode = (m: number) => () => f.get(mode).i32(m).op(Op.i32Eq);
    f.get(i0).i32(R).op(Op.i32Add).get(off).op(Op.i32Add).set(tmp);
    f.when(isMode(Causal.columns), () => minInto(jend, N, tmp));
    f.when(isMode(Causal.columnVectors), () => {
      f.get(tmp).i32(3).op(Op.i32Add).i32(-4).op(Op.i32And).set(tmp);
      minInto(jend, N, tmp);
    });
    f.when(isMode(Causal.kUpTo), () => minInto(kend, K, tmp));
    f.when(isMode(Causal.kFrom), () => {
      // max(i0 - off, 0), then at most K
      f.get(i0).get(off).op(Op.i32Sub).set(tmp);
      f.get(tmp).i32(0).get(tmp).i32(0).op(Op.i32GtS, Op.select).set(tmp);
      minInto(kbeg, K, tmp);
    });
    f.i32(0).set(j);
    if (R === 1) f.steps(j, jend, 4 * ROW_VECS, () => tile(1, ROW_VECS));
    f.steps(j, jend, 4 * VW, () => tile(R, VW));
    if (VW > 1) f.steps(j, jend, 4, () => tile(R, 1));
    f.steps(j, jend, 1, () => tile(R, 0));
  };

  f.i32(0).set(i0);
  f.steps(i0, M, RM, () => rowBlock(RM));
  f.steps(i0, M, 1, () => rowBlock(1));
  return f;
}

/**
 * C[i,j] (+)= dot(A row i, B row j) (+ bias[j]), k in f32x4 steps: a tile of R rows by Q columns
 * keeps R x Q accumulators, so each loaded vector of A serves Q columns and each of B serves R
 * rows. Every output is summed the same way whatever the tile (its own vector accumulator, then
 * its lanes, then the k tail), so the tiling never changes a result.
 */
function buildSdotnt(fused: boolean): Fn {
  const f = new Fn('sdotnt', Array(11).fill(I32));
  const [c, ldc, a, lda, b, ldb, bias, M, K, N, flags] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] as const;
  const RMAX = 2;
  const QMAX = 4;
  const i = f.local(I32);
  const j = f.local(I32);
  const kk = f.local(I32);
  const cp = f.local(I32);
  const pa = Array.from({ length: RMAX }, () => f.local(I32));
  const pb = Array.from({ length: QMAX }, () => f.local(I32));
  const acc = Array.from({ length: RMAX }, () => Array.from({ length: QMAX }, () => f.local(V128)));
  const av = Array.from({ length: RMAX }, () => f.local(V128));
  const bv = f.local(V128);
  const sum = Array.from({ length: RMAX }, () => Array.from({ length: QMAX }, () => f.local(F32)));
  const x = f.local(F32);
  for (const s of [ldc, lda, ldb]) f.get(s).i32(2).op(Op.i32Shl).set(s);

  const tile = (R: number, Q: number) => {
    for (let r = 0; r < R; r++)
      f.get(a).get(i).i32(r).op(Op.i32Add).get(lda).op(Op.i32Mul, Op.i32Add).set(pa[r]!);
    for (let q = 0; q < Q; q++) {
      f.get(b).get(j).i32(q).op(Op.i32Add).get(ldb).op(Op.i32Mul, Op.i32Add).set(pb[q]!);
      for (let r = 0; r < R; r++) f.v128Zero().set(acc[r]![q]!);
    }
    f.get(K).set(kk);
    f.while(
      () => f.get(kk).i32(4).op(Op.i32GeS),
      () => {
        for (let r = 0; r < R; r++) {
          f.get(pa[r]!).mem(Simd.load, 0, true).set(av[r]!);
          f.inc(pa[r]!, 16);
        }
        for (let q = 0; q < Q; q++) {
          f.get(pb[q]!).mem(Simd.load, 0, true).set(bv);
          for (let r = 0; r < R; r++) f.madd(acc[r]![q]!, av[r]!, bv, fused);
          f.inc(pb[q]!, 16);
        }
        f.inc(kk, -4);
      },
    );
    for (let r = 0; r < R; r++)
      for (let q = 0; q < Q; q++) {
        for (let l = 0; l < 4; l++) {
          f.get(acc[r]![q]!).simd(Simd.f32x4ExtractLane).lane(l);
          if (l > 0) f.op(Op.f32Add);
        }
        f.set(sum[r]![q]!);
      }
    f.while(
      () => f.get(kk).i32(0).op(Op.i32GtS),
      () => {
        for (let r = 0; r < R; r++) {
          f.get(pa[r]!).mem(Op.f32Load, 0, false).set(x);
          for (let q = 0; q < Q; q++)
            f.get(sum[r]![q]!)
              .get(x)
              .get(pb[q]!)
              .mem(Op.f32Load, 0, false)
              .op(Op.f32Mul, Op.f32Add)
              .set(sum[r]![q]!);
          f.inc(pa[r]!, 4);
        }
        for (let q = 0; q < Q; q++) f.inc(pb[q]!, 4);
        f.inc(kk, -1);
      },
    );
    for (let r = 0; r < R; r++) {
      f.get(c)
        .get(i)
        .i32(r)
        .op(Op.i32Add)
        .get(ldc)
        .op(Op.i32Mul, Op.i32Add)
        .get(j)
        .i32(2)
        .op(Op.i32Shl, Op.i32Add)
        .set(cp);
      f.when(
        () => f.get(flags).i32(FLAG_BIAS).op(Op.i32And),
        () => {
          for (let q = 0; q < Q; q++) {
            f.get(sum[r]![q]!)
              .get(bias)
              .get(j)
              .i32(2)
              .op(Op.i32Shl, Op.i32Add)
              .mem(Op.f32Load, 4 * q, false);
            f.op(Op.f32Add).set(sum[r]![q]!);
          }
        },
      );
      f.when(
        () => f.get(flags).i32(FLAG_ACCUMULATE).op(Op.i32And),
        () => {
          for (let q = 0; q < Q; q++)
            f.get(sum[r]![q]!)
              .get(cp)
              .mem(Op.f32Load, 4 * q, false)
              .op(Op.f32Add)
              .set(sum[r]![q]!);
        },
      );
      for (let q = 0; q < Q; q++)
        f.get(cp)
          .get(sum[r]![q]!)
          .mem(Op.f32Store, 4 * q, false);
    }
  };

  const rows = (R: number) => {
    f.i32(0).set(j);
    f.steps(j, N, QMAX, () => tile(R, QMAX));
    f.steps(j, N, 1, () => tile(R, 1));
  };
  f.i32(0).set(i);
  f.steps(i, M, RMAX, () => rows(RMAX));
  f.steps(i, M, 1, () => rows(1));
  return f;
}

/**
 * transpose(dst, src, rows, cols, ld, ldd): dst[c*ldd + r] = src[r*ld + c]. Eight source rows are
 * read side by side so each step writes eight consecutive floats of one destination row.
 */
function buildTranspose(): Fn {
  const f = new Fn('transpose', [I32, I32, I32, I32, I32, I32]);
  const [dst, src, rows, cols, ld, ldd] = [0, 1, 2, 3, 4, 5] as const;
  const RB = 8;
  const r0 = f.local(I32);
  const c = f.local(I32);
  const pd = f.local(I32);
  const ps = Array.from({ length: RB }, () => f.local(I32));
  f.get(ld).i32(2).op(Op.i32Shl).set(ld);
  f.get(ldd).i32(2).op(Op.i32Shl).set(ldd);
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
        f.inc(pd, () => f.get(ldd));
        f.inc(c, -1);
      },
    );
  };
  f.i32(0).set(r0);
  f.steps(r0, rows, RB, () => block(RB));
  f.steps(r0, rows, 1, () => block(1));
  return f;
}

/** copy(dst, ldd, src, lds, rows, cols): dst[r*ldd + c] = src[r*lds + c], vectors where they fit */
function buildCopy(): Fn {
  const f = new Fn('copy', Array(6).fill(I32));
  const [dst, ldd, src, lds, rows, cols] = [0, 1, 2, 3, 4, 5] as const;
  const [r, k, v4, bytes] = [f.local(I32), f.local(I32), f.local(I32), f.local(I32)];
  f.get(ldd).i32(2).op(Op.i32Shl).set(ldd);
  f.get(lds).i32(2).op(Op.i32Shl).set(lds);
  f.get(cols).i32(2).op(Op.i32Shl).set(bytes);
  f.get(bytes).i32(-16).op(Op.i32And).set(v4);
  f.i32(0).set(r);
  f.while(
    () => f.get(r).get(rows).op(Op.i32LtS),
    () => {
      f.i32(0).set(k);
      f.while(
        () => f.get(k).get(v4).op(Op.i32LtS),
        () => {
          f.get(dst).get(k).op(Op.i32Add);
          f.get(src).get(k).op(Op.i32Add).mem(Simd.load, 0, true);
          f.mem(Simd.store, 0, true);
          f.inc(k, 16);
        },
      );
      f.while(
        () => f.get(k).get(bytes).op(Op.i32LtS),
        () => {
          f.get(dst).get(k).op(Op.i32Add);
          f.get(src).get(k).op(Op.i32Add).mem(Op.f32Load, 0, false);
          f.mem(Op.f32Store, 0, false);
          f.inc(k, 4);
        },
      );
      f.inc(dst, () => f.get(ldd));
      f.inc(src, () => f.get(lds));
      f.inc(r, 1);
    },
  );
  return f;
}

/**
 * pack(dst, src, blocks, K, sk, sw): operand panels in the order the panel kernel reads them,
 * dst[b][k][w] = src[k*sk + (b*W + w)*sw] for w < W (element strides). With sw = 1 a block's W
 * values are consecutive and move as vectors. With sk = 1 (a transposed operand: each of the W
 * lines consecutive along k) four steps of k are read from every line as vectors and transposed
 * in registers, four lines at a time. Otherwise one value at a time.
 */
function buildPack(W: 4 | 8): Fn {
  const f = new Fn(`pack${W}`, [I32, I32, I32, I32, I32, I32]);
  const [dst, src, blocks, K, sk, sw] = [0, 1, 2, 3, 4, 5] as const;
  const b = f.local(I32);
  const kk = f.local(I32);
  const ps = f.local(I32);
  const line = Array.from({ length: W }, () => f.local(I32));
  const v = Array.from({ length: 4 }, () => f.local(V128));
  const t = Array.from({ length: 4 }, () => f.local(V128));
  f.get(sk).i32(2).op(Op.i32Shl).set(sk);
  f.get(sw).i32(2).op(Op.i32Shl).set(sw);
  /** one value of each line at the line pointers, then every pointer one element on */
  const scalarStep = () => {
    for (let w = 0; w < W; w++) {
      f.get(dst)
        .get(line[w]!)
        .mem(Op.f32Load, 0, false)
        .mem(Op.f32Store, 4 * w, false);
      f.inc(line[w]!, () => f.get(sk));
    }
    f.inc(dst, 4 * W);
  };
  /** four values (k..k+3) of each line, transposed: dst[k + j][w] for j < 4 */
  const transposedStep = () => {
    for (let quad = 0; quad < W / 4; quad++) {
      for (let r = 0; r < 4; r++)
        f.get(line[4 * quad + r]!)
          .mem(Simd.load, 0, true)
          .set(v[r]!);
      f.get(v[0]!).get(v[1]!).shuffle32([0, 4, 1, 5]).set(t[0]!);
      f.get(v[0]!).get(v[1]!).shuffle32([2, 6, 3, 7]).set(t[1]!);
      f.get(v[2]!).get(v[3]!).shuffle32([0, 4, 1, 5]).set(t[2]!);
      f.get(v[2]!).get(v[3]!).shuffle32([2, 6, 3, 7]).set(t[3]!);
      const out: [number, number, readonly [number, number, number, number]][] = [
        [0, 2, [0, 1, 4, 5]],
        [0, 2, [2, 3, 6, 7]],
        [1, 3, [0, 1, 4, 5]],
        [1, 3, [2, 3, 6, 7]],
      ];
      out.forEach(([x, y, lanes], j) => {
        f.get(dst);
        f.get(t[x]!).get(t[y]!).shuffle32(lanes);
        f.mem(Simd.store, 4 * W * j + 16 * quad, true);
      });
    }
    for (let w = 0; w < W; w++) f.inc(line[w]!, 16);
    f.inc(dst, 16 * W);
  };
  const loop = (mode: 'contiguous' | 'transposed' | 'scalar') => {
    f.i32(0).set(b);
    f.while(
      () => f.get(b).get(blocks).op(Op.i32LtS),
      () => {
        f.get(src).get(b).i32(W).op(Op.i32Mul).get(sw).op(Op.i32Mul, Op.i32Add).set(ps);
        for (let w = 0; w < W; w++) {
          f.get(ps).set(line[w]!);
          if (w < W - 1) f.inc(ps, () => f.get(sw));
        }
        f.get(K).set(kk);
        if (mode === 'transposed') {
          f.while(
            () => f.get(kk).i32(4).op(Op.i32GeS),
            () => {
              transposedStep();
              f.inc(kk, -4);
            },
          );
        }
        f.while(
          () => f.get(kk).i32(0).op(Op.i32GtS),
          () => {
            if (mode === 'contiguous') {
              for (let q = 0; q < W / 4; q++) {
                f.get(dst);
                f.get(line[0]!).mem(Simd.load, 16 * q, true);
                f.mem(Simd.store, 16 * q, true);
              }
              f.inc(line[0]!, () => f.get(sk));
              f.inc(dst, 4 * W);
            } else scalarStep();
            f.inc(kk, -1);
          },
        );
        f.inc(b, 1);
      },
    );
  };
  const is = (x: number, bytes: number) => () => f.get(x).i32(bytes).op(Op.i32Eq);
  f.when(is(sw, 4), () => loop('contiguous'));
  f.when(
    () => f.get(sw).i32(4).op(Op.i32Ne).get(sk).i32(4).op(Op.i32Eq).op(Op.i32And),
    () => loop('transposed'),
  );
  f.when(
    () => f.get(sw).i32(4).op(Op.i32Ne).get(sk).i32(4).op(Op.i32Ne).op(Op.i32And),
    () => loop('scalar'),
  );
  return f;
}

/**
 * The panel kernel: C[i, j] (+)= sum_k A[i, k] B[k, j] (+ bias[j]) over packed operands, A in
 * blocks of BLOCK_ROWS rows ([k][row], `strideA` bytes apart) and B in strips of STRIP_COLS
 * columns ([k][column], `strideB` bytes apart); C has `ldc` floats per row and room for whole
 * blocks and strips. A strip of B stays in L1 while every row block passes it, and each step of k
 * reads both operands at consecutive addresses. Every element is summed over k in order, then the
 * bias added, then (accumulating) the old C, as in `sgemm`: without FMA the two give the same bits.
 */
function buildPanel(fused: boolean): Fn {
  const RM = BLOCK_ROWS;
  const VW = STRIP_COLS / 4;
  const f = new Fn('panel', Array(11).fill(I32));
  const [c, ldc, pa, strideA, pb, strideB, rowBlocks, K, strips, flags, bias] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
  ] as const;
  const strip = f.local(I32);
  const rb = f.local(I32);
  const p = f.local(I32);
  const end = f.local(I32);
  const q = f.local(I32);
  const q0 = f.local(I32);
  const cp = f.local(I32);
  const acc = Array.from({ length: RM * VW }, () => f.local(V128));
  const bv = Array.from({ length: VW }, () => f.local(V128));
  const sp = f.local(V128);
  f.get(ldc).i32(2).op(Op.i32Shl).set(ldc);
  f.i32(0).set(strip);
  f.while(
    () => f.get(strip).get(strips).op(Op.i32LtS),
    () => {
      f.get(pb).get(strip).get(strideB).op(Op.i32Mul, Op.i32Add).set(q0);
      f.i32(0).set(rb);
      f.while(
        () => f.get(rb).get(rowBlocks).op(Op.i32LtS),
        () => {
          f.get(pa).get(rb).get(strideA).op(Op.i32Mul, Op.i32Add).set(p);
          f.get(p)
            .get(K)
            .i32(RM * 4)
            .op(Op.i32Mul, Op.i32Add)
            .set(end);
          f.get(q0).set(q);
          for (const x of acc) f.v128Zero().set(x);
          f.while(
            () => f.get(p).get(end).op(Op.i32LtS),
            () => {
              for (let v = 0; v < VW; v++)
                f.get(q)
                  .mem(Simd.load, 16 * v, true)
                  .set(bv[v]!);
              for (let r = 0; r < RM; r++) {
                f.get(p)
                  .mem(Simd.load32Splat, 4 * r, true)
                  .set(sp);
                for (let v = 0; v < VW; v++) f.madd(acc[r * VW + v]!, sp, bv[v]!, fused);
              }
              f.inc(p, RM * 4);
              f.inc(q, VW * 16);
            },
          );
          f.when(
            () => f.get(flags).i32(FLAG_BIAS).op(Op.i32And),
            () => {
              for (let v = 0; v < VW; v++) {
                f.get(bias)
                  .get(strip)
                  .i32(VW * 16)
                  .op(Op.i32Mul, Op.i32Add)
                  .mem(Simd.load, 16 * v, true)
                  .set(bv[v]!);
                for (let r = 0; r < RM; r++) {
                  const x = acc[r * VW + v]!;
                  f.get(x).get(bv[v]!).simd(Simd.f32x4Add).set(x);
                }
              }
            },
          );
          for (let r = 0; r < RM; r++) {
            f.get(c).get(rb).i32(RM).op(Op.i32Mul).i32(r).op(Op.i32Add).get(ldc).op(Op.i32Mul, Op.i32Add);
            f.get(strip)
              .i32(VW * 16)
              .op(Op.i32Mul, Op.i32Add)
              .set(cp);
            storeRow(f, cp, acc.slice(r * VW, (r + 1) * VW), flags);
          }
          f.inc(rb, 1);
        },
      );
      f.inc(strip, 1);
    },
  );
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
    assemble(
      [
        buildSgemm(TILE_ROWS, TILE_VECS, FUSED),
        buildSdotnt(FUSED),
        buildTranspose(),
        buildCopy(),
        buildPack(4),
        buildPack(8),
        buildPanel(FUSED),
        ...buildVmath(FUSED),
        ...buildVnorm(FUSED),
      ],
      16,
    ),
  ),
  {},
);
const memory = instance.exports.memory as WasmMemory;
const sgemmRaw = instance.exports.sgemm as Kernel;
const sdotntRaw = instance.exports.sdotnt as Kernel;
const transposeRaw = instance.exports.transpose as Kernel;
const copyRaw = instance.exports.copy as Kernel;
const pack4 = instance.exports.pack4 as Kernel;
const pack8 = instance.exports.pack8 as Kernel;
const panel = instance.exports.panel as Kernel;

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

/** the elementwise and row-wise kernels of vmath.ts and vnorm.ts (byte pointers, element counts) */
export const vmath = instance.exports as unknown as {
  rowmax(x: number, n: number): number;
  expsum(x: number, n: number, shift: number, scale: number, write: number): number;
  axpy(y: number, x: number, n: number, alpha: number): void;
  gelu(out: number, u: number, n: number): void;
  geluBackward(dg: number, u: number, n: number): void;
  softmaxCausal(s: number, T: number, ld: number, scale: number, offset: number): void;
  softmaxCausalBackward(p: number, d: number, T: number, ld: number, scale: number, offset: number): void;
  layerNorm(
    out: number,
    x: number,
    mean: number,
    rstd: number,
    g: number,
    b: number,
    rows: number,
    D: number,
  ): void;
  layerNormBackward(
    dx: number,
    dh: number,
    x: number,
    mean: number,
    rstd: number,
    g: number,
    dg: number,
    db: number,
    rows: number,
    D: number,
  ): void;
  colSum(g: number, d: number, rows: number, n: number): void;
};
let heapView = new Float32Array(memory.buffer);
/** 64 KiB pages a 32-bit WebAssembly memory can have */
const MAX_PAGES = 65536;
/** floats of linear memory below the scratch area, held by resident blocks (see residentAlloc) */
let residentTop = 0;
/** free ranges below residentTop, sorted by offset, never adjacent */
const freeRanges: { at: number; size: number }[] = [];

/**
 * grows linear memory to at least `floats` floats (by an eighth at least, so that a slowly rising
 * top does not grow it page by page: every growth replaces the buffer and its views), and
 * refreshes the view
 */
function reserve(floats: number): void {
  const have = memory.buffer.byteLength;
  const bytes = floats * 4;
  if (have < bytes) {
    const pages = have / 65536;
    const need = Math.ceil((bytes - have) / 65536);
    try {
      memory.grow(Math.max(need, Math.min(pages >>> 3, MAX_PAGES - pages)));
    } catch {
      throw new RangeError(
        `the WebAssembly kernels' memory (${pages >>> 4} MB, at most ${MAX_PAGES >>> 4} MB) cannot grow by ${Math.ceil(need / 16)} MB more: sample fewer sequences at once (maxBatch), keep a smaller prefix cache (prefixCache.maxTokens), or train on shorter sequences`,
      );
    }
  }
  if (heapView.buffer !== memory.buffer) heapView = new Float32Array(memory.buffer);
}

/**
 * Lays out regions of the given float counts (16-byte aligned) in linear memory, above the
 * resident blocks, growing it if needed, and returns their float offsets. The memory is reused by
 * every call: regions are only valid until the next `regions` call, and views of the old buffer
 * die when memory grows.
 */
export function regions<const S extends readonly number[]>(
  ...sizes: S
): { -readonly [K in keyof S]: number } {
  const offs: number[] = [];
  let end = residentTop;
  for (const n of sizes) {
    offs.push(end);
    end += (n + 3) & ~3;
  }
  reserve(end);
  return offs as { -readonly [K in keyof S]: number };
}

// --- resident blocks -----------------------------------------------------------------------------
// What outlives a kernel call and is read by kernels again and again (a sequence's keys and
// values) lives in linear memory below the scratch area, so that no call copies it in: blocks in
// [0, residentTop), scratch from residentTop up. Scratch holds nothing between calls, so a new
// block may take its place. First fit over a list of free ranges kept sorted and merged; a free
// range that reaches the top gives its memory back to the scratch area.

const blockSize = (floats: number) => Math.max(4, (floats + 3) & ~3);

/** float offset of a new block of `floats` floats (16-byte aligned, contents undefined) */
export function residentAlloc(floats: number): number {
  const size = blockSize(floats);
  for (let i = 0; i < freeRanges.length; i++) {
    const r = freeRanges[i]!;
    if (r.size < size) continue;
    const at = r.at;
    if (r.size === size) freeRanges.splice(i, 1);
    else {
      r.at += size;
      r.size -= size;
    }
    return at;
  }
  reserve(residentTop + size); // throws, changing nothing, when memory cannot grow
  const at = residentTop;
  residentTop += size;
  return at;
}

/** returns the block at `at` of `floats` floats (as allocated) */
export function residentFree(at: number, floats: number): void {
  const size = blockSize(floats);
  let i = 0;
  while (i < freeRanges.length && freeRanges[i]!.at < at) i++;
  freeRanges.splice(i, 0, { at, size });
  const next = freeRanges[i + 1];
  if (next && at + size === next.at) {
    freeRanges[i]!.size += next.size;
    freeRanges.splice(i + 1, 1);
  }
  const prev = freeRanges[i - 1];
  if (prev && prev.at + prev.size === at) {
    prev.size += freeRanges[i]!.size;
    freeRanges.splice(i, 1);
  }
  const last = freeRanges[freeRanges.length - 1];
  if (last && last.at + last.size === residentTop) {
    residentTop = last.at;
    freeRanges.pop();
  }
}

// --- pinned arrays ------------------------------------------------------------------------------
// Decoding runs every weight matrix through a product for each token it samples, a few rows at a
// time, and copying the matrix in cost about as much as the product. A pinned array is copied into
// a resident block once; a product whose operand is a view of it reads the block instead.

interface Pin {
  readonly array: Float32Array;
  readonly at: number;
  /**
   * B operands of panel products over views of the array, packed on first use and kept until
   * the pin goes (a weight passes the same packing in every product: each sequence of a training
   * step, each prefill of a batch), by layout, offset and shape; each a resident block
   */
  readonly packed: Map<string, { readonly at: number; readonly floats: number }>;
}
const pins = new Pins<Pin>(
  (array) => {
    const pin = { array, at: residentAlloc(array.length), packed: new Map() };
    heapView.set(array, pin.at);
    return pin;
  },
  (pin) => {
    residentFree(pin.at, pin.array.length);
    for (const p of pin.packed.values()) residentFree(p.at, p.floats);
  },
);

/**
 * Keeps a copy of `array` in linear memory, read by every product whose operand lies in it, until
 * the returned function is called (pins of the same array nest). The caller must not change the
 * array meanwhile: the products would read the copy.
 */
export function pinF32(array: Float32Array): () => void {
  return pins.hold(array);
}

/** the pin x is a view of, and the float offset of x's copy, or null */
function pinOf(x: Float32Array): { readonly pin: Pin; readonly at: number } | null {
  for (const p of pins.held) {
    const from = p.array.byteOffset;
    if (
      x.buffer === p.array.buffer &&
      x.byteOffset >= from &&
      x.byteOffset + x.byteLength <= from + p.array.byteLength
    )
      return { pin: p, at: p.at + (x.byteOffset - from) / 4 };
  }
  return null;
}

/** the float offset of x's copy when x is a view of a pinned array, else -1 */
function pinnedAt(x: Float32Array): number {
  return pinOf(x)?.at ?? -1;
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
    heapView,
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

/** floats held by resident blocks and free ranges between them (for tests and benchmarks) */
export function residentFloats(): { top: number; free: number } {
  return { top: residentTop, free: freeRanges.reduce((s, r) => s + r.size, 0) };
}

/** the current view of linear memory (refetch after every `regions` call) */
export function heap(): Float32Array {
  return heapView;
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
    const h = heapView;
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
    const h = heapView;
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
  const h = heapView;
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
