/**
 * Benchmark of the embedded model (TypeScript with WebAssembly SIMD kernels, one thread unless said): training
 * tokens/s (forward + backward + Adam, supervised and GRPO with a reference model; on one thread and
 * on the gradient workers; on the WebAssembly kernels, and on the native ones when onnxruntime-node
 * loads, src/nn/native-ops.ts), sampled tokens/s
 * (one sequence, a group of 8, and a whole round of rollouts of the mini suite through the embedded
 * policy), and the GFLOP/s of the matmul kernels measured in the same run: the WASM SIMD and
 * scalar JS ones, and the native fp32 ceiling on two threads from onnxruntime-node when it is
 * installed (see bench/native-matmul.ts; it is not a dependency). Every figure is also given as a
 * ratio to the ceilings. Medians over repeats; the round runs once per setting.
 *
 * Each rate is measured twice: per second of wall time, and per second of this process's CPU time.
 * On a machine shared with other jobs the first moves with their load (a niced benchmark waits for
 * the CPU); the second counts only the time the work ran, so its ratios compare the code.
 *
 *   npx tsx bench/embedded.ts [--width 128] [--layers 4] [--heads 4] [--vocab 4096] [--batch 16]
 *                             [--seq 256] [--repeats 3] [--prompt 64] [--gen 192] [--group 8]
 *                             [--round-tasks 8] [--round-group 8] (0 tasks: no round)
 *                             [--workers 2] (gradient workers of the pooled training figures)
 */
import { formatAdapter } from '../src/agent/formats/index.js';
import { rollout } from '../src/bfcl/rollout.js';
import { CallRecorder } from '../src/bfcl/trajectory.js';
import { loadMiniSuite } from '../src/envs/mini/index.js';
import { crossEntropy, type GrpoSequence, grpoLoss } from '../src/learner/embedded/losses.js';
import { Trainer } from '../src/learner/embedded/trainer.js';
import { BASE_CHECKPOINT_DIR, loadCheckpoint } from '../src/nn/checkpoint.js';
import { Gpt, type GptConfig, type Kernels } from '../src/nn/model.js';
import { NATIVE_INSTALL_HINT, nativeOps } from '../src/nn/native-ops.js';
import { gemmNT } from '../src/nn/reference-ops.js';
import { simdOps } from '../src/nn/simd-ops.js';
import { EmbeddedPolicy, type EmbeddedPolicyOptions } from '../src/policy/embedded/policy.js';
import { sample, sampleBatch } from '../src/policy/embedded/sampler.js';
import { Rng } from '../src/util/rng.js';
import { mapConcurrent } from '../src/util/semaphore.js';
import { ThreadPool } from '../src/util/thread-pool.js';
import type { GroupSamplerData, GroupSamplerRequest } from './group-sampler-worker.js';
import { loadOrt, nativeMatmulGflops } from './native-matmul.js';

const args = process.argv.slice(2);
const opt = (n: string, d: number): number => (args.includes(n) ? Number(args[args.indexOf(n) + 1]) : d);
const width = opt('--width', 128);
const layers = opt('--layers', 4);
const heads = opt('--heads', 4);
const vocab = opt('--vocab', 4096);
const batchSize = opt('--batch', 16);
const seq = opt('--seq', 256);
const repeats = opt('--repeats', 3);
const promptLen = opt('--prompt', 64);
const group = opt('--group', 8);
const genLen = opt('--gen', 192);
const roundTasks = opt('--round-tasks', 8);
const roundGroup = opt('--round-group', 8);
const poolWorkers = opt('--workers', 2);

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
/** wall and CPU seconds since `start()` was called, read by the function it returns */
interface Timing {
  readonly wall: number;
  readonly cpu: number;
}
const start = (): (() => Timing) => {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  return () => {
    const c = process.cpuUsage(c0);
    return { wall: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6 };
  };
};
/** wall and CPU seconds of f() */
const time = (f: () => void): Timing => {
  const stop = start();
  f();
  return stop();
};
/** the same for a step that resolves (one worker: the work is synchronous inside it) */
const timeAsync = async (f: () => Promise<unknown>): Promise<Timing> => {
  const stop = start();
  await f();
  return stop();
};
/** a rate (work / s) over repeated timings: medians per wall second and per CPU second */
type Rate = Timing;
const rateOf = (work: number, ts: Timing[]): Rate => ({
  wall: work / median(ts.map((t) => t.wall)),
  cpu: work / median(ts.map((t) => t.cpu)),
});
const scale = (r: Rate, k: number): Rate => ({ wall: r.wall * k, cpu: r.cpu * k });
const fmt = (x: number, d = 1): string => x.toFixed(d);

// --- matmul ceiling --------------------------------------------------------------------------
// The float32 products run in the WebAssembly SIMD kernels (the float32 ops); the scalar JS
// reference kernel (gemmNT, what float64 models use) is timed on the same float32 data for
// comparison.
function matmulCeiling(): { name: string; js: Rate; wasm: Rate[] }[] {
  const rng = new Rng(1);
  const fill = (n: number): Float32Array => Float32Array.from({ length: n }, () => rng.normal());
  const shapes: [number, number, number][] = [
    [seq, width, 4 * width],
    [seq, 4 * width, width],
    [256, 256, 256],
    [seq, width, vocab],
  ];
  const rate = (flops: number, f: () => void): Rate => {
    f(); // warm up (and let V8 tier the wasm up)
    const reps = Math.max(1, Math.round(4e8 / flops));
    const ts: Timing[] = [];
    for (let r = 0; r < 5; r++) ts.push(time(() => Array.from({ length: reps }, f)));
    return rateOf((flops * reps) / 1e9, ts);
  };
  const out: { name: string; js: Rate; wasm: Rate[] }[] = [];
  for (const [M, K, N] of shapes) {
    const a = fill(M * K);
    const w = fill(K * N);
    const c = new Float32Array(M * N);
    const d = fill(M * N);
    const g = new Float32Array(K * N);
    const wT = fill(N * K);
    const flops = 2 * M * K * N;
    const s = { m: M, k: K, n: N };
    const js = rate(flops, () => gemmNT(c, a, wT, s));
    const wasm = [
      rate(flops, () => simdOps.matmul(c, a, w, null, s)),
      rate(flops, () => simdOps.matmulNT(c, a, wT, s)),
      rate(flops, () => simdOps.matmulTNAcc(g, a, d, s)),
    ];
    out.push({ name: `${M}x${K}x${N}`, js, wasm });
  }
  return out;
}

const config: GptConfig = {
  vocabSize: vocab,
  contextLength: Math.max(512, seq),
  nLayer: layers,
  nHead: heads,
  dModel: width,
  tiedEmbeddings: true,
};
const model = Gpt.init(config, 1);
const rng = new Rng(2);
const batch = Array.from({ length: batchSize }, () =>
  Array.from({ length: seq }, () => rng.nextU32() % vocab),
);
// FLOPs of one training token: 6 per matmul weight (forward 2, backward 4) plus attention
// (QK^T and AV: 2 * 2 * T/2 * d per layer forward on average, times 3 with the backward). Nominal:
// what running every token of the batch whole costs. The GRPO loss skips the output projection of
// rows that predict no target and runs a shared prompt once, so its figures are GFLOP/s-equivalent
// and read above the arithmetic it does.
const matmulWeights = layers * 12 * width * width + width * vocab;
const flopsPerTrainToken = 6 * matmulWeights + 3 * layers * 2 * seq * width;

console.log(
  `embedded GPT: ${layers} layers, ${heads} heads, width ${width}, vocab ${vocab} (tied), ${(model.numParams / 1e6).toFixed(2)}M parameters; batch ${batchSize} x ${seq}, ${repeats} repeats, 1 thread`,
);

const mm = matmulCeiling();
for (const r of mm) {
  console.log(
    `  matmul ${r.name.padEnd(14)} JS gemmNT ${fmt(r.js.wall, 2).padStart(6)} GFLOP/s | WASM SIMD NN ${fmt(r.wasm[0]!.wall, 2)}, NT ${fmt(r.wasm[1]!.wall, 2)}, TN ${fmt(r.wasm[2]!.wall, 2)} GFLOP/s (median ${fmt(median(r.wasm.map((w) => w.wall)) / r.js.wall)}x)`,
  );
}
const best = (rs: Rate[]): Rate => ({
  wall: Math.max(...rs.map((r) => r.wall)),
  cpu: Math.max(...rs.map((r) => r.cpu)),
});
const jsCeiling = best(mm.map((r) => r.js));
const ceiling = best(mm.flatMap((r) => r.wasm));

// The native ceiling: the best of onnxruntime's MatMul over the same shapes and a square 512
const ort = await loadOrt();
let native: Rate | undefined;
if (ort) {
  const shapes: [number, number, number][] = [
    [seq, width, 4 * width],
    [seq, 4 * width, width],
    [256, 256, 256],
    [seq, width, vocab],
    [512, 512, 512],
  ];
  const two: Rate[] = [];
  const one: Rate[] = [];
  for (const [M, K, N] of shapes) {
    one.push(await nativeMatmulGflops(ort, M, K, N, 1));
    two.push(await nativeMatmulGflops(ort, M, K, N, 2));
  }
  // the better of the two: on a machine shared with other jobs two threads can lose to one
  native = best([...two, ...one]);
  console.log(
    `native fp32 matmul (onnxruntime-node, same shapes and 512^3): ${fmt(best(two).wall, 1)} GFLOP/s on 2 threads, ${fmt(best(one).wall, 1)} on 1; ceiling ${fmt(native.wall, 1)} GFLOP/s, ${fmt(native.cpu, 1)} GFLOP per CPU-second`,
  );
} else {
  console.log(`native fp32 matmul: onnxruntime-node is not installed (optional: ${NATIVE_INSTALL_HINT})`);
}
const pct = (x: number, of: number) => `${fmt((100 * x) / of)}%`;
/** "x% of the WASM ceiling[, y% of the native one]", per wall second and per CPU second */
const ofCeilings = (g: Rate): string => {
  const per = (k: 'wall' | 'cpu') =>
    `${pct(g[k], ceiling[k])} of the WASM ceiling${native ? `, ${pct(g[k], native[k])} of the native one` : ''}`;
  return `${per('wall')} (per CPU-second: ${fmt(g.cpu, 2)} GFLOP = ${per('cpu')})`;
};
console.log(
  `matmul ceiling: WASM SIMD ${fmt(ceiling.wall, 2)} GFLOP/s, JS ${fmt(jsCeiling.wall, 2)} GFLOP/s (${fmt(ceiling.wall / jsCeiling.wall)}x)${native ? `, native ${fmt(native.wall, 1)} GFLOP/s (WASM = ${pct(ceiling.wall, native.wall)} of native; per CPU-second ${pct(ceiling.cpu, native.cpu)})` : ''}`,
);

const tokens = batchSize * seq;
const reference = model.clone();
const supBatch = batch.map((tokens) => ({ tokens }));
const grpoBatch: GrpoSequence[] = batch.map((tokens, i) => ({
  tokens,
  lossMask: tokens.map((_, t) => (t >= seq / 4 ? 1 : 0)),
  oldLogprobs: tokens.map(() => -Math.log(vocab)),
  advantage: i % 2 ? 1 : -1,
}));
// as a round trains: groups of 8 rollouts that begin with one prompt (here 3/4 of the sequence),
// the completion carrying the loss; the loss runs each group's prompt once
const sharedBatch: GrpoSequence[] = batch.map((own, i) => {
  const cut = Math.floor((3 * seq) / 4);
  const tokens = [...batch[i - (i % 8)]!.slice(0, cut), ...own.slice(cut)];
  return {
    tokens,
    lossMask: tokens.map((_, t) => (t > cut ? 1 : 0)),
    oldLogprobs: tokens.map(() => -Math.log(vocab)),
    advantage: i % 2 ? 1 : -1,
  };
});
const grpoFlopsPerToken = flopsPerTrainToken + (2 * flopsPerTrainToken) / 6;

// Training on each kernels this machine has: WebAssembly always, native when onnxruntime-node
// loads (src/nn/native-ops.ts). Every trainer starts from the same weights.
const nativeKernels = nativeOps();
if (typeof nativeKernels === 'string') console.log(`native kernels: ${nativeKernels}`);
const kernelsHere: Kernels[] = typeof nativeKernels === 'string' ? ['wasm'] : ['wasm', 'native'];
/** supervised training tokens/s on one thread, per kernels */
const supervisedRate = new Map<Kernels, Rate>();
for (const kernels of kernelsHere) {
  const on = (m: Gpt) => m.clone().withKernels(kernels);
  const oneThread = async (trainer: Trainer, run: (t: Trainer) => Promise<unknown>): Promise<Rate> => {
    const times: Timing[] = [];
    for (let r = 0; r < repeats; r++) times.push(await timeAsync(() => run(trainer)));
    return rateOf(tokens, times);
  };
  const train = await oneThread(new Trainer(on(model), { lr: 1e-4 }), (t) => t.step(supBatch, crossEntropy));
  supervisedRate.set(kernels, train);
  const trainGflops = scale(train, flopsPerTrainToken / 1e9);
  console.log(
    `training [${kernels}] (supervised, fwd+bwd+Adam): ${fmt(train.wall)} tokens/s (${fmt(train.cpu)} per CPU-second), ${fmt(tokens / train.wall, 2)} s/step, ~${fmt(trainGflops.wall, 2)} GFLOP/s = ${ofCeilings(trainGflops)}`,
  );
  const grpoRate = await oneThread(new Trainer(on(model), { lr: 1e-5 }, on(reference)), (t) =>
    t.step(grpoBatch, grpoLoss()),
  );
  const grpoGflops = scale(grpoRate, grpoFlopsPerToken / 1e9);
  console.log(
    `training [${kernels}] (GRPO incl. reference forward): ${fmt(grpoRate.wall)} tokens/s (${fmt(grpoRate.cpu)} per CPU-second), ${fmt(tokens / grpoRate.wall, 2)} s/step, ~${fmt(grpoGflops.wall, 2)} GFLOP/s = ${ofCeilings(grpoGflops)}`,
  );

  // The same steps on the gradient workers, as `seal pretrain` and `seal train` run them (two by
  // default): the figure to hold against the native ceiling on two threads. The first step, which
  // starts the workers, is not timed.
  for (const [label, make, steps, flops, single] of [
    [
      'supervised',
      () => new Trainer(on(model), { lr: 1e-4, workers: poolWorkers }),
      (t: Trainer) => t.step(supBatch, crossEntropy),
      flopsPerTrainToken,
      train,
    ],
    [
      'GRPO incl. reference forward',
      () => new Trainer(on(model), { lr: 1e-5, workers: poolWorkers }, on(reference)),
      (t: Trainer) => t.step(grpoBatch, grpoLoss()),
      grpoFlopsPerToken,
      grpoRate,
    ],
    [
      'GRPO, groups of 8 sharing a prompt of 3/4 of the sequence',
      () => new Trainer(on(model), { lr: 1e-5, workers: poolWorkers }, on(reference)),
      (t: Trainer) => t.step(sharedBatch, grpoLoss()),
      grpoFlopsPerToken,
      grpoRate,
    ],
  ] as const) {
    const trainer = make();
    await steps(trainer);
    const rate = await oneThread(trainer, steps);
    await trainer.close();
    const g = scale(rate, flops / 1e9);
    console.log(
      `training [${kernels}] (${label}) on ${poolWorkers} gradient workers: ${fmt(rate.wall)} tokens/s (${fmt(rate.wall / single.wall, 2)}x one thread), ~${fmt(g.wall, 2)} GFLOP/s = ${ofCeilings(g)}`,
    );
  }
}

const prompt = Array.from({ length: promptLen }, () => rng.nextU32() % vocab);
const sampleTimes: Timing[] = [];
for (let r = 0; r < repeats; r++) {
  sampleTimes.push(time(() => sample(model, prompt, { seed: r, maxTokens: genLen, temperature: 1 })));
}
const sampled = rateOf(genLen, sampleTimes);
const forwardFlopsPerSampled = 2 * matmulWeights + layers * 2 * 2 * (promptLen + genLen / 2) * width;
console.log(
  `sampling (KV cache, prompt ${promptLen}, ${genLen} new tokens, temperature 1): ${fmt(sampled.wall)} tokens/s (${fmt(sampled.cpu)} per CPU-second; prefill included), ~${fmt((sampled.wall * forwardFlopsPerSampled) / 1e9, 2)} GFLOP/s = ${ofCeilings(scale(sampled, forwardFlopsPerSampled / 1e9))}`,
);
const groupTimes: Timing[] = [];
const prompts = Array.from({ length: group }, () => prompt);
for (let r = 0; r < repeats; r++) {
  groupTimes.push(
    time(() => sampleBatch(model, prompts, { seed: r * group, maxTokens: genLen, temperature: 1 })),
  );
}
const grouped = rateOf(group * genLen, groupTimes);
console.log(
  `sampling a group of ${group} together (sampleBatch, KV caches): ${fmt(grouped.wall)} tokens/s (${fmt(grouped.cpu)} per CPU-second; ${fmt(grouped.wall / sampled.wall, 2)}x one at a time), ~${fmt((grouped.wall * forwardFlopsPerSampled) / 1e9, 2)} GFLOP/s = ${ofCeilings(scale(grouped, forwardFlopsPerSampled / 1e9))}`,
);
// The same group on two threads, split as the pool's sampler threads split 8 waiting requests
// (each takes its share): each thread decodes half the rows with its own copy of the weights.
// CPU time is this process's, threads included.
{
  const threads = 2;
  const pool = await ThreadPool.start<GroupSamplerRequest, number>({
    entry: new URL('./group-sampler-worker.js', import.meta.url),
    workerData: Array.from(
      { length: threads },
      (): GroupSamplerData => ({ config, params: model.params as Float32Array }),
    ),
    label: 'group sampler',
  });
  const share = Math.ceil(group / threads);
  const run = (r: number) =>
    Promise.all(
      Array.from({ length: threads }, (_, t) =>
        pool.submit({
          prompts: prompts.slice(t * share, (t + 1) * share),
          seed: r * group + t * share,
          maxTokens: genLen,
        }),
      ),
    );
  await run(repeats); // warm up both threads (their kernels tier up on first use)
  const times: Timing[] = [];
  for (let r = 0; r < repeats; r++) times.push(await timeAsync(() => run(r)));
  await pool.close();
  const both = rateOf(group * genLen, times);
  console.log(
    `sampling a group of ${group} on ${threads} threads (${share} rows each, as the pool shares them): ${fmt(both.wall)} tokens/s (${fmt(both.wall / grouped.wall, 2)}x one thread), ~${fmt((both.wall * forwardFlopsPerSampled) / 1e9, 2)} GFLOP/s = ${ofCeilings(scale(both, forwardFlopsPerSampled / 1e9))}`,
  );
}
console.log(
  `ratios: batched sampled/training tokens = ${fmt(grouped.wall / supervisedRate.get('wasm')!.wall, 2)}; sampled/training tokens = ${fmt(sampled.wall / supervisedRate.get('wasm')!.wall, 2)} (training on one thread, wasm kernels)`,
);

// --- a round of rollouts ------------------------------------------------------------------------
// What a GRPO round samples: roundGroup rollouts of each of roundTasks mini training tasks, all in
// flight together, through EmbeddedPolicy with the base checkpoint and the compact format. Once as
// every request ran before the prefix cache and batching (the same code with both off), once with
// each, once with both; the trajectories must match exactly.
if (roundTasks > 0) {
  const data = loadMiniSuite();
  const { model: base, tokenizer } = loadCheckpoint(BASE_CHECKPOINT_DIR);
  const trainIds = new Set(data.split.train);
  const tasks = data.tasks.filter((t) => trainIds.has(t.id)).slice(0, roundTasks);
  const items = tasks.flatMap((t) => Array.from({ length: roundGroup }, () => t));
  const format = formatAdapter('compact');
  // one for all rollouts, as a training run keeps (it compiles each tool's argument schema once)
  const recorder = new CallRecorder(data);
  const settings: [string, EmbeddedPolicyOptions][] = [
    ['one request at a time, no prefix cache (before)', { prefixCache: false, maxBatch: 1 }],
    ['prefix cache', { maxBatch: 1 }],
    ['prefix cache + batched decoding (default)', {}],
  ];
  let reference: string | undefined;
  const rates: number[] = [];
  for (const [label, options] of settings) {
    const policy = new EmbeddedPolicy(base, tokenizer, { seed: 1, ...options });
    let generated = 0;
    let prompted = 0;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const trajectories = await mapConcurrent(items, items.length, (task) =>
      rollout(task, data, policy, { format, sampling: { temperature: 1 }, onParseError: 'reply', recorder }),
    );
    const cpu = process.cpuUsage(cpu0);
    const wall = (performance.now() - t0) / 1000;
    for (const t of trajectories) {
      for (const step of t.turns.flatMap((turn) => turn.steps)) {
        generated += step.usage?.completionTokens ?? 0;
        prompted += step.usage?.promptTokens ?? 0;
      }
    }
    const json = JSON.stringify(trajectories, (k, v) => (k === 'latencyMs' ? 0 : v));
    reference ??= json;
    const tps = generated / wall;
    rates.push(tps);
    // work as if every prompt ran whole: the projections of every prompt and sampled token
    const { nLayer, dModel, vocabSize } = base.config;
    const gflops =
      ((generated + prompted) * 2 * (nLayer * 12 * dModel * dModel + dModel * vocabSize)) / wall / 1e9;
    const roundRate = { wall: gflops, cpu: (gflops * wall) / ((cpu.user + cpu.system) / 1e6) };
    const hits = policy.prefixCache
      ? `, ${fmt((100 * policy.prefixCache.hits) / prompted)}% of prompt tokens from the cache`
      : '';
    console.log(
      `round (${roundTasks} tasks x ${roundGroup} rollouts, mini, compact), ${label}: ${fmt(wall, 1)} s (${fmt((cpu.user + cpu.system) / 1e6, 1)} s CPU), ${prompted} prompt + ${generated} sampled tokens, ${fmt(tps)} sampled tokens/s${hits}; ~${fmt(gflops, 2)} GFLOP/s-equivalent (projections of every prompt run whole) = ${ofCeilings(roundRate)}; ${json === reference ? 'same trajectories' : 'TRAJECTORIES DIFFER'}`,
    );
  }
  console.log(
    `round speed-up over one request at a time without the cache: ${rates.map((r) => `${fmt(r / rates[0]!, 2)}x`).join(', ')}`,
  );
}
