/**
 * The supervised anchor's data: demonstrations of freshly generated training tasks, a function of
 * (seed, round), rendered by the learner with the assistant's tokens as
 * the only targets; and its loss, whose coefficient scales the gradient and nothing else.
 */
import { describe, expect, it } from 'vitest';
import { buildDemonstrations } from '../../src/learner/embedded/demonstrations.js';
import { EmbeddedLearner } from '../../src/learner/embedded/learner.js';
import { crossEntropyLoss, lossAndGrad } from '../../src/learner/embedded/losses.js';
import { BASE_CHECKPOINT_DIR } from '../../src/nn/checkpoint.js';
import { Gpt } from '../../src/nn/model.js';
import { anchorData } from '../../src/train/anchor.js';

describe('supervised anchor', () => {
  const learner = EmbeddedLearner.open(BASE_CHECKPOINT_DIR, {
    gradientWorkers: 1,
    samplerWorkers: 1,
    samplerDir: '',
    name: 'embedded:test',
  });

  it('renders a chat with the assistant tokens as the only targets', async () => {
    const [demo] = await buildDemonstrations({ seed: 3, tasks: 1 });
    const data = learner.renderSupervised(demo!.messages);
    expect(data).toHaveLength(1);
    const { tokens, weights } = data[0]!;
    expect(weights).toHaveLength(tokens.length);
    expect(weights[0]).toBe(0);
    // the targets decode to the assistant messages, in order, and nothing else
    const targets = tokens.filter((_, i) => weights[i]! > 0);
    const said = demo!.messages.filter((m) => m.role === 'assistant').map((m) => m.content);
    const text = learner.tokenizer.decode(targets);
    let at = 0;
    for (const s of said) {
      const i = text.indexOf(s, at);
      expect(i).toBeGreaterThanOrEqual(at);
      at = i + s.length;
    }
    expect(new Set(weights)).toEqual(new Set([0, 1]));
  });

  it('cuts a chat longer than the context into the windows the policy sees', () => {
    const user = 'please list the files in my home folder and then tell me about them. '.repeat(60);
    const chat = [
      { role: 'system' as const, content: 'You call functions.' },
      { role: 'user' as const, content: user },
      { role: 'assistant' as const, content: '[ls()]' },
      { role: 'user' as const, content: user },
      { role: 'assistant' as const, content: '[pwd()]' },
    ];
    const data = learner.renderSupervised(chat);
    expect(data.length).toBeGreaterThan(1);
    for (const d of data) {
      expect(d.tokens.length).toBeLessThanOrEqual(learner.model.config.contextLength);
      expect(d.weights.some((w) => w > 0)).toBe(true);
    }
  });

  it('is a function of (seed, round)', async () => {
    // (the generator never reuses a test scenario: test/envs/mini.test.ts)
    const a = await anchorData(learner, 1, 2, 4);
    expect(await anchorData(learner, 1, 2, 4)).toEqual(a);
    expect(await anchorData(learner, 1, 3, 4)).not.toEqual(a);
    expect(await anchorData(learner, 2, 2, 4)).not.toEqual(a);
  });

  it('the coefficient scales the gradient and leaves the reported loss alone', () => {
    const model = Gpt.init(
      { vocabSize: 30, contextLength: 16, nLayer: 1, nHead: 2, dModel: 16, tiedEmbeddings: true },
      5,
      'float64',
    );
    const batch = [
      { tokens: [1, 4, 9, 2, 7, 3], lossMask: [0, 0, 1, 1, 0.1, 1] },
      { tokens: [5, 5, 6, 8], lossMask: [0, 1, 1, 1] },
    ];
    const g1 = model.zerosLike();
    const g3 = model.zerosLike();
    const s1 = lossAndGrad(crossEntropyLoss(1), model, null, batch, g1);
    const s3 = lossAndGrad(crossEntropyLoss(2.5), model, null, batch, g3);
    expect(s3).toEqual(s1);
    for (let i = 0; i < g1.length; i++) expect(g3[i]!).toBeCloseTo(2.5 * g1[i]!, 12);
    expect(g1.some((x) => x !== 0)).toBe(true);
  });
});
