/**
 * `seal train --learner tinker` against a service that runs training in clock cycles, as the hosted
 * one does: the test server runs training requests only at the ticks of its clock, so a request sent
 * after awaiting the one before it misses a cycle. A round's step must go out back to back
 * (forward_backward and optim_step in one tick, the checkpoint's two saves in the next) and the
 * sampler of the next round and of validation must be the saved one, not a new export: at most two
 * ticks per optimiser step. Each assertion fails when one request waits on another it need not.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { buildDist, seal } from '../support/cli.js';
import { QWEN3_DIR, qwen3Renderer } from '../support/render.js';
import { oracleModel } from '../support/tinker-oracle.js';
import { startTinkerServer, type TinkerTestServer } from '../support/tinker-server.js';
import { tinkerTrainArgs } from '../support/tiny-run.js';

let server: TinkerTestServer;
const ENV = { TINKER_API_KEY: 'tml-test-key' };
const ROUNDS = 3;

describe('a Tinker run on a clocked service', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    await buildDist();
    server = await startTinkerServer({
      model: oracleModel(loadMiniSuite(), qwen3Renderer()),
      apiKey: ENV.TINKER_API_KEY,
      clockMs: 150,
    });
  }, 600_000);
  afterAll(async () => {
    await server?.close();
  });

  it('sends each step back to back and reuses the saved sampler: at most two ticks a step', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'seal-tinker-clock-')), 'run');
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
      }),
      ENV,
    );
    expect(r.code, r.stderr).toBe(0);
    const [model] = [...server.models.values()];
    const ran = model!.ran;
    const tickOf = (route: string) => ran.filter((x) => x.route === route).map((x) => x.tick);
    const optim = tickOf('optim_step');
    // a round whose groups all agree has nothing to train: at least one step is needed here
    expect(optim.length).toBeGreaterThan(0);
    // forward_backward and its optim_step in the same cycle: the step was not awaited in halves
    expect(tickOf('forward_backward')).toEqual(optim);
    // every round's two saves in one cycle, the one right after its step's
    const saves = tickOf('save_weights');
    expect(saves).toHaveLength(ROUNDS);
    for (const t of optim) expect(saves).toContain(t! + 1);
    // one export for the first round's sampler; after that every sampler (the next round's, every
    // validation's) is the checkpoint's own sampler weights
    const samplerSaves = ran.filter((x) => x.route === 'save_weights_for_sampler');
    expect(samplerSaves).toHaveLength(ROUNDS + 1);
    expect(samplerSaves.slice(1).map((x) => x.tick)).toEqual(saves);
    // so a step costs two ticks (its own and its checkpoint's); a round without a step one
    const ticks = new Set(ran.map((x) => x.tick));
    expect(ticks.size).toBeLessThanOrEqual(1 + ROUNDS + optim.length);

    // the report names the run's checkpoint by its tinker:// paths and says why there is no final evaluation
    const report = readFileSync(join(out, 'report.html'), 'utf8');
    expect(report).toContain(`round-000${ROUNDS}: training state tinker://`);
    expect(report).toContain('started with --eval-final false');
    expect(report).not.toContain('weights sha256');

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
});
