import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { buildDist, killAfterRound, seal } from '../support/cli.js';
import { QWEN3_DIR, qwen3Renderer } from '../support/render.js';
import { oracleModel } from '../support/tinker-oracle.js';
import {
  type Fault,
  startTinkerServer,
  type TinkerTestServer,
  type WeightsState,
  weightsTag,
} from '../support/tinker-server.js';
import { tinkerTrainArgs } from '../support/tiny-run.js';

let server: TinkerTestServer;
let holdRound2 = false;
let faults = false;
const fired = { tooMany: 0, unavailable: 0, dropped: 0 };
const oracle = oracleModel(loadMiniSuite(), qwen3Renderer());

const ENV = { TINKER_API_KEY: 'test-key' };
const json = (p: string) => JSON.parse(readFileSync(p, 'utf8'));
const jsonl = (p: string) =>
  readFileSync(p, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
/** the weights tags the oracle signed a JSON-lines file's text answers with, each once */
const tagsIn = (p: string) => [...new Set(readFileSync(p, 'utf8').match(/\[weights [\w-]+\]/g) ?? [])];
const signedBy = (w: WeightsState) => `[weights ${weightsTag(w)}]`;

function trainArgs(out: string): string[] {
  return tinkerTrainArgs(out, QWEN3_DIR, {
    baseUrl: server.url,
    rounds: 2,
    tasksPerRound: 2,
    groupSize: 4,
    maxSteps: 2,
    maxTokens: 256,
    loraRank: 8,
  });
}

describe('seal train --learner tinker against a Tinker-protocol server', { timeout: 600_000 }, () => {
  beforeAll(async () => {
    await buildDist();
    server = await startTinkerServer({
      model: oracle,
      apiKey: ENV.TINKER_API_KEY,
      billing: { usdPerMillion: 2 },
      fault: (c): Fault | undefined => {
        // while a run is to be killed, round 2's checkpoint is held back: it cannot commit first
        if (
          holdRound2 &&
          c.route === 'save_weights' &&
          String((c.body as { path?: unknown }).path).includes('round-0002')
        )
          return { delayMs: 5000 };
        if (!faults) return undefined;
        // the service's everyday failures, which the run must ride out
        if (c.route === 'asample' && c.attempt % 9 === 4) {
          fired.tooMany++;
          return { status: 429, headers: { 'Retry-After': '0' } };
        }
        if (c.route === 'forward_backward' && !fired.unavailable) {
          fired.unavailable++;
          return { status: 503 };
        }
        if (c.route === 'optim_step' && !fired.dropped) {
          fired.dropped++;
          return { drop: 'after' };
        }
        return undefined;
      },
    });
  }, 600_000);
  afterAll(async () => {
    await server?.close();
  });

  it('runs two rounds, records the learner and the tinker:// paths, and eval scores the checkpoint', async () => {
    const root = mkdtempSync(join(tmpdir(), 'seal-tinker-'));
    const out = join(root, 'run');
    faults = true;
    const r = await seal(trainArgs(out), ENV);
    faults = false;
    expect(fired.tooMany).toBeGreaterThan(0);
    expect(fired).toMatchObject({ unavailable: 1, dropped: 1 });
    expect(r.stderr).toContain('run folder');
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/KL to the base: \d+ prefill tokens over \d+ sequences on Qwen\/Qwen3-8B/);

    const manifest = json(join(out, 'run.json'));
    expect(manifest.learner).toMatchObject({
      kind: 'tinker',
      service: server.url,
      baseModel: 'Qwen/Qwen3-8B',
      loraRank: 8,
      wire: { asked: 'auto' },
      // Qwen/Qwen3-8B: the cookbook's qwen3 renderer, so its own tool form
      renderer: 'qwen3',
      format: 'native',
      kl: { on: true },
    });
    expect(manifest.config.temperature).toBe(1);
    const rounds = jsonl(join(out, 'rounds.jsonl'));
    expect(rounds.map((x) => x.round)).toEqual([1, 2]);
    expect(rounds[0].rollouts.count).toBe(8);
    // the oracle's calls succeed on some rollouts and not others: a signal, and a gradient step
    expect(rounds.some((x) => x.rollouts.meanReward > 0)).toBe(true);
    expect(rounds.some((x) => x.learner.tokens > 0 && x.learner.sequences > 0)).toBe(true);
    expect(rounds.reduce((s, x) => s + x.rollouts.parseErrors, 0)).toBe(0);
    // what each round spent: the sampler's tokens from its own rollouts, the learner's requests
    for (const x of rounds) {
      const rows = jsonl(join(out, 'rollouts', `round-000${x.round}.jsonl`));
      expect(x.usage.sampledTokens).toBe(rows.reduce((n, row) => n + row.completionTokens, 0));
      expect(x.usage.promptTokens).toBeGreaterThan(x.usage.sharedPrefixTokens);
      // the test server reports no cache hits, but it reports them
      expect(x.usage.cachedPromptTokens).toBe(0);
      expect(x.usage.trainedTokens).toBe(x.learner.tokens);
      expect(x.usage.requests.asample.count).toBeGreaterThan(0);
      expect(x.usage.estimatedCostUsd).toBeUndefined();
      if (x.learner.steps > 0) {
        expect(x.usage.klPrefillTokens).toBeGreaterThan(0);
        expect(x.usage.trainReadTokens).toBeGreaterThanOrEqual(x.usage.trainedTokens);
        expect(x.usage.requests.optim_step.count).toBe(x.learner.steps);
        expect(x.learner.meanRatio).toBeGreaterThan(0);
        expect(x.learner.samplerKl).toBeGreaterThanOrEqual(0);
      }
    }
    expect(rounds.some((x) => x.usage.sharedPrefixTokens > 0)).toBe(true);
    // the service's own bill for the run's session, read when the run ended
    const billing = json(join(out, 'finished.json')).billing;
    expect(billing.rows).toBeGreaterThan(0);
    expect(billing.costUsd).toBeGreaterThan(0);
    expect(r.stderr).toMatch(/the service bills this run's sessions \$\d+\.\d\d so far/);

    const saved = json(join(out, 'checkpoints', 'round-0002', 'tinker.json'));
    expect(saved).toMatchObject({ format: 'seal-tinker-checkpoint', baseModel: 'Qwen/Qwen3-8B', version: 2 });
    expect(saved.state).toMatch(/^tinker:\/\/.+\/weights\//);
    expect(saved.sampler).toMatch(/^tinker:\/\/.+\/sampler_weights\//);
    expect(server.checkpoints.get(saved.state)).toMatchObject({ step: 2, kind: 'weights' });
    const model = server.models.get(saved.modelId)!;
    expect(model.rank).toBe(8);
    expect(model.steps.length).toBe(2);

    // a rollout is one training sequence where its prompts extend (no re-tokenisation)
    const roll = jsonl(join(out, 'rollouts', 'round-0001.jsonl'));
    expect(roll.length).toBe(8);

    // the trained checkpoint scores through Tinker sampling
    const ids = [...new Set(roll.map((x) => x.taskId as string))].join(',');
    const trained = server.checkpoints.get(saved.sampler)!;
    const trainedWeights = { baseModel: 'Qwen/Qwen3-8B', step: 2, lrs: trained.lrs };
    expect(trained).toMatchObject({ step: 2, kind: 'sampler_weights' });
    expect(trained.lrs).toHaveLength(2);
    const samplesBefore = server.samples.length;
    const evalOut = join(root, 'eval');
    const e = await seal(
      [
        'eval',
        '--policy',
        'tinker',
        '--model',
        join(out, 'checkpoints', 'round-0002'),
        '--tokenizer',
        QWEN3_DIR,
        '--base-url',
        server.url,
        '--suite',
        'mini',
        '--split',
        ids,
        '--max-tokens',
        '256',
        '--out',
        evalOut,
      ],
      ENV,
    );
    expect(e.stderr).toContain('eval: 2/2 tasks');
    expect(e.code).toBe(0);
    const summary = json(join(evalOut, 'summary.json'));
    expect(summary.average).toBeGreaterThan(0);
    expect(JSON.stringify(json(join(evalOut, 'run.json')))).toContain(saved.sampler);
    // evaluated as the run rendered: its recorded renderer (qwen3) and tool format
    expect(json(join(evalOut, 'run.json')).format).toBe('native');
    // every sample of the evaluation ran on the checkpoint's weights, not the base model's ...
    const evalSamples = server.samples.slice(samplesBefore);
    expect(evalSamples.length).toBeGreaterThan(0);
    for (const x of evalSamples) expect(x.weights).toEqual(trainedWeights);
    // ... and the transcripts say so: the oracle signed its text answers with the weights' tag
    expect(tagsIn(join(evalOut, 'results.jsonl'))).toEqual([signedBy(trainedWeights)]);

    // the base model scores through a base-model sampling session
    const baseOut = join(root, 'eval-base');
    const b = await seal(
      [
        'eval',
        '--policy',
        'tinker',
        '--model',
        'Qwen/Qwen3-8B',
        '--tokenizer',
        QWEN3_DIR,
        '--base-url',
        server.url,
      ].concat(['--suite', 'mini', '--split', ids, '--max-tokens', '256', '--out', baseOut]),
      ENV,
    );
    expect(b.code).toBe(0);
    expect(JSON.stringify(json(join(baseOut, 'run.json')))).toContain('Qwen/Qwen3-8B');
    const baseWeights = { baseModel: 'Qwen/Qwen3-8B', step: 0, lrs: [] };
    expect(tagsIn(join(baseOut, 'results.jsonl'))).toEqual([signedBy(baseWeights)]);
    expect(json(join(baseOut, 'summary.json')).average).toBeGreaterThanOrEqual(0);
  });

  it('resumes after kill -9 on a new model whose first request loads the saved state', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'seal-tinker-kill-')), 'run');
    holdRound2 = true;
    await killAfterRound(trainArgs(out), ENV, out, 1);
    holdRound2 = false;
    const statePath = join(out, 'state.json');
    expect(json(statePath).round).toBe(1);
    const first = json(join(out, 'checkpoints', 'round-0001', 'tinker.json'));
    const modelsBefore = new Set(server.models.keys());
    const samplesBefore = server.samples.length;

    const r = await seal(['train', '--resume', out, '--quiet'], ENV);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`resuming ${out} after round 1`);
    expect(r.stderr).toContain(`continuing from ${join(out, 'checkpoints', 'round-0001')}`);
    expect(jsonl(join(out, 'rounds.jsonl')).map((x) => x.round)).toEqual([1, 2]);
    const fresh = [...server.models.values()].filter((m) => !modelsBefore.has(m.id));
    expect(fresh.length).toBe(1);
    expect(fresh[0]!.ran[0]).toMatchObject({ seqId: 1, route: 'load_weights' });
    // the loaded state had one step; the resumed model took the second
    const last = json(join(out, 'checkpoints', 'round-0002', 'tinker.json'));
    expect(last).toMatchObject({ modelId: fresh[0]!.id, version: 2 });
    expect(server.checkpoints.get(first.state)).toMatchObject({ step: 1 });
    expect(server.checkpoints.get(last.state)).toMatchObject({ step: 2 });
    // round 2 sampled the state it loaded (step 1, with round 1's learning rate), not the base
    const loaded = { baseModel: 'Qwen/Qwen3-8B', step: 1, lrs: server.checkpoints.get(first.state)!.lrs };
    expect(loaded.lrs).toHaveLength(1);
    const rollouts = server.samples.slice(samplesBefore).filter((x) => !x.promptLogprobs);
    expect(rollouts.length).toBeGreaterThan(0);
    for (const x of rollouts) expect(x.weights).toEqual(loaded);
    expect(tagsIn(join(out, 'rollouts', 'round-0002.jsonl'))).toEqual([signedBy(loaded)]);
    expect(tagsIn(join(out, 'rollouts', 'round-0001.jsonl'))).toEqual([
      signedBy({ ...loaded, step: 0, lrs: [] }),
    ]);
    expect(existsSync(join(out, 'finished.json'))).toBe(true);
    // the bill covers both sessions the run worked in: the killed one and the resumed one
    const sessions = new Set(jsonl(join(out, 'rounds.jsonl')).map((x) => x.usage.session));
    expect(sessions.size).toBe(2);
    expect(json(join(out, 'finished.json')).billing.rows).toBeGreaterThanOrEqual(2 * 2);
  });

  it('seal eval --policy tinker records its chat format, and a resume with another one is refused', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'seal-tinker-eval-')), 'eval');
    const args = (...more: string[]) => [
      'eval',
      '--policy',
      'tinker',
      '--model',
      'Qwen/Qwen3-8B',
      '--tokenizer',
      QWEN3_DIR,
      '--base-url',
      server.url,
      '--suite',
      'mini',
      '--split',
      'mini_base_0',
      '--max-tokens',
      '64',
      '--out',
      out,
      ...more,
    ];
    const first = await seal(args(), ENV);
    expect(first.code, first.stderr).toBe(0);
    expect(json(join(out, 'run.json'))).toMatchObject({
      policy: 'tinker',
      renderer: 'qwen3',
      thinking: 'template',
    });
    const files = ['run.json', 'results.jsonl', 'summary.json'];
    const before = files.map((f) => readFileSync(join(out, f), 'utf8'));
    for (const [more, what] of [
      [['--renderer', 'hf_template', '--thinking', 'off', '--format', 'native'], 'renderer, thinking'],
      [['--renderer', 'qwen3_disable_thinking'], 'renderer'],
    ] as const) {
      const r = await seal(args(...more), ENV);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`holds a run with a different ${what} (`);
      expect(files.map((f) => readFileSync(join(out, f), 'utf8'))).toEqual(before);
    }
    const again = await seal(args(), ENV);
    expect(again.stdout).toContain('0 task(s) run, 1 kept from before');
  });

  it('--dry-run prints one round of requests and tokens without a key or a request', async () => {
    const before = server.requests.length;
    const r = await seal(
      [...trainArgs(join(mkdtempSync(join(tmpdir(), 'seal-tinker-dry-')), 'run')), '--dry-run'],
      { TINKER_API_KEY: '' },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('nothing sent');
    expect(r.stdout).toMatch(/tokens: first prompts \d+/);
    expect(r.stdout).toMatch(/forward_backward \(ppo, clip 0\.8\.\.1\.2\)/);
    expect(server.requests.length).toBe(before);
  });

  it('refuses what Tinker cannot train, before anything is sent', async () => {
    const before = server.requests.length;
    const out = join(mkdtempSync(join(tmpdir(), 'seal-tinker-bad-')), 'run');
    const hot = await seal([...trainArgs(out), '--temperature', '0.7'], ENV);
    expect(hot.code).toBe(2);
    expect(hot.stderr).toContain('temperature 1');
    const noBase = await seal(['train', '--learner', 'tinker', '--out', out], ENV);
    expect(noBase.code).toBe(2);
    expect(noBase.stderr).toContain('--base-model');
    expect(existsSync(out)).toBe(false);
    expect(server.requests.length).toBe(before);
  });
});
