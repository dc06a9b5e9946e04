// @module-tag bfcl-data
/**
 * What a long-running service needs beyond the protocol: idle instances expire, an exception in
 * one instance is a 500 for that request only, and the SEAL state (profile, interface, weights)
 * aggregates evaluated training rollouts and evolves between rounds.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BfclTask } from '../../src/envs/bfcl/data/tasks.js';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { AFFORDANCE_LINE, type InterfaceState } from '../../src/seal/interface.js';
import type { ProfileScope } from '../../src/seal/profile.js';
import type { Rho } from '../../src/seal/weighting.js';
import { buildServer } from '../../src/server/app.js';
import { buildDist, seal } from '../support/cli.js';
import { DATA_DIR } from '../support/golden.js';
import {
  allCallTasks,
  get,
  Instance,
  playWrong,
  post,
  type Served,
  startServe,
  WORKER_COUNTS,
} from './client.js';

const mini = loadMiniSuite();
const calling = allCallTasks(mini);
let n = 0;
const wrong = (url: string, task: BfclTask, params: Record<string, unknown> = {}) =>
  playWrong(url, `wrong-${n++}`, task, params);

beforeAll(async () => {
  await buildDist();
});

for (const workers of WORKER_COUNTS)
  describe(`seal serve --workers ${workers}: instance lifetime`, () => {
    let served: Served;
    beforeAll(async () => {
      served = await startServe(['--suite', 'mini', '--ttl', '1'], workers);
    });
    afterAll(async () => {
      expect(await served.stop()).toBe(0);
    });

    it('drops instances idle for longer than the TTL, keeps busy ones', async () => {
      const idle = new Instance(served.url, 'idle');
      const busy = new Instance(served.url, 'busy');
      await idle.create(calling[0]!.id);
      await busy.create(calling[1]!.id);
      for (let i = 0; i < 10; i++) {
        await new Promise((r) => setTimeout(r, 200));
        await post(served.url, '/get_info', { instance_id: 'busy' });
      }
      const r = await post(served.url, '/step', { instance_id: 'idle', messages: { content: 'hi' } });
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body)).toMatch(/Instance idle not found/);
      expect((await busy.step({ content: 'still here' })).is_terminated).toBe(false);
      const stats = await get<{ expired: number; instances: number }>(served.url, '/stats');
      expect(stats.body.expired).toBeGreaterThanOrEqual(1);
      expect(stats.body.instances).toBe(1);
    });
  });

describe('seal serve: bad flags', () => {
  it('refuses them with a message naming the flag, and a port in use, with exit code 2', async () => {
    const port = await seal(['serve', '--suite', 'mini', '--port', 'abc']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port must be an integer >= 0 and <= 65535, got "abc"');
    const ttl = await seal(['serve', '--suite', 'mini', '--ttl', '0']);
    expect(ttl.code).toBe(2);
    expect(ttl.stderr).toContain('--ttl must be a number >= 0.001');
    const workers = await seal(['serve', '--suite', 'mini', '--workers', '0']);
    expect(workers.code).toBe(2);
    expect(workers.stderr).toContain('--workers must be an integer >= 1 and <= 256, got "0"');
    const help = await seal(['serve', '--help']);
    expect(help.stdout).toContain('--schema-cues <choice>');
    expect(help.stdout).not.toMatch(/<mode> <mode>/);
    const first = await startServe(['--suite', 'mini']);
    try {
      const taken = await seal(['serve', '--suite', 'mini', '--port', new URL(first.url).port]);
      expect(taken.code).toBe(2);
      expect(taken.stderr).toMatch(/port \d+ on 127\.0\.0\.1 is already in use/);
    } finally {
      expect(await first.stop()).toBe(0);
    }
  });
});

/**
 * A copy of the BFCL data whose first base task has an initial state the file system cannot load:
 * creating it throws inside the session, wherever the session lives.
 */
function brokenDataDir(): { dir: string; broken: string } {
  const dir = mkdtempSync(join(tmpdir(), 'seal-serve-broken-'));
  cpSync(DATA_DIR, dir, { recursive: true, filter: (src) => !src.includes('legacy_v3') });
  const file = join(dir, 'BFCL_v4_multi_turn_base.json');
  const lines = readFileSync(file, 'utf8').split('\n');
  const task = JSON.parse(lines[0]!) as { id: string; initial_config: unknown };
  task.initial_config = { GorillaFileSystem: { root: 5 } };
  lines[0] = JSON.stringify(task);
  writeFileSync(file, lines.join('\n'));
  return { dir, broken: task.id };
}

describe('seal serve: an exception inside one instance', () => {
  const { dir, broken } = brokenDataDir();
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const workers of WORKER_COUNTS)
    it(`is a 500 for that request only; the server and the other instances carry on (--workers ${workers})`, async () => {
      const served = await startServe(['--data-dir', dir], workers);
      try {
        const url = served.url;
        const others = [new Instance(url, 'ok-1'), new Instance(url, 'ok-2')];
        for (const inst of others) await inst.create('multi_turn_base_1');
        const r = await post(url, '/create', { task_id: broken, instance_id: 'b' });
        expect(r.status).toBe(500);
        expect(JSON.stringify(r.body)).toMatch(/internal error/);
        expect(JSON.stringify(r.body)).not.toMatch(/\.(ts|js):\d+/);
        expect(served.output()).toMatch(/POST \/create failed/); // the stack goes to the operator's log
        expect((await get(url, '/healthz')).status).toBe(200);
        for (const inst of others) expect((await inst.step({ content: 'hello' })).is_terminated).toBe(false);
        expect((await post(url, '/get_info', { instance_id: 'b' })).status).toBe(400);
        const stats = await get<{ created: number; instances: number }>(url, '/stats');
        expect(stats.body).toMatchObject({ created: 2, instances: 2 });
      } finally {
        expect(await served.stop()).toBe(0);
      }
    });
});

for (const workers of WORKER_COUNTS)
  describe(`seal serve --workers ${workers}: the SEAL state`, () => {
    let served: Served;
    beforeAll(async () => {
      served = await startServe(['--suite', 'mini', '--dynamic-weights'], workers);
    });
    afterAll(async () => {
      expect(await served.stop()).toBe(0);
    });

    it('profiles evaluated training rollouts, serves their weights, and evolves the interface on POST /round', async () => {
      const url = served.url;
      const before = await get<{ data: InterfaceState }>(url, '/interface');
      expect(before.body.data.round).toBe(0);
      expect(before.body.data.cues.affordance.active).toBe(false);

      const played = [];
      for (const task of calling.slice(0, 6)) played.push(await wrong(url, task));
      // Validation rollouts do not describe the policy in training: they are not counted.
      await wrong(url, calling[6]!, { rollout_mode: 'validate' });

      const profile = await get<{
        data: { rollouts_this_round: number; profile: { window: { overall: ProfileScope } } };
      }>(url, '/profile');
      expect(profile.body.data.rollouts_this_round).toBe(6);
      const turns = played.reduce((s, p) => s + (p.dense.labels as string[]).length, 0);
      expect(profile.body.data.profile.window.overall.labels.missing_tool_call?.count).toBe(turns);

      const weights = await get<{ data: { rollouts: { instance_id: string; weight: number }[]; rho: Rho } }>(
        url,
        '/weights',
      );
      expect(weights.body.data.rollouts.map((r) => r.instance_id).sort()).toEqual(
        played.map((p) => p.inst.id).sort(),
      );
      expect(weights.body.data.rollouts.every((r) => r.weight === 1.5)).toBe(true);
      const one = await get<{ data: { rollouts: unknown[] } }>(
        url,
        `/weights?instance_id=${played[0]!.inst.id}`,
      );
      expect(one.body.data.rollouts).toHaveLength(1);
      const some = await post<{ data: { rollouts: unknown[] } }>(url, '/weights', {
        params: { instance_ids: [played[1]!.inst.id, played[2]!.inst.id, 'unknown'] },
      });
      expect(some.body.data.rollouts).toHaveLength(2);

      const round = await post<{
        data: { round: number; rollouts: number; interface: InterfaceState; rho: Rho };
      }>(url, '/round', {});
      expect(round.body.data).toMatchObject({ round: 1, rollouts: 6 });
      expect(round.body.data.interface.cues.affordance.active).toBe(true);
      expect(round.body.data.interface.guidelines.map((g) => g.label)).toContain('missing_tool_call');
      expect(round.body.data.rho.missing_tool_call).toBeGreaterThan(weights.body.data.rho.missing_tool_call);

      // New training instances see the evolved interface; validation ones still see nothing of it.
      const next = await wrong(url, calling[7]!);
      expect(next.created.info.interface_round).toBe(1);
      expect(next.created.state[0]!.content).toContain(AFFORDANCE_LINE);
      const val = await wrong(url, calling[8]!, { mode: 'validation' });
      expect(val.created.state[0]!.content).not.toContain(AFFORDANCE_LINE);

      const after = await get<{ data: { rollouts_this_round: number; rollouts_total: number } }>(
        url,
        '/profile',
      );
      expect(after.body.data).toMatchObject({ rollouts_this_round: 1, rollouts_total: 7 });
    });

    it("keeps a task's prompt across a round that changes nothing shown, and renders it anew when the interface changes", async () => {
      const { app } = buildServer({ data: mini, workers });
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      try {
        const task = calling[0]!;
        const prompt = async (params: Record<string, unknown> = {}) => {
          const created = await new Instance(url, `p-${n++}`).create(task.id, params);
          return { text: created.state[0]!.content, round: created.info.interface_round };
        };
        const first = await prompt();
        expect(first).toMatchObject({ round: 0 });
        expect(first.text).not.toContain(AFFORDANCE_LINE);
        // A round without rollouts changes nothing shown: the same prompt, now of round 1.
        await post(url, '/round', {});
        expect(await prompt()).toEqual({ text: first.text, round: 1 });

        for (const t of calling.slice(1, 7)) await wrong(url, t);
        await post(url, '/round', {});
        const evolved = await prompt();
        expect(evolved.round).toBe(2);
        expect(evolved.text).toContain(AFFORDANCE_LINE);
        expect(evolved.text.startsWith(first.text)).toBe(true);
        // Per-instance switches still apply to a prompt rendered for the shared interface.
        const off = await prompt({
          interface: { schemaCues: false, errorFeedback: false, guidelines: false },
        });
        expect(off.text).not.toContain(AFFORDANCE_LINE);
        expect(off.text).toBe((await prompt({ mode: 'validation' })).text);
        expect((await prompt()).text).toBe(evolved.text);
      } finally {
        await app.close();
      }
    });

    it('ends rounds by itself after --round-every rollouts', async () => {
      const auto = await startServe(['--suite', 'mini', '--round-every', '3'], workers);
      try {
        for (const task of calling.slice(0, 7)) await wrong(auto.url, task);
        const p = await get<{ data: { round: number; rollouts_this_round: number } }>(auto.url, '/profile');
        expect(p.body.data).toMatchObject({ round: 2, rollouts_this_round: 1 });
      } finally {
        expect(await auto.stop()).toBe(0);
      }
    });
  });
