/**
 * The learning math of the Tinker learner: the datums it sends, taken under Tinker's own loss
 * definitions (sums over tokens; test/support/tinkerLoss.ts), give the embedded learner's gradient
 * on the same rollouts. Checked on the shipped embedded checkpoint, in the float32 the learner
 * trains in, with rollouts the embedded policy plays on the mini suite as `seal train` plays them.
 *
 * The wire is the truth: the same comparison from the forward_backward bodies the Tinker test
 * server received from a TinkerLearner, in both wire forms (JSON and protobuf), every chunk of a
 * step, the KL's base logprobs fetched from the server as the learner fetches them. What the
 * server read is all the recomputation sees, so a sign, mask, normaliser or KL term lost anywhere
 * between the loss and the socket gives another gradient.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAdapter } from '../../../src/agent/formats/index.js';
import { rollout } from '../../../src/bfcl/rollout.js';
import { CallRecorder } from '../../../src/bfcl/trajectory.js';
import { loadMiniSuite } from '../../../src/envs/mini/index.js';
import { EmbeddedLearner } from '../../../src/learner/embedded/learner.js';
import {
  crossEntropyLoss,
  type GrpoSequence,
  grpoLoss,
  lossAndGrad,
  sequenceLogprobs,
  tokenLogprob,
} from '../../../src/learner/embedded/losses.js';
import type { PpoLoss, SupervisedDatum, TrainingDatum } from '../../../src/learner/learner.js';
import { TinkerLearner } from '../../../src/learner/tinker/learner.js';
import {
  checkTinkerPpoLoss,
  chunkDatums,
  klAdvantage,
  policyDatums,
  supervisedDatums,
  TinkerDatumError,
  type TinkerForwardBackwardInput,
  trainedTokens,
} from '../../../src/learner/tinker/seal-datums.js';
import { crossEntropyStats, policyStats } from '../../../src/learner/tinker/stats.js';
import { loadCheckpoint } from '../../../src/nn/checkpoint.js';
import type { Gpt } from '../../../src/nn/model.js';
import { TinkerClient } from '../../../src/tinker/client.js';
import { PROTO_CONTENT_TYPE } from '../../../src/tinker/proto.js';
import type { ForwardBackwardRequestJson } from '../../../src/tinker/schemas.js';
import { anchorData } from '../../../src/train/anchor.js';
import { RolloutSampler } from '../../../src/train/sampler.js';
import { aggregateRollouts, type LossAggregation, packSteps } from '../../../src/train/sequences.js';
import { mixSeed, Rng } from '../../../src/util/rng.js';
import { qwen3Renderer } from '../../support/render.js';
import {
  fastOptions,
  startTinkerServer,
  type TinkerTestModel,
  type TinkerTestServer,
} from '../../support/tinker-server.js';
import { tinkerForwardBackward } from '../../support/tinkerLoss.js';

const CHECKPOINT = 'checkpoints/embedded-base';

/** what the embedded learner hands its loss (learner/embedded/learner.ts) */
const toSequence = (d: TrainingDatum): GrpoSequence => ({
  tokens: d.tokens,
  lossMask: d.weights,
  oldLogprobs: d.samplingLogprobs,
  advantage: d.advantages,
});

/** the embedded learner's loss and gradient of one forwardBackward(data, loss) */
function embeddedPass(model: Gpt, reference: Gpt | null, data: readonly TrainingDatum[], loss: PpoLoss) {
  const grads = model.zerosLike();
  const stats = lossAndGrad(grpoLoss(loss), model, reference, data.map(toSequence), grads);
  return { stats, grads };
}

/** Tinker's summed loss and gradient over forward_backward calls accumulated before one step */
function tinkerPass(model: Gpt, inputs: Parameters<typeof tinkerForwardBackward>[1][]) {
  const grads = model.zerosLike();
  let loss = 0;
  const logprobs: number[][] = [];
  for (const input of inputs) {
    const r = tinkerForwardBackward(model, input, grads);
    loss += r.loss;
    logprobs.push(...r.logprobs);
  }
  return { loss, logprobs, grads };
}

/** max |a - b| relative to max |a| */
function relDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d = 0;
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    d = Math.max(d, Math.abs(a[i]! - b[i]!));
    m = Math.max(m, Math.abs(a[i]!));
  }
  return m === 0 ? d : d / m;
}

/** a and b agree to `rel` of their size (float32 sums in another order) */
function expectClose(a: number, b: number, rel = 1e-5): void {
  expect(Math.abs(a - b), `${a} vs ${b}`).toBeLessThanOrEqual(
    rel * Math.max(Math.abs(a), Math.abs(b), 1e-12),
  );
}

/** a forward_backward body as the server read it, in the form the loss oracle takes */
function bodyInput(body: ForwardBackwardRequestJson): TinkerForwardBackwardInput {
  const fb = body.forward_backward_input;
  const config = fb.loss_fn_config;
  return {
    data: fb.data.map((d) => ({
      model_input: {
        chunks: [
          {
            type: 'encoded_text',
            tokens: d.model_input.chunks.flatMap((c) => (c.type === 'encoded_text' ? c.tokens : [])),
          },
        ],
      },
      loss_fn_inputs:
        d.loss_fn_inputs as unknown as TinkerForwardBackwardInput['data'][number]['loss_fn_inputs'],
    })),
    loss_fn: fb.loss_fn as TinkerForwardBackwardInput['loss_fn'],
    ...(config && 'clip_low_threshold' in config
      ? {
          loss_fn_config: {
            clip_low_threshold: config.clip_low_threshold!,
            clip_high_threshold: config.clip_high_threshold!,
          },
        }
      : {}),
  };
}

/**
 * The embedded model behind the Tinker test server: its logprobs are the embedded checkpoint's
 * (what the KL term's base prefills return); it samples nothing a test reads.
 */
function embeddedServerModel(base: Gpt): TinkerTestModel {
  const V = base.config.vocabSize;
  return {
    logprobs(input, targets) {
      if (input.length === 0) return [];
      const { logits } = base.forward(input);
      return targets.map((y, i) => tokenLogprob(logits, V, i, y));
    },
    sample(_prompt, params) {
      return { tokens: [0], logprobs: [0], stopReason: params.maxTokens <= 1 ? 'length' : 'stop' };
    },
  };
}

function norm(a: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * a[i]!;
  return Math.sqrt(s);
}

/**
 * Float32 (the learner's dtype) sums in another order: the two gradients agree to 3e-6 of the
 * largest entry (1.95e-6 at most measured on these rollouts; the float32 WebAssembly kernels may
 * round otherwise on another build), where a mask shifted by one token, a chunk normalised alone,
 * a missing clip or a missing KL term are off by 0.1 or more (WRONG; each case checks its own)
 */
const TOL = 3e-6;
const WRONG = 0.1;

describe('Tinker datums: worked example', () => {
  // two rollouts: one sequence of tokens 5 6 | 7 8 (prompt | completion, advantage 0.5), one of
  // 5 6 | 9 (advantage -1). N = 3 trained tokens. token-mean: A / 3. rollout-mean: aggregateRollouts
  // scales rollout i by N / (R n_i): 3 / (2 x 2) = 0.75 and 3 / (2 x 1) = 1.5, then / 3.
  const a: TrainingDatum = {
    tokens: [5, 6, 7, 8],
    weights: [0, 0, 1, 1],
    samplingLogprobs: [0, 0, -0.25, -1],
    advantages: [0, 0, 0.5, 0.5],
  };
  const b: TrainingDatum = {
    tokens: [5, 6, 9],
    weights: [0, 0, 1],
    samplingLogprobs: [0, 0, -2],
    advantages: [0, 0, -1],
  };
  const loss: PpoLoss = { clipEps: 0.2, klCoef: 0, temperature: 1 };

  it('shifts tokens, zeroes prompt targets and divides by the batch tokens (token-mean)', () => {
    const out = policyDatums(aggregateRollouts([[a], [b]], 'token-mean'), loss);
    expect(out.loss_fn).toBe('ppo');
    expect(out.loss_fn_config).toEqual({ clip_low_threshold: 0.8, clip_high_threshold: 1.2 });
    expect(out.data).toHaveLength(2);
    const [da, db] = out.data;
    expect(da!.model_input.chunks).toEqual([{ type: 'encoded_text', tokens: [5, 6, 7] }]);
    expect(da!.loss_fn_inputs.target_tokens).toEqual({ data: [6, 7, 8], dtype: 'int64', shape: [3] });
    expect(da!.loss_fn_inputs.logprobs).toEqual({ data: [0, -0.25, -1], dtype: 'float32', shape: [3] });
    expect(da!.loss_fn_inputs.advantages!.data).toEqual([0, 0.5 / 3, 0.5 / 3]);
    expect(da!.loss_fn_inputs.weights).toBeUndefined();
    expect(db!.model_input.chunks[0].tokens).toEqual([5, 6]);
    expect(db!.loss_fn_inputs.target_tokens.data).toEqual([6, 9]);
    expect(db!.loss_fn_inputs.advantages!.data).toEqual([0, -1 / 3]);
  });

  it('folds rollout-mean into the advantages: each rollout weighs the same', () => {
    const out = policyDatums(aggregateRollouts([[a], [b]], 'rollout-mean'), loss);
    const [da, db] = out.data.map((d) => d.loss_fn_inputs.advantages!.data);
    expect(da![1]).toBeCloseTo(0.125, 15); // 0.5 x 0.75 / 3
    expect(da![2]).toBeCloseTo(0.125, 15);
    expect(db![1]).toBeCloseTo(-0.5, 15); // -1 x 1.5 / 3
    // each rollout's summed |advantage| is 1/R of the whole: rollouts weigh the same
    expect(da![1]! + da![2]!).toBeCloseTo(-db![1]! / 2, 15);
  });

  it('sends a 0/1 mask as weights when asked, and unclipped importance sampling', () => {
    const out = policyDatums([a, b], loss, { mask: true, lossFn: 'importance_sampling' });
    expect(out.loss_fn).toBe('importance_sampling');
    expect(out.loss_fn_config).toBeUndefined();
    expect(out.data[0]!.loss_fn_inputs.weights!.data).toEqual([0, 1, 1]);
    expect(out.data[1]!.loss_fn_inputs.weights!.data).toEqual([0, 1]);
  });

  it('folds the k3 KL into the advantages from the base logprobs', () => {
    // q = -0.25, base -0.75: 0.1 x (e^-0.5 - 1) = -0.039346934; q = -1, base -0.5: 0.1 x (e^0.5 - 1)
    expect(klAdvantage(-0.25, -0.75, 0.1)).toBeCloseTo(-0.0393469340287367, 15);
    expect(klAdvantage(-1, -0.5, 0.1)).toBeCloseTo(0.0648721270700128, 15);
    // to first order the cookbook's -klCoef (q - base)
    expect(klAdvantage(-1, -1.001, 0.1)).toBeCloseTo(-0.1 * 0.001, 7);
    const base = [
      [null, -3, -0.75, -0.5],
      [null, -3, -2],
    ];
    const out = policyDatums([a, b], { ...loss, klCoef: 0.1 }, { base });
    const adv = out.data[0]!.loss_fn_inputs.advantages!.data;
    expect(adv[0]).toBe(0); // a prompt target: neither policy gradient nor KL
    expect(adv[1]).toBeCloseTo((0.5 - 0.0393469340287367) / 3, 15);
    expect(adv[2]).toBeCloseTo((0.5 + 0.0648721270700128) / 3, 15);
    expect(out.data[1]!.loss_fn_inputs.advantages!.data[1]).toBeCloseTo(-1 / 3, 15); // base = q: no KL
  });

  it('normalises cross_entropy weights to coef x the weighted token mean', () => {
    const sup: SupervisedDatum[] = [
      { tokens: [1, 2, 3], weights: [0, 1, 0.5] },
      { tokens: [4, 5], weights: [0, 1] },
    ];
    // W = 2.5, coef 2: weights x 0.8
    const out = supervisedDatums(sup, { coef: 2 });
    expect(out.loss_fn).toBe('cross_entropy');
    expect(out.data.map((d) => d.loss_fn_inputs.weights!.data)).toEqual([[0.8, 0.4], [0.8]]);
    expect(out.data.map((d) => d.loss_fn_inputs.target_tokens.data)).toEqual([[2, 3], [5]]);
  });

  it('splits into chunks by datums and tokens, in order', () => {
    const input = policyDatums([a, b, a, b, a], loss);
    expect(chunkDatums(input, { maxDatums: 2 }).map((c) => c.data.length)).toEqual([2, 2, 1]);
    // inputs of 3, 2, 3, 2, 3 tokens under 5 per chunk
    expect(chunkDatums(input, { maxDatums: 10, maxTokens: 5 }).map((c) => c.data.length)).toEqual([2, 2, 1]);
    const chunks = chunkDatums(input, { maxDatums: 2 });
    expect(chunks.flatMap((c) => c.data)).toEqual(input.data);
    expect(chunks.every((c) => c.loss_fn === 'ppo' && c.loss_fn_config === input.loss_fn_config)).toBe(true);
  });

  it('refuses what Tinker cannot compute, saying what to do', () => {
    expect(() => policyDatums([a], { ...loss, temperature: 0.7 })).toThrow(/temperature 1/);
    expect(() => policyDatums([a], { ...loss, klCoef: 0.01 })).toThrow(/base model logprobs.*klCoef 0/);
    expect(() => policyDatums([a], { ...loss, klCoef: 0.01 }, { base: [[null, 1, null, 1]] })).toThrow(
      /no base logprob for trained token 2/,
    );
    expect(() => policyDatums([{ ...a, weights: [1, 0, 1, 1] }], loss)).toThrow(TinkerDatumError);
    expect(() => policyDatums([{ ...a, advantages: [0, 1] }], loss)).toThrow(/same length/);
    expect(() => chunkDatums(policyDatums([a], loss), { maxDatums: 0 })).toThrow(/maxDatums/);
    // a command checks before it samples
    expect(() => checkTinkerPpoLoss({ ...loss, temperature: 0.7 }, false)).toThrow(/temperature 1/);
    expect(() => checkTinkerPpoLoss({ ...loss, klCoef: 0.001 }, false)).toThrow(/klCoef 0/);
    expect(() => checkTinkerPpoLoss({ ...loss, klCoef: 0.001 }, true)).not.toThrow();
    expect(() => supervisedDatums([{ tokens: [1], weights: [0] }], { coef: 1 })).toThrow(/needs a target/);
  });
});

describe('Tinker datums on the embedded model: the same gradient as the embedded learner', () => {
  let model: Gpt;
  let rollouts: TrainingDatum[][];
  let anchor: SupervisedDatum[];
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'seal-tinker-math-'));
    const learner = EmbeddedLearner.open(CHECKPOINT, {
      gradientWorkers: 1,
      samplerWorkers: 1,
      samplerDir: join(dir, 'sampler'),
      name: 'tinker-math',
    });
    try {
      const data = loadMiniSuite();
      const format = formatAdapter('compact');
      const recorder = new CallRecorder(data);
      const sampler = await learner.samplingPolicy();
      const tasks = data.split.train.slice(0, 2).map((id) => data.byId.get(id)!);
      // 2 tasks x 2 samples at temperature 1, each step its own advantage (as credit.ts gives turns)
      const adv = [0.9, -1.3, 0.4, -0.6];
      rollouts = [];
      for (const [g, task] of tasks.entries())
        for (let s = 0; s < 2; s++) {
          const rs = new RolloutSampler(sampler, mixSeed(7, g, s));
          await rollout(task, data, rs, {
            format,
            sampling: { temperature: 1, topP: 1, maxTokens: 24 },
            onParseError: 'reply',
            maxStepsPerTurn: 1,
            recorder,
          });
          const a = adv[g * 2 + s]!;
          rollouts.push(
            packSteps(
              rs.steps,
              rs.steps.map((_, i) => (i % 3 === 2 ? 0 : a * (1 + 0.1 * i))),
            ),
          );
        }
      anchor = await anchorData(learner, 3, 1, 2);
    } finally {
      await learner.close();
    }
    // the embedded learner's own dtype and kernels: float32 on WebAssembly
    model = loadCheckpoint(CHECKPOINT).model;
  }, 120_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** a policy that has moved away from the base, and the rollouts as its own samples (lp = q) */
  function movedPolicy(mode: LossAggregation = 'rollout-mean'): { policy: Gpt; data: TrainingDatum[] } {
    const policy = model.clone();
    const rng = new Rng(5);
    for (let i = 0; i < policy.params.length; i++) policy.params[i] = policy.params[i]! + 0.02 * rng.normal();
    const V = policy.config.vocabSize;
    const data = aggregateRollouts(rollouts, mode).map((d) => ({
      ...d,
      samplingLogprobs: Array.from(sequenceLogprobs(policy.forward(d.tokens).logits, V, d.tokens)),
    }));
    return { policy, data };
  }

  it('plays real rollouts: several sequences, prompts and tool outputs untrained', () => {
    const all = rollouts.flat();
    expect(rollouts.every((r) => r.length > 0)).toBe(true);
    const n = trainedTokens(all);
    const read = all.reduce((s, d) => s + d.tokens.length, 0);
    expect(n).toBeGreaterThan(20);
    expect(read).toBeGreaterThan(3 * n); // most of each sequence is prompt / tool output
  });

  for (const mode of ['token-mean', 'rollout-mean'] as const satisfies readonly LossAggregation[])
    it(`ppo sums to the embedded token-mean loss and gradient (${mode}, klCoef 0)`, () => {
      const data = aggregateRollouts(rollouts, mode);
      const loss: PpoLoss = { clipEps: 0.2, klCoef: 0, temperature: 1 };
      const emb = embeddedPass(model, null, data, loss);
      const input = policyDatums(data, loss);
      const tin = tinkerPass(model, [input]);
      expect(norm(emb.grads)).toBeGreaterThan(1e-3);
      expect(relDiff(emb.grads, tin.grads)).toBeLessThan(TOL);
      expectClose(tin.loss, emb.stats.loss);
      // the float32 sampler and the float64 trainer agree: no token is clipped, ratios ~1
      expect(emb.stats.clipFrac).toBe(0);
      // importance_sampling is the same there
      const is = tinkerPass(model, [policyDatums(data, loss, { lossFn: 'importance_sampling' })]);
      expect(relDiff(emb.grads, is.grads)).toBeLessThan(TOL);
      // and what the learner reports from the returned logprobs is what the embedded learner reports
      const stats = policyStats(data, tin.logprobs, loss);
      for (const k of ['loss', 'pgLoss', 'kl', 'clipFrac', 'meanRatio', 'tokens'] as const)
        expectClose(stats[k], emb.stats[k]);
    });

  it('a mask one token off (the target shift forgotten) gives another gradient', () => {
    const data = aggregateRollouts(rollouts, 'rollout-mean');
    const loss: PpoLoss = { clipEps: 0.2, klCoef: 0, temperature: 1 };
    const emb = embeddedPass(model, null, data, loss);
    // each trained token's weight, sampling logprob and advantage moved onto the token before it
    const early = <T>(xs: readonly T[], zero: T) => [...xs.slice(1), zero];
    const shifted = data.map((d) => ({
      ...d,
      weights: early(d.weights, 0),
      samplingLogprobs: early(d.samplingLogprobs, 0),
      advantages: early(d.advantages, 0),
    }));
    const tin = tinkerPass(model, [policyDatums(shifted, loss)]);
    expect(relDiff(emb.grads, tin.grads)).toBeGreaterThan(WRONG);
    // the right mask on the same data agrees
    expect(relDiff(emb.grads, tinkerPass(model, [policyDatums(data, loss)]).grads)).toBeLessThan(TOL);
  });

  it('clips the same tokens as the embedded PPO-clip (ppo thresholds 1 -/+ clipEps)', () => {
    // move the sampling logprobs of every third trained token by +-0.5 (ratios e^-+0.5, outside 0.8..1.2)
    const rng = new Rng(11);
    let k = 0;
    const moved = aggregateRollouts(rollouts, 'rollout-mean').map((d) => ({
      ...d,
      samplingLogprobs: d.samplingLogprobs.map((q, t) =>
        d.weights[t]! > 0 && k++ % 3 === 0 ? q + (rng.next() < 0.5 ? -0.5 : 0.5) : q,
      ),
    }));
    const loss: PpoLoss = { clipEps: 0.2, klCoef: 0, temperature: 1 };
    const emb = embeddedPass(model, null, moved, loss);
    expect(emb.stats.clipFrac).toBeGreaterThan(0.05);
    const tin = tinkerPass(model, [policyDatums(moved, loss)]);
    expect(relDiff(emb.grads, tin.grads)).toBeLessThan(TOL);
    expectClose(tin.loss, emb.stats.loss);
    expect(policyStats(moved, tin.logprobs, loss).clipFrac).toBe(emb.stats.clipFrac);
    // unclipped, the gradient is another: the thresholds are what makes them agree
    const is = tinkerPass(model, [policyDatums(moved, loss, { lossFn: 'importance_sampling' })]);
    expect(relDiff(emb.grads, is.grads)).toBeGreaterThan(WRONG);
  });

  it('two half batches accumulate to the one-batch gradient; halves normalised alone do not', () => {
    const data = aggregateRollouts(rollouts, 'rollout-mean');
    const loss: PpoLoss = { clipEps: 0.2, klCoef: 0, temperature: 1 };
    const input = policyDatums(data, loss);
    const one = tinkerPass(model, [input]);
    const halves = chunkDatums(input, { maxDatums: Math.ceil(input.data.length / 2) });
    expect(halves).toHaveLength(2);
    const two = tinkerPass(model, halves);
    expect(relDiff(one.grads, two.grads)).toBeLessThan(TOL);
    expectClose(two.loss, one.loss);
    // the wrong way: each half normalised by its own token count
    const h = Math.ceil(data.length / 2);
    const wrong = tinkerPass(model, [
      policyDatums(data.slice(0, h), loss),
      policyDatums(data.slice(h), loss),
    ]);
    expect(relDiff(one.grads, wrong.grads)).toBeGreaterThan(WRONG);
  });

  it('folds the k3 KL to the base model: its exact gradient on fresh samples', () => {
    const { policy, data } = movedPolicy();
    const V = policy.config.vocabSize;
    const base = data.map((d) => [
      null,
      ...Array.from(sequenceLogprobs(model.forward(d.tokens).logits, V, d.tokens)).slice(1),
    ]);
    const loss: PpoLoss = { clipEps: 0.2, klCoef: 0.05, temperature: 1 };
    const emb = embeddedPass(policy, model, data, loss);
    expect(emb.stats.kl).toBeGreaterThan(1e-3);
    const tin = tinkerPass(policy, [policyDatums(data, loss, { base })]);
    expect(relDiff(emb.grads, tin.grads)).toBeLessThan(TOL);
    // the KL part is not negligible: without it the gradient is another
    const noKl = embeddedPass(policy, null, data, { ...loss, klCoef: 0 });
    expect(relDiff(emb.grads, noKl.grads)).toBeGreaterThan(WRONG);
    const stats = policyStats(data, tin.logprobs, loss, base);
    for (const k of ['loss', 'pgLoss', 'kl', 'clipFrac', 'meanRatio', 'tokens'] as const)
      expectClose(stats[k], emb.stats[k]);
  });

  it('cross_entropy datums give the supervised anchor its gradient (coef x weighted token mean)', () => {
    expect(anchor.length).toBeGreaterThan(0);
    const coef = 0.7;
    const grads = model.zerosLike();
    const emb = lossAndGrad(
      crossEntropyLoss(coef),
      model,
      null,
      anchor.map((d) => ({ tokens: d.tokens, lossMask: d.weights })),
      grads,
    );
    const input = supervisedDatums(anchor, { coef });
    const tin = tinkerPass(model, chunkDatums(input, { maxDatums: 1 }));
    expect(relDiff(grads, tin.grads)).toBeLessThan(TOL);
    expectClose(tin.loss, coef * emb.loss);
    const stats = crossEntropyStats(anchor, tin.logprobs);
    expectClose(stats.loss, emb.loss);
    expect(stats.tokens).toBe(emb.tokens);
  });

  describe('the wire is the truth: the forward_backward bodies the server received give the embedded gradient', () => {
    let server: TinkerTestServer;

    beforeAll(async () => {
      // three datums per forward_backward request: a step goes as several chunks
      server = await startTinkerServer({
        model: embeddedServerModel(model),
        clientConfig: { fwdbwd_max_chunk_len: 3 },
      });
    });

    afterAll(async () => {
      await server?.close();
    });

    /** a TinkerLearner on the test server speaking `wire`, with the KL's base session when asked */
    async function wireLearner(wire: 'json' | 'proto', klToBase: boolean): Promise<TinkerLearner> {
      const client = await TinkerClient.connect(fastOptions(server.url, { wire }));
      return TinkerLearner.open({
        client,
        renderer: qwen3Renderer(),
        baseModel: 'Qwen/Qwen3-8B',
        loraRank: 4,
        klToBase,
      });
    }

    /** `send` on a fresh learner; the forward_backward bodies the server read for it, in seq order */
    async function received(
      wire: 'json' | 'proto',
      klToBase: boolean,
      send: (l: TinkerLearner) => Promise<unknown>,
    ): Promise<TinkerForwardBackwardInput[]> {
      const l = await wireLearner(wire, klToBase);
      try {
        await send(l);
      } finally {
        await l.close();
      }
      const records = server.requests.filter(
        (r) => r.route === 'forward_backward' && r.fwdbwd?.model_id === l.modelId,
      );
      // the form asked for is the form that went: the recomputation reads each form's decoding
      for (const r of records)
        expect(r.contentType.includes(PROTO_CONTENT_TYPE), r.contentType).toBe(wire === 'proto');
      // each seq id once (no resend here): a duplicate would count a chunk twice
      const seqs = records.map((r) => r.seqId);
      expect(new Set(seqs).size).toBe(seqs.length);
      return records.sort((a, b) => a.seqId! - b.seqId!).map((r) => bodyInput(r.fwdbwd!));
    }

    /** the summed gradient of the bodies on `on`, as the service computes it */
    function serviceGradient(on: Gpt, bodies: readonly TinkerForwardBackwardInput[]) {
      const grads = on.zerosLike();
      let loss = 0;
      for (const b of bodies) loss += tinkerForwardBackward(on, b, grads).loss;
      return { grads, loss };
    }

    for (const wire of ['json', 'proto'] as const) {
      it(`ppo, rollout-mean, klCoef 0 (${wire} bodies)`, async () => {
        const data = aggregateRollouts(rollouts, 'rollout-mean');
        const loss: PpoLoss = { clipEps: 0.2, klCoef: 0, temperature: 1 };
        const bodies = await received(wire, false, (l) => l.forwardBackward(data, loss));
        expect(bodies.length).toBe(Math.ceil(data.length / 3));
        expect(bodies.every((b) => b.loss_fn === 'ppo')).toBe(true);
        const emb = embeddedPass(model, null, data, loss);
        const tin = serviceGradient(model, bodies);
        expect(norm(emb.grads)).toBeGreaterThan(1e-3);
        expect(relDiff(emb.grads, tin.grads)).toBeLessThan(TOL);
        expectClose(tin.loss, emb.stats.loss);
      });

      it(`ppo, token-mean, the k3 KL to the base from the server's prefills (${wire} bodies)`, async () => {
        const { policy, data } = movedPolicy('token-mean');
        const loss: PpoLoss = { clipEps: 0.2, klCoef: 0.05, temperature: 1 };
        const bodies = await received(wire, true, (l) => l.forwardBackward(data, loss));
        const emb = embeddedPass(policy, model, data, loss);
        expect(emb.stats.kl).toBeGreaterThan(1e-3);
        const tin = serviceGradient(policy, bodies);
        // the gradient, not the loss: the folded KL has the k3 term's gradient, not its value
        expect(relDiff(emb.grads, tin.grads)).toBeLessThan(TOL);
        // the KL part is in the bodies: without it the gradient is another
        const noKl = embeddedPass(policy, null, data, { ...loss, klCoef: 0 });
        expect(relDiff(noKl.grads, tin.grads)).toBeGreaterThan(1e-3);
      });

      it(`cross_entropy of the supervised anchor (${wire} bodies)`, async () => {
        const coef = 0.7;
        const bodies = await received(wire, false, (l) => l.forwardBackwardCrossEntropy(anchor, { coef }));
        expect(bodies.every((b) => b.loss_fn === 'cross_entropy')).toBe(true);
        const grads = model.zerosLike();
        const emb = lossAndGrad(
          crossEntropyLoss(coef),
          model,
          null,
          anchor.map((d) => ({ tokens: d.tokens, lossMask: d.weights })),
          grads,
        );
        const tin = serviceGradient(model, bodies);
        expect(norm(grads)).toBeGreaterThan(1e-3);
        expect(relDiff(grads, tin.grads)).toBeLessThan(TOL);
        expectClose(tin.loss, coef * emb.loss);
      });
    }
  });
});
