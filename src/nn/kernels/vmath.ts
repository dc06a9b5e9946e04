/**
 * Elementwise float32 kernels in WebAssembly SIMD: the vocabulary softmax of the losses, the causal
 * softmax of attention (forward and backward) and the tanh-GELU of the MLP. In V8 each Math.exp or
 * Math.tanh costs ~20 ns here, which made these loops as slow as all the matrix products together
 * once those moved to SIMD.
 *
 * exp is the Cephes expf scheme (x = n ln2 + r with a two-part ln2, degree-6 polynomial in r,
 * 2^n built in the exponent bits), about 1 ulp; inputs are clamped to [-87, 88] so it never returns
 * inf or a subnormal, and tanh(y) = 1 - 2 / (exp(2y) + 1) inherits that. Every function processes
 * whole f32x4 vectors, so n is rounded up to a multiple of 4: callers pass regions padded to that
 * (as `regions` lays them out) and ignore or neutralise the extra lanes.
 */
import { F32, Fn, I32, Op, Simd, V128 } from './asm.js';

const LN2_HI = 0.693359375;
const LN2_LO = -2.1219444e-4;
const EXP_POLY = [
  1.98756915e-4, 1.3981999507e-3, 8.3333451907e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1,
];
const ROUND_MAGIC = 12582912;
const GELU_C = Math.sqrt(2 / Math.PI);
const GELU_A = 0.044715;

function splat(f: Fn, x: number): Fn {
  return f.splatF32(x);
}

/**
 * emits `dst = exp(src)` elementwise on v128 locals; r, n and t are scratch v128 locals. With
 * `fused`, each multiply-add of the reduction and the polynomial is one fused operation.
 */
function emitExp(f: Fn, dst: number, src: number, r: number, n: number, t: number, fused: boolean): void {
  /** (what is on the stack) * b + c */
  const mulAdd = (b: () => unknown, c: () => unknown) => {
    b();
    if (fused) {
      c();
      f.simd(Simd.f32x4RelaxedMadd);
    } else {
      f.simd(Simd.f32x4Mul);
      c();
      f.simd(Simd.f32x4Add);
    }
  };
  f.get(src);
  splat(f, -87).simd(Simd.f32x4Pmax);
  splat(f, 88).simd(Simd.f32x4Pmin).set(r);
  // n = round(x log2e) via the 1.5 * 2^23 trick: the sum's low mantissa bits hold n itself
  f.get(r);
  mulAdd(
    () => splat(f, Math.LOG2E),
    () => splat(f, ROUND_MAGIC),
  );
  f.set(t);
  f.get(t);
  splat(f, ROUND_MAGIC).simd(Simd.f32x4Sub).set(n);
  // r = x - n ln2, ln2 in two parts
  if (fused) {
    f.get(n);
    splat(f, LN2_HI).get(r).simd(Simd.f32x4RelaxedNmadd).set(r);
    f.get(n);
    splat(f, LN2_LO).get(r).simd(Simd.f32x4RelaxedNmadd).set(r);
  } else {
    f.get(r).get(n);
    splat(f, LN2_HI).simd(Simd.f32x4Mul).simd(Simd.f32x4Sub);
    f.get(n);
    splat(f, LN2_LO).simd(Simd.f32x4Mul).simd(Simd.f32x4Sub).set(r);
  }
  // Horner: ((c0 r + c1) r + ...) r + c5, then * r^2 + r + 1
  splat(f, EXP_POLY[0]!);
  for (let i = 1; i < EXP_POLY.length; i++) {
    mulAdd(
      () => f.get(r),
      () => splat(f, EXP_POLY[i]!),
    );
  }
  mulAdd(
    () => f.get(r).get(r).simd(Simd.f32x4Mul),
    () => f.get(r),
  );
  splat(f, 1).simd(Simd.f32x4Add);
  // 2^n: n << 23 plus the bias 127 << 23 (the magic's own bits shift out)
  f.get(t).i32(23).simd(Simd.i32x4Shl);
  f.i32(127 << 23)
    .simd(Simd.i32x4Splat)
    .simd(Simd.i32x4Add);
  f.simd(Simd.f32x4Mul).set(dst);
}

/** emits `dst = tanh(c (x + a x^3))` for the GELU on v128 locals */
function emitGeluTanh(
  f: Fn,
  dst: number,
  x: number,
  t: number,
  r: number,
  n: number,
  m: number,
  fused: boolean,
): void {
  f.get(x).get(x).simd(Simd.f32x4Mul).get(x).simd(Simd.f32x4Mul);
  splat(f, GELU_A).simd(Simd.f32x4Mul).get(x).simd(Simd.f32x4Add);
  splat(f, 2 * GELU_C)
    .simd(Simd.f32x4Mul)
    .set(t);
  emitExp(f, t, t, r, n, m, fused);
  splat(f, 1);
  splat(f, 2).get(t);
  splat(f, 1).simd(Simd.f32x4Add).simd(Simd.f32x4Div).simd(Simd.f32x4Sub).set(dst);
}

/** `for (p = start; p < start + 4*ceil(n/4); p += 16) body()` over a byte pointer local */
function vecLoop(f: Fn, p: number, start: number, n: number, end: number, body: () => void): void {
  f.get(start).set(p);
  vecEnd(f, start, n, end);
  f.while(
    () => f.get(p).get(end).op(Op.i32LtS),
    () => {
      body();
      f.inc(p, 16);
    },
  );
}

/**
 * `vecLoop` over [start, end) (end a local byte pointer, whole vectors from start) that runs
 * UNROLL vectors a step while that many remain, then one at a time. Each phase runs for every
 * vector of a step before the next phase, `phase(slot, offset)` emitting the work of the vector at
 * byte `offset` past the pointers with the temporaries of `slot`; `advance(bytes)` moves pointers
 * besides p. The exp is a chain of ~20 dependent operations: a step of independent chains keeps
 * the CPU busy where one chain a step waited on each result (2.8x for expsum here). A phase that
 * combines vectors in order (a sum) gives the bits it gave one vector a step.
 */
const UNROLL = 4;
function vecLoopUnrolled(
  f: Fn,
  p: number,
  start: () => void,
  end: number,
  lim: number,
  phases: readonly ((slot: number, offset: number) => void)[],
  advance: (bytes: number) => void = () => {},
): void {
  start();
  f.set(p);
  f.get(end)
    .i32(-16 * UNROLL)
    .op(Op.i32Add)
    .set(lim);
  f.while(
    () => f.get(p).get(lim).op(Op.i32LeS),
    () => {
      for (const phase of phases) for (let u = 0; u < UNROLL; u++) phase(u, 16 * u);
      f.inc(p, 16 * UNROLL);
      advance(16 * UNROLL);
    },
  );
  f.while(
    () => f.get(p).get(end).op(Op.i32LtS),
    () => {
      for (const phase of phases) phase(0, 0);
      f.inc(p, 16);
      advance(16);
    },
  );
}

/** UNROLL sets of `count` v128 temporaries, one per vector of an unrolled step */
function slots(f: Fn, count: number): number[][] {
  return Array.from({ length: UNROLL }, () => Array.from({ length: count }, () => f.local(V128)));
}

/** local end = the byte pointer in local `start` plus n floats rounded up to whole vectors */
function vecEnd(f: Fn, start: number, n: number, end: number): void {
  f.get(start).get(n).i32(3).op(Op.i32Add).i32(2).op(Op.i32ShrU).i32(4).op(Op.i32Shl, Op.i32Add).set(end);
}

function hsum(f: Fn, v: number, combine: number): void {
  for (let l = 0; l < 4; l++) {
    f.get(v).simd(Simd.f32x4ExtractLane).lane(l);
    if (l > 0) f.op(combine);
  }
}

/** rowmax(x, n) -> max of x[0, 4 ceil(n/4)) */
function buildRowmax(): Fn {
  const f = new Fn('rowmax', [I32, I32], [F32]);
  const p = f.local(I32);
  const end = f.local(I32);
  const m = f.local(V128);
  splat(f, Number.NEGATIVE_INFINITY).set(m);
  vecLoop(f, p, 0, 1, end, () => {
    f.get(m).get(p).mem(Simd.load, 0, true).simd(Simd.f32x4Pmax).set(m);
  });
  const a = f.local(F32);
  const b = f.local(F32);
  f.get(m).simd(Simd.f32x4ExtractLane).lane(0).set(a);
  for (let l = 1; l < 4; l++) {
    f.get(m).simd(Simd.f32x4ExtractLane).lane(l).set(b);
    f.get(a).get(b).get(a).get(b).op(Op.f32Gt, Op.select).set(a);
  }
  f.get(a);
  return f;
}

/** expsum(x, n, shift, scale, write) -> sum of exp((x - shift) * scale); with write != 0 the exps replace x */
function buildExpsum(fused: boolean): Fn {
  const f = new Fn('expsum', [I32, I32, F32, F32, I32], [F32]);
  const [p, end, lim] = [f.local(I32), f.local(I32), f.local(I32)];
  const sh = f.local(V128);
  const s = f.local(V128);
  const sc = f.local(V128);
  const tmp = slots(f, 4);
  f.get(2).simd(Simd.f32x4Splat).set(sh);
  f.get(3).simd(Simd.f32x4Splat).set(sc);
  f.v128Zero().set(s);
  vecEnd(f, 0, 1, end);
  vecLoopUnrolled(f, p, () => f.get(0), end, lim, [
    (u, o) => {
      const [v, r, n, m] = tmp[u]!;
      f.get(p).mem(Simd.load, o, true).get(sh).simd(Simd.f32x4Sub).get(sc).simd(Simd.f32x4Mul).set(v!);
      emitExp(f, v!, v!, r!, n!, m!, fused);
    },
    (u, o) => {
      const v = tmp[u]![0]!;
      f.get(s).get(v).simd(Simd.f32x4Add).set(s);
      f.when(
        () => f.get(4),
        () => f.get(p).get(v).mem(Simd.store, o, true),
      );
    },
  ]);
  hsum(f, s, Op.f32Add);
  return f;
}

/** axpy(y, x, n, alpha): y += alpha * x */
function buildAxpy(): Fn {
  const f = new Fn('axpy', [I32, I32, I32, F32]);
  const p = f.local(I32);
  const end = f.local(I32);
  const q = f.local(I32);
  const a = f.local(V128);
  f.get(3).simd(Simd.f32x4Splat).set(a);
  f.get(1).set(q);
  vecLoop(f, p, 0, 2, end, () => {
    f.get(p).get(p).mem(Simd.load, 0, true).get(q).mem(Simd.load, 0, true).get(a);
    f.simd(Simd.f32x4Mul).simd(Simd.f32x4Add).mem(Simd.store, 0, true);
    f.inc(q, 16);
  });
  return f;
}

/**
 * An elementwise kernel `name(q, u, n)` over the GELU's tanh: for each vector x of u, th = tanh(c
 * (x + a x^3)), then `emitOut(x, th, o)` writes the result at byte offset o past the pointer in
 * local q (the first argument, moving with u)
 */
function buildGeluKernel(
  name: string,
  fused: boolean,
  emitOut: (f: Fn, q: number, x: number, th: number, o: number) => void,
): Fn {
  const f = new Fn(name, [I32, I32, I32]);
  const [p, end, lim, q] = [f.local(I32), f.local(I32), f.local(I32), f.local(I32)];
  const tmp = slots(f, 6);
  f.get(0).set(q);
  vecEnd(f, 1, 2, end);
  const body = (u: number, o: number) => {
    const [x, t, r, n, th, m] = tmp[u]! as [number, number, number, number, number, number];
    f.get(p).mem(Simd.load, o, true).set(x);
    emitGeluTanh(f, th, x, t, r, n, m, fused);
    emitOut(f, q, x, th, o);
  };
  vecLoopUnrolled(
    f,
    p,
    () => f.get(1),
    end,
    lim,
    [body],
    (bytes) => f.inc(q, bytes),
  );
  return f;
}

/** gelu(out, u, n): out = 0.5 u (1 + tanh(c (u + a u^3))); out may equal u */
function buildGelu(fused: boolean): Fn {
  return buildGeluKernel('gelu', fused, (f, q, x, th, o) => {
    f.get(q);
    splat(f, 0.5).get(x).simd(Simd.f32x4Mul);
    splat(f, 1).get(th).simd(Simd.f32x4Add).simd(Simd.f32x4Mul);
    f.mem(Simd.store, o, true);
  });
}

/** geluBackward(dg, u, n): dg *= gelu'(u) */
function buildGeluBackward(fused: boolean): Fn {
  return buildGeluKernel('geluBackward', fused, (f, q, x, th, o) => {
    // 0.5 (1 + th) + 0.5 x (1 - th^2) c (1 + 3 a x^2); past |x| = 100 th is +-1 exactly, and the
    // clamp keeps x^2 finite so the second term is 0 rather than 0 * inf
    f.get(x);
    splat(f, -100).simd(Simd.f32x4Pmax);
    splat(f, 100).simd(Simd.f32x4Pmin).set(x);
    f.get(q).get(q).mem(Simd.load, o, true);
    splat(f, 0.5);
    splat(f, 0.5).get(th).simd(Simd.f32x4Mul).simd(Simd.f32x4Add);
    splat(f, 0.5 * GELU_C)
      .get(x)
      .simd(Simd.f32x4Mul);
    splat(f, 1).get(th).get(th).simd(Simd.f32x4Mul).simd(Simd.f32x4Sub).simd(Simd.f32x4Mul);
    splat(f, 3 * GELU_A)
      .get(x)
      .simd(Simd.f32x4Mul)
      .get(x)
      .simd(Simd.f32x4Mul);
    splat(f, 1).simd(Simd.f32x4Add).simd(Simd.f32x4Mul);
    f.simd(Simd.f32x4Add).simd(Simd.f32x4Mul).mem(Simd.store, o, true);
  });
}

/** a = max over the lanes of v128 local v (f32 locals a, b) */
function hmax(f: Fn, v: number, a: number, b: number): void {
  f.get(v).simd(Simd.f32x4ExtractLane).lane(0).set(a);
  for (let l = 1; l < 4; l++) {
    f.get(v).simd(Simd.f32x4ExtractLane).lane(l).set(b);
    f.get(a).get(b).get(a).get(b).op(Op.f32Gt, Op.select).set(a);
  }
}

/** for (q = from; q < to; q++) row[q] = value (f32 stores; row is a byte pointer) */
function fillScalar(f: Fn, row: number, from: () => void, to: () => void, q: number, value: number): void {
  from();
  f.set(q);
  f.while(
    () => {
      f.get(q);
      to();
      f.op(Op.i32LtS);
    },
    () => {
      f.get(row).get(q).i32(2).op(Op.i32Shl, Op.i32Add).f32(value).mem(Op.f32Store, 0, false);
      f.inc(q, 1);
    },
  );
}

/**
 * softmaxCausal(S, T, ld, scale, offset): row t of S (stride ld floats, ld a multiple of 4 and at
 * least T + offset) becomes softmax(scale * S[t, 0..t+offset]) followed by exact zeros; offset is
 * the number of earlier (cached) positions every row also sees. Each row is processed in whole
 * vectors up to the next multiple of 4 past its last position, the lanes after that first set to
 * -inf.
 */
function buildSoftmaxCausal(fused: boolean): Fn {
  const f = new Fn('softmaxCausal', [I32, I32, I32, F32, I32]);
  const [S, T, ld, scale, offset] = [0, 1, 2, 3, 4];
  const last = f.local(I32);
  const t = f.local(I32);
  const row = f.local(I32);
  const n4 = f.local(I32);
  const p = f.local(I32);
  const end = f.local(I32);
  const q = f.local(I32);
  const lim = f.local(I32);
  const m = f.local(V128);
  const sum = f.local(V128);
  const sc = f.local(V128);
  const tmp = slots(f, 4);
  const a = f.local(F32);
  const b = f.local(F32);
  f.get(ld).i32(2).op(Op.i32Shl).set(ld);
  f.get(scale).simd(Simd.f32x4Splat).set(sc);
  f.i32(0).set(t);
  f.while(
    () => f.get(t).get(T).op(Op.i32LtS),
    () => {
      f.get(S).get(t).get(ld).op(Op.i32Mul, Op.i32Add).set(row);
      f.get(t).get(offset).op(Op.i32Add).set(last);
      f.get(last).i32(4).op(Op.i32Add).i32(-4).op(Op.i32And).set(n4);
      f.get(row).get(n4).i32(2).op(Op.i32Shl, Op.i32Add).set(end);
      const afterT = () => f.get(last).i32(1).op(Op.i32Add);
      fillScalar(f, row, afterT, () => f.get(n4), q, Number.NEGATIVE_INFINITY);
      // the max in UNROLL running vectors (the same value in any order: the softmax subtracts it)
      for (const [x] of tmp) splat(f, Number.NEGATIVE_INFINITY).set(x!);
      vecLoopUnrolled(f, p, () => f.get(row), end, lim, [
        (u, o) => {
          const x = tmp[u]![0]!;
          f.get(x).get(p).mem(Simd.load, o, true).simd(Simd.f32x4Pmax).set(x);
        },
      ]);
      f.get(tmp[0]![0]!).set(m);
      for (const [x] of tmp.slice(1)) f.get(m).get(x!).simd(Simd.f32x4Pmax).set(m);
      hmax(f, m, a, b);
      f.get(a).simd(Simd.f32x4Splat).set(m);
      f.v128Zero().set(sum);
      vecLoopUnrolled(f, p, () => f.get(row), end, lim, [
        (u, o) => {
          const [x, r, n, e] = tmp[u] as [number, number, number, number];
          f.get(p).mem(Simd.load, o, true).get(m).simd(Simd.f32x4Sub).get(sc).simd(Simd.f32x4Mul).set(x);
          emitExp(f, x, x, r, n, e, fused);
          f.get(p).get(x).mem(Simd.store, o, true);
        },
        (u) => f.get(sum).get(tmp[u]![0]!).simd(Simd.f32x4Add).set(sum),
      ]);
      f.f32(1);
      hsum(f, sum, Op.f32Add);
      f.op(Op.f32Div).simd(Simd.f32x4Splat).set(sum);
      vecLoopUnrolled(f, p, () => f.get(row), end, lim, [
        (_, o) =>
          f.get(p).get(p).mem(Simd.load, o, true).get(sum).simd(Simd.f32x4Mul).mem(Simd.store, o, true),
      ]);
      fillScalar(f, row, afterT, () => f.get(ld).i32(2).op(Op.i32ShrU), q, 0);
      f.inc(t, 1);
    },
  );
  return f;
}

/**
 * softmaxCausalBackward(P, D, T, ld, scale, offset): with P the causal softmax and D = dP (both
 * stride ld), D becomes dS = scale * P * (dP - rowsum(P * dP)), zero after each row's position
 * t + offset (offset as in softmaxCausal). dP is only read up to the next multiple of 4 past that
 * position, and its lanes after it are zeroed first (they may be stale memory).
 */
function buildSoftmaxCausalBackward(): Fn {
  const f = new Fn('softmaxCausalBackward', [I32, I32, I32, I32, F32, I32]);
  const [P, Dp, T, ld, scale, offset] = [0, 1, 2, 3, 4, 5];
  const t = f.local(I32);
  const last = f.local(I32);
  const rp = f.local(I32);
  const rd = f.local(I32);
  const n4 = f.local(I32);
  const p = f.local(I32);
  const d = f.local(I32);
  const end = f.local(I32);
  const q = f.local(I32);
  const acc = f.local(V128);
  const sc = f.local(V128);
  f.get(ld).i32(2).op(Op.i32Shl).set(ld);
  f.get(scale).simd(Simd.f32x4Splat).set(sc);
  const overRow = (body: () => void) => {
    f.get(rp).set(p);
    f.get(rd).set(d);
    f.while(
      () => f.get(d).get(end).op(Op.i32LtS),
      () => {
        body();
        f.inc(p, 16);
        f.inc(d, 16);
      },
    );
  };
  f.i32(0).set(t);
  f.while(
    () => f.get(t).get(T).op(Op.i32LtS),
    () => {
      f.get(P).get(t).get(ld).op(Op.i32Mul, Op.i32Add).set(rp);
      f.get(Dp).get(t).get(ld).op(Op.i32Mul, Op.i32Add).set(rd);
      f.get(t).get(offset).op(Op.i32Add).set(last);
      f.get(last).i32(4).op(Op.i32Add).i32(-4).op(Op.i32And).set(n4);
      f.get(rd).get(n4).i32(2).op(Op.i32Shl, Op.i32Add).set(end);
      fillScalar(
        f,
        rd,
        () => f.get(last).i32(1).op(Op.i32Add),
        () => f.get(n4),
        q,
        0,
      );
      f.v128Zero().set(acc);
      overRow(() => {
        f.get(acc).get(p).mem(Simd.load, 0, true).get(d).mem(Simd.load, 0, true);
        f.simd(Simd.f32x4Mul).simd(Simd.f32x4Add).set(acc);
      });
      hsum(f, acc, Op.f32Add);
      f.simd(Simd.f32x4Splat).set(acc);
      overRow(() => {
        f.get(d).get(p).mem(Simd.load, 0, true).get(d).mem(Simd.load, 0, true).get(acc).simd(Simd.f32x4Sub);
        f.simd(Simd.f32x4Mul).get(sc).simd(Simd.f32x4Mul).mem(Simd.store, 0, true);
      });
      fillScalar(
        f,
        rd,
        () => f.get(n4),
        () => f.get(ld).i32(2).op(Op.i32ShrU),
        q,
        0,
      );
      f.inc(t, 1);
    },
  );
  return f;
}

export function buildVmath(fused: boolean): Fn[] {
  return [
    buildRowmax(),
    buildExpsum(fused),
    buildAxpy(),
    buildGelu(fused),
    buildGeluBackward(fused),
    buildSoftmaxCausal(fused),
    buildSoftmaxCausalBackward(),
  ];
}
