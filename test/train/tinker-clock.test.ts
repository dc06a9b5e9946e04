/**
 * `seal train --learner tinker` against a service that runs training in clock cycles, as the hosted
 * one does: the test server runs training requests only at the ticks of its clock, so a request sent
 * after awaiting the one before it misses a cycle. A round's step and its checkpoint must go out back
 * to back (forward_backward, optim_step and the checkpoint's two saves: each forward_backward is
 * held back from running until the request three seq ids after it arrives, and the server's event
 * order must show the rest arrived before it ran) and the sampler of the next round and of
 * validation must be the saved one, not a new export. With --max-steps-off-policy 1 the next round
 * samples while this one trains, from the weights before its step. Nothing here compares clock
 * times: orderings are the server's own count of events, and a hold ends on the request it waits
 * for (a broken client meets the hold's timeout instead, and the order shows it). The ticks a step
 * costs are measured by bench/tinker-clock.ts, not asserted here: a loaded machine splits them.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { buildDist, seal } from '../support/cli.js';
import { QWEN3_DIR, qwen3Renderer } from '../support/render.js';
import { oracleModel } from '../support/tinker-oracle.js';
import { type RequestRecord, startTinkerServer, type TinkerTestServer } from '../support/tinker-server.js';
import { tinkerTrainArgs } from '../support/tiny-run.js';

let server: TinkerTestServer;
const ENV = { TINKER_API_KEY: 'tml-test-key' };
const ROUNDS = 3;
/** round 1's checkpoint is held back from running until a sample arrives (or 5 s), so that what overlaps it can be seen */
let holdRound1 = false;
/** every forward_backward is held back from running until the rest of its round has arrived (or 10 s) */
let holdSteps = false;
const TRAINING = new Set(['forward_backward', 'optim_step', 'save_weights', 'save_weights_for_sampler']);

const jsonl = (p: string) =>
  readFileSync(p, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

/** a run on the clocked server; its model's training requests, and the requests that came meanwhile */
async function clockedRun(over: Readonly<Record<string, string | number>> = {}) {
  const out = join(mkdtempSync(join(tmpdir(), 'seal-tinker-clock-')), 'run');
  const modelsBefore = new Set(server.models.keys());
  const requestsBefore = server.requests.length;
  const r = await seal(
    tinkerTrainArgs(out, QWEN3_DIR, {
      baseUrl: server.url,
      rounds: ROUNDS,
      tasksPerRound: 2,
      groupSize: 2,
      maxSteps: 2,
      loraRank: 8,
      validateEvery: 1,
      validationTasks: 4,
      saveEvery: 2,
      checkpointTtl: 3600,
      ...over,
    }),
    ENV,
  );
  expect(r.code, r.stderr).toBe(0);
  const model = [...server.models.values()].find((m) => !modelsBefore.has(m.id))!;
  return { out, ran: model.ran, requests: server.requests.slice(requestsBefore) };
}

/**
 * the sample requests that arrived after round 1's checkpoint was sent and before it ran (held
 * back until a sample arrives, `holdRound1`): the next round's sampling, when it overlaps the update
 */
function samplesDuringRound1Save(run: Awaited<ReturnType<typeof clockedRun>>): number {
  const sent = run.requests.find((x) => x.route === 'save_weights')!.order;
  const ran = run.ran.find((x) => x.route === 'save_weights')!.order;
  return run.requests.filter((x) => x.route === 'asample' && x.order > sent && x.order < ran).length;
}

/**
 * With each forward_backward held back (`holdSteps`) until the request three seq ids on arrives,
 * the rest of its round (optim_step and the checkpoint's two saves) arrived before it ran: a client
 * awaiting any of them could not have sent the next yet, and would have met the hold's timeout.
 */
function expectBackToBack(
  ran: readonly { route: string; seqId: number; order: number }[],
  requests: readonly RequestRecord[],
): void {
  for (const fb of ran.filter((x) => x.route === 'forward_backward')) {
    const rest = requests.filter(
      (x) =>
        (x.route === 'optim_step' || x.route === 'save_weights' || x.route === 'save_weights_for_sampler') &&
        x.seqId !== undefined &&
        x.seqId > fb.seqId &&
        x.seqId <= fb.seqId + 3,
    );
    expect(rest.map((x) => x.route).sort()).toEqual([
      'optim_step',
      'save_weights',
      'save_weights_for_sampler',
    ]);
    for (const x of rest)
      expect(x.order, `${x.route} (seq ${x.seqId}) arrived after forward_backward ran`).toBeLessThan(
        fb.order,
      );
  }
}

describe('a Tinker run on a clocked service', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    await buildDist();
    server = await startTinkerServer({
      model: oracleModel(loadMiniSuite(), qwen3Renderer()),
      apiKey: ENV.TINKER_API_KEY,
      clockMs: 300,
      holdRun: (q) =>
        holdSteps && q.route === 'forward_backward'
          ? { until: (r) => TRAINING.has(r.route) && r.seqId === q.seqId + 3, timeoutMs: 10_000 }
          : holdRound1 &&
              q.route === 'save_weights' &&
              String((q.body as { path?: unknown }).path).includes('round-0001')
            ? { until: (r) => r.route === 'asample', timeoutMs: 5_000 }
            : undefined,
      // while round 1's checkpoint is watched, every sample takes 300 ms: a round sampled ahead
      // cannot have finished before the checkpoint is sent
      fault: (c) => (holdRound1 && c.route === 'asample' ? { delayMs: 300 } : undefined),
    });
  }, 600_000);
  afterAll(async () => {
    await server?.close();
  });

  it('sends each step and its checkpoint back to back and reuses the saved sampler', async () => {
    holdSteps = true;
    const { out, ran, requests } = await clockedRun({
      pricePrefill: 0.2,
      priceSample: 0.6,
      priceTrain: 0.5,
    }).finally(() => {
      holdSteps = false;
    });
    // each round's cost from the prices given, and the clock's share of its training requests' time
    for (const x of jsonl(join(out, 'rounds.jsonl'))) {
      const u = x.usage;
      const expected =
        ((u.promptTokens + u.klPrefillTokens) * 0.2 + u.sampledTokens * 0.6 + u.trainReadTokens * 0.5) / 1e6;
      expect(u.estimatedCostUsd).toBeCloseTo(expected, 12);
      expect(u.estimatedCostUsd).toBeGreaterThan(0);
      // a save waits for the next tick after the service took it
      expect(u.requests.save_weights.afterAcceptMs).toBeGreaterThan(0);
    }
    const optim = ran.filter((x) => x.route === 'optim_step');
    // a round whose groups all agree has nothing to train: two steps are needed to tell
    expect(optim.length).toBeGreaterThanOrEqual(2);
    // forward_backward, optim_step and the checkpoint's two saves sent back to back: with each
    // forward_backward held back until the last of them arrives, the rest of its round arrived
    // before it ran (a client awaiting any of them could not have sent the next yet)
    expectBackToBack(ran, requests);
    // one export for the first round's sampler; after that every sampler (the next round's, every
    // validation's) is the checkpoint's own sampler weights
    expect(ran.filter((x) => x.route === 'save_weights_for_sampler')).toHaveLength(ROUNDS + 1);
    expect(ran.filter((x) => x.route === 'save_weights')).toHaveLength(ROUNDS);

    // the report names the run's checkpoint by its tinker:// paths and says why there is no final evaluation
    const report = readFileSync(join(out, 'report.html'), 'utf8');
    expect(report).toContain(`round-000${ROUNDS}: training state tinker://`);
    expect(report).toContain('started with --eval-final false');
    expect(report).not.toContain('weights sha256');
    expect(report).toMatch(/\d+ KL prefill; about \$\d+\.\d\d at the prices the config gives/);
    expect(report).toContain('Sampler against trainer');

    // checkpoints: each round's with the short expiry, every second and the last kept for good
    const ttlOf = (round: number, kind: 'weights' | 'sampler_weights') =>
      [...server.checkpoints]
        .filter(([path, c]) => c.kind === kind && path.includes(`round-000${round}-`))
        .map(([, c]) => c.ttlSeconds);
    expect([1, 2, 3].map((round) => ttlOf(round, 'weights'))).toEqual([[3600], [undefined], [undefined]]);
    expect([1, 2, 3].map((round) => ttlOf(round, 'sampler_weights'))).toEqual([
      [3600],
      [undefined],
      [undefined],
    ]);
  });

  it('--max-steps-off-policy 1: the next round samples while this one trains, from the weights before its step', async () => {
    holdSteps = true;
    const { out, ran, requests } = await clockedRun({ maxStepsOffPolicy: 1 }).finally(() => {
      holdSteps = false;
    });
    const count = (route: string) => ran.filter((x) => x.route === route).length;
    expect(count('optim_step')).toBeGreaterThanOrEqual(2);
    // no export at all: rounds 1 and 2 sample the base model (a LoRA before its first step), every
    // later sampler is a checkpoint's
    expect(count('save_weights_for_sampler')).toBe(ROUNDS);
    expect(count('save_weights')).toBe(ROUNDS);
    // the step and its checkpoint still go out back to back
    expectBackToBack(ran, requests);
    // each round's rollouts say the weights they came from: those after the round before last
    const rounds = jsonl(join(out, 'rounds.jsonl'));
    const stepsAfter = rounds.map((_, i) => rounds.slice(0, i + 1).reduce((s, x) => s + x.learner.steps, 0));
    expect(rounds.map((x) => x.policyVersion)).toEqual([0, 0, stepsAfter[0]]);
    for (const x of rounds) {
      const rows = jsonl(join(out, 'rollouts', `round-000${x.round}.jsonl`));
      expect(new Set(rows.map((row) => row.policyVersion))).toEqual(new Set([x.policyVersion]));
    }
  });

  it('samples the next round during the update only with --max-steps-off-policy', async () => {
    holdRound1 = true;
    try {
      const short = { rounds: 2, validateEvery: 0 };
      // on-policy: nothing of round 2 is sampled before round 1's checkpoint has been written
      expect(samplesDuringRound1Save(await clockedRun(short))).toBe(0);
      // off-policy: round 2 samples while round 1's checkpoint waits
      expect(samplesDuringRound1Save(await clockedRun({ ...short, maxStepsOffPolicy: 1 }))).toBeGreaterThan(
        0,
      );
    } finally {
      holdRound1 = false;
    }
  });
});
