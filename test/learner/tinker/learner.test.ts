/**
 * TinkerLearner and TinkerPolicy in process against the Tinker test server on loopback, with the
 * oracle model (mini ground truth in Qwen's tool-call JSON, the Qwen3 tokenizer): rollouts in the
 * hermes and the native format succeed and pack into one training sequence each (every next prompt
 * extends the last prompt and completion, token for token); a training step sends ppo datums whose
 * advantages are 0 off the sampled tokens (the datums the server received are read); after a step
 * the KL to the base is the k3 mean recomputed from the oracle's logprobs; save records tinker:// paths that a new learner loads as
 * its first request. Also the config rules of `--learner tinker` and the paper's config file.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAdapter } from '../../../src/agent/formats/index.js';
import { rollout } from '../../../src/bfcl/rollout.js';
import { loadMiniSuite } from '../../../src/envs/mini/index.js';
import { TinkerLearner } from '../../../src/learner/tinker/learner.js';
import { nativeCallsOf, promptIdsOf } from '../../../src/policy/tinker.js';
import { TinkerClient } from '../../../src/tinker/client.js';
import { resolveConfig, toolFormat } from '../../../src/train/config.js';
import type { TinkerLearnerRecord } from '../../../src/train/record.js';
import { RolloutSampler } from '../../../src/train/sampler.js';
import { packSteps } from '../../../src/train/sequences.js';
import { asRecordedRenderer } from '../../../src/train/train.js';
import { qwen3Renderer } from '../../support/render.js';
import { oracleLogprob, oracleModel } from '../../support/tinker-oracle.js';
import { fastOptions, startTinkerServer, type TinkerTestServer } from '../../support/tinker-server.js';

const data = loadMiniSuite();
const renderer = qwen3Renderer();
let server: TinkerTestServer;
let skyrl: TinkerTestServer;

async function learner(resumeFrom?: string, on = server): Promise<TinkerLearner> {
  const client = await TinkerClient.connect(fastOptions(on.url));
  return TinkerLearner.open(
    { client, renderer, baseModel: 'Qwen/Qwen3-8B', loraRank: 4, klToBase: true, seed: 3 },
    resumeFrom,
  );
}

describe('TinkerLearner and TinkerPolicy', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    server = await startTinkerServer({ model: oracleModel(data, renderer) });
    skyrl = await startTinkerServer({ flavour: 'skyrl', model: oracleModel(data, renderer) });
  });
  afterAll(async () => {
    await server?.close();
    await skyrl?.close();
  });

  for (const [format, flavour] of [
    ['hermes', 'hosted'],
    ['native', 'hosted'],
    ['hermes', 'skyrl'],
  ] as const) {
    it(`${format} on a ${flavour}-like server: rollouts succeed, each one training sequence; a ppo step and a save/load`, async () => {
      const on = flavour === 'skyrl' ? skyrl : server;
      const l = await learner(undefined, on);
      const policy = await l.samplingPolicy();
      // the shortest base task: the oracle fails a share of its turns, so fewer turns succeed more often
      const task = data.tasks
        .filter((t) => t.category === 'base')
        .reduce((a, b) => (b.question.length < a.question.length ? b : a));
      const played = await Promise.all(
        [0, 1, 2, 3, 4, 5, 6, 7].map(async (i) => {
          const rs = new RolloutSampler(policy, 100 + i);
          const t = await rollout(task, data, rs, {
            format: formatAdapter(format),
            sampling: { temperature: 1, maxTokens: 256 },
            maxStepsPerTurn: 2,
          });
          return { t, steps: rs.steps };
        }),
      );
      expect(played.some((p) => p.t.reward === 1)).toBe(true);
      for (const p of played) {
        expect(p.t.turns.flatMap((x) => x.steps).filter((s) => s.parseError).length).toBe(0);
        // every step's prompt extends the one before: the rollout is one sequence
        const packed = packSteps(
          p.steps,
          p.steps.map(() => 1),
        );
        expect(packed.length).toBe(1);
      }
      const datums = played.flatMap((p, i) =>
        packSteps(
          p.steps,
          p.steps.map(() => (i % 2 === 0 ? 1 : -1)),
        ),
      );
      const loss = { clipEps: 0.2, klCoef: 0.001, temperature: 1 };
      const fb = await l.forwardBackward(datums, loss);
      const n = datums.reduce((s, d) => s + d.weights.filter((w) => w > 0).length, 0);
      expect(fb.tokens).toBe(n);
      // sampler and trainer agree on the weights the samples came from; the policy is the base: no KL
      expect(fb.meanRatio).toBeCloseTo(1, 5);
      expect(fb.kl).toBe(0);
      // the datums as the server received them: shifted targets, the advantage (+-1 / N, KL 0 here)
      // on every sampled token and 0 on every prompt and tool-output token
      const model = on.models.get(l.modelId)!;
      const received = model.passes.flatMap((x) => x.input.data);
      expect(model.passes.every((x) => x.input.loss_fn === 'ppo')).toBe(true);
      expect(received).toHaveLength(datums.length);
      received.forEach((w, i) => {
        const d = datums[i]!;
        expect(w.loss_fn_inputs.target_tokens?.data).toEqual(d.tokens.slice(1));
        const adv = w.loss_fn_inputs.advantages!.data;
        const sampled = d.weights.slice(1).map((x) => x > 0);
        expect(sampled.some(Boolean) && sampled.some((x) => !x)).toBe(true);
        adv.forEach((a, t) => {
          // float32 on the protobuf wire
          if (sampled[t]) expect(Math.fround(a)).toBe(Math.fround(d.advantages[t + 1]! / n));
          else expect(a).toBe(0);
        });
      });
      const step = await l.optimStep({ lr: 1e-5 });
      expect(step.step).toBe(1);
      expect(l.version).toBe(1);
      // after the step the policy has moved from the base: KL > 0, the k3 mean over the trained
      // tokens of the oracle's logprobs at step 1 (the trainer) against step 0 (the base)
      const moved = await l.forwardBackward(datums, loss);
      let k3 = 0;
      for (const d of datums)
        d.weights.forEach((w, t) => {
          if (w <= 0) return;
          const diff =
            oracleLogprob(d.tokens[t - 1]!, d.tokens[t]!, 0) -
            oracleLogprob(d.tokens[t - 1]!, d.tokens[t]!, 1);
          k3 += Math.exp(diff) - diff - 1;
        });
      expect(moved.kl).toBeGreaterThan(1e-6);
      expect(Math.abs(moved.kl - k3 / n)).toBeLessThan(1e-3 * (k3 / n));
      expect(moved.meanRatio).not.toBeCloseTo(1, 3);
      const dir = join(mkdtempSync(join(tmpdir(), 'seal-tinker-ckpt-')), 'round-0001');
      await l.save(dir);
      const saved = JSON.parse(readFileSync(join(dir, 'tinker.json'), 'utf8'));
      expect(saved.state).toMatch(/^tinker:\/\//);
      await policy.close();
      await l.close();
      const again = await learner(dir, on);
      expect(again.version).toBe(1);
      expect(on.models.get(again.modelId)!.ran[0]).toMatchObject({ seqId: 1, route: 'load_weights' });
      expect(on.models.get(again.modelId)!.step).toBe(1);
      await again.close();
    });
  }

  it('KL prefills started ahead (prepare) are the ones the pass uses: none sent again, the same statistics', async () => {
    const datum = (shift: number) => ({
      tokens: [1, 2, 3, 4, 5].map((t) => t + shift),
      weights: [0, 0, 1, 1, 1],
      samplingLogprobs: [0, 0, -1, -2, -1.5],
      advantages: [0, 0, 1, 1, 1],
    });
    const loss = { clipEps: 0.2, klCoef: 0.5, temperature: 1 };
    const prefills = () => server.samples.filter((x) => x.promptLogprobs).length;
    // a step first, so that the trainer has moved from the base and each datum's KL is its own
    const moved = async () => {
      const l = await learner();
      await l.forwardBackward([datum(30)], { ...loss, klCoef: 0 });
      await l.optimStep({ lr: 0.05 });
      return l;
    };
    const cold = await moved();
    const before = prefills();
    const plain = await cold.forwardBackward([datum(0), datum(7)], loss);
    expect(prefills() - before).toBe(2);
    await cold.close();

    const warm = await moved();
    // one of the two ahead, and one sequence never trained (forgotten, costs only its prefill)
    warm.prepare([datum(0), datum(20)]);
    await new Promise((r) => setTimeout(r, 200));
    const ahead = prefills();
    const early = await warm.forwardBackward([datum(0), datum(7)], loss);
    expect(prefills() - ahead).toBe(1);
    expect(plain.kl).toBeGreaterThan(0);
    expect(early).toEqual(plain);
    expect(warm.baseTokens).toBe(15);
    await warm.close();
  });

  it("a pass's statistics come from the trainer's logprobs of exactly the trained targets", async () => {
    const l = await learner();
    const fb = await l.forwardBackward(
      [
        {
          tokens: [1, 2, 3, 4],
          weights: [0, 0, 1, 1],
          samplingLogprobs: [0, 0, -1, -2],
          advantages: [0, 0, 2, 2],
        },
      ],
      { clipEps: 0.2, klCoef: 0, temperature: 1 },
    );
    // the oracle's logprob of a token after another, at the base weights
    const lp = (prev: number, tok: number) => -(0.05 + ((prev * 31 + tok * 17) % 97) / 40);
    const ratios = [Math.exp(lp(2, 3) + 1), Math.exp(lp(3, 4) + 2)];
    const surrogate = ratios.map((r) => Math.max(-2 * r, -2 * Math.min(Math.max(r, 0.8), 1.2)));
    expect(fb.tokens).toBe(2);
    expect(fb.meanRatio).toBeCloseTo((ratios[0]! + ratios[1]!) / 2, 5);
    expect(fb.pgLoss).toBeCloseTo((surrogate[0]! + surrogate[1]!) / 2, 5);
    // sampler against trainer: k3 of KL(sampler || trainer) is r - 1 - log r, r = trainer / sampler;
    // the sampler's entropy estimate the mean of -logprob it sampled with (1 and 2)
    const k3 = ratios.map((r) => r - 1 - Math.log(r));
    expect(fb.samplerKl).toBeCloseTo((k3[0]! + k3[1]!) / 2, 6);
    expect(fb.samplerKl).toBeGreaterThan(0);
    expect(fb.samplerEntropy).toBeCloseTo(1.5, 12);
    await l.close();
  });
});

describe('native tool calls from Qwen text', () => {
  it('takes <tool_call> JSON blocks as calls and leaves a broken block in the text', () => {
    const ok = nativeCallsOf('<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>');
    expect(ok.calls).toEqual([
      { id: 'call_0', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
    ]);
    expect(ok.text).toBe('');
    const bad = nativeCallsOf('<tool_call>{"name": f}</tool_call>');
    expect(bad.calls).toEqual([]);
    expect(bad.text).toContain('<tool_call>');
  });

  it("keeps the model's ints beyond 2^53 and integral floats, for the checker and the next prompt", () => {
    const written = '{"big": 12345678901234567890, "x": 30.0, "n": 30, "y": 1.5, "s": "é"}';
    const { calls } = nativeCallsOf(`<tool_call>\n{"name": "f", "arguments": ${written}}\n</tool_call>`);
    expect(calls[0]!.function.arguments).toBe('{"big":12345678901234567890,"x":30.0,"n":30,"y":1.5,"s":"é"}');
    // the native decoder hands the checker the values Python's json.loads reads
    expect(formatAdapter('native').decode({ text: '', toolCalls: calls, latencyMs: 0 })).toEqual({
      kind: 'calls',
      calls: ["f(big=12345678901234567890,x=30.0,n=30,y=1.5,s='é')"],
    });
    // the next prompt prints the call as the model wrote it (Qwen's template: the arguments' tojson)
    const ids = promptIdsOf(renderer, {
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: calls },
        { role: 'tool', tool_call_id: 'call_0', content: 'ok' },
      ],
    });
    expect(renderer.decode(ids)).toContain(`{"name": "f", "arguments": ${written}}`);
  });
});

describe('--learner tinker settings', () => {
  it('defaults temperature to 1, refuses another, needs a base model, chooses the format by renderer', () => {
    const { config } = resolveConfig(undefined, { learner: 'tinker', baseModel: 'Qwen/Qwen3-8B' });
    expect(config.temperature).toBe(1);
    expect(config.anchorCoef).toBe(0);
    expect(config.maxTokens).toBe(1024);
    // a family renderer (qwen3 for Qwen3-8B) declares tools and reads calls in its own form
    expect(toolFormat(config)).toBe('native');
    const tinker = (o: Record<string, unknown>) =>
      toolFormat(resolveConfig(undefined, { learner: 'tinker', baseModel: 'Qwen/Qwen3-8B', ...o }).config);
    expect(tinker({ renderer: 'hf_template' })).toBe('hermes');
    expect(tinker({ renderer: 'role_colon' })).toBe('hermes');
    expect(tinker({ renderer: 'gpt_oss_low_reasoning' })).toBe('native');
    expect(tinker({ baseModel: 'acme/unknown-7b' })).toBe('hermes');
    expect(tinker({ format: 'hermes' })).toBe('hermes');
    // what a family renderer cannot do is refused before anything runs
    expect(() => tinker({ thinking: 'off' })).toThrow(/qwen3 renderer has none.*_disable_thinking/);
    expect(() => tinker({ renderer: 'role_colon', format: 'native' })).toThrow(
      /role_colon .* no tool-call convention/,
    );
    // a run recorded before renderers existed continues with the HF template and tools as text
    const recorded = { kind: 'tinker', format: 'hermes' } as unknown as TinkerLearnerRecord;
    expect(toolFormat(asRecordedRenderer(config, recorded))).toBe('hermes');
    expect(asRecordedRenderer(config, recorded).renderer).toBe('hf_template');
    expect(asRecordedRenderer(config, { ...recorded, renderer: 'qwen3' })).toBe(config);
    const embedded = resolveConfig(undefined, {}).config;
    expect(asRecordedRenderer(embedded, undefined)).toBe(embedded);
    expect(() => resolveConfig(undefined, { learner: 'tinker', baseModel: 'x', temperature: 0.7 })).toThrow(
      /temperature 1/,
    );
    expect(() => resolveConfig(undefined, { learner: 'tinker' })).toThrow(/--base-model/);
    expect(() => resolveConfig(undefined, { learner: 'tinker', baseModel: 'x', format: 'compact' })).toThrow(
      /hermes or native/,
    );
    expect(() => resolveConfig(undefined, { format: 'native' })).toThrow(/learner tinker/);
    expect(toolFormat(resolveConfig(undefined, {}).config)).toBe('compact');
  });

  it("the paper's BFCL config file loads: 32 tasks x 8, clip 0.2, LoRA", () => {
    const { config } = resolveConfig(
      join(import.meta.dirname, '..', '..', '..', 'configs', 'tinker-bfcl-paper.yaml'),
      {},
    );
    expect(config).toMatchObject({
      learner: 'tinker',
      suite: 'bfcl',
      tasksPerRound: 32,
      groupSize: 8,
      clipEps: 0.2,
      klCoef: 0.001,
      wMin: 0.5,
      wMax: 2,
      temperature: 1,
      maxSteps: 20,
      loraRank: 32,
    });
  });
});
