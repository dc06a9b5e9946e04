import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { pretrain } from '../../src/learner/embedded/pretrain.js';
import { CheckpointError, loadCheckpoint } from '../../src/nn/checkpoint.js';
import { EmbeddedPolicy } from '../../src/policy/embedded/policy.js';
import {
  DerivedSeedPolicy,
  derivedSeed,
  EmbeddedPolicyPool,
  type EmbeddedPolicyPoolOptions,
  homeThread,
} from '../../src/policy/embedded/pool.js';
import type { Completion, CompletionRequest } from '../../src/policy/policy.js';

// every thread started, to check that none outlives a failed start
const started = vi.hoisted(() => [] as Worker[]);
vi.mock('node:worker_threads', async (original) => {
  const mod = await original<typeof import('node:worker_threads')>();
  class RecordedWorker extends mod.Worker {
    constructor(...args: ConstructorParameters<typeof mod.Worker>) {
      super(...args);
      started.push(this);
    }
  }
  return { ...mod, Worker: RecordedWorker };
});

const root = mkdtempSync(join(tmpdir(), 'seal-pool-'));
const ckpt = join(root, 'ckpt');
let local: EmbeddedPolicy;

/** a tiny checkpoint in `outDir`, barely trained */
function tinyCheckpoint(outDir: string, seed: number, steps: number) {
  return pretrain({
    seed,
    tasks: 4,
    config: { vocabSize: 512, contextLength: 192, nLayer: 1, nHead: 2, dModel: 16, tiedEmbeddings: true },
    steps,
    batchSize: 1,
    overflow: 'tail',
    outDir,
  });
}

beforeAll(async () => {
  await tinyCheckpoint(ckpt, 3, 1);
  const { model, tokenizer } = loadCheckpoint(ckpt);
  local = new EmbeddedPolicy(model, tokenizer);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const pools: EmbeddedPolicyPool[] = [];
async function startPool(
  workers: number,
  dir = ckpt,
  opts: EmbeddedPolicyPoolOptions = {},
): Promise<EmbeddedPolicyPool> {
  const pool = await EmbeddedPolicyPool.start(dir, { ...opts, workers });
  pools.push(pool);
  return pool;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

const chats: CompletionRequest['messages'][] = [
  [
    { role: 'system', content: 'You can call get_weather(city).' },
    { role: 'user', content: 'What is the weather in Oslo?' },
  ],
  [{ role: 'user', content: 'List the files in /tmp.' }],
  [
    { role: 'system', content: 'You can call cd(folder) and ls().' },
    { role: 'user', content: 'Go to docs and list it.' },
    { role: 'assistant', content: '[cd(folder="docs")]' },
    { role: 'user', content: 'Results of your function calls, in order:\ncd(folder="docs")\nNone' },
  ],
  [{ role: 'user', content: 'Hello' }],
];

/** a completion without its timing, which no two runs share */
const timeless = ({ latencyMs: _, ...rest }: Completion) => rest;

describe('EmbeddedPolicyPool', () => {
  it('gives the in-process completions, greedy and with explicit seeds', async () => {
    const pool = await startPool(2);
    expect(pool.name).toBe(local.name);
    expect(pool.modelSha256).toBe(loadCheckpoint(ckpt).config.modelSha256);
    const requests: CompletionRequest[] = chats.flatMap((messages, k) => [
      { messages, temperature: 0, maxTokens: 10 },
      { messages, temperature: 1, maxTokens: 10, seed: 100 + k },
      { messages, temperature: 0.8, topP: 0.9, maxTokens: 10, seed: 7 },
    ]);
    const got = await Promise.all(requests.map((r) => pool.complete(r)));
    for (let i = 0; i < requests.length; i++)
      expect(timeless(got[i]!)).toEqual(timeless(await local.complete(requests[i]!)));
    // sampled at temperature 1 from a barely trained model, seeds must show in the output
    const sampled = got.filter((_, i) => i % 3 === 1).map((c) => c.tokenIds);
    expect(new Set(sampled.map((ids) => JSON.stringify(ids))).size).toBeGreaterThan(1);
  });

  it('seeds seedless requests from their messages, like DerivedSeedPolicy in process', async () => {
    const pool = await startPool(2);
    const inProcess = new DerivedSeedPolicy(local, 0);
    expect(inProcess.name).toBe(local.name);
    for (const messages of chats) {
      const r: CompletionRequest = { messages, temperature: 1, maxTokens: 10 };
      expect(pool.seedOf(r)).toBe(derivedSeed(0, messages));
      const want = timeless(await local.complete({ ...r, seed: derivedSeed(0, messages) }));
      expect(timeless(await pool.complete(r))).toEqual(want);
      expect(timeless(await inProcess.complete(r))).toEqual(want);
    }
    expect(derivedSeed(1, chats[0]!)).not.toBe(derivedSeed(0, chats[0]!));
    expect(pool.seedOf({ messages: chats[0]!, seed: 5 })).toBe(5);
  });

  it('does not depend on the worker count or the order of the requests', async () => {
    const requests: CompletionRequest[] = [...chats, ...chats].map((messages, k) => ({
      messages,
      temperature: 1,
      maxTokens: 10,
      ...(k >= chats.length ? { seed: k } : {}),
    }));
    const one = await startPool(1);
    const a = await Promise.all(requests.map((r) => one.complete(r)));
    const three = await startPool(3);
    const b = await Promise.all([...requests].reverse().map((r) => three.complete(r)));
    b.reverse();
    expect(b.map(timeless)).toEqual(a.map(timeless));
  });

  it('decodes requests made together as one batch per thread, and a bad one fails alone', async () => {
    const requests: CompletionRequest[] = chats.map((messages, k) => ({
      messages,
      temperature: 1,
      maxTokens: 10,
      seed: 7 + k,
    }));
    const pool = await startPool(1);
    const bad = pool.complete({ ...requests[0]!, topP: 2 });
    const got = await Promise.all(requests.map((r) => pool.complete(r)));
    await expect(bad).rejects.toThrow(/sampler worker 0 failed: topP must be in/);
    expect(pool.batching).toEqual({ batches: 1, requests: requests.length + 1 });
    for (const [k, r] of requests.entries())
      expect(timeless(got[k]!)).toEqual(timeless(await local.complete(r)));
    // a thread takes at most maxBatch at once
    const small = await startPool(1, ckpt, { maxBatch: 2 });
    await Promise.all(requests.map((r) => small.complete(r)));
    expect(small.batching.batches).toBe(Math.ceil(requests.length / 2));
  });

  it('sends the steps of one chat to one thread, whose prefix cache holds its start', () => {
    const chat = chats[2]!;
    const home = homeThread(chat, 2);
    expect(homeThread(chat.slice(0, 2), 2)).toBe(home);
    expect(homeThread([...chat, { role: 'assistant', content: 'done' }], 2)).toBe(home);
    const homes = new Set(
      Array.from({ length: 40 }, (_, k) => homeThread([{ role: 'user', content: `task ${k}` }], 2)),
    );
    expect([...homes].sort()).toEqual([0, 1]);
  });

  it('honours aborts before a request runs and keeps serving', async () => {
    const pool = await startPool(1);
    const gone = new AbortController();
    gone.abort(new Error('cancelled before'));
    await expect(pool.complete({ messages: chats[0]! }, gone.signal)).rejects.toThrow('cancelled before');
    // the only thread is busy with the first request, so the second waits and can be dropped
    const waiting = new AbortController();
    const first = pool.complete({ messages: chats[0]!, temperature: 0, maxTokens: 10 });
    const second = pool.complete({ messages: chats[1]!, temperature: 0, maxTokens: 10 }, waiting.signal);
    waiting.abort(new Error('cancelled while queued'));
    await expect(second).rejects.toThrow('cancelled while queued');
    expect((await first).usage?.completionTokens).toBeGreaterThan(0);
  });

  it('a prompt too long for the context degrades to its last tokens instead of failing', async () => {
    const pool = await startPool(1);
    const huge = 'x '.repeat(2000);
    const r = await pool.complete({
      messages: [{ role: 'system', content: huge }, chats[1]![0]!],
      temperature: 0,
      maxTokens: 8,
    });
    // 192-token context, 8 tokens of room, the generation prompt
    expect(r.usage?.promptTokens).toBe(192 - 8);
    expect(pool.liveWorkers).toBe(1);
  });

  it('fails at start on a bad checkpoint with its CheckpointError, leaving no thread', async () => {
    const before = started.length;
    const missing = await EmbeddedPolicyPool.start(join(root, 'nowhere'), { workers: 2 }).catch(
      (e: unknown) => e,
    );
    expect(missing).toBeInstanceOf(CheckpointError);
    expect((missing as Error).message).toMatch(/is not an embedded-policy checkpoint \(no config\.json\)/);

    const damaged = join(root, 'damaged');
    cpSync(ckpt, damaged, { recursive: true });
    const bytes = readFileSync(join(damaged, 'model.bin'));
    bytes[bytes.length >> 1]! ^= 0xff;
    writeFileSync(join(damaged, 'model.bin'), bytes);
    await expect(EmbeddedPolicyPool.start(damaged, { workers: 2 })).rejects.toThrow(
      /model\.bin: cannot load embedded model weights: checksum mismatch/,
    );
    const threads = started.slice(before);
    expect(threads).toHaveLength(4);
    expect(threads.every((w) => w.threadId === -1)).toBe(true);
  });

  it('reloads other weights in place: the new completions, name and sha, the running request on the old', async () => {
    const other = join(root, 'other');
    await tinyCheckpoint(other, 4, 2);
    const loaded = loadCheckpoint(other);
    const fresh = new EmbeddedPolicy(loaded.model, loaded.tokenizer);
    const pool = await startPool(2);
    const threads = started.length;
    const request = (k: number): CompletionRequest => ({
      messages: chats[k % chats.length]!,
      temperature: 1,
      maxTokens: 12,
      seed: 50 + k,
    });
    // one running when the reload starts, one made while it runs
    const before = pool.complete(request(0));
    const reloading = pool.reload(other, 'embedded@1');
    const during = pool.complete(request(1));
    await reloading;
    expect(started.length).toBe(threads); // no thread was started
    expect(pool.name).toBe('embedded@1');
    expect(pool.modelSha256).toBe(loaded.config.modelSha256);
    expect(timeless(await before)).toEqual(timeless(await local.complete(request(0))));
    expect(timeless(await during)).toEqual(timeless(await fresh.complete(request(1))));
    const after = await Promise.all([2, 3, 4, 5].map((k) => pool.complete(request(k))));
    for (const [i, k] of [2, 3, 4, 5].entries())
      expect(timeless(after[i]!)).toEqual(timeless(await fresh.complete(request(k))));
  });

  it('a reload from a bad checkpoint rejects with its CheckpointError and closes the pool', async () => {
    const pool = await startPool(2);
    await expect(pool.reload(join(root, 'nowhere'))).rejects.toBeInstanceOf(CheckpointError);
    expect(pool.liveWorkers).toBe(0);
    await expect(pool.complete({ messages: chats[0]! })).rejects.toThrow(/closed/);
  });

  it('closes idempotently and refuses requests afterwards', async () => {
    const pool = await startPool(2);
    expect(pool.liveWorkers).toBe(2);
    // the outcome is observed from the start: the rejection arrives while close() is awaited
    const running = pool.complete({ messages: chats[0]!, temperature: 0, maxTokens: 10 }).then(
      () => 'done',
      (e: Error) => e.message,
    );
    await Promise.all([pool.close(), pool.close()]);
    await pool.close();
    expect(pool.liveWorkers).toBe(0);
    // terminated mid-sample, unless the thread was quicker than its termination
    const outcome = await running;
    expect(outcome).toMatch(/^done$|closed/);
    await expect(pool.complete({ messages: chats[0]! })).rejects.toThrow(/closed/);
  });
});
