import { describe, expect, it } from 'vitest';
import { formatAdapter } from '../../src/agent/formats/index.js';
import { rollout } from '../../src/bfcl/rollout.js';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { BASE_CHECKPOINT_DIR, loadCheckpoint } from '../../src/nn/checkpoint.js';
import { forkKvCache, freeKv, newKvCache, step, stepBatch } from '../../src/nn/decoding.js';
import type { ResidentKv } from '../../src/nn/kernels/attention.js';
import { residentFloats } from '../../src/nn/kernels/heap.js';
import { Gpt, type GptConfig } from '../../src/nn/model.js';
import { EmbeddedPolicy, type EmbeddedPolicyOptions } from '../../src/policy/embedded/policy.js';
import { PrefixCache, type SampleOptions, sample, sampleMany } from '../../src/policy/embedded/sampler.js';
import { Rng } from '../../src/util/rng.js';
import { mapConcurrent } from '../../src/util/semaphore.js';
import { randomPreviousMap } from '../support/embedded.js';

const base: GptConfig = {
  vocabSize: 67,
  contextLength: 160,
  nLayer: 2,
  nHead: 4,
  dModel: 32,
  tiedEmbeddings: true,
  previousTokenEmbedding: true,
};

function randomTokens(seed: number, n: number, V: number): number[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, () => rng.nextU32() % V);
}

function sharpModel(c: GptConfig, seed: number, dtype: 'float32' | 'float64' = 'float32'): Gpt {
  const m = Gpt.init(c, seed, dtype);
  for (let i = 0; i < m.params.length; i++) m.params[i] = m.params[i]! * 6;
  randomPreviousMap(m, seed + 1000, 0.3);
  return m;
}

// untied head; width 160 puts the MLP's K = 640 past the point where the SIMD kernel blocks k
const configs = [
  { name: 'tied, previous-token map', c: base, dtype: 'float32' as const },
  { name: 'untied head', c: { ...base, tiedEmbeddings: false }, dtype: 'float32' as const },
  { name: 'width 160', c: { ...base, dModel: 160, nLayer: 1 }, dtype: 'float32' as const },
  { name: 'float64', c: base, dtype: 'float64' as const },
];

describe('prefix cache', () => {
  it.each(configs)(
    'a prompt continued from cached keys and values gets bit-identical logits ($name)',
    ({ c, dtype }) => {
      const model = sharpModel(c, 1, dtype);
      const tokens = randomTokens(2, 137, c.vocabSize);
      const whole = step(model, newKvCache(model), tokens);
      // the prefix run in one piece, token by token, or in uneven chunks (row counts on both sides
      // of the kernels' 4-, 8- and 16-row cut-offs)
      for (const cuts of [
        [1],
        [5],
        [17],
        [100],
        [3, 4, 9, 33, 90],
        Array.from({ length: 40 }, (_, i) => i + 1),
      ]) {
        const kv = newKvCache(model);
        let at = 0;
        for (const cut of cuts) {
          step(model, kv, tokens.slice(at, cut));
          at = cut;
        }
        expect(step(model, kv, tokens.slice(at))).toEqual(whole);
      }
      // and decoded by stepBatch next to other sequences
      const kvs = [newKvCache(model), newKvCache(model), newKvCache(model)];
      step(model, kvs[0]!, tokens.slice(0, 120));
      step(model, kvs[1]!, randomTokens(3, 50, c.vocabSize));
      step(model, kvs[2]!, randomTokens(4, 9, c.vocabSize));
      for (let t = 120; t < 136; t++) stepBatch(model, kvs, [tokens[t]!, 5, 6]);
      expect(step(model, kvs[0]!, tokens.slice(136))).toEqual(whole);
    },
  );

  it('sampling through the cache gives exactly what sampling without it gives', () => {
    const model = sharpModel(base, 5);
    const cache = new PrefixCache(model);
    const V = base.vocabSize;
    const system = randomTokens(6, 60, V);
    const check = (prompt: number[], seed: number) => {
      const opts = { seed, maxTokens: 12, stopIds: [0] };
      const plain = sample(model, prompt, opts);
      const cached = sample(model, prompt, { ...opts, prefixCache: cache });
      expect(cached).toEqual(plain);
      return plain;
    };
    // a group of rollouts sharing the first prompt, each continuing its own chat for a few steps
    for (let g = 0; g < 3; g++) {
      let prompt = [...system, ...randomTokens(7, 8, V)];
      for (let step = 0; step < 3; step++) {
        const r = check(prompt, 100 * g + step);
        // the next prompt: this one, the completion (re-tokenised: its last token changes), a tool result
        prompt = [...prompt, ...r.tokenIds.slice(0, -1), 1, ...randomTokens(10 * g + step, 6, V)];
        if (prompt.length > 130) break;
      }
    }
    // a windowed chat: the system prompt stays, what follows shifts
    check([...system, ...randomTokens(11, 40, V)], 9);
    // the whole prompt already cached (only its last token runs again)
    const p = [...system, ...randomTokens(12, 20, V)];
    check(p, 3);
    check(p, 4);
    expect(cache.hits).toBeGreaterThan(cache.misses);
  });

  it('forgets what it holds when the weights change in place', () => {
    const model = sharpModel(base, 5);
    const cache = new PrefixCache(model);
    const prompt = randomTokens(13, 50, base.vocabSize);
    sample(model, prompt, { seed: 1, maxTokens: 5, prefixCache: cache });
    expect(cache.size).toBe(1);
    const w = model.layout.layers[0]!.wqkv;
    model.params[w] = model.params[w]! + 0.5; // an update
    const fresh = sample(model, prompt, { seed: 1, maxTokens: 5 });
    expect(sample(model, prompt, { seed: 1, maxTokens: 5, prefixCache: cache })).toEqual(fresh);
    expect(cache.hits).toBe(0);
    // told that the weights never change (a sampler thread's own model), it takes no checksum
    const fixed = new PrefixCache(model, { weightsFixed: true });
    sample(model, prompt, { seed: 1, maxTokens: 5, prefixCache: fixed });
    model.params[w] = model.params[w]! - 0.5;
    sample(model, prompt, { seed: 1, maxTokens: 5, prefixCache: fixed });
    expect(fixed.hits).toBe(prompt.length - 1);
  });

  it('keeps to its budget, least recently used first, and drops entries that others extend', () => {
    const model = sharpModel(base, 5);
    // the budget counts room: four blocks of 40 positions are over 120
    const cache = new PrefixCache(model, { maxTokens: 120, maxEntries: 3 });
    const kvOf = (ids: number[]) => {
      const kv = newKvCache(model, 40);
      step(model, kv, ids);
      return kv;
    };
    const a = randomTokens(1, 30, 67);
    cache.put(a.slice(0, 10), kvOf(a.slice(0, 10)));
    cache.put(a, kvOf(a)); // extends the first: replaces it
    expect(cache.size).toBe(1);
    cache.put(a.slice(0, 20), kvOf(a.slice(0, 20))); // already held
    expect(cache.size).toBe(1);
    const b = randomTokens(2, 30, 67);
    const c = randomTokens(3, 30, 67);
    cache.put(b, kvOf(b));
    cache.put(c, kvOf(c));
    expect(cache.size).toBe(3);
    // branching off inside a copies its first 25 positions and leaves it, now the most recent
    const branch = cache.take([...a.slice(0, 25), 66, 1], 40);
    expect(branch.reused).toBe(25);
    expect(cache.size).toBe(3);
    freeKv(model, branch.kv);
    const d = randomTokens(4, 30, 67);
    cache.put(d, kvOf(d)); // 160 positions of room: b, the least recent, leaves
    expect(cache.size).toBe(3);
    expect(cache.take([...b, 1], 40).reused).toBe(0);
    // at most all but the last token of a prompt comes from the cache
    expect(cache.take(a, 40).reused).toBe(29);
    expect(cache.size).toBe(3);
    // a prompt that continues all of c takes its entry over (no copy) when it has room enough
    expect(cache.take([...c, 1], 41).reused).toBe(30); // too little room: copied
    expect(cache.size).toBe(3);
    const whole = cache.take([...c, 1], 40);
    expect(whole.reused).toBe(30);
    expect(cache.size).toBe(2);
    const fresh = newKvCache(model);
    expect(step(model, whole.kv, [1])).toEqual(step(model, fresh, [...c, 1]));
  });

  it('gives back every KV block it does not keep', () => {
    const model = sharpModel(base, 6);
    const probe = newKvCache(model);
    const room = (probe.block as ResidentKv).floats;
    freeKv(model, probe);
    const held = () => {
      const r = residentFloats();
      return r.top - r.free;
    };
    const before = held();
    const cache = new PrefixCache(model);
    const shared = randomTokens(30, 40, base.vocabSize);
    const jobs = [1, 2, 3].map((seed) => ({
      prompt: [...shared, seed],
      options: { seed, maxTokens: 8, prefixCache: cache },
    }));
    sampleMany(model, jobs);
    sampleMany(
      model,
      jobs.map((j) => ({ prompt: j.prompt, options: { ...j.options, prefixCache: undefined } })),
    );
    expect(held() - before).toBe(cache.size * room);
    cache.clear();
    expect(held()).toBe(before);
  });
});

describe('forked KV caches', () => {
  const held = () => {
    const r = residentFloats();
    return r.top - r.free;
  };

  it.each(configs)(
    'a fork reads its first positions where its source holds them, with the logits of a cache of its own ($name)',
    ({ c, dtype }) => {
      const model = sharpModel(c, 11, dtype);
      const V = c.vocabSize;
      const before = held();
      const prompt = randomTokens(12, 61, V);
      const source = newKvCache(model);
      step(model, source, prompt);
      // fork points on and off the 4-float vectors, and the whole source
      const points = [0, 1, 3, 4, 32, 37, 61];
      const forks = points.map((n) => forkKvCache(model, source, n, n > 0 ? prompt[n - 1]! : -1));
      const suffixes = points.map((n, i) => randomTokens(13 + i, 9 + (n % 5), V));
      // the source goes on and is freed before its forks are done: they still read its positions
      step(model, source, randomTokens(40, 20, V));
      freeKv(model, source);
      for (const [i, n] of points.entries()) {
        const own = newKvCache(model);
        const want = step(model, own, [...prompt.slice(0, n), ...suffixes[i]!], true);
        const got = step(model, forks[i]!, suffixes[i]!, true);
        expect(got).toEqual(want.subarray(n * V));
        freeKv(model, own);
      }
      // decoded together, and forked again past and within the fork's first positions
      const next = points.map((_, i) => (i * 7) % V);
      const batched = stepBatch(model, forks, next);
      for (const [i, n] of points.entries()) {
        const whole = [...prompt.slice(0, n), ...suffixes[i]!, next[i]!];
        const own = newKvCache(model);
        const want = step(model, own, whole);
        expect(batched.subarray(i * V, (i + 1) * V)).toEqual(want);
        freeKv(model, own);
        for (const m of [Math.floor(n / 2), whole.length - 3]) {
          const again = forkKvCache(model, forks[i]!, m, m > 0 ? whole[m - 1]! : -1);
          const fresh = newKvCache(model);
          expect(step(model, again, whole.slice(m))).toEqual(step(model, fresh, whole));
          freeKv(model, again);
          freeKv(model, fresh);
        }
      }
      for (const f of forks) freeKv(model, f);
      if (dtype === 'float32') expect(held()).toBe(before);
    },
  );

  it.each(configs)(
    'forks of one prompt decoded together attend to what they share at once, with the bits of each alone ($name)',
    ({ c, dtype }) => {
      const model = sharpModel(c, 16, dtype);
      const V = c.vocabSize;
      const prompt = randomTokens(17, 61, V);
      const source = newKvCache(model);
      step(model, source, prompt);
      // rows whose shared positions end before, at and after the ones all of them share (20),
      // the source itself, and a sequence of its own
      const points = [33, 20, 37, 61, 45];
      const kvs = points.map((n) => forkKvCache(model, source, n, prompt[n - 1]!));
      const histories = points.map((n, i) => [...prompt.slice(0, n), ...randomTokens(18 + i, 3 + i, V)]);
      for (const [i, n] of points.entries()) step(model, kvs[i]!, histories[i]!.slice(n));
      kvs.push(source);
      histories.push(prompt);
      const other = randomTokens(30, 50, V);
      kvs.push(newKvCache(model));
      step(model, kvs.at(-1)!, other);
      histories.push(other);
      for (let t = 0; t < 3; t++) {
        const next = kvs.map((_, i) => (i * 5 + t) % V);
        const batched = stepBatch(model, kvs, next);
        for (const [i, h] of histories.entries()) {
          h.push(next[i]!);
          const own = newKvCache(model);
          expect(batched.subarray(i * V, (i + 1) * V)).toEqual(step(model, own, h));
          freeKv(model, own);
        }
      }
      for (const kv of kvs) freeKv(model, kv);
    },
  );

  it('refuses to write a position it reads from its source', () => {
    const model = sharpModel(base, 14);
    const source = newKvCache(model);
    step(model, source, randomTokens(15, 10, base.vocabSize));
    const fork = forkKvCache(model, source, 6, 3);
    expect(() => model.net.ops.kvWrite(fork.block, 0, 5, new Float32Array(3 * base.dModel), 0)).toThrow(
      /position 5 .* base/,
    );
    freeKv(model, source);
    freeKv(model, fork);
    expect(() => step(model, fork, [1])).toThrow(/freed/);
  });
});

describe('batched sampling', () => {
  it('each job of sampleMany gets exactly what sample gives it alone', () => {
    for (const c of [base, { ...base, tiedEmbeddings: false }]) {
      const model = sharpModel(c, 8);
      const V = c.vocabSize;
      const shared = randomTokens(20, 30, V);
      const jobs: { prompt: number[]; options: SampleOptions }[] = [
        { prompt: randomTokens(21, 9, V), options: { seed: 1, maxTokens: 30 } },
        { prompt: [...shared, 4], options: { seed: 2, maxTokens: 25, stopIds: [0, 1] } },
        { prompt: [...shared, 4], options: { seed: 3, temperature: 0.7, topP: 0.9, maxTokens: 40 } },
        { prompt: randomTokens(22, 70, V), options: { temperature: 0, maxTokens: 20 } },
        { prompt: randomTokens(23, 5, V), options: { seed: 5, maxTokens: 0 } },
        { prompt: [...shared, 9, 9], options: { seed: 6, maxTokens: 30, onToken: (id) => id === 2 } },
      ];
      const alone = jobs.map((j) => sample(model, j.prompt, j.options));
      expect(sampleMany(model, jobs)).toEqual(alone);
      const cache = new PrefixCache(model);
      const cached = jobs.map((j) => ({ ...j, options: { ...j.options, prefixCache: cache } }));
      expect(sampleMany(model, cached)).toEqual(alone);
      expect(sampleMany(model, cached)).toEqual(alone); // now every prompt is in the cache
    }
  });

  it('rollouts through the embedded policy are the same batched, cached, or one request at a time', async () => {
    const data = loadMiniSuite();
    const { model, tokenizer } = loadCheckpoint(BASE_CHECKPOINT_DIR);
    const train = new Set(data.split.train);
    const tasks = data.tasks.filter((t) => train.has(t.id)).slice(0, 2);
    const items = tasks.flatMap((t) => [t, t]);
    const format = formatAdapter('compact');
    const run = async (opts: EmbeddedPolicyOptions) => {
      const policy = new EmbeddedPolicy(model, tokenizer, { seed: 4, ...opts });
      const trajectories = await mapConcurrent(items, 8, (t) =>
        rollout(t, data, policy, {
          format,
          sampling: { temperature: 1, maxTokens: 48 },
          onParseError: 'reply',
        }),
      );
      return { policy, json: JSON.stringify(trajectories, (k, v) => (k === 'latencyMs' ? 0 : v)) };
    };
    const plain = await run({ prefixCache: false, maxBatch: 1 });
    const cached = await run({ maxBatch: 1 });
    const batched = await run({});
    expect(cached.json).toBe(plain.json);
    expect(batched.json).toBe(plain.json);
    expect(batched.policy.batching.batches).toBeLessThan(batched.policy.batching.requests);
    expect(cached.policy.prefixCache!.hits).toBeGreaterThan(cached.policy.prefixCache!.misses);
  }, 120_000);

  it('a request the sampler refuses fails alone, not the requests batched with it', async () => {
    const { model, tokenizer } = loadCheckpoint(BASE_CHECKPOINT_DIR);
    const policy = new EmbeddedPolicy(model, tokenizer);
    const messages = [{ role: 'user' as const, content: 'List the files.' }];
    const got = await Promise.allSettled(
      [1, 0, 1].map((topP, k) => policy.complete({ messages, topP, seed: k, maxTokens: 4 })),
    );
    expect(got.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((got[1] as PromiseRejectedResult).reason.message).toMatch(/topP must be in \(0, 1\]/);
    expect(policy.batching).toEqual({ batches: 1, requests: 2 });
  });
});
