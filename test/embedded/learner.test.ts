import { describe, expect, it } from 'vitest';
import {
  crossEntropy,
  crossEntropyLossAndGrad,
  type GrpoSequence,
  grpoLoss,
  sequenceLogprobs,
} from '../../src/learner/embedded/losses.js';
import { Trainer } from '../../src/learner/embedded/trainer.js';
import { Gpt, type GptConfig } from '../../src/nn/model.js';
import { Tokenizer } from '../../src/nn/tokenizer.js';
import { EmbeddedPolicy } from '../../src/policy/embedded/policy.js';
import { sample } from '../../src/policy/embedded/sampler.js';

const config: GptConfig = {
  vocabSize: 40,
  contextLength: 32,
  nLayer: 2,
  nHead: 2,
  dModel: 32,
  tiedEmbeddings: true,
};

/** four prompts, two completions each: one rewarded (+1), one penalised (-1) */
function fixedGroups(): { tokens: number[]; mask: number[]; advantage: number }[] {
  const out: { tokens: number[]; mask: number[]; advantage: number }[] = [];
  for (let p = 0; p < 4; p++) {
    const prompt = [1, 2 + p, 7, 3 + p];
    const good = [10 + p, 20, 21, 22 + p, 0];
    const bad = [30 - p, 11, 25, 26, 0];
    for (const [completion, advantage] of [
      [good, 1],
      [bad, -1],
    ] as const) {
      out.push({
        tokens: [...prompt, ...completion],
        mask: [...prompt.map(() => 0), ...completion.map(() => 1)],
        advantage,
      });
    }
  }
  return out;
}

function completionLogprob(model: Gpt, tokens: number[], mask: number[]): number {
  const lp = sequenceLogprobs(model.forward(tokens).logits, model.config.vocabSize, tokens);
  let s = 0;
  for (let t = 0; t < tokens.length; t++) if (mask[t]) s += lp[t]!;
  return s;
}

function toBatch(model: Gpt, groups: ReturnType<typeof fixedGroups>): GrpoSequence[] {
  return groups.map((g) => ({
    tokens: g.tokens,
    lossMask: g.mask,
    oldLogprobs: Array.from(
      sequenceLogprobs(model.forward(g.tokens).logits, model.config.vocabSize, g.tokens),
    ),
    advantage: g.advantage,
  }));
}

describe('GRPO on the training core', () => {
  it('lowers the loss on a fixed batch and moves logprobs towards rewarded completions', async () => {
    const model = Gpt.init(config, 1);
    const reference = model.clone();
    const groups = fixedGroups();
    const learner = new Trainer(model, { lr: 3e-3 }, reference);
    const loss = grpoLoss();
    const before = groups.map((g) => completionLogprob(model, g.tokens, g.mask));
    // PPO-style: several updates against the same old logprobs
    const batch = toBatch(model, groups);
    const losses: number[] = [];
    for (let i = 0; i < 6; i++) losses.push((await learner.step(batch, loss)).loss);
    const final = await learner.step(batch, loss);
    expect(final.loss).toBeLessThan(losses[0]!);
    expect(losses[0]!).toBeCloseTo(0, 6); // on-policy start: ratios 1, advantages sum to 0
    expect(final.kl).toBeGreaterThan(0);
    expect(final.meanRatio).not.toBe(1);
    // fresh rounds (new old-logprobs each time)
    for (let round = 0; round < 6; round++) await learner.step(toBatch(model, groups), loss);
    const after = groups.map((g) => completionLogprob(model, g.tokens, g.mask));
    const saved = Gpt.deserialize(model.serialize({ step: learner.optimizer.steps })).model;
    expect(Buffer.from(saved.params.buffer).equals(Buffer.from(model.params.buffer))).toBe(true);
    for (const [i, g] of groups.entries()) {
      if (g.advantage > 0) expect(after[i]!).toBeGreaterThan(before[i]!);
      else expect(after[i]!).toBeLessThan(before[i]!);
    }
  });

  it('clips: once ratios leave [0.8, 1.2] the clip fraction rises and the gradient vanishes for them', async () => {
    const model = Gpt.init(config, 2);
    const learner = new Trainer(model, { lr: 2e-2, maxGradNorm: 10 }, model.clone());
    const batch = toBatch(model, fixedGroups());
    const first = await learner.step(batch, grpoLoss());
    expect(first.clipFrac).toBe(0);
    let last = first;
    for (let i = 0; i < 15; i++) last = await learner.step(batch, grpoLoss());
    expect(last.clipFrac).toBeGreaterThan(0.5);
    expect(last.gradNorm).toBeLessThan(first.gradNorm);
  });

  it('gives the same update for the same seed and batch, whether shared prompts run once or not', async () => {
    const run = async (sharePrompts: boolean): Promise<Float32Array> => {
      const model = Gpt.init(config, 9);
      const learner = new Trainer(model, { lr: 1e-3 }, model.clone());
      const batch = toBatch(model, fixedGroups());
      await learner.step(batch, grpoLoss({ sharePrompts }));
      await learner.step(batch, grpoLoss({ sharePrompts }));
      return model.params as Float32Array;
    };
    const a = await run(true);
    const b = await run(true);
    expect(Buffer.from(a.buffer).equals(Buffer.from(b.buffer))).toBe(true);
    const c = await run(false);
    let worst = 0;
    for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - c[i]!));
    expect(worst).toBeLessThan(1e-5);
  });
});

describe('supervised training', () => {
  it('lowers the cross-entropy on a tiny corpus', async () => {
    const text = 'the cat sat on the mat. the dog sat on the log. '.repeat(4);
    const tok = Tokenizer.train(text, 280);
    const ids = tok.encode(text);
    const c: GptConfig = { ...config, vocabSize: tok.vocabSize, contextLength: 48 };
    const model = Gpt.init(c, 3);
    const batch = [0, 10, 20].map((o) => ({ tokens: ids.slice(o, o + 40) }));
    const start = crossEntropyLossAndGrad(model, batch, null).loss;
    const trainer = new Trainer(model, { lr: 1e-2 });
    for (let i = 0; i < 40; i++) await trainer.step(batch, crossEntropy);
    const end = crossEntropyLossAndGrad(model, batch, null).loss;
    expect(start).toBeGreaterThan(Math.log(tok.vocabSize) - 0.5);
    expect(end).toBeLessThan(start / 3);
  });
});

describe('embedded policy', () => {
  it('completes chats with token ids and logprobs, deterministically per seed', async () => {
    const tok = Tokenizer.train('<|user|>list the files<|end|><|assistant|>[ls()]<|end|>', 300);
    const model = Gpt.init({ ...config, vocabSize: tok.vocabSize, contextLength: 64 }, 4);
    const policy = new EmbeddedPolicy(model, tok, { defaultMaxTokens: 12 });
    const req = { messages: [{ role: 'user' as const, content: 'list the files' }], seed: 5 };
    const a = await policy.complete(req);
    const b = await policy.complete(req);
    expect(a.tokenIds).toEqual(b.tokenIds);
    expect(a.logprobs).toEqual(b.logprobs);
    expect(a.tokenIds!.length).toBe(a.logprobs!.length);
    expect(a.usage?.completionTokens).toBe(a.tokenIds!.length);
    const direct = sample(model, policy.promptIds(req.messages), {
      seed: 5,
      maxTokens: 12,
      stopIds: [tok.special('<|end|>')],
    });
    expect(a.tokenIds).toEqual(direct.tokenIds);
    expect(a.text).toBe(tok.decode(direct.tokenIds.filter((id) => !tok.isSpecial(id))));
  });
});
