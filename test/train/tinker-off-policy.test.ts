import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { buildDist, killAfterRound, seal } from '../support/cli.js';
import { QWEN3_DIR, qwen3Renderer } from '../support/render.js';
import { oracleModel } from '../support/tinker-oracle.js';
import { startTinkerServer, type TinkerTestServer } from '../support/tinker-server.js';
import { tinkerTrainArgs } from '../support/tiny-run.js';

let server: TinkerTestServer;
let holdRound3 = false;
const ENV = { TINKER_API_KEY: 'tml-test-key' };
const json = (p: string) => JSON.parse(readFileSync(p, 'utf8'));
const jsonl = (p: string) =>
  readFileSync(p, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

const args = (out: string, over: Record<string, number> = {}) =>
  tinkerTrainArgs(out, QWEN3_DIR, {
    baseUrl: server.url,
    rounds: 3,
    tasksPerRound: 2,
    groupSize: 4,
    maxSteps: 2,
    loraRank: 8,
    maxStepsOffPolicy: 1,
    ...over,
  });

/** what a rollout is, without the wall times it took */
function rollouts(out: string, round: number) {
  return jsonl(join(out, 'rollouts', `round-000${round}.jsonl`)).map((r) =>
    JSON.stringify(r, (k, v) => (k === 'latencyMs' ? undefined : v)),
  );
}

describe('an off-policy Tinker run killed and resumed', { timeout: 600_000 }, () => {
  beforeAll(async () => {
    await buildDist();
    server = await startTinkerServer({
      model: oracleModel(loadMiniSuite(), qwen3Renderer()),
      apiKey: ENV.TINKER_API_KEY,
      // while a run is to be killed, round 3's checkpoint is held back: it cannot commit first
      fault: (c) =>
        holdRound3 &&
        c.route === 'save_weights' &&
        String((c.body as { path?: unknown }).path).includes('round-0003')
          ? { delayMs: 5000 }
          : undefined,
    });
  }, 600_000);
  afterAll(async () => {
    await server?.close();
  });

  it('samples the uncommitted round again from the same weights: the same rollouts as a run never killed', async () => {
    const straight = join(mkdtempSync(join(tmpdir(), 'seal-offpolicy-')), 'run');
    const a = await seal(args(straight), ENV);
    expect(a.code, a.stderr).toBe(0);

    const out = join(mkdtempSync(join(tmpdir(), 'seal-offpolicy-kill-')), 'run');
    holdRound3 = true;
    await killAfterRound(args(out), ENV, out, 2);
    holdRound3 = false;
    const statePath = join(out, 'state.json');

    // round 3 samples from the weights after round 1: the state names them, and they outlive pruning
    const state = json(statePath);
    expect(state.round).toBe(2);
    expect(state.nextSampler).toEqual({
      checkpoint: join('checkpoints', 'round-0001'),
      version: jsonl(join(straight, 'rounds.jsonl'))[0].learner.steps,
    });
    expect(existsSync(join(out, 'checkpoints', 'round-0001', 'tinker.json'))).toBe(true);
    expect(existsSync(join(out, 'rollouts', 'round-0003.jsonl'))).toBe(false);

    const r = await seal(['train', '--resume', out, '--quiet'], ENV);
    expect(r.code, r.stderr).toBe(0);
    for (const round of [1, 2, 3]) expect(rollouts(out, round)).toEqual(rollouts(straight, round));
    expect(jsonl(join(out, 'rounds.jsonl')).map((x) => x.policyVersion)).toEqual(
      jsonl(join(straight, 'rounds.jsonl')).map((x) => x.policyVersion),
    );
    // the finished run keeps only its last checkpoint
    expect(json(statePath).nextSampler).toBeUndefined();
  });

  it('samples the round ahead through the interface the last diagnosis made, as an on-policy run does', async () => {
    const renderer = qwen3Renderer();
    /** a two-round run's first prompts (system and first user turn, nothing answered yet), decoded */
    const firstPrompts = async (maxStepsOffPolicy: number) => {
      const out = join(mkdtempSync(join(tmpdir(), 'seal-offpolicy-iface-')), 'run');
      const from = server.samples.length;
      const r = await seal(args(out, { rounds: 2, maxStepsOffPolicy }), ENV);
      expect(r.code, r.stderr).toBe(0);
      const firsts = server.samples
        .slice(from)
        .filter((x) => !x.promptLogprobs)
        .map((x) => renderer.decode([...x.prompt]))
        .filter(
          (t) => t.split('<|im_start|>assistant').length === 2 && t.split('<|im_start|>user').length === 2,
        );
      return { firsts: firsts.sort(), rounds: jsonl(join(out, 'rounds.jsonl')) };
    };
    const on = await firstPrompts(0);
    const off = await firstPrompts(1);
    // round 1's diagnosis changed the interface: round 2 shows another one than round 1
    expect(off.rounds[0].nextInterface).not.toEqual(off.rounds[0].interface);
    expect(off.rounds[1].interface).toEqual(off.rounds[0].nextInterface);
    // round 1 samples the base in both; round 2's first prompts depend only on its tasks and the
    // interface, not on the weights: sampled ahead, they must be those of the on-policy run
    expect(off.rounds.map((x) => x.tasks)).toEqual(on.rounds.map((x) => x.tasks));
    expect(off.firsts.length).toBe(16);
    expect(off.firsts).toEqual(on.firsts);
  });
});
