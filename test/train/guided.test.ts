/**
 * The guided update (issue 51, docs/method.md "The guided update"): a rollout sampled under the
 * training interface also trains the prompt the original environment shows for the same actions,
 * its sampling logprobs the sampler's under the interface, so that the learner's ratio is the
 * importance ratio of the policy without the interface over the sampler with it.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatAdapter } from '../../src/agent/formats/index.js';
import { rollout } from '../../src/bfcl/rollout.js';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { EmbeddedLearner } from '../../src/learner/embedded/learner.js';
import { tokenLogprob } from '../../src/learner/embedded/losses.js';
import type { ForwardBackwardResult, PpoLoss, TrainingDatum } from '../../src/learner/learner.js';
import { BASE_CHECKPOINT_DIR, loadCheckpoint } from '../../src/nn/checkpoint.js';
import { EmbeddedPolicy } from '../../src/policy/embedded/policy.js';
import type { Completion, CompletionRequest, Policy } from '../../src/policy/policy.js';
import { trainingContext } from '../../src/seal/interface.js';
import { resolveConfig, type TrainConfig } from '../../src/train/config.js';
import { initialTrainState, runRounds } from '../../src/train/loop.js';
import { RunFolder } from '../../src/train/run-folder.js';
import { fullInterfaceState } from '../support/interface-state.js';

const data = loadMiniSuite();

interface Batch {
  readonly data: TrainingDatum[];
  readonly loss: PpoLoss;
  readonly result: ForwardBackwardResult;
}

/** A tiny seal run in process; every batch the learner is given, in order, with what it said of it. */
async function batches(over: Partial<TrainConfig> = {}): Promise<Batch[]> {
  const { config } = resolveConfig(undefined, {
    method: 'seal',
    rounds: 2,
    tasksPerRound: 3,
    groupSize: 3,
    maxTokens: 64,
    maxSteps: 3,
    validateEvery: 0,
    gradientWorkers: 1,
    samplerWorkers: 1,
    lr: 1e-3,
    anchorCoef: 0,
    schemaCues: 'on',
    errorFeedback: 'on',
    seed: 2,
    ...over,
  });
  const run = new RunFolder(join(mkdtempSync(join(tmpdir(), 'seal-guided-')), 'run'));
  run.create({ format: 'seal-train-run', version: 1, method: config.method, seed: config.seed } as never);
  const learner = EmbeddedLearner.open(BASE_CHECKPOINT_DIR, {
    gradientWorkers: 1,
    samplerWorkers: 1,
    samplerDir: run.path('sampler'),
    name: 'embedded:test',
  });
  const seen: Batch[] = [];
  const watched = Object.create(learner) as EmbeddedLearner;
  watched.forwardBackward = async (d, loss) => {
    const result = await learner.forwardBackward(d, loss);
    seen.push({ data: d.map((x) => ({ ...x })), loss, result });
    return result;
  };
  try {
    await runRounds(
      { config, data, learner: watched, run, hooks: { log: () => {} } },
      initialTrainState(config),
    );
  } finally {
    await learner.close();
  }
  return seen;
}

/** the first round's batch of the tiny run below, on the build before the guided update */
const FIRST_BATCH = '81918b3c502eb22c';

/** each tiny run once, whichever test asks first */
const memo = new Map<string, Promise<Batch[]>>();
const run = (over: Partial<TrainConfig> = {}) => {
  const k = JSON.stringify(over);
  if (!memo.has(k)) memo.set(k, batches(over));
  return memo.get(k)!;
};

const digest = (x: unknown) => createHash('sha256').update(JSON.stringify(x)).digest('hex').slice(0, 16);

/** the trained positions of a datum: their tokens and sampling logprobs */
const trainedPart = (d: TrainingDatum) =>
  d.weights.flatMap((w, t) => (w > 0 ? [[d.tokens[t]!, d.samplingLogprobs[t]!]] : []));

/** the prompt of a datum: the tokens before its first trained one */
const promptOf = (d: TrainingDatum) => d.tokens.slice(0, d.weights.indexOf(1));

describe('the guided update', { timeout: 600_000 }, () => {
  it('switched off, the learner gets the very batch it got before the switch existed', async () => {
    const off = await run();
    // the first round's batch: sampled from the start weights, so the same on any machine
    // (WebAssembly sampling); digest taken on the build before the switch (b28a691d on all rounds)
    expect(digest(off[0]!.data)).toBe(FIRST_BATCH);
  });

  it("switched on, a rollout under the interface adds its steps after the original prompts, with the sampler's logprobs; the ratio is the policy without the interface over the sampler with it", async () => {
    const off = await run();
    const on = await run({ guidedUpdate: true });
    const first = on[0]!;
    // the rollouts are the same (the switch changes no sampling): the batch holds the same own
    // sequences (advantages aside: one more rollout changes the rollout-mean scale) and the copies
    const key = (d: TrainingDatum) => JSON.stringify([d.tokens, d.weights, d.samplingLogprobs]);
    const own = new Set(off[0]!.data.map(key));
    const copies = first.data.filter((d) => !own.has(key(d)));
    expect(first.data.length - copies.length).toBe(off[0]!.data.length);
    expect(copies.length).toBeGreaterThan(0);
    for (const c of copies) {
      // the same completion tokens and sampling logprobs as one of the rollout's own sequences...
      const twin = off[0]!.data.find(
        (d) => JSON.stringify(trainedPart(d)) === JSON.stringify(trainedPart(c)),
      );
      expect(twin).toBeDefined();
      // ...after another prompt: the original environment's, shorter than the interface's
      expect(promptOf(c)).not.toEqual(promptOf(twin!));
      expect(promptOf(c).length).toBeLessThan(promptOf(twin!).length);
    }

    // the learner's ratio and clipping, by hand: the start weights' logprob of every trained token
    // after its own context, at the sampling temperature, over the sampler's logprob
    const { model } = loadCheckpoint(BASE_CHECKPOINT_DIR);
    const V = model.config.vocabSize;
    const eps = first.loss.clipEps;
    let ratioSum = 0;
    let clipped = 0;
    let n = 0;
    for (const d of first.data) {
      const rows = d.weights.flatMap((w, t) => (w > 0 ? [t - 1] : []));
      const { logits } = model.forward(d.tokens, { rows, backward: false });
      const tempered = Float64Array.from(logits, (z) => z / first.loss.temperature);
      rows.forEach((row, j) => {
        const t = row + 1;
        const r = Math.exp(tokenLogprob(tempered, V, j, d.tokens[t]!) - d.samplingLogprobs[t]!);
        const A = d.advantages[t]!;
        ratioSum += r;
        if ((A > 0 && r > 1 + eps) || (A < 0 && r < 1 - eps)) clipped++;
        n++;
      });
    }
    expect(first.result.tokens ?? n).toBe(n);
    expect(first.result.meanRatio).toBeCloseTo(ratioSum / n, 4);
    expect(first.result.clipFrac).toBeCloseTo(clipped / n, 6);
    // the copies are off-policy: their ratios are not all 1, where the own sequences' are
    expect(Math.abs(first.result.meanRatio - 1)).toBeGreaterThan(Math.abs(off[0]!.result.meanRatio - 1));
  });

  it('with a ratio floor, a copied token starts at no less than the floor: its sampling logprob lowered to the current one minus ln(floor)', async () => {
    const plain = await run({ guidedUpdate: true });
    const floored = await run({ guidedUpdate: true, guidedRatioFloor: 1 });
    const { model } = loadCheckpoint(BASE_CHECKPOINT_DIR);
    const V = model.config.vocabSize;
    const first = floored[0]!;
    const key = (d: TrainingDatum) => JSON.stringify([d.tokens, d.weights]);
    const before = new Map(plain[0]!.data.map((d) => [key(d), d]));
    // a copy: the shorter-prompted of two sequences with the same completions and sampling logprobs
    const isCopy = (d: TrainingDatum) =>
      plain[0]!.data.some(
        (o) =>
          o !== d &&
          JSON.stringify(trainedPart(o)) === JSON.stringify(trainedPart(d)) &&
          promptOf(o).length > promptOf(d).length,
      );
    let lowered = 0;
    let copies = 0;
    for (const d of first.data) {
      // the same sequences as without the floor (the floor changes no sampling)
      const was = before.get(key(d))!;
      expect(was).toBeDefined();
      if (!isCopy(was)) {
        expect(d.samplingLogprobs).toEqual(was.samplingLogprobs);
        continue;
      }
      copies++;
      const rows = d.weights.flatMap((w, t) => (w > 0 ? [t - 1] : []));
      const { logits } = model.forward(d.tokens, { rows, backward: false });
      const tempered = Float64Array.from(logits, (z) => z / first.loss.temperature);
      rows.forEach((row, j) => {
        const t = row + 1;
        const lp = tokenLogprob(tempered, V, j, d.tokens[t]!);
        const q = was.samplingLogprobs[t]!;
        const floored = d.samplingLogprobs[t]!;
        // q' = min(q, lp - ln 1): never above the sampler's, and the ratio at least 1
        expect(floored).toBeLessThanOrEqual(q);
        expect(Math.exp(lp - floored)).toBeGreaterThan(1 - 1e-4);
        if (floored < q) lowered++;
      });
    }
    // some copied tokens were less likely without the interface than the sampler made them
    expect(copies).toBeGreaterThan(0);
    expect(lowered).toBeGreaterThan(0);
  });

  it('the original rendering of a guided rollout is, token for token, what the original environment shows for the same actions', async () => {
    const task = data.tasks.find((t) => t.question.length > 1)!;
    // a policy that answers by a script: output that does not parse, a call that fails, a text
    const script = ["[message_send(to='Paul'", '[no_such_tool(x=1)]', 'All done.'];
    const scripted = (seen: CompletionRequest[]): Policy => ({
      name: 'scripted',
      complete: async (request) => {
        // the rollout goes on writing into the chat it sent: keep it as it was
        seen.push({ ...request, messages: [...request.messages] });
        return { text: script[(seen.length - 1) % script.length]!, latencyMs: 0 } satisfies Completion;
      },
    });
    const state = fullInterfaceState();
    const format = formatAdapter('compact');
    const options = {
      format,
      onParseError: 'reply',
      maxStepsPerTurn: 5,
      sampling: { maxTokens: 64 },
    } as const;

    const guided: CompletionRequest[] = [];
    const originals: CompletionRequest[] = [];
    await rollout(task, data, scripted(guided), {
      ...options,
      trainingInterface: { ctx: trainingContext('guided test'), state },
      onOriginalRequest: (r) => originals.push(r),
    });
    const replayed: CompletionRequest[] = [];
    await rollout(task, data, scripted(replayed), options);

    expect(originals.length).toBe(guided.length);
    expect(replayed.length).toBe(guided.length);
    expect(originals).toEqual(replayed);
    // the interface was there to be taken away: its system prompt, its help after a parse error
    // and its hint on the failed call differ from the original's
    expect(guided[0]!.messages[0]).not.toEqual(replayed[0]!.messages[0]);
    const last = (r: CompletionRequest) => r.messages.at(-1)!.content;
    expect(last(guided[1]!)).toMatch(/could not be read as tool calls/); // the format help
    expect(last(replayed[1]!)).toMatch(/^\[ERROR\] Invalid tool call format/);
    expect(last(replayed[1]!)).not.toMatch(/could not be read as tool calls/);
    expect(last(guided[2]!)).toMatch(/\nHint: 'no_such_tool' is not an available tool/);
    expect(last(replayed[2]!)).not.toMatch(/Hint:/);
    // token for token, in the embedded model's rendering
    const { model, tokenizer } = loadCheckpoint(BASE_CHECKPOINT_DIR);
    const policy = new EmbeddedPolicy(model, tokenizer);
    for (const [i, r] of originals.entries())
      expect(policy.promptTokenIds(r)).toEqual(policy.promptTokenIds(replayed[i]!));
    expect(policy.promptTokenIds(guided[2]!)).not.toEqual(policy.promptTokenIds(replayed[2]!));
  });
});
