import { describe, expect, it } from 'vitest';
import { sequenceLogprobs } from '../../src/learner/embedded/losses.js';
import { newKvCache, step, stepBatch } from '../../src/nn/decoding.js';
import { allocate, Gpt, type GptConfig } from '../../src/nn/model.js';
import { pickToken, sample, sampleBatch } from '../../src/policy/embedded/sampler.js';
import { Rng } from '../../src/util/rng.js';
import { randomPreviousMap } from '../support/embedded.js';

const config: GptConfig = {
  vocabSize: 61,
  contextLength: 40,
  nLayer: 2,
  nHead: 4,
  dModel: 32,
  tiedEmbeddings: false,
};

function randomTokens(seed: number, n: number, V: number): number[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, () => rng.nextU32() % V);
}

/** a model with larger weights than the init so its distributions are far from uniform */
function sharpModel(c: GptConfig, seed: number): Gpt {
  const m = Gpt.init(c, seed);
  for (let i = 0; i < m.params.length; i++) m.params[i] = m.params[i]! * 6;
  randomPreviousMap(m, seed + 1000, 0.3);
  return m;
}

describe('embedded model', () => {
  it.each([
    { tied: false, previous: false },
    { tied: true, previous: false },
    { tied: false, previous: true },
  ])(
    'KV-cache decoding gives the full-forward logits (tied: $tied, previous token: $previous)',
    ({ tied, previous }) => {
      const c = { ...config, tiedEmbeddings: tied, previousTokenEmbedding: previous };
      const model = sharpModel(c, 1);
      const tokens = randomTokens(2, 37, c.vocabSize);
      const full = model.forward(tokens).logits;
      const V = c.vocabSize;
      const kv = newKvCache(model);
      // prefill 20 tokens (all positions), then one by one, then a chunk of 3
      const pre = step(model, kv, tokens.slice(0, 20), true);
      const rows: Float32Array[] = [];
      for (let t = 0; t < 20; t++) rows.push(pre.subarray(t * V, (t + 1) * V) as Float32Array);
      for (let t = 20; t < 34; t++) rows.push(step(model, kv, [tokens[t]!]) as Float32Array);
      const chunk = step(model, kv, tokens.slice(34, 37), true);
      for (let t = 0; t < 3; t++) rows.push(chunk.subarray(t * V, (t + 1) * V) as Float32Array);
      expect(kv.length).toBe(37);
      let worst = 0;
      for (let t = 0; t < 37; t++) {
        for (let j = 0; j < V; j++) worst = Math.max(worst, Math.abs(rows[t]![j]! - full[t * V + j]!));
      }
      expect(worst).toBeLessThan(1e-4);
    },
  );

  it.each([
    { tied: false, previous: true, dtype: 'float64' as const },
    { tied: true, previous: true, dtype: 'float64' as const },
    { tied: true, previous: false, dtype: 'float32' as const },
  ])(
    'sequences continuing a shared prefix get the logits and summed gradient of their full passes (tied: $tied, previous token: $previous, $dtype)',
    ({ tied, previous, dtype }) => {
      const c = { ...config, tiedEmbeddings: tied, previousTokenEmbedding: previous };
      const model = sharpModel(c, 3).clone(dtype);
      const V = c.vocabSize;
      const P = 13;
      const shared = randomTokens(4, P, V);
      // continuations of different lengths, one of a single token
      const rests = [randomTokens(5, 20, V), randomTokens(6, 1, V), randomTokens(7, 9, V)];
      const rng = new Rng(8);
      const dls = rests.map((r) => Float64Array.from({ length: r.length * V }, () => rng.normal()));
      // the full passes: the prefix rows carry no gradient
      const full = model.zerosLike();
      const fullLogits = rests.map((r, i) => {
        const f = model.forward([...shared, ...r]);
        const dl = allocate(dtype, f.logits.length);
        dl.set(dls[i]!, P * V);
        model.backward(f.cache, dl, full);
        return f.logits.subarray(P * V);
      });
      const grouped = model.zerosLike();
      const prefix = model.prefix(shared);
      rests.forEach((r, i) => {
        const f = model.forward(r, { prefix });
        const tol = dtype === 'float64' ? 1e-12 : 1e-4;
        for (let j = 0; j < f.logits.length; j++)
          if (Math.abs(f.logits[j]! - fullLogits[i]![j]!) > tol * (1 + Math.abs(fullLogits[i]![j]!)))
            expect.fail(`logit ${j} of continuation ${i}: ${f.logits[j]} vs ${fullLogits[i]![j]}`);
        model.backward(f.cache, dtype === 'float64' ? dls[i]! : Float32Array.from(dls[i]!), grouped);
      });
      model.backwardPrefix(prefix, grouped);
      const tol = dtype === 'float64' ? 1e-10 : 1e-3;
      for (const spec of model.layout.specs) {
        const size = spec.shape.reduce((a, b) => a * b, 1);
        let scale = 0;
        for (let i = spec.offset; i < spec.offset + size; i++) scale = Math.max(scale, Math.abs(full[i]!));
        expect(scale, spec.name).toBeGreaterThan(0);
        for (let i = spec.offset; i < spec.offset + size; i++)
          if (Math.abs(grouped[i]! - full[i]!) > tol * scale)
            expect.fail(`${spec.name}[${i - spec.offset}]: ${grouped[i]} vs ${full[i]}`);
      }
    },
  );

  it.each([{ tied: true }, { tied: false }])(
    'logits of chosen rows are those rows of the full logits, and so is their gradient (tied: $tied)',
    ({ tied }) => {
      const c = { ...config, tiedEmbeddings: tied, previousTokenEmbedding: true };
      const model = sharpModel(c, 9).clone('float64');
      const V = c.vocabSize;
      const tokens = randomTokens(10, 30, V);
      const rows = [0, 4, 5, 17, 29];
      const rng = new Rng(11);
      const dl = Float64Array.from({ length: rows.length * V }, () => rng.normal());
      const full = model.forward(tokens);
      const dFull = new Float64Array(full.logits.length);
      for (const [j, r] of rows.entries()) dFull.set(dl.subarray(j * V, (j + 1) * V), r * V);
      const [gFull, gRows] = [model.zerosLike(), model.zerosLike()];
      model.backward(full.cache, dFull, gFull);
      const some = model.forward(tokens, { rows });
      expect(some.logits.length).toBe(rows.length * V);
      for (const [j, r] of rows.entries())
        for (let k = 0; k < V; k++) expect(some.logits[j * V + k]).toBeCloseTo(full.logits[r * V + k]!, 12);
      model.backward(some.cache, dl, gRows);
      let worst = 0;
      let scale = 0;
      for (let i = 0; i < gFull.length; i++) {
        worst = Math.max(worst, Math.abs(gFull[i]! - gRows[i]!));
        scale = Math.max(scale, Math.abs(gFull[i]!));
      }
      expect(worst).toBeLessThan(1e-12 * scale);
      expect(() => model.forward(tokens, { rows: [3, 3] })).toThrow(/must ascend/);
      expect(() => model.forward(tokens, { rows: [30] })).toThrow(/must ascend/);
    },
  );

  it('a prefix cannot continue a prefix, and has no logits to take a gradient from', () => {
    const model = Gpt.init(config, 1);
    const prefix = model.prefix([1, 2, 3]);
    expect(() => model.prefix([1]).cache.layers.length).not.toThrow();
    expect(() =>
      model.forward([4, 5], { prefix: { ...prefix, cache: model.forward([6], { prefix }).cache } }),
    ).toThrow(/cannot itself continue a prefix/);
    expect(() =>
      model.backward(prefix.cache, new Float32Array(3 * config.vocabSize), model.zerosLike()),
    ).toThrow(/backwardPrefix/);
    expect(() => model.forward(randomTokens(1, 38, config.vocabSize), { prefix })).toThrow(
      /exceeds the context/,
    );
  });

  it('a previous-token map added at zero keeps the function; trained, it feeds every position but the first', () => {
    const model = sharpModel(config, 3);
    const tokens = randomTokens(4, 30, config.vocabSize);
    const grown = model.withPreviousTokenEmbedding();
    expect(grown.config.previousTokenEmbedding).toBe(true);
    expect(grown.numParams).toBe(model.numParams + config.dModel * config.dModel);
    expect(Array.from(grown.forward(tokens).logits)).toEqual(Array.from(model.forward(tokens).logits));
    randomPreviousMap(grown, 1009, 0.3);
    const before = model.forward(tokens).logits;
    const after = grown.forward(tokens).logits;
    const V = config.vocabSize;
    const rowDiff = (t: number) => {
      let m = 0;
      for (let j = 0; j < V; j++) m = Math.max(m, Math.abs(after[t * V + j]! - before[t * V + j]!));
      return m;
    };
    expect(rowDiff(0)).toBe(0);
    for (let t = 1; t < tokens.length; t++) expect(rowDiff(t)).toBeGreaterThan(1e-4);
    // and it survives the weights file
    const back = Gpt.deserialize(grown.serialize()).model;
    expect(back.config.previousTokenEmbedding).toBe(true);
    expect(Array.from(back.params)).toEqual(Array.from(grown.params));
  });

  it('rejects sequences longer than the context and unknown ids', () => {
    const model = Gpt.init(config, 1);
    expect(() => model.forward(randomTokens(1, 41, config.vocabSize))).toThrow(/context/);
    expect(() => model.forward([1, 2, config.vocabSize])).toThrow(/out of range/);
    const kv = newKvCache(model);
    step(model, kv, randomTokens(1, 40, config.vocabSize));
    expect(() => step(model, kv, [1])).toThrow(/context/);
  });

  it('the same seed gives the same init; another seed another', () => {
    const a = Gpt.init(config, 42);
    const b = Gpt.init(config, 42);
    const c = Gpt.init(config, 43);
    expect(Buffer.from(a.params.buffer).equals(Buffer.from(b.params.buffer))).toBe(true);
    expect(Buffer.from(a.params.buffer).equals(Buffer.from(c.params.buffer))).toBe(false);
    const spec = a.layout.specs.find((s) => s.name === 'h0.ln1.g')!;
    expect(a.params[spec.offset]).toBe(1);
  });

  it('weights round-trip through the binary format, and corruption is detected', () => {
    const model = sharpModel(config, 5);
    const blob = model.serialize({ note: 'test' });
    const { model: back, meta } = Gpt.deserialize(blob);
    expect(meta).toEqual({ note: 'test' });
    expect(back.config).toEqual(model.config);
    expect(Buffer.from(back.params.buffer).equals(Buffer.from(model.params.buffer))).toBe(true);

    const flipped = blob.slice();
    flipped[Math.floor(flipped.length / 2)]! ^= 0x10;
    expect(() => Gpt.deserialize(flipped)).toThrow(/checksum mismatch/);
    expect(() => Gpt.deserialize(blob.subarray(0, blob.length - 100))).toThrow(
      /cannot load embedded model weights/,
    );
    expect(() => Gpt.deserialize(new Uint8Array(100))).toThrow(/bad magic/);
  });
});

describe('sampler', () => {
  const model = sharpModel(config, 7);
  const prompt = randomTokens(3, 8, config.vocabSize);

  it('is deterministic for a seed and varies across seeds', () => {
    const a = sample(model, prompt, { seed: 1, maxTokens: 20 });
    const b = sample(model, prompt, { seed: 1, maxTokens: 20 });
    const c = sample(model, prompt, { seed: 2, maxTokens: 20 });
    expect(a).toEqual(b);
    expect(a.tokenIds).not.toEqual(c.tokenIds);
    expect(a.tokenIds).toHaveLength(20);
    expect(a.finishReason).toBe('length');
  });

  it('at temperature 1 returns the model logprobs of the sampled tokens', () => {
    const r = sample(model, prompt, { seed: 4, maxTokens: 16 });
    const all = [...prompt, ...r.tokenIds];
    const lp = sequenceLogprobs(model.forward(all).logits, config.vocabSize, all);
    for (const [i, v] of r.logprobs.entries()) expect(v).toBeCloseTo(lp[prompt.length + i]!, 4);
  });

  it('greedy decoding picks the argmax and stops at a stop id', () => {
    const r = sample(model, prompt, { temperature: 0, maxTokens: 12 });
    const all = [...prompt, ...r.tokenIds];
    const V = config.vocabSize;
    const logits = model.forward(all).logits;
    for (const [i, id] of r.tokenIds.entries()) {
      const row = logits.subarray((prompt.length + i - 1) * V, (prompt.length + i) * V);
      expect(row[id]).toBe(Math.max(...row));
    }
    const stopAt = r.tokenIds[3]!;
    const s = sample(model, prompt, { temperature: 0, maxTokens: 12, stopIds: [stopAt] });
    expect(s.finishReason).toBe('stop');
    expect(s.tokenIds.at(-1)).toBe(stopAt);
    expect(s.tokenIds.length).toBeLessThanOrEqual(4);
  });

  it('top-p sampling only draws from the nucleus, with renormalised logprobs', () => {
    const logits = Float32Array.from([2, 1.5, 0, -1, -3]);
    const rng = new Rng(1);
    const p = logits.map((v) => Math.exp(v));
    const z = p.reduce((a, b) => a + b, 0);
    const nucleus = p[0]! + p[1]!;
    // the largest holds 0.56 of the mass, the two largest 0.89: a 0.6 nucleus is {0, 1}
    expect(p[0]! / z).toBeLessThan(0.6);
    expect(nucleus / z).toBeGreaterThan(0.6);
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const [id, lp] = pickToken(logits, 1, 0.6, rng);
      seen.add(id);
      expect(lp).toBeCloseTo(Math.log(p[id]! / nucleus), 6);
    }
    expect([...seen].sort()).toEqual([0, 1]);
  });

  it.each([false, true])(
    'batched decoding matches one-at-a-time decoding (previous token: %s)',
    (previous) => {
      const model = sharpModel({ ...config, previousTokenEmbedding: previous }, 7);
      const prompts = [prompt, randomTokens(8, 5, config.vocabSize), randomTokens(9, 11, config.vocabSize)];
      // stepBatch logits equal step logits
      const kvs = prompts.map((p) => {
        const kv = newKvCache(model);
        step(model, kv, p);
        return kv;
      });
      const singles = prompts.map((p) => {
        const kv = newKvCache(model);
        step(model, kv, p);
        return step(model, kv, [3]);
      });
      const batched = stepBatch(model, kvs, [3, 3, 3]);
      const V = config.vocabSize;
      for (let b = 0; b < 3; b++) {
        for (let j = 0; j < V; j++)
          expect(Math.abs(batched[b * V + j]! - singles[b]![j]!)).toBeLessThan(1e-4);
      }
      // greedy: the same tokens; sampling: deterministic per seed, model logprobs at temperature 1
      const greedy = sampleBatch(model, prompts, { temperature: 0, maxTokens: 10 });
      for (const [i, p] of prompts.entries()) {
        expect(greedy[i]!.tokenIds).toEqual(sample(model, p, { temperature: 0, maxTokens: 10 }).tokenIds);
      }
      const a = sampleBatch(model, prompts, { seeds: [4, 5, 6], maxTokens: 12, stopIds: [7] });
      expect(sampleBatch(model, prompts, { seeds: [4, 5, 6], maxTokens: 12, stopIds: [7] })).toEqual(a);
      for (const [i, p] of prompts.entries()) {
        const r = a[i]!;
        const all = [...p, ...r.tokenIds];
        const lp = sequenceLogprobs(model.forward(all).logits, config.vocabSize, all);
        for (const [k, v] of r.logprobs.entries()) expect(v).toBeCloseTo(lp[p.length + k]!, 4);
        expect(r.finishReason === 'stop').toBe(r.tokenIds.at(-1) === 7);
      }
    },
  );
});
