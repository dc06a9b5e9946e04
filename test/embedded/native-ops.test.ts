import { describe, expect, it } from 'vitest';
import { crossEntropy } from '../../src/learner/embedded/losses.js';
import { Trainer } from '../../src/learner/embedded/trainer.js';
import { resolveKernels } from '../../src/nn/backends.js';
import { Gpt, type GptConfig } from '../../src/nn/model.js';
import { nativeOps } from '../../src/nn/native-ops.js';
import { referenceOps } from '../../src/nn/reference-ops.js';
import { simdOps } from '../../src/nn/simd-ops.js';
import { Rng } from '../../src/util/rng.js';

// CI installs onnxruntime-node (.ci/run), so there these tests run, never skip
const loaded = nativeOps();
const missing = typeof loaded === 'string' && process.env.CI !== 'true';
const native = () => {
  if (typeof loaded === 'string') throw new Error(loaded);
  return loaded.ops;
};

/** normal values in a view that starts `skip` floats into its buffer (shared memory if asked) */
function values(rng: Rng, n: number, opts: { skip?: number; shared?: boolean } = {}): Float32Array {
  const skip = opts.skip ?? 0;
  const buffer = opts.shared ? new SharedArrayBuffer((n + skip) * 4) : new ArrayBuffer((n + skip) * 4);
  const x = new Float32Array(buffer, skip * 4, n);
  for (let i = 0; i < n; i++) x[i] = rng.normal();
  return x;
}

function expectClose(got: Float32Array, want: Float64Array, label: string): void {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < want.length; i++)
    expect(Math.abs(got[i]! - want[i]!), `${label} [${i}]`).toBeLessThanOrEqual(
      1e-5 * (1 + Math.abs(want[i]!)),
    );
}

describe.skipIf(missing)('native kernels (onnxruntime-node)', () => {
  it('resolve: auto and native come to native when it loads, and the label names the version', () => {
    expect(resolveKernels('auto').kernels).toBe('native');
    expect(resolveKernels('native').label).toMatch(/^native \(onnxruntime-node \d+\.\d+\.\d+\)$/);
    expect(resolveKernels('wasm')).toEqual({ kernels: 'wasm', label: 'wasm' });
  });

  // shapes a model passes (a layer's projections, the head, a weight gradient), and odd ones
  const shapes = [
    { m: 37, k: 16, n: 48 },
    { m: 1, k: 5, n: 3 },
    { m: 64, k: 128, n: 1 },
    { m: 9, k: 1, n: 7 },
  ];
  for (const operands of ['plain arrays', 'views into shared memory'] as const) {
    const shared = operands !== 'plain arrays';
    it.each(shapes)(`products of $m x $k x $n on ${operands} match the float64 reference`, ({ m, k, n }) => {
      const rng = new Rng(m * 131 + k * 7 + n);
      const ops = native();
      const a = values(rng, m * k, { skip: 3, shared });
      const w = values(rng, k * n, { skip: 5, shared });
      const wt = values(rng, n * k, { skip: 1, shared });
      const bias = values(rng, n, { skip: 2, shared });
      const d = values(rng, m * n, { shared });
      const g0 = values(rng, k * n);
      const f64 = (x: Float32Array) => Float64Array.from(x);

      const want = new Float64Array(m * n);
      referenceOps.matmul(want, f64(a), f64(w), f64(bias), { m, k, n });
      const got = shared ? new Float32Array(new SharedArrayBuffer(m * n * 4)) : new Float32Array(m * n);
      ops.matmul(got, a, w, bias, { m, k, n });
      expectClose(got, want, 'a @ w + bias');

      referenceOps.matmul(want, f64(a), f64(w), null, { m, k, n });
      ops.matmul(got, a, w, null, { m, k, n });
      expectClose(got, want, 'a @ w');

      referenceOps.matmulNT(want, f64(a), f64(wt), { m, k, n });
      ops.matmulNT(got, a, wt, { m, k, n });
      expectClose(got, want, 'a @ wt^T');

      const gWant = f64(g0);
      referenceOps.matmulTNAcc(gWant, f64(a), f64(d), { m, k, n });
      const g = shared ? values(rng, k * n, { shared }) : new Float32Array(k * n);
      g.set(g0);
      ops.matmulTNAcc(g, a, d, { m, k, n });
      expectClose(g, gWant, 'g + a^T @ d');
    });
  }

  it('reads a pinned array where it was when pinned, and the array itself once unpinned', () => {
    const rng = new Rng(4);
    const ops = native();
    const [m, k, n] = [6, 8, 5];
    const params = values(rng, k * n + 10, { shared: true });
    const w = params.subarray(10);
    const a = values(rng, m * k);
    const before = new Float32Array(m * n);
    simdOps.matmul(before, a, w, null, { m, k, n });
    const unpin = ops.pin(params);
    const got = new Float32Array(m * n);
    ops.matmul(got, a, w, null, { m, k, n });
    expectClose(got, Float64Array.from(before), 'pinned');
    unpin();
    w.fill(0);
    ops.matmul(got, a, w, null, { m, k, n });
    expect([...got].every((v) => v === 0)).toBe(true);
  });

  it('leaves rowwise products (decoding) to the WebAssembly kernels, bit for bit', () => {
    const rng = new Rng(5);
    const [m, k, n] = [3, 32, 40];
    const a = values(rng, m * k);
    const wt = values(rng, n * k);
    const got = new Float32Array(m * n);
    const want = new Float32Array(m * n);
    native().matmulNT(got, a, wt, { m, k, n, rowwise: true });
    simdOps.matmulNT(want, a, wt, { m, k, n, rowwise: true });
    expect(got).toEqual(want);
  });

  const config: GptConfig = {
    vocabSize: 64,
    contextLength: 32,
    nLayer: 2,
    nHead: 2,
    dModel: 32,
    tiedEmbeddings: true,
  };
  const batch = (seed: number) => {
    const rng = new Rng(seed);
    return Array.from({ length: 6 }, () => ({
      tokens: Array.from({ length: 24 }, () => rng.nextU32() % config.vocabSize),
    }));
  };
  /** the weights after three supervised steps from the same start */
  const trained = async (kernels: 'wasm' | 'native', workers: number) => {
    const model = Gpt.init(config, 3);
    const trainer = new Trainer(model, { lr: 1e-2, workers, kernels });
    const losses: number[] = [];
    try {
      for (let s = 0; s < 3; s++) losses.push((await trainer.step(batch(s), crossEntropy)).loss);
    } finally {
      await trainer.close();
    }
    return { params: model.params, losses };
  };

  it('train the model in place, the same bits from the same seed, close to the WebAssembly kernels', async () => {
    const [a, b, wasm] = [await trained('native', 1), await trained('native', 1), await trained('wasm', 1)];
    expect(a.params).toEqual(b.params);
    expect(a.losses).toEqual(b.losses);
    expect(a.params).not.toEqual(Gpt.init(config, 3).params);
    for (let s = 0; s < 3; s++) expect(Math.abs(a.losses[s]! - wasm.losses[s]!)).toBeLessThan(1e-4);
  });

  it('train on gradient workers (weights in shared memory) as on one thread, up to rounding', async () => {
    const [pooled, again, single] = [
      await trained('native', 2),
      await trained('native', 2),
      await trained('native', 1),
    ];
    expect(pooled.params).toEqual(again.params);
    for (let s = 0; s < 3; s++) expect(Math.abs(pooled.losses[s]! - single.losses[s]!)).toBeLessThan(1e-4);
    let worst = 0;
    for (let i = 0; i < single.params.length; i++)
      worst = Math.max(worst, Math.abs(pooled.params[i]! - single.params[i]!));
    expect(worst).toBeLessThan(1e-4);
  });
});

describe.runIf(typeof loaded === 'string')('without onnxruntime-node', () => {
  it('auto comes to wasm, and native is an error that says how to install it', () => {
    expect(resolveKernels('auto')).toEqual({ kernels: 'wasm', label: 'wasm' });
    expect(() => resolveKernels('native')).toThrow(
      /npm install --no-save --ignore-scripts onnxruntime-node@1.30/,
    );
  });
});
