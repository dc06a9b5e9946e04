// @module-tag bfcl-data
/**
 * `seal serve --workers N`: instances spread over the worker threads while the main thread keeps
 * one failure profile of them all; a worker that dies loses its instances and nothing else; and
 * the same requests get the same answers with one thread and with two workers.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import type { ProfileScope } from '../../src/seal/profile.js';
import { buildServer } from '../../src/server/app.js';
import type { WorkerInstances } from '../../src/server/worker-pool.js';
import { buildDist } from '../support/cli.js';
import { DATA_DIR, sharedData } from '../support/golden.js';
import {
  allCallTasks,
  answerInText,
  encodeCalls,
  get,
  Instance,
  playWrong,
  post,
  type Served,
  startServe,
} from './client.js';

const mini = loadMiniSuite();
const calling = allCallTasks(mini);

beforeAll(async () => {
  await buildDist();
});

describe('seal serve --workers 2: one profile of every worker', () => {
  let served: Served;
  beforeAll(async () => {
    served = await startServe(['--suite', 'mini'], 2);
  });
  afterAll(async () => {
    expect(await served.stop()).toBe(0);
  });

  it('spreads instances over the workers and profiles the rollouts evaluated on all of them', async () => {
    const url = served.url;
    expect(served.output()).toContain('2 worker threads');
    // Created together, then played: each worker holds some of them while they are evaluated.
    const tasks = calling.slice(0, 6);
    const insts = tasks.map((_, i) => new Instance(url, `spread-${i}`));
    for (const [i, inst] of insts.entries()) await inst.create(tasks[i]!.id);
    const stats = await get<{ workers: number; worker_instances: number[]; instances: number }>(
      url,
      '/stats',
    );
    expect(stats.body).toMatchObject({ workers: 2, instances: 6, worker_instances: [3, 3] });
    let turns = 0;
    for (const [i, inst] of insts.entries()) {
      await answerInText(inst, tasks[i]!);
      turns += ((await inst.evaluate()).labels as string[]).length;
    }
    const profile = await get<{
      data: { rollouts_this_round: number; profile: { window: { overall: ProfileScope } } };
    }>(url, '/profile');
    expect(profile.body.data.rollouts_this_round).toBe(6);
    expect(profile.body.data.profile.window.overall.labels.missing_tool_call?.count).toBe(turns);
    const weights = await get<{ data: { rollouts: { instance_id: string }[] } }>(url, '/weights');
    expect(weights.body.data.rollouts.map((r) => r.instance_id).sort()).toEqual(
      insts.map((i) => i.id).sort(),
    );
    for (const inst of insts) await inst.release();
    const after = await get<{ worker_instances: number[]; instances: number }>(url, '/stats');
    expect(after.body).toMatchObject({ instances: 0, worker_instances: [0, 0] });
  });
});

describe('seal serve --workers 2: a worker that dies', () => {
  it('takes its instances with it (400), is replaced, and the server keeps answering', async () => {
    const { app, instances } = buildServer({ data: mini, workers: 2 });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const pool = instances as WorkerInstances;
      const insts = calling.slice(0, 4).map((_, i) => new Instance(url, `w-${i}`));
      for (const [i, inst] of insts.entries()) await inst.create(calling[i]!.id);
      const onZero = insts.filter((i) => pool.workerOf(i.id) === 0);
      const onOne = insts.filter((i) => pool.workerOf(i.id) === 1);
      expect(onZero.length).toBe(2);
      expect(onOne.length).toBe(2);

      await pool.workers[0]!.terminate();
      expect((await get(url, '/healthz')).status).toBe(200);
      for (const inst of onZero) {
        const r = await post(url, '/step', { instance_id: inst.id, messages: { content: 'hi' } });
        expect(r.status).toBe(400);
        expect(JSON.stringify(r.body)).toMatch(new RegExp(`Instance ${inst.id} not found`));
      }
      for (const inst of onOne)
        expect((await inst.step({ content: 'still here' })).is_terminated).toBe(false);
      // New instances work at once (on the surviving worker until the new one is ready) ...
      const early = await playWrong(url, 'early', calling[4]!);
      expect(early.dense.accuracy).toBe(0);
      // ... and on the replacement once it is (the fewest instances: none).
      await vi.waitFor(() => expect(pool.stats()).toMatchObject({ workers_ready: 2 }), {
        timeout: 60_000,
        interval: 100,
      });
      const late = await playWrong(url, 'late', calling[5]!);
      expect(late.dense.accuracy).toBe(0);
      expect(pool.workerOf('late')).toBe(0);
      const stats = await get<{ instances_lost: number; worker_restarts: number }>(url, '/stats');
      expect(stats.body).toMatchObject({ instances_lost: 2, worker_restarts: 1 });
      const profile = await get<{ data: { rollouts_this_round: number } }>(url, '/profile');
      expect(profile.body.data.rollouts_this_round).toBe(2);
      expect(logged).toHaveBeenCalled(); // the operator hears of it
    } finally {
      logged.mockRestore();
      await app.close();
    }
    // Closing the app stops the workers.
    expect((instances as WorkerInstances).workers.map((w) => w.threadId)).toEqual([-1, -1]);
  });
});

describe('seal serve: the same requests, the same answers with one thread and with two workers', () => {
  it('answers a sequence of episodes and a round byte for byte alike', async () => {
    const data = sharedData();
    const transcript = async (workers: number): Promise<string[]> => {
      const served = await startServe(['--data-dir', DATA_DIR], workers);
      const out: string[] = [];
      const send = async (route: string, body: unknown) => {
        const r = await fetch(`${served.url}${route}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        out.push(`${route} ${r.status} ${await r.text()}`);
      };
      try {
        const wrong = data.tasks.filter((t) => t.category === 'base').slice(0, 4);
        for (const [i, task] of wrong.entries()) {
          const instance_id = `wrong-${i}`;
          await send('/create', { env_type: 'bfcl', task_id: task.id, instance_id });
          for (let t = 0; t < task.question.length; t++)
            await send('/step', { instance_id, messages: { content: 'I cannot help.' } });
          await send('/evaluate', { instance_id });
        }
        await send('/round', {});
        // A ground-truth episode under the evolved interface, with a parse error and a tool error on the way.
        const task = data.tasks.find((t) => t.category === 'miss_func')!;
        const instance_id = 'truth';
        await send('/create', { env_type: 'bfcl', task_id: task.id, instance_id });
        await send('/step', {
          instance_id,
          messages: { content: '<tool_call>{"name": "ls", "arguments": {"a": }</tool_call>' },
        });
        await send('/step', {
          instance_id,
          messages: { content: '<tool_call>\n{"name": "cd", "arguments": {}}\n</tool_call>' },
        });
        for (const gt of task.groundTruth) {
          if (gt.length > 0) await send('/step', { instance_id, messages: encodeCalls(gt, 'hermes', data) });
          await send('/step', { instance_id, messages: { content: 'Done.' } });
        }
        await send('/evaluate', { instance_id });
        await send('/evaluate', { instance_id, params: { sparse: true } });
        await send('/get_info', { instance_id });
        await send('/release', { instance_id });
        await send('/weights', {});
        out.push(`/profile ${JSON.stringify(await (await fetch(`${served.url}/profile`)).json())}`);
      } finally {
        expect(await served.stop()).toBe(0);
      }
      return out;
    };
    const one = await transcript(1);
    const two = await transcript(2);
    expect(one.length).toBeGreaterThan(20);
    expect(two).toEqual(one);
    expect(one.join('\n')).toContain('"interface_round":1');
  });
});
