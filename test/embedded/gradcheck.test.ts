import { describe, expect, it } from 'vitest';
import {
  crossEntropyLossAndGrad,
  type GrpoSequence,
  grpoLossAndGrad,
  sequenceLogprobs,
} from '../../src/learner/embedded/losses.js';
import { Gpt, type GptConfig } from '../../src/nn/model.js';
import { nativeOps } from '../../src/nn/native-ops.js';
import { Rng } from '../../src/util/rng.js';
import { randomPreviousMap } from '../support/embedded.js';

const base: Omit<GptConfig, 'tiedEmbeddings'> = {
  vocabSize: 50,
  contextLength: 16,
  nLayer: 2,
  nHead: 2,
  dModel: 16,
};

function seqs(rng: Rng, n: number, len: number, V: number): number[][] {
  return Array.from({ length: n }, () => Array.from({ length: len }, () => rng.nextU32() % V));
}

/** indices to check: a few from every parameter tensor, plus the rows of the used tokens */
function sampleIndices(model: Gpt, rng: Rng, perTensor: number, tokens: number[]): number[] {
  const out: number[] = [];
  for (const s of model.layout.specs) {
    const size = s.shape.reduce((a, b) => a * b, 1);
    for (let i = 0; i < perTensor; i++) out.push(s.offset + (rng.nextU32() % size));
  }
  const D = model.config.dModel;
  for (const t of tokens.slice(0, 3)) {
    out.push(model.layout.wte + t * D + (rng.nextU32() % D));
  }
  return out;
}

function check(model: Gpt, loss: () => number, grads: Float64Array, idx: number[]): number {
  const h = 1e-5;
  let worst = 0;
  for (const i of idx) {
    const p0 = model.params[i]!;
    model.params[i] = p0 + h;
    const up = loss();
    model.params[i] = p0 - h;
    const down = loss();
    model.params[i] = p0;
    const num = (up - down) / (2 * h);
    const ana = grads[i]!;
    const err = Math.abs(num - ana) / Math.max(1e-6, Math.abs(num) + Math.abs(ana));
    if (Math.abs(num - ana) > 1e-8) worst = Math.max(worst, err);
    const name = model.layout.specs.filter((sp) => sp.offset <= i).at(-1)?.name;
    expect(Math.abs(num - ana), `${name} @${i}: numeric ${num} vs analytic ${ana}`).toBeLessThanOrEqual(
      5e-8 + 1e-5 * Math.max(Math.abs(num), Math.abs(ana)),
    );
  }
  return worst;
}

describe.each([
  { tied: false, previous: false },
  { tied: true, previous: false },
  { tied: true, previous: true },
])(
  'gradient check in float64 (tied embeddings: $tied, previous-token embedding: $previous)',
  ({ tied, previous }) => {
    const config: GptConfig = { ...base, tiedEmbeddings: tied, previousTokenEmbedding: previous };

    it('cross-entropy backward matches central differences', () => {
      const model = Gpt.init(config, 7, 'float64');
      // larger init than GPT-2's so every path carries signal
      for (let i = 0; i < model.params.length; i++) model.params[i] = model.params[i]! * 3;
      randomPreviousMap(model, 77, 0.2);
      const rng = new Rng(1);
      const data = seqs(rng, 2, 12, config.vocabSize);
      const batch = data.map((tokens, i) => ({
        tokens,
        lossMask: tokens.map((_, t) => (i === 1 && t < 4 ? 0 : 1)),
      }));
      const grads = model.zerosLike() as Float64Array;
      crossEntropyLossAndGrad(model, batch, grads);
      const loss = () => crossEntropyLossAndGrad(model, batch, null).loss;
      check(model, loss, grads, sampleIndices(model, rng, 6, data[0]!));
    });

    it('GRPO loss backward (clip + k3 KL) matches central differences', () => {
      const model = Gpt.init(config, 11, 'float64');
      for (let i = 0; i < model.params.length; i++) model.params[i] = model.params[i]! * 3;
      randomPreviousMap(model, 77, 0.2);
      const reference = model.clone();
      const rr = new Rng(5);
      for (let i = 0; i < reference.params.length; i++)
        reference.params[i] = reference.params[i]! + 0.05 * rr.normal();
      const rng = new Rng(2);
      const data = seqs(rng, 3, 14, config.vocabSize);
      // the last two share their first 4 tokens with the first, which the loss then runs once
      for (const d of data.slice(1)) d.splice(0, 4, ...data[0]!.slice(0, 4));
      // log-ratio offsets chosen away from the clip boundaries (ratio 0.8 and 1.2)
      const offsets = [-0.4, -0.05, 0.03, 0.1, 0.5, 0];
      const batch: GrpoSequence[] = data.map((tokens, i) => {
        const lp = sequenceLogprobs(model.forward(tokens).logits, config.vocabSize, tokens);
        return {
          tokens,
          lossMask: tokens.map((_, t) => (t >= 5 ? 1 : 0)),
          oldLogprobs: Array.from(lp, (v, t) => v + offsets[(t + i) % offsets.length]!),
          advantage: [1.3, -0.7, 0.4][i]!,
        };
      });
      const opts = { clipEps: 0.2, klCoef: 0.1 };
      const grads = model.zerosLike() as Float64Array;
      const stats = grpoLossAndGrad(model, reference, batch, opts, grads);
      expect(stats.clipFrac).toBeGreaterThan(0);
      expect(stats.clipFrac).toBeLessThan(1);
      expect(stats.kl).toBeGreaterThan(0);
      const loss = () => grpoLossAndGrad(model, reference, batch, opts, null).loss;
      check(model, loss, grads, sampleIndices(model, rng, 6, data[0]!));
    });
  },
);

// CI installs onnxruntime-node, so there the native kernels are checked, never skipped
const native = nativeOps();
const nativeMissing = typeof native === 'string' && process.env.CI !== 'true';

describe.each(['wasm', 'native'] as const)('float32 %s kernels', (kernels) => {
  it.skipIf(kernels === 'native' && nativeMissing)(
    'give the float64 logits and gradient to float32 precision',
    () => {
      const config: GptConfig = { ...base, tiedEmbeddings: false, previousTokenEmbedding: true };
      const m64 = Gpt.init(config, 3, 'float64');
      randomPreviousMap(m64, 77, 0.2);
      const m32 = m64.clone('float32').withKernels(kernels);
      expect(m32.kernels).toBe(kernels);
      const rng = new Rng(9);
      const batch = seqs(rng, 2, 16, config.vocabSize).map((tokens) => ({ tokens }));
      const logits64 = m64.forward(batch[0]!.tokens, { backward: false }).logits;
      const logits32 = m32.forward(batch[0]!.tokens, { backward: false }).logits;
      let worst = 0;
      for (let i = 0; i < logits64.length; i++)
        worst = Math.max(worst, Math.abs(logits64[i]! - logits32[i]!));
      expect(worst).toBeLessThan(1e-5);
      const g64 = m64.zerosLike();
      const g32 = m32.zerosLike();
      const l64 = crossEntropyLossAndGrad(m64, batch, g64).loss;
      const l32 = crossEntropyLossAndGrad(m32, batch, g32).loss;
      expect(Math.abs(l64 - l32)).toBeLessThan(1e-5);
      let diff = 0;
      let norm = 0;
      for (let i = 0; i < g64.length; i++) {
        diff += (g64[i]! - g32[i]!) ** 2;
        norm += g64[i]! ** 2;
      }
      expect(Math.sqrt(diff / norm)).toBeLessThan(1e-4);
    },
  );
});
