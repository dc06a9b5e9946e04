/**
 * `seal serve` under the load and mistakes of clients: a cap on live instances (503 past it), a
 * long flat list of calls decoded as such (not "nested too deeply"), a bad `params` on
 * POST /round (422), a bearer token, and SIGTERM with a request in flight (answered, then exit 0).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { buildDist } from '../support/cli.js';
import { allCallTasks, get, post, type Served, startServe } from './client.js';

const mini = loadMiniSuite();
const task = allCallTasks(mini)[0]!.id;
/** 150,000 calls in one flat list, about 750 KB */
const FLAT = `[${Array.from({ length: 150_000 }, () => 'f()').join(', ')}]`;

beforeAll(buildDist, 600_000);

describe('seal serve: limits', () => {
  let served: Served;
  beforeAll(async () => {
    served = await startServe(['--suite', 'mini', '--max-instances', '3']);
  });
  afterAll(async () => {
    expect(await served.stop()).toBe(0);
  });

  it('--max-instances: a new instance past the cap is a 503 saying what to do; replacing or releasing frees', async () => {
    for (const id of ['a', 'b', 'c'])
      expect((await post(served.url, '/create', { task_id: task, instance_id: id })).status).toBe(200);
    const r = await fetch(`${served.url}/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task_id: task, instance_id: 'd' }),
    });
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('5');
    expect(((await r.json()) as { detail: string }).detail).toMatch(
      /3 instances are live.*--max-instances 3.*POST \/release/,
    );
    // the same id again replaces, which adds nothing
    expect((await post(served.url, '/create', { task_id: task, instance_id: 'a' })).status).toBe(200);
    expect((await post(served.url, '/release', { instance_id: 'b' })).status).toBe(200);
    expect((await post(served.url, '/create', { task_id: task, instance_id: 'd' })).status).toBe(200);
    expect((await get<{ instances: number }>(served.url, '/stats')).body.instances).toBe(3);
  });

  it('POST /round: no body or an envelope is fine, a params array is a 422 naming it', async () => {
    const bare = await fetch(`${served.url}/round`, { method: 'POST' });
    expect(bare.status).toBe(200);
    expect((await post(served.url, '/round', {})).status).toBe(200);
    const bad = await post<{ detail: { loc: string[] }[] }>(served.url, '/round', { params: [1, 2] });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]!.loc).toEqual(['body', 'params']);
  });

  it('a flat list of 150,000 calls is decoded as 150,000 calls, not refused as nested too deeply', async () => {
    await post(served.url, '/release', { instance_id: 'c' });
    expect(
      (
        await post(served.url, '/create', {
          task_id: task,
          instance_id: 'flat',
          params: { format: 'python' },
        })
      ).status,
    ).toBe(200);
    const r = await post(served.url, '/step', { instance_id: 'flat', messages: { content: FLAT } });
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body)).not.toMatch(/nested too deeply/);
  });
});

describe('seal serve: a bearer token', () => {
  let served: Served;
  beforeAll(async () => {
    process.env.SEAL_SERVE_TOKEN = 's3cret-for-test';
    try {
      served = await startServe(['--suite', 'mini']);
    } finally {
      delete process.env.SEAL_SERVE_TOKEN;
    }
  });
  afterAll(async () => {
    expect(await served.stop()).toBe(0);
  });

  it('every route but /healthz needs it (401 without or with a wrong one)', async () => {
    expect(served.output()).toContain('bearer token required');
    expect((await fetch(`${served.url}/healthz`)).status).toBe(200);
    const none = await fetch(`${served.url}/stats`);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { detail: string }).detail).toMatch(/Authorization: Bearer/);
    const wrong = await fetch(`${served.url}/stats`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    const right = await fetch(`${served.url}/create`, {
      method: 'POST',
      headers: { authorization: 'Bearer s3cret-for-test', 'content-type': 'application/json' },
      body: JSON.stringify({ task_id: task, instance_id: 'x' }),
    });
    expect(right.status).toBe(200);
  });
});

describe('seal serve: SIGTERM', () => {
  it('answers the requests in flight, then exits 0', async () => {
    // two workers: the steps run there, and the main thread can say when it has them all
    const served = await startServe(['--suite', 'mini'], 2);
    const ids = ['t1', 't2', 't3'];
    for (const id of ids)
      expect(
        (await post(served.url, '/create', { task_id: task, instance_id: id, params: { format: 'python' } }))
          .status,
      ).toBe(200);
    // long steps (every call of a 150,000-call list runs): in flight when the signal comes
    const inFlight = ids.map((id) =>
      post(served.url, '/step', { instance_id: id, messages: { content: FLAT } }),
    );
    // the signal comes once the server has received every step (a request it never received is
    // not in flight: a closing server refuses it, as any would)
    while ((await get<{ steps: number }>(served.url, '/stats')).body.steps < ids.length)
      await new Promise((r) => setTimeout(r, 20));
    const code = served.stop();
    const answers = await Promise.all(inFlight);
    for (const a of answers) expect(a.status).toBe(200);
    expect(await code).toBe(0);
    expect(served.output()).toContain('seal serve: stopped (SIGTERM)');
  });
});
