import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { logprobAndGrad, tokenLogprob } from '../../src/learner/embedded/losses.js';
import { newKvCache, step } from '../../src/nn/decoding.js';
import { gemmF32, sgemm } from '../../src/nn/kernels/gemm.js';
import { Causal } from '../../src/nn/kernels/gemm-code.js';
import {
  heap,
  pinF32,
  regions,
  residentAlloc,
  residentFloats,
  residentFree,
} from '../../src/nn/kernels/heap.js';
import {
  colSumAccF32,
  geluBackwardF32,
  geluF32,
  layerNormBackwardF32,
  layerNormF32,
} from '../../src/nn/kernels/pointwise.js';
import { type Arr, Gpt, type GptConfig } from '../../src/nn/model.js';
import type { Ops } from '../../src/nn/ops.js';
import { colSumAcc, gemmNT, layerNorm, layerNormBackward, referenceOps } from '../../src/nn/reference-ops.js';
import { simdOps } from '../../src/nn/simd-ops.js';
import { Rng } from '../../src/util/rng.js';

type Layout = 'NN' | 'NT' | 'TN';

function randomF32(rng: Rng, n: number): Float32Array {
  return Float32Array.from({ length: n }, () => rng.normal());
}

/**
 * The SIMD kernel against the scalar float64 kernel on the same (float32-exact) inputs. The bound is
 * the worst-case float32 rounding of a K-term sum, relative to the sum of absolute terms: loose for
 * correct code, but any indexing slip gives errors of the order of the terms themselves.
 */
function checkGemm(
  rng: Rng,
  layout: Layout,
  M: number,
  K: number,
  N: number,
  acc: boolean,
  withBias: boolean,
  how: { readonly rowwise?: boolean; readonly pinned?: boolean } = {},
): Float32Array {
  const a = randomF32(rng, M * K + 3);
  const b = randomF32(rng, K * N + 5);
  const bias = withBias ? randomF32(rng, N + 2) : null;
  const init = randomF32(rng, M * N + 4);
  const aOff = 3;
  const bOff = 5;
  const outOff = 1;
  // float64 operands in the A @ B^T form of the scalar kernel
  const a64 = new Float64Array(M * K);
  const bT64 = new Float64Array(N * K);
  for (let i = 0; i < M; i++)
    for (let k = 0; k < K; k++)
      a64[i * K + k] = layout === 'TN' ? a[aOff + k * M + i]! : a[aOff + i * K + k]!;
  for (let j = 0; j < N; j++)
    for (let k = 0; k < K; k++)
      bT64[j * K + k] = layout === 'NT' ? b[bOff + j * K + k]! : b[bOff + k * N + j]!;
  const ref = Float64Array.from(init);
  const bias64 = bias ? Float64Array.from(bias.subarray(2)) : null;
  const s = { m: M, k: K, n: N };
  gemmNT(ref.subarray(outOff), a64, bT64, s, { bias: bias64, accumulate: acc });
  const absA = a64.map(Math.abs);
  const absB = bT64.map(Math.abs);
  const mag = new Float64Array(M * N);
  gemmNT(mag, absA, absB, s, { bias: bias64?.map(Math.abs) ?? null });

  // views at odd offsets, to catch a kernel reading or writing outside them
  const out = Float32Array.from(init);
  const opts = { bias: bias?.subarray(2) ?? null, accumulate: acc, rowwise: how.rowwise ?? false };
  const unpin = how.pinned ? pinF32(b) : null;
  gemmF32(layout, out.subarray(outOff), a.subarray(aOff), b.subarray(bOff), s, opts);
  unpin?.();
  for (let i = 0; i < M * N; i++) {
    const tol = (K + 2) * 6e-8 * (mag[i]! + (acc ? Math.abs(init[outOff + i]!) : 0)) + 1e-7;
    const err = Math.abs(out[outOff + i]! - ref[outOff + i]!);
    if (err > tol) {
      expect.fail(
        `${layout} M=${M} K=${K} N=${N} acc=${acc} bias=${withBias}: element ${i} is ${out[outOff + i]}, want ${ref[outOff + i]}`,
      );
    }
  }
  expect(out[0]).toBe(init[0]);
  for (let i = outOff + M * N; i < out.length; i++) expect(out[i]).toBe(init[i]);
  return out.subarray(outOff, outOff + M * N);
}

describe('WebAssembly SIMD gemm', () => {
  const sizes = [1, 2, 3, 4, 5, 7, 8, 9, 12, 17, 33];
  it.each(['NN', 'NT', 'TN'] as const)(
    '%s equals the float64 scalar kernel on edge sizes, accumulate and bias',
    (layout) => {
      const rng = new Rng(layout.charCodeAt(0) * 31 + layout.charCodeAt(1));
      for (const M of sizes)
        for (const K of [0, 1, 3, 4, 5, 16, 37])
          for (const N of sizes)
            checkGemm(rng, layout, M, K, N, (M + K + N) % 2 === 0, (M * N + K) % 3 !== 0);
    },
  );

  it.each(['NN', 'NT', 'TN'] as const)('%s handles large shapes split into panels of K and N', (layout) => {
    const rng = new Rng(5);
    checkGemm(rng, layout, 37, 600, 300, false, true);
    checkGemm(rng, layout, 64, 1100, 9, true, false);
    checkGemm(rng, layout, 3, 129, 1030, true, true);
    checkGemm(rng, layout, 130, 128, 4100, false, false);
  });

  it('NT row by row: every row as it comes alone, over B in chunks and in tiles of rows', () => {
    for (const [M, K, N] of [
      [5, 37, 300],
      [8, 128, 1030],
      [3, 4, 9],
      [9, 0, 5],
    ] as const) {
      const whole = checkGemm(new Rng(M * 7 + N), 'NT', M, K, N, true, true, { rowwise: true });
      for (let i = 0; i < M; i++) {
        // the same draws, keeping row i of A and of the initial output
        const rng = new Rng(M * 7 + N);
        const a = randomF32(rng, M * K + 3);
        const b = randomF32(rng, K * N + 5);
        const bias = randomF32(rng, N + 2);
        const init = randomF32(rng, M * N + 4);
        const out = init.slice(1 + i * N, 1 + (i + 1) * N);
        const row = a.subarray(3 + i * K, 3 + (i + 1) * K);
        gemmF32(
          'NT',
          out,
          row,
          b.subarray(5),
          { m: 1, k: K, n: N },
          { bias: bias.subarray(2), accumulate: true },
        );
        expect(out).toEqual(whole.subarray(i * N, (i + 1) * N));
      }
    }
  });

  it('reads a pinned operand in place, with the same bits as a copied one, and frees it on release', () => {
    const before = residentFloats();
    for (const [layout, M, K, N, rowwise] of [
      ['NN', 3, 40, 24, false],
      ['NN', 5, 40, 21, false],
      ['NN', 20, 33, 48, false],
      ['NT', 6, 37, 300, true],
      ['NT', 20, 37, 30, false],
      ['TN', 7, 9, 16, false],
    ] as const) {
      const copied = checkGemm(new Rng(M + K + N), layout, M, K, N, true, true, { rowwise });
      const pinned = checkGemm(new Rng(M + K + N), layout, M, K, N, true, true, { rowwise, pinned: true });
      expect(pinned).toEqual(copied);
    }
    expect(residentFloats()).toEqual(before);
    const w = randomF32(new Rng(1), 64);
    const [outer, inner] = [pinF32(w), pinF32(w)];
    inner();
    inner(); // a second call of the same release does nothing
    expect(residentFloats().top).toBeGreaterThan(before.top);
    outer();
    expect(residentFloats()).toEqual(before);
  });

  it('packs a pinned operand once per layout, view and shape, and gives the bits of packing it each time', () => {
    const before = residentFloats();
    const rng = new Rng(31);
    // two weights in one pinned array, as a model's parameters are
    const params = randomF32(rng, 40 * 24 + 24 * 40);
    const [w1, w2] = [params.subarray(0, 40 * 24), params.subarray(40 * 24)];
    const a = randomF32(rng, 20 * 40);
    const products = [
      () => {
        const out = new Float32Array(20 * 24);
        gemmF32('NN', out, a, w1, { m: 20, k: 40, n: 24 });
        return out;
      },
      () => {
        const out = new Float32Array(20 * 24);
        gemmF32('NT', out, a, w2, { m: 20, k: 40, n: 24 });
        return out;
      },
      () => {
        const out = new Float32Array(20 * 40);
        gemmF32('NN', out, a.subarray(0, 20 * 24), w2, { m: 20, k: 24, n: 40 });
        return out;
      },
    ];
    const copied = products.map((p) => p());
    const unpin = pinF32(params);
    const held = residentFloats().top - residentFloats().free;
    for (let round = 0; round < 2; round++)
      for (const [i, p] of products.entries()) expect(p()).toEqual(copied[i]);
    // three packings, made in the first round and read in the second
    expect(residentFloats().top - residentFloats().free).toBeGreaterThan(held);
    unpin();
    expect(residentFloats()).toEqual(before);
  });

  it('sgemm over k in two calls, the second going on from C with B elsewhere, gives the bits of one call', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 1, max: 70 }),
        fc.integer({ min: 1, max: 45 }),
        fc.nat(),
        fc.nat(),
        (M, K, N, cut, seed) => {
          const at = cut % (K + 1);
          const rng = new Rng(seed);
          const [pa, pb, pb2, p1, p2, p3, p4] = regions(M * K, K * N, K * N, M * N, M * N, M * N, M * N);
          const h = heap();
          for (let i = 0; i < M * K; i++) h[pa + i] = rng.normal();
          for (let i = 0; i < K * N; i++) h[pb + i] = rng.normal();
          // B's rows from `at` on, at the same row index, in a second place
          h.fill(Number.NaN, pb2, pb2 + at * N);
          h.set(h.subarray(pb + at * N, pb + K * N), pb2 + at * N);
          // causal P V after `off` earlier positions, all of the first part among them
          const off = at + (seed % 5);
          sgemm(p1, N, pa, K, 1, pb, N, 0, M, K, N, false, false);
          sgemm(p2, N, pa, K, 1, pb, N, 0, M, K, N, false, false, Causal.kUpTo, off);
          h.fill(Number.NaN, pb + at * N, pb + K * N);
          // the first `at` steps of k, then the rest from the second place, going on from what
          // the first left in C
          const rest = (c: number, causal: number, offset: number) =>
            sgemm(c, N, pa + at, K, 1, pb2 + at * N, N, 0, M, K - at, N, false, false, causal, offset, true);
          sgemm(p3, N, pa, K, 1, pb, N, 0, M, at, N, false, false);
          rest(p3, Causal.none, 0);
          sgemm(p4, N, pa, K, 1, pb, N, 0, M, at, N, false, false);
          rest(p4, Causal.kUpTo, off - at);
          const out = (c: number) => Array.from(h.subarray(c, c + M * N));
          expect(out(p3)).toEqual(out(p1));
          expect(out(p4)).toEqual(out(p2));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('stays correct when linear memory grows between calls', () => {
    const rng = new Rng(9);
    checkGemm(rng, 'NN', 4, 4, 4, false, false);
    checkGemm(rng, 'NN', 600, 64, 1500, false, true);
    checkGemm(rng, 'TN', 5, 6, 7, true, true);
  });
});

function maxAbs(x: ArrayLike<number>, from = 0, to = x.length): number {
  let m = 0;
  for (let i = from; i < to; i++) m = Math.max(m, Math.abs(x[i]!));
  return m;
}

describe('float32 model (SIMD kernels) against the float64 model (scalar kernels)', () => {
  const configs: [string, GptConfig, number][] = [
    [
      'tied, head dim 8',
      { vocabSize: 53, contextLength: 80, nLayer: 2, nHead: 3, dModel: 24, tiedEmbeddings: true },
      71,
    ],
    [
      'untied, head dim 5',
      { vocabSize: 37, contextLength: 40, nLayer: 2, nHead: 4, dModel: 20, tiedEmbeddings: false },
      33,
    ],
    [
      'tied, head dim 32',
      { vocabSize: 70, contextLength: 140, nLayer: 1, nHead: 2, dModel: 64, tiedEmbeddings: true },
      130,
    ],
    [
      'one token',
      { vocabSize: 11, contextLength: 8, nLayer: 1, nHead: 2, dModel: 8, tiedEmbeddings: false },
      1,
    ],
  ];

  it.each(configs)('forward logits and backward gradients agree (%s)', (_name, config, T) => {
    const m64 = Gpt.init(config, 3, 'float64');
    // larger than the init so attention is far from uniform
    for (let i = 0; i < m64.params.length; i++) m64.params[i] = m64.params[i]! * 5;
    const m32 = m64.clone('float32');
    const rng = new Rng(T);
    const tokens = Array.from({ length: T }, () => rng.nextU32() % config.vocabSize);
    const f64 = m64.forward(tokens);
    const f32 = m32.forward(tokens);
    const scale = maxAbs(f64.logits);
    for (let i = 0; i < f64.logits.length; i++) {
      expect(Math.abs(f32.logits[i]! - f64.logits[i]!)).toBeLessThanOrEqual(1e-4 * scale + 1e-6);
    }
    const dl = Float64Array.from({ length: f64.logits.length }, () => rng.normal() / T);
    const g64 = m64.zerosLike();
    const g32 = m32.zerosLike();
    m64.backward(f64.cache, dl, g64);
    m32.backward(f32.cache, Float32Array.from(dl), g32);
    for (const s of m64.layout.specs) {
      const size = s.shape.reduce((a, b) => a * b, 1);
      const ref = maxAbs(g64, s.offset, s.offset + size);
      for (let i = s.offset; i < s.offset + size; i++) {
        const err = Math.abs(g32[i]! - g64[i]!);
        if (err > 1e-3 * ref + 1e-7) expect.fail(`${s.name}[${i - s.offset}]: ${g32[i]} vs ${g64[i]}`);
      }
    }
  });

  it('KV-cache decoding in float32 agrees with the float64 full forward', () => {
    const config = configs[0]![1];
    const m64 = Gpt.init(config, 4, 'float64');
    for (let i = 0; i < m64.params.length; i++) m64.params[i] = m64.params[i]! * 5;
    const m32 = m64.clone('float32');
    const rng = new Rng(8);
    const tokens = Array.from({ length: 30 }, () => rng.nextU32() % config.vocabSize);
    const full = m64.forward(tokens).logits;
    const V = config.vocabSize;
    const kv = newKvCache(m32);
    const rows: Arr[] = [];
    const pre = step(m32, kv, tokens.slice(0, 12), true);
    for (let t = 0; t < 12; t++) rows.push(pre.subarray(t * V, (t + 1) * V));
    for (let t = 12; t < 30; t++) rows.push(step(m32, kv, [tokens[t]!]));
    const scale = maxAbs(full);
    rows.forEach((row, t) => {
      for (let j = 0; j < V; j++) {
        expect(Math.abs(row[j]! - full[t * V + j]!)).toBeLessThanOrEqual(1e-4 * scale + 1e-6);
      }
    });
  });
});

describe('SIMD softmax and GELU', () => {
  it('token logprobs and their gradients match the float64 scalar code, for any vocabulary size', () => {
    const rng = new Rng(21);
    for (const V of [1, 2, 3, 5, 8, 61, 4096, 4099]) {
      for (const spread of [0.1, 5, 60]) {
        const T = 3;
        const l32 = Float32Array.from({ length: T * V }, () => spread * rng.normal());
        const l64 = Float64Array.from(l32);
        const d32 = Float32Array.from({ length: T * V }, () => rng.normal());
        const d64 = Float64Array.from(d32);
        for (let t = 0; t < T; t++) {
          const target = rng.nextU32() % V;
          const want = tokenLogprob(l64, V, t, target);
          const got = tokenLogprob(l32, V, t, target);
          expect(Math.abs(got - want)).toBeLessThanOrEqual(1e-5 * (1 + Math.abs(want)));
          const w = rng.normal();
          expect(logprobAndGrad(d64, l64, V, t, target, w)).toBe(want);
          expect(logprobAndGrad(d32, l32, V, t, target, w)).toBe(got);
        }
        for (let i = 0; i < T * V; i++)
          expect(Math.abs(d32[i]! - d64[i]!)).toBeLessThanOrEqual(1e-5 * (1 + Math.abs(d64[i]!)));
      }
    }
  });

  it('sampling weights exp((x - max) * scale) match the float64 reference, for any vocabulary size and temperature', () => {
    const rng = new Rng(12);
    for (const V of [1, 3, 4, 7, 100, 1025])
      for (const scale of [1, 0.5, 4, 100]) {
        const x = Float32Array.from({ length: V }, () => 6 * rng.normal());
        const want = new Float64Array(V);
        const wantSum = referenceOps.softmaxWeights(want, Float64Array.from(x), scale);
        const got = new Float32Array(V);
        const sum = simdOps.softmaxWeights(got, x, scale);
        for (let j = 0; j < V; j++)
          expect(Math.abs(got[j]! - want[j]!)).toBeLessThanOrEqual(2e-6 * want[j]! + 1e-30);
        expect(Math.max(...got)).toBe(1);
        expect(Math.abs(sum - wantSum)).toBeLessThanOrEqual(1e-6 * wantSum);
      }
  });

  it('GELU and its derivative match the scalar formula, with no overflow at extreme inputs', () => {
    const c = Math.sqrt(2 / Math.PI);
    const xs = [0, 1e-8, -1e-8, 0.5, -0.5, 3, -3, 10, -10, 50, -50, 1e4, -1e4, 3e38, -3e38];
    const rng = new Rng(3);
    for (let i = 0; i < 1000; i++) xs.push(4 * rng.normal());
    const n = xs.length;
    const u = Float32Array.from(xs);
    const g = new Float32Array(n);
    geluF32(g, u, n);
    const dg = Float32Array.from({ length: n }, () => 1);
    geluBackwardF32(dg, u, n);
    for (let i = 0; i < n; i++) {
      const x = u[i]!;
      const th = Math.tanh(c * (x + 0.044715 * x * x * x));
      const want = 0.5 * x * (1 + th);
      const dwant = 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * c * (1 + 3 * 0.044715 * x * x);
      expect(Math.abs(g[i]! - want), `gelu(${x})`).toBeLessThanOrEqual(1e-6 * (1 + Math.abs(want)));
      if (Math.abs(x) < 1e3)
        expect(Math.abs(dg[i]! - dwant), `gelu'(${x})`).toBeLessThanOrEqual(2e-6 * (1 + Math.abs(dwant)));
      else expect(Number.isFinite(dg[i]!)).toBe(true);
    }
  });
});

describe('SIMD LayerNorm and bias sums', () => {
  it('match the float64 reference, forward and backward, for any width', () => {
    const rng = new Rng(31);
    for (const D of [4, 6, 8, 20, 160]) {
      const rows = 5;
      const x = randomF32(rng, rows * D).map((v) => 3 + 2 * v);
      const gain = randomF32(rng, D);
      const bias = randomF32(rng, D);
      const dh = randomF32(rng, rows * D);
      const dx0 = randomF32(rng, rows * D);
      const f64 = (a: Float32Array) => Float64Array.from(a);
      const [out, mean, rstd] = [new Float32Array(rows * D), new Float32Array(rows), new Float32Array(rows)];
      layerNormF32(out, x, mean, rstd, gain, bias, rows);
      const [o64, m64, r64] = [new Float64Array(rows * D), new Float64Array(rows), new Float64Array(rows)];
      layerNorm(o64, f64(x), m64, r64, f64(gain), f64(bias), rows);
      for (let i = 0; i < rows * D; i++)
        expect(Math.abs(out[i]! - o64[i]!)).toBeLessThan(1e-5 * (1 + Math.abs(o64[i]!)));
      const [dx, dg, db] = [dx0.slice(), randomF32(rng, D), randomF32(rng, D)];
      const [dx64, dg64, db64] = [f64(dx), f64(dg), f64(db)];
      layerNormBackwardF32(dx, dh, x, mean, rstd, gain, dg, db, rows);
      layerNormBackward(dx64, f64(dh), f64(x), m64, r64, f64(gain), dg64, db64, rows);
      const close = (a: Float32Array, b: Float64Array) => {
        for (let i = 0; i < a.length; i++)
          expect(Math.abs(a[i]! - b[i]!)).toBeLessThan(1e-4 * (1 + Math.abs(b[i]!)));
      };
      close(dx, dx64);
      close(dg, dg64);
      close(db, db64);
      // bias sums: exactly the scalar loop's (one float32 rounding per add, rows in order)
      const g = randomF32(rng, D);
      const want = g.slice();
      colSumAcc(want, dh, rows);
      colSumAccF32(g, dh, rows);
      expect(Array.from(g)).toEqual(Array.from(want));
    }
  });
});

describe('resident blocks in linear memory', () => {
  it('never overlap, survive scratch use and growth, and give all memory back once freed', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 300_000 }), fc.nat()), { minLength: 1, maxLength: 30 }),
        (specs) => {
          const start = residentFloats();
          const live: { at: number; n: number; mark: number }[] = [];
          for (const [i, [n, r]] of specs.entries()) {
            const at = residentAlloc(n);
            heap().fill(i + 1, at, at + n);
            live.push({ at, n, mark: i + 1 });
            // scratch above the blocks, large enough to grow memory now and then
            const [p] = regions(n * 3);
            heap().fill(-1, p, p + n * 3);
            if (r % 3 === 0) {
              const [gone] = live.splice(r % live.length, 1);
              residentFree(gone!.at, gone!.n);
            }
          }
          for (const b of live) {
            expect(
              heap()
                .subarray(b.at, b.at + b.n)
                .every((x) => x === b.mark),
            ).toBe(true);
          }
          for (const b of live.reverse()) residentFree(b.at, b.n);
          expect(residentFloats()).toEqual(start);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('linear memory that cannot grow', () => {
  it('refuses a block with an error that says what to do, and leaves the blocks as they were', () => {
    const start = residentFloats();
    const small = residentAlloc(1000);
    const held = residentFloats();
    // 2^30 floats are 4 GiB, all a 32-bit WebAssembly memory can address
    expect(() => residentAlloc(2 ** 30)).toThrow(/cannot grow .*maxBatch.*prefixCache\.maxTokens/);
    expect(residentFloats()).toEqual(held);
    residentFree(small, 1000);
    expect(residentFloats()).toEqual(start);
  });
});

describe('attention after past positions (a shared prompt)', () => {
  /**
   * Rows [P, L) of causal attention over all L rows are what attention of those T rows after P past
   * rows gives, and the backward of the full attention fed dY only on those rows is the past form's
   * backward: the same query, key and value gradients on every row. Checked for the float64
   * reference exactly (same sums in the same order) and for the SIMD kernels to float32 rounding,
   * over lengths that do and do not fall on the 4-float vector boundary.
   */
  it.each([
    [1, 1],
    [3, 5],
    [8, 4],
    [13, 22],
    [37, 19],
  ])('P = %i past rows and T = %i new rows match full causal attention', (P, T) => {
    const [D, H] = [16, 4];
    const L = P + T;
    const rng = new Rng(P * 100 + T);
    const qkv = Float64Array.from({ length: L * 3 * D }, () => rng.normal() * 2);
    const dyNew = Float64Array.from({ length: T * D }, () => rng.normal());
    const dyAll = new Float64Array(L * D);
    dyAll.set(dyNew, P * D);
    const full = {
      y: new Float64Array(L * D),
      att: new Float64Array(H * L * L),
      dqkv: new Float64Array(L * 3 * D),
    };
    referenceOps.attention(full.y, full.att, qkv, { t: L, d: D, heads: H });
    referenceOps.attentionBackward(full.dqkv, dyAll, full.att, qkv, { t: L, d: D, heads: H });
    const shape = { t: T, d: D, heads: H, past: P };
    // the float32 ops take float32 arrays, which the loop gives them
    for (const ops of [referenceOps, simdOps as unknown as Ops]) {
      const x = ops.dtype === 'float64' ? qkv : Float32Array.from(qkv);
      const y = ops.alloc(T * D);
      const stride = ops.attentionStride(L);
      const att = ops.alloc(H * T * stride).fill(Number.NaN);
      const dqkv = ops.alloc(L * 3 * D).fill(Number.NaN);
      ops.attention(y, att, x, shape);
      ops.attentionBackward(dqkv, ops.dtype === 'float64' ? dyNew : Float32Array.from(dyNew), att, x, shape);
      const tol = ops.dtype === 'float64' ? 1e-12 : 2e-5;
      const close = (a: number, b: number, scale: number) => Math.abs(a - b) <= tol * (scale + 1);
      for (let i = 0; i < T * D; i++)
        if (!close(y[i]!, full.y[P * D + i]!, 1))
          expect.fail(`${ops.dtype} y[${i}]: ${y[i]} vs ${full.y[P * D + i]}`);
      for (let h = 0; h < H; h++)
        for (let t = 0; t < T; t++)
          for (let s = 0; s < L; s++) {
            const [a, b] = [att[(h * T + t) * stride + s]!, full.att[(h * L + P + t) * L + s]!];
            if (!close(a, b, 1)) expect.fail(`${ops.dtype} att[${h}, ${t}, ${s}]: ${a} vs ${b}`);
          }
      const scale = Math.max(...full.dqkv.map(Math.abs));
      for (let i = 0; i < L * 3 * D; i++)
        if (!close(dqkv[i]!, full.dqkv[i]!, scale))
          expect.fail(`${ops.dtype} dqkv[${i}]: ${dqkv[i]} vs ${full.dqkv[i]}`);
    }
  });
});
