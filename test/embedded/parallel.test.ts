import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  crossEntropy,
  crossEntropyLossAndGrad,
  type GrpoSequence,
  grpoLoss,
  grpoLossAndGrad,
  type SupervisedSequence,
  sequenceLogprobs,
} from '../../src/learner/embedded/losses.js';
import {
  GradientPool,
  sharedModel,
  splitByTokens,
  splitGroups,
} from '../../src/learner/embedded/parallel.js';
import { pretrain } from '../../src/learner/embedded/pretrain.js';
import { Trainer } from '../../src/learner/embedded/trainer.js';
import { type Arr, type DType, Gpt, type GptConfig } from '../../src/nn/model.js';
import { Rng } from '../../src/util/rng.js';

const config: GptConfig = {
  vocabSize: 64,
  contextLength: 32,
  nLayer: 2,
  nHead: 2,
  dModel: 16,
  tiedEmbeddings: true,
};

/** sequences of uneven lengths, some with a loss mask, from a small repeating grammar */
function makeBatch(seed: number, size = 6): SupervisedSequence[] {
  const rng = new Rng(seed);
  return Array.from({ length: size }, (_, i) => {
    const len = 6 + (rng.nextU32() % 27);
    const start = rng.nextU32() % 64;
    const tokens = Array.from({ length: len }, (_, t) => (start + 3 * t) % 64);
    return i % 2 ? { tokens, lossMask: tokens.map((_, t) => (t >= len / 3 ? 1 : 0)) } : { tokens };
  });
}

const pools: GradientPool[] = [];
async function startPool(model: Gpt, workers = 2): Promise<GradientPool> {
  const pool = await GradientPool.start(model.config, model.params, { workers });
  pools.push(pool);
  return pool;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

/** ||a - b|| / ||a|| */
function relativeError(a: Arr, b: Arr): number {
  let d = 0;
  let n = 0;
  for (let i = 0; i < a.length; i++) {
    d += (a[i]! - b[i]!) ** 2;
    n += a[i]! ** 2;
  }
  return Math.sqrt(d / n);
}

describe('splitByTokens', () => {
  it('balances tokens deterministically and covers every sequence once', () => {
    const lengths = [300, 120, 280, 90, 310, 200, 150, 260];
    const parts = splitByTokens(lengths, 2);
    expect(splitByTokens(lengths, 2)).toEqual(parts);
    expect(parts.flat().sort((a, b) => a - b)).toEqual(lengths.map((_, i) => i));
    const loads = parts.map((p) => p.reduce((s, i) => s + lengths[i]!, 0));
    expect(Math.abs(loads[0]! - loads[1]!)).toBeLessThanOrEqual(Math.max(...lengths));
    expect(splitByTokens([5], 3)).toEqual([[0], [], []]);
  });
});

describe('splitGroups', () => {
  it("keeps a group that shares a prompt on one worker, unless it is more than a worker's share", () => {
    // two tasks of 4 rollouts, each 100 tokens sharing 80: a group costs 80 + 4 x 20 = 160
    const lengths = Array.from({ length: 8 }, () => 100);
    const two = [
      { shared: 80, members: [0, 2, 4, 6] },
      { shared: 80, members: [1, 3, 5, 7] },
    ];
    expect(splitGroups(lengths, two, 2)).toEqual([
      [0, 2, 4, 6],
      [1, 3, 5, 7],
    ]);
    // one task's 8 rollouts and one lone sequence: the group is cut in two runs, one per worker
    const one = [
      { shared: 80, members: [0, 1, 2, 3, 4, 5, 6, 7] },
      { shared: 0, members: [8] },
    ];
    // (runs of 80 + 4 x 20 = 160 each, then the lone 100 to the first of the tied workers)
    expect(splitGroups([...lengths, 100], one, 2)).toEqual([
      [0, 1, 2, 3, 8],
      [4, 5, 6, 7],
    ]);
    expect(splitGroups(lengths, [{ shared: 80, members: [0, 1, 2, 3, 4, 5, 6, 7] }], 1)).toEqual([
      [0, 1, 2, 3, 4, 5, 6, 7],
    ]);
  });
});

describe('GradientPool', () => {
  for (const dtype of ['float64', 'float32'] as DType[]) {
    it(`gives the in-process loss and gradient with 2 workers (${dtype})`, async () => {
      const model = sharedModel(Gpt.init(config, 11, dtype));
      const batch = makeBatch(1);
      const grads = model.zerosLike();
      const local = crossEntropyLossAndGrad(model, batch, grads);
      const pool = await startPool(model);
      const r = await pool.lossAndGrad(batch, crossEntropy);
      expect(r.tokens).toBe(local.tokens);
      expect(Math.abs(r.loss - local.loss)).toBeLessThan(1e-6 * local.loss);
      const tol = dtype === 'float64' ? 1e-12 : 1e-5;
      expect(relativeError(grads, pool.grads)).toBeLessThan(tol);
      let worst = 0;
      let scale = 0;
      for (let i = 0; i < grads.length; i++) {
        worst = Math.max(worst, Math.abs(grads[i]! - pool.grads[i]!));
        scale = Math.max(scale, Math.abs(grads[i]!));
      }
      expect(worst).toBeLessThan(tol * scale);
    });
  }

  it('is bit-identical across runs and pools for the same worker count', async () => {
    const model = sharedModel(Gpt.init(config, 12));
    const batch = makeBatch(2, 7);
    const a = await startPool(model);
    const r1 = await a.lossAndGrad(batch, crossEntropy);
    const g1 = Float32Array.from(a.grads);
    const r2 = await a.lossAndGrad(batch, crossEntropy);
    expect(r2).toEqual(r1);
    expect(Buffer.from(Float32Array.from(a.grads).buffer).equals(Buffer.from(g1.buffer))).toBe(true);
    const b = await startPool(model);
    const r3 = await b.lossAndGrad(batch, crossEntropy);
    expect(r3).toEqual(r1);
    expect(Buffer.from(Float32Array.from(b.grads).buffer).equals(Buffer.from(g1.buffer))).toBe(true);
  });

  it('sees in-place weight updates of the main thread', async () => {
    const model = sharedModel(Gpt.init(config, 13));
    const batch = makeBatch(3);
    const pool = await startPool(model);
    const before = await pool.lossAndGrad(batch, crossEntropy);
    for (let i = 0; i < model.params.length; i++) model.params[i] = model.params[i]! * 0.5;
    const after = await pool.lossAndGrad(batch, crossEntropy);
    expect(after.loss).not.toBe(before.loss);
    expect(Math.abs(after.loss - crossEntropyLossAndGrad(model, batch, null).loss)).toBeLessThan(1e-5);
  });

  it('returns a zero loss and gradient for a batch without targets', async () => {
    const model = sharedModel(Gpt.init(config, 14));
    const pool = await startPool(model);
    await pool.lossAndGrad(makeBatch(4), crossEntropy);
    const r = await pool.lossAndGrad([{ tokens: [1, 2, 3], lossMask: [0, 0, 0] }], crossEntropy);
    expect(r).toEqual({ loss: 0, tokens: 0 });
    expect(pool.grads.every((g) => g === 0)).toBe(true);
  });

  it('rejects a worker exception with its message and stops every thread', async () => {
    const model = sharedModel(Gpt.init(config, 15));
    const pool = await startPool(model);
    expect(pool.liveWorkers).toBe(2);
    const bad = [...makeBatch(5), { tokens: [1, 2, 999] }];
    await expect(pool.lossAndGrad(bad, crossEntropy)).rejects.toThrow(
      /gradient worker \d failed: token id 999 out of range/,
    );
    expect(pool.liveWorkers).toBe(0);
    await expect(pool.lossAndGrad(makeBatch(5), crossEntropy)).rejects.toThrow(/closed after a failure/);
    await pool.close();
  });

  it('refuses weights outside shared memory and a bad config', async () => {
    const model = Gpt.init(config, 16);
    await expect(GradientPool.start(config, model.params)).rejects.toThrow(/SharedArrayBuffer/);
    const shared = sharedModel(model);
    await expect(GradientPool.start({ ...config, dModel: 17 }, shared.params)).rejects.toThrow();
  });

  it('closes idempotently', async () => {
    const model = sharedModel(Gpt.init(config, 17));
    const pool = await startPool(model, 3);
    expect(pool.liveWorkers).toBe(3);
    await Promise.all([pool.close(), pool.close()]);
    await pool.close();
    expect(pool.liveWorkers).toBe(0);
    await expect(pool.lossAndGrad(makeBatch(6), crossEntropy)).rejects.toThrow(/closed/);
  });
});

describe('the training core with workers', () => {
  it('lowers the loss with 2 workers and tracks the in-process trainer', async () => {
    const batch = makeBatch(7, 8);
    const init = Gpt.init(config, 18);
    const local = new Trainer(init.clone(), { lr: 1e-2 });
    const shared = sharedModel(init);
    const parallel = new Trainer(shared, { lr: 1e-2, workers: 2 });
    // weights outside shared memory work too (copied to the workers each step)
    const copied = new Trainer(init.clone(), { lr: 1e-2, workers: 2 });
    try {
      const losses: number[] = [];
      for (let i = 0; i < 8; i++) {
        const a = await local.step(batch, crossEntropy);
        const b = await parallel.step(batch, crossEntropy);
        const c = await copied.step(batch, crossEntropy);
        expect(Math.abs(a.loss - b.loss)).toBeLessThan(1e-4 * a.loss);
        expect(c).toEqual(b);
        losses.push(b.loss);
      }
      expect(losses.at(-1)!).toBeLessThan(losses[0]! * 0.8);
      expect(relativeError(local.model.params, shared.params)).toBeLessThan(1e-4);
    } finally {
      await parallel.close();
      await copied.close();
      await parallel.close();
    }
  });

  it('keeps the in-process path with workers: 1', async () => {
    const batch = makeBatch(8);
    const a = new Trainer(Gpt.init(config, 19), { lr: 1e-2 });
    const b = new Trainer(Gpt.init(config, 19), { lr: 1e-2, workers: 1 });
    expect(await b.step(batch, crossEntropy)).toEqual(await a.step(batch, crossEntropy));
    expect(Buffer.from(b.model.params.buffer).equals(Buffer.from(a.model.params.buffer))).toBe(true);
    await b.close();
  });
});

/**
 * GRPO sequences over `makeBatch`, in groups of three that begin with the same 5-token prompt (as a
 * task's rollouts do): sampler logprobs off the model's by up to ±0.4 (so some ratios clip)
 */
function makeGrpoBatch(model: Gpt, seed: number, size = 6): GrpoSequence[] {
  const rng = new Rng(seed);
  const batch = makeBatch(seed, size).map((s) => [...s.tokens]);
  for (const [i, tokens] of batch.entries()) tokens.splice(0, 5, ...batch[i - (i % 3)]!.slice(0, 5));
  return batch.map((tokens, i) => {
    const lp = sequenceLogprobs(model.forward(tokens).logits, model.config.vocabSize, tokens);
    return {
      tokens,
      lossMask: tokens.map((_, t) => (t >= 6 ? 1 : 0)),
      oldLogprobs: Array.from(lp, (x) => x + ((rng.nextU32() % 801) - 400) / 1000),
      advantage: i % 3 === 0 ? -0.7 : 1.1,
    };
  });
}

describe('GRPO on the pool', () => {
  for (const dtype of ['float64', 'float32'] as DType[]) {
    it(`gives the in-process statistics and gradient with 2 workers (${dtype})`, async () => {
      const model = sharedModel(Gpt.init(config, 21, dtype));
      const reference = sharedModel(Gpt.init(config, 22, dtype));
      const batch = makeGrpoBatch(model, 3);
      const opts = { klCoef: 0.05, clipEps: 0.2 };
      const grads = model.zerosLike();
      const local = grpoLossAndGrad(model, reference, batch, opts, grads);
      expect(local.clipFrac).toBeGreaterThan(0);
      expect(local.kl).toBeGreaterThan(0);
      const pool = await GradientPool.start(model.config, model.params, {
        workers: 2,
        reference: reference.params,
      });
      pools.push(pool);
      const r = await pool.lossAndGrad(batch, grpoLoss(opts));
      expect(r.tokens).toBe(local.tokens);
      expect(r.clipFrac).toBe(local.clipFrac);
      const tol = dtype === 'float64' ? 1e-12 : 1e-5;
      for (const k of ['loss', 'pgLoss', 'kl', 'meanRatio'] as const)
        expect(Math.abs(r[k] - local[k])).toBeLessThan(tol * Math.max(1, Math.abs(local[k])));
      expect(relativeError(grads, pool.grads)).toBeLessThan(tol);
      // without a reference in the pool the KL term cannot be computed
      const bare = await startPool(model);
      await expect(bare.lossAndGrad(batch, grpoLoss(opts))).rejects.toThrow(
        /no reference model and no refLogprobs/,
      );
    });
  }

  it('the training core with 2 workers tracks the in-process one and raises rewarded logprobs', async () => {
    const init = Gpt.init(config, 23);
    const batch = makeGrpoBatch(init, 4, 8);
    const loss = grpoLoss({ klCoef: 0.01 });
    const local = new Trainer(init.clone(), { lr: 5e-3 }, init.clone());
    const parallel = new Trainer(sharedModel(init), { lr: 5e-3, workers: 2 }, init.clone());
    const logprobOfRewarded = (m: Gpt) =>
      batch
        .filter((s) => (s.advantage as number) > 0)
        .reduce((sum, s) => {
          const lp = sequenceLogprobs(m.forward(s.tokens).logits, m.config.vocabSize, s.tokens);
          return sum + lp.reduce((a, x, t) => a + (s.lossMask[t]! > 0 ? x : 0), 0);
        }, 0);
    const before = logprobOfRewarded(parallel.model);
    try {
      for (let i = 0; i < 4; i++) {
        const a = await local.step(batch, loss);
        const b = await parallel.step(batch, loss);
        expect(b.tokens).toBe(a.tokens);
        expect(Math.abs(a.loss - b.loss)).toBeLessThan(1e-4 * Math.max(1, Math.abs(a.loss)));
      }
      expect(relativeError(local.model.params, parallel.model.params)).toBeLessThan(1e-4);
      expect(logprobOfRewarded(parallel.model)).toBeGreaterThan(before);
    } finally {
      await parallel.close();
      await parallel.close();
    }
  });
});

describe('pretrain with workers', () => {
  it('trains like the in-process run and resumes across worker counts', async () => {
    const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'seal-parallel-')));
    try {
      const tiny = {
        vocabSize: 512,
        contextLength: 192,
        nLayer: 1,
        nHead: 2,
        dModel: 16,
        tiedEmbeddings: true,
      };
      const opts = { seed: 3, tasks: 6, config: tiny, batchSize: 4, lr: 1e-2, overflow: 'tail' as const };
      const one = await pretrain({ ...opts, steps: 4, outDir: dirs[0]! });
      const two = await pretrain({ ...opts, steps: 4, outDir: dirs[1]!, workers: 2 });
      for (let i = 0; i < 4; i++)
        expect(Math.abs(two.history[i]!.loss - one.history[i]!.loss)).toBeLessThan(1e-4);
      expect(relativeError(one.model.params, two.model.params)).toBeLessThan(1e-4);
      // the worker count is not a setting: a 2-worker checkpoint resumes in process
      const more = await pretrain({ ...opts, steps: 5, outDir: dirs[1]! });
      expect(more.resumedFrom).toBe(4);
    } finally {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  });
});
