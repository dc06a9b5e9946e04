/**
 * What one `seal train --learner tinker` run promises about its costs, its rate and its bad
 * rollouts, read from the run folder and checked against what the Tinker test server saw: the
 * tokens a round's passes read count every pass (`--passes`), the KL prefill tokens are the round's
 * own, the estimated cost prices exactly those; an `lr` set in a config file is the rate the steps
 * ran at, and run.json records it with where it came from; a sample the service refuses (HTTP 400)
 * ends that rollout as a forced quit, and the round and the run go on.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { buildDist, seal } from '../support/cli.js';
import { QWEN3_DIR, qwen3Renderer } from '../support/render.js';
import { oracleModel } from '../support/tinker-oracle.js';
import { startTinkerServer, type TinkerTestServer } from '../support/tinker-server.js';
import { tinkerTrainArgs } from '../support/tiny-run.js';

const ENV = { TINKER_API_KEY: 'tml-usage-key' };
const root = mkdtempSync(join(tmpdir(), 'seal-tinker-usage-'));
const out = join(root, 'run');
const PRICES = { prefill: 0.5, sample: 2, train: 3 };
const LR = 3.5e-5;
let server: TinkerTestServer;
let refused = 0;
let stderr = '';
const jsonl = (p: string) =>
  readFileSync(p, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('a Tinker run of two passes a round, a rate from a config file, refused samples', {
  timeout: 600_000,
}, () => {
  beforeAll(async () => {
    await buildDist();
    let rollouts = 0;
    server = await startTinkerServer({
      model: oracleModel(loadMiniSuite(), qwen3Renderer()),
      apiKey: ENV.TINKER_API_KEY,
      // the 3rd and 40th rollout samples (not KL prefills) refused for their prompt, as SkyRL answers one
      fault: (c) => {
        if (c.route !== 'asample' || (c.body as { prompt_logprobs?: boolean }).prompt_logprobs)
          return undefined;
        rollouts++;
        if (rollouts !== 3 && rollouts !== 40) return undefined;
        refused++;
        return { status: 400, body: { detail: 'prompt is longer than the model context' } };
      },
    });
    const config = join(root, 'run.yaml');
    writeFileSync(config, `lr: ${LR}\npasses: 2\n`);
    const r = await seal(
      [
        ...tinkerTrainArgs(out, QWEN3_DIR, {
          baseUrl: server.url,
          rounds: 2,
          tasksPerRound: 2,
          groupSize: 4,
          maxSteps: 2,
          maxTokens: 256,
          loraRank: 4,
          pricePrefill: PRICES.prefill,
          priceSample: PRICES.sample,
          priceTrain: PRICES.train,
        }),
        '--config',
        config,
      ],
      ENV,
    );
    stderr = r.stderr;
    expect(r.code, r.stderr).toBe(0);
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('counts every pass in the tokens read and the cost, and the KL prefills of each round once', () => {
    const rounds = jsonl(join(out, 'rounds.jsonl'));
    expect(rounds).toHaveLength(2);
    const model = [...server.models.values()][0]!;
    const passes = model.passes.filter((p) => p.route === 'forward_backward');
    expect(rounds.map((r) => r.learner.steps)).toEqual([2, 2]);
    // a sequence of n tokens goes as n - 1 inputs (the standard shift)
    const read = passes.reduce(
      (n, p) =>
        n +
        p.input.data.reduce(
          (k, d) =>
            k + 1 + d.model_input.chunks.reduce((j, c) => j + ('tokens' in c ? c.tokens.length : 0), 0),
          0,
        ),
      0,
    );
    expect(read).toBeGreaterThan(0);
    expect(rounds.reduce((n, r) => n + r.usage.trainReadTokens, 0)).toBe(read);

    const prefills = server.samples.filter((s) => s.promptLogprobs);
    const prefillTokens = prefills.reduce((n, s) => n + s.prompt.length, 0);
    expect(rounds[0].usage.klPrefillTokens).toBeGreaterThan(0);
    expect(rounds.reduce((n, r) => n + r.usage.klPrefillTokens, 0)).toBe(prefillTokens);
    const prompts = server.samples.filter((s) => !s.promptLogprobs).reduce((n, s) => n + s.prompt.length, 0);
    expect(rounds.reduce((n, r) => n + r.usage.promptTokens, 0)).toBe(prompts);

    // the cost prices what the server saw: prefills and prompts, completions, every pass's reads
    const sampled = rounds.reduce((n, r) => n + r.usage.sampledTokens, 0);
    const cost =
      ((prompts + prefillTokens) * PRICES.prefill + sampled * PRICES.sample + read * PRICES.train) / 1e6;
    expect(rounds.reduce((n, r) => n + r.usage.estimatedCostUsd, 0)).toBeCloseTo(cost, 12);
  });

  it('steps at the lr of the config file, and run.json records the rate and where it came from', () => {
    const model = [...server.models.values()][0]!;
    expect(model.steps.map((s) => s.lr)).toEqual([LR, LR, LR, LR]);
    const manifest = JSON.parse(readFileSync(join(out, 'run.json'), 'utf8'));
    expect(manifest.config.lr).toBe(LR);
    expect(manifest.learner.lr).toEqual({ value: LR, source: 'given (the LoRA rule would give 0.000473)' });
    for (const r of jsonl(join(out, 'rounds.jsonl'))) expect(r.learner.lr).toBe(LR);
  });

  it('ends a rollout whose sample is refused, and trains the round with the rest', () => {
    expect(refused).toBeGreaterThan(0);
    const rollouts = [1, 2].flatMap((r) => jsonl(join(out, 'rollouts', `round-000${r}.jsonl`)));
    expect(rollouts).toHaveLength(16);
    const ended = rollouts.filter((r) => r.trajectory.sampleFailure !== undefined);
    expect(ended).toHaveLength(refused);
    for (const r of ended) {
      expect(r.trajectory.sampleFailure).toMatch(
        /the service refused the sample: .*HTTP 400 .*longer than the model context/,
      );
      expect(r.trajectory.forceQuit).toBe(true);
    }
    expect(stderr).toMatch(
      /round \d: \d+ rollout\(s\) ended by a sample the service refused, scored as forced quits/,
    );
  });
});
