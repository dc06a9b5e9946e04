/**
 * Row-wise float32 kernels in WebAssembly SIMD: LayerNorm forward and backward over rows of D
 * floats (D a multiple of 4; the wrappers in pointwise.ts send other widths to the reference
 * loops), and the column sums that make bias gradients. The scalar loops these replace ran in
 * double precision and cost a tenth of a training step; here a row's sums are f32x4 partial sums.
 */
import { F32, Fn, I32, Op, Simd, V128 } from './asm.js';

const LN_EPS = 1e-5;

function hsum(f: Fn, v: number): Fn {
  for (let l = 0; l < 4; l++) {
    f.get(v).simd(Simd.f32x4ExtractLane).lane(l);
    if (l > 0) f.op(Op.f32Add);
  }
  return f;
}

/** `for (k = 0; k < bytes; k += 16) body()` */
function vecs(f: Fn, k: number, bytes: number, body: () => void): void {
  f.i32(0).set(k);
  f.while(
    () => f.get(k).get(bytes).op(Op.i32LtS),
    () => {
      body();
      f.inc(k, 16);
    },
  );
}

/** layerNorm(out, x, mean, rstd, gain, bias, rows, D): out = (x - mean) * rstd * gain + bias per row */
function buildLayerNorm(fused: boolean): Fn {
  const f = new Fn('layerNorm', Array(8).fill(I32));
  const [out, x, mean, rstd, gain, bias, rows, D] = [0, 1, 2, 3, 4, 5, 6, 7] as const;
  const [t, px, po, k, bytes] = [f.local(I32), f.local(I32), f.local(I32), f.local(I32), f.local(I32)];
  const [acc, c, mv, sv, g] = [f.local(V128), f.local(V128), f.local(V128), f.local(V128), f.local(V128)];
  const [n, m, s] = [f.local(F32), f.local(F32), f.local(F32)];
  f.get(D).i32(2).op(Op.i32Shl).set(bytes);
  f.get(D).op(Op.f32ConvertI32S).set(n);
  f.i32(0).set(t);
  f.while(
    () => f.get(t).get(rows).op(Op.i32LtS),
    () => {
      f.get(x).get(t).get(bytes).op(Op.i32Mul, Op.i32Add).set(px);
      f.get(out).get(t).get(bytes).op(Op.i32Mul, Op.i32Add).set(po);
      f.v128Zero().set(acc);
      vecs(f, k, bytes, () => {
        f.get(acc).get(px).get(k).op(Op.i32Add).mem(Simd.load, 0, true).simd(Simd.f32x4Add).set(acc);
      });
      hsum(f, acc).get(n).op(Op.f32Div).set(m);
      f.get(m).simd(Simd.f32x4Splat).set(mv);
      f.v128Zero().set(acc);
      vecs(f, k, bytes, () => {
        f.get(px).get(k).op(Op.i32Add).mem(Simd.load, 0, true).get(mv).simd(Simd.f32x4Sub).set(c);
        f.madd(acc, c, c, fused);
      });
      f.f32(1);
      hsum(f, acc).get(n).op(Op.f32Div).f32(LN_EPS).op(Op.f32Add, Op.f32Sqrt, Op.f32Div).set(s);
      f.get(s).simd(Simd.f32x4Splat).set(sv);
      f.get(mean).get(t).i32(2).op(Op.i32Shl, Op.i32Add).get(m).mem(Op.f32Store, 0, false);
      f.get(rstd).get(t).i32(2).op(Op.i32Shl, Op.i32Add).get(s).mem(Op.f32Store, 0, false);
      vecs(f, k, bytes, () => {
        f.get(px).get(k).op(Op.i32Add).mem(Simd.load, 0, true).get(mv).simd(Simd.f32x4Sub);
        f.get(sv).simd(Simd.f32x4Mul).set(c);
        f.get(gain).get(k).op(Op.i32Add).mem(Simd.load, 0, true).set(g);
        f.get(bias).get(k).op(Op.i32Add).mem(Simd.load, 0, true).set(acc);
        f.madd(acc, c, g, fused);
        f.get(po).get(k).op(Op.i32Add).get(acc).mem(Simd.store, 0, true);
      });
      f.inc(t, 1);
    },
  );
  return f;
}

/**
 * layerNormBackward(dx, dh, x, mean, rstd, gain, dgain, dbias, rows, D): dx += the input gradient
 * of `layerNorm` given dh, dgain += dh * xhat and dbias += dh, row after row
 */
function buildLayerNormBackward(fused: boolean): Fn {
  const f = new Fn('layerNormBackward', Array(10).fill(I32));
  const [dx, dh, x, mean, rstd, gain, dgain, dbias, rows, D] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] as const;
  const [t, k, bytes, row] = [f.local(I32), f.local(I32), f.local(I32), f.local(I32)];
  const [mv, sv, xh, dy, dxh, a1, a2, tmp] = Array.from({ length: 8 }, () => f.local(V128)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const n = f.local(F32);
  const at = (base: number) => f.get(base).get(k).op(Op.i32Add);
  const rowAt = (base: number) => f.get(base).get(row).op(Op.i32Add).get(k).op(Op.i32Add);
  f.get(D).i32(2).op(Op.i32Shl).set(bytes);
  f.get(D).op(Op.f32ConvertI32S).set(n);
  /** xh = (x - mean) * rstd, dy = dh, dxh = dy * gain at column k of the row */
  const load = () => {
    rowAt(x).mem(Simd.load, 0, true).get(mv).simd(Simd.f32x4Sub).get(sv).simd(Simd.f32x4Mul).set(xh);
    rowAt(dh).mem(Simd.load, 0, true).set(dy);
    f.get(dy);
    at(gain).mem(Simd.load, 0, true).simd(Simd.f32x4Mul).set(dxh);
  };
  f.i32(0).set(t);
  f.while(
    () => f.get(t).get(rows).op(Op.i32LtS),
    () => {
      f.get(t).get(bytes).op(Op.i32Mul).set(row);
      f.get(mean).get(t).i32(2).op(Op.i32Shl, Op.i32Add).mem(Simd.load32Splat, 0, true).set(mv);
      f.get(rstd).get(t).i32(2).op(Op.i32Shl, Op.i32Add).mem(Simd.load32Splat, 0, true).set(sv);
      f.v128Zero().set(a1);
      f.v128Zero().set(a2);
      vecs(f, k, bytes, () => {
        load();
        at(dgain).mem(Simd.load, 0, true).set(tmp);
        f.madd(tmp, dy, xh, fused);
        at(dgain).get(tmp).mem(Simd.store, 0, true);
        at(dbias);
        at(dbias).mem(Simd.load, 0, true).get(dy).simd(Simd.f32x4Add).mem(Simd.store, 0, true);
        f.get(a1).get(dxh).simd(Simd.f32x4Add).set(a1);
        f.madd(a2, dxh, xh, fused);
      });
      hsum(f, a1).get(n).op(Op.f32Div).simd(Simd.f32x4Splat).set(a1);
      hsum(f, a2).get(n).op(Op.f32Div).simd(Simd.f32x4Splat).set(a2);
      vecs(f, k, bytes, () => {
        load();
        rowAt(dx);
        rowAt(dx).mem(Simd.load, 0, true);
        f.get(dxh).get(a1).simd(Simd.f32x4Sub).get(xh).get(a2).simd(Simd.f32x4Mul).simd(Simd.f32x4Sub);
        f.get(sv).simd(Simd.f32x4Mul).simd(Simd.f32x4Add).mem(Simd.store, 0, true);
      });
      f.inc(t, 1);
    },
  );
  return f;
}

/**
 * colSum(g, d, rows, n): g[j] += d[r*n + j], rows in order, so each column is summed exactly as
 * the scalar loop sums it (f32 lanes, one rounding per add)
 */
function buildColSum(): Fn {
  const f = new Fn('colSum', [I32, I32, I32, I32]);
  const [g, d, rows, n] = [0, 1, 2, 3] as const;
  const [r, k, v4, bytes, pd] = [f.local(I32), f.local(I32), f.local(I32), f.local(I32), f.local(I32)];
  f.get(n).i32(2).op(Op.i32Shl).set(bytes);
  f.get(bytes).i32(-16).op(Op.i32And).set(v4);
  f.i32(0).set(r);
  f.while(
    () => f.get(r).get(rows).op(Op.i32LtS),
    () => {
      f.get(d).get(r).get(bytes).op(Op.i32Mul, Op.i32Add).set(pd);
      vecs(f, k, v4, () => {
        f.get(g).get(k).op(Op.i32Add);
        f.get(g).get(k).op(Op.i32Add).mem(Simd.load, 0, true);
        f.get(pd).get(k).op(Op.i32Add).mem(Simd.load, 0, true);
        f.simd(Simd.f32x4Add).mem(Simd.store, 0, true);
      });
      f.while(
        () => f.get(k).get(bytes).op(Op.i32LtS),
        () => {
          f.get(g).get(k).op(Op.i32Add);
          f.get(g).get(k).op(Op.i32Add).mem(Op.f32Load, 0, false);
          f.get(pd).get(k).op(Op.i32Add).mem(Op.f32Load, 0, false);
          f.op(Op.f32Add).mem(Op.f32Store, 0, false);
          f.inc(k, 4);
        },
      );
      f.inc(r, 1);
    },
  );
  return f;
}

export function buildVnorm(fused: boolean): Fn[] {
  return [buildLayerNorm(fused), buildLayerNormBackward(fused), buildColSum()];
}
