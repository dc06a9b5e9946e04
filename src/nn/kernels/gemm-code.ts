/**
 * Code emission of the single-precision matrix kernels in WebAssembly SIMD (f32x4), through
 * `asm.ts`: what each kernel computes and in which order it sums, as functions that build it.
 * module.ts assembles them into the one module; gemm.ts calls them.
 *
 * The panel kernel (every large product) reads both operands packed the way its inner loop reads
 * them, as BLAS libraries do: A in blocks of 4 rows ([k][row]), B in strips of 8 columns
 * ([k][column]). It keeps a 4 x 8 tile of C in registers, and each step of k broadcasts 4
 * consecutive A values into 2 consecutive B vectors: no strides, no horizontal sums, and a B strip
 * that stays in L1 while every block of A passes it. Packing costs O(n^2) against O(n^3) work, and
 * replaced a kernel that read B with a long power-of-two stride. Multiply-adds are fused where the
 * runtime allows it (fma.ts).
 *
 * `sgemm` is the strided form the attention kernels use on slices of their operands (heads,
 * transposes), with causal limits; `sdotnt` the dot-product form (B contiguous along k) for a
 * handful of rows, where packing B would cost as much as the product itself. Every kernel takes
 * byte pointers into linear memory and element strides.
 */
import { F32, Fn, I32, Op, Simd, V128 } from './asm.js';

/**
 * rows and f32x4 column vectors of the register tile (4 x 8: 8 accumulators; V8 gives a wasm
 * function 15 vector registers, and a wider tile spills some to the stack, which costs more than
 * its extra accumulators gain)
 */
export const TILE_ROWS = 4;
export const TILE_VECS = 2;
/** the panel kernel's tile: A in blocks of this many rows, B in strips of this many columns */
export const BLOCK_ROWS = TILE_ROWS;
export const STRIP_COLS = 4 * TILE_VECS;

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

export const FLAG_ACCUMULATE = 1;
export const FLAG_BIAS = 2;
/** `sgemm` only: the sums start from C instead of zero (above the causal mode's bits 2-4) */
export const FLAG_CONTINUE = 32;

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

export function buildSgemm(RM: number, VW: number, fused: boolean): Fn {
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
export function buildSdotnt(fused: boolean): Fn {
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
export function buildTranspose(): Fn {
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
export function buildCopy(): Fn {
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
export function buildPack(W: 4 | 8): Fn {
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
export function buildPanel(fused: boolean): Fn {
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
