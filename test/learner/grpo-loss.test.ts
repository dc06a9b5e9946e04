/**
 * The GRPO loss options the training loop adds: the ratio at the sampling temperature and
 * per-token advantages. Gradients against central differences in float64.
 */
import { describe, expect, it } from 'vitest';
import { type GrpoSequence, grpoLossAndGrad, sequenceLogprobs } from '../../src/learner/embedded/losses.js';
import { Gpt, type GptConfig } from '../../src/nn/model.js';
import { Rng } from '../../src/util/rng.js';

const config: GptConfig = {
  vocabSize: 40,
  contextLength: 16,
  nLayer: 1,
  nHead: 2,
  dModel: 8,
  tiedEmbeddings: true,
};

function batchAt(model: Gpt, T: number, perToken: boolean): GrpoSequence[] {
  const rng = new Rng(3);
  const V = config.vocabSize;
  return [0, 1].map((i) => {
    const tokens = Array.from({ length: 12 }, () => rng.nextU32() % V);
    const tempered = model.forward(tokens).logits.map((x) => x / T);
    const lp = sequenceLogprobs(tempered, V, tokens);
    // old logprobs a little off the current ones, away from the clip edges
    const oldLogprobs = Array.from(lp, (v, t) => v + [0.05, -0.08, 0.02][(t + i) % 3]!);
    const advantage = perToken ? tokens.map((_, t) => (t < 7 ? 0.9 : -0.6) * (i ? -1 : 1)) : i ? -0.8 : 1.1;
    return { tokens, lossMask: tokens.map((_, t) => (t >= 4 ? 1 : 0)), oldLogprobs, advantage };
  });
}

describe('GRPO loss at a sampling temperature, with per-token advantages', () => {
  it.each([
    { T: 1, perToken: true },
    { T: 0.6, perToken: false },
    { T: 0.6, perToken: true },
  ])('gradient matches central differences (T=$T, per-token=$perToken)', ({ T, perToken }) => {
    const model = Gpt.init(config, 5, 'float64');
    for (let i = 0; i < model.params.length; i++) model.params[i] = model.params[i]! * 3;
    const reference = model.clone();
    const batch = batchAt(model, T, perToken);
    const opts = { clipEps: 0.2, klCoef: 0.05, temperature: T };
    const grads = model.zerosLike() as Float64Array;
    const stats = grpoLossAndGrad(model, reference, batch, opts, grads);
    // the old logprobs sit within 0.08 of the tempered current ones: no ratio is clipped
    expect(stats.clipFrac).toBe(0);
    expect(Math.abs(stats.meanRatio - 1)).toBeLessThan(0.1);
    const loss = () => grpoLossAndGrad(model, reference, batch, opts, null).loss;
    const rng = new Rng(9);
    const h = 1e-5;
    for (let k = 0; k < 40; k++) {
      const i = rng.nextU32() % model.params.length;
      const p0 = model.params[i]!;
      model.params[i] = p0 + h;
      const up = loss();
      model.params[i] = p0 - h;
      const down = loss();
      model.params[i] = p0;
      const num = (up - down) / (2 * h);
      expect(Math.abs(num - grads[i]!)).toBeLessThanOrEqual(5e-8 + 1e-5 * Math.abs(num));
    }
  });

  it('a scalar advantage and the same value per token give the same loss and gradient', () => {
    const model = Gpt.init(config, 6, 'float64');
    const scalar = batchAt(model, 1, false);
    const spread = scalar.map((s) => ({ ...s, advantage: s.tokens.map(() => s.advantage as number) }));
    const g1 = model.zerosLike();
    const g2 = model.zerosLike();
    const a = grpoLossAndGrad(model, model, scalar, {}, g1);
    const b = grpoLossAndGrad(model, model, spread, {}, g2);
    expect(b.loss).toBe(a.loss);
    expect(Array.from(g2)).toEqual(Array.from(g1));
  });
});

describe('GRPO loss over rollouts that share a prompt', () => {
  /**
   * Four rollouts: three continue one 6-token prompt (the third also carries its own reference
   * logprobs), one has a prompt of its own. Running the prompt once must give the loss parts and
   * gradient of running every sequence whole, at a temperature and with per-token advantages.
   */
  it('gives the loss and gradient of whole sequences, in float64 to rounding', () => {
    const model = Gpt.init({ ...config, previousTokenEmbedding: true }, 7, 'float64');
    for (let i = 0; i < model.params.length; i++) model.params[i] = model.params[i]! * 3;
    const reference = model.clone();
    const rr = new Rng(4);
    for (let i = 0; i < reference.params.length; i++)
      reference.params[i] = reference.params[i]! + 0.05 * rr.normal();
    const V = config.vocabSize;
    const rng = new Rng(10);
    const prompt = Array.from({ length: 6 }, () => rng.nextU32() % V);
    const rest = (n: number) => Array.from({ length: n }, () => rng.nextU32() % V);
    const tokenLists = [[...prompt, ...rest(7)], [...prompt, ...rest(3)], [...prompt, ...rest(9)], rest(12)];
    const batch: GrpoSequence[] = tokenLists.map((tokens, i) => {
      const lp = sequenceLogprobs(model.forward(tokens).logits, V, tokens);
      return {
        tokens,
        // the first target sits right after the prompt: its row is a rollout's own
        lossMask: tokens.map((_, t) => (t >= 7 ? 1 : 0)),
        oldLogprobs: Array.from(lp, (v, t) => v + 0.03 * ((t + i) % 3)),
        advantage: tokens.map((_, t) => (t % 2 ? 0.8 : -0.5) * (i + 1)),
        ...(i === 2
          ? { refLogprobs: Array.from(sequenceLogprobs(reference.forward(tokens).logits, V, tokens)) }
          : {}),
      };
    });
    const opts = { clipEps: 0.2, klCoef: 0.05, temperature: 0.7 };
    const [shared, whole] = [model.zerosLike(), model.zerosLike()];
    const a = grpoLossAndGrad(model, reference, batch, opts, shared);
    const b = grpoLossAndGrad(model, reference, batch, { ...opts, sharePrompts: false }, whole);
    for (const k of ['loss', 'pgLoss', 'kl', 'clipFrac', 'meanRatio', 'tokens'] as const)
      expect(a[k]).toBeCloseTo(b[k], 12);
    let worst = 0;
    let scale = 0;
    for (let i = 0; i < whole.length; i++) {
      worst = Math.max(worst, Math.abs(shared[i]! - whole[i]!));
      scale = Math.max(scale, Math.abs(whole[i]!));
    }
    expect(scale).toBeGreaterThan(0);
    expect(worst).toBeLessThan(1e-12 * scale);
  });
});
