/**
 * Benchmark of the embedded model (TypeScript with WebAssembly SIMD kernels, one thread): training
 * tokens/s (forward + backward + Adam, supervised and GRPO with a reference model), sampled tokens/s
 * with the KV cache, and the GFLOP/s of the matmul kernels (WASM SIMD and the scalar JS one)
 * measured in the same run, with the ratios to the WASM ceiling. Medians over repeats.
 *
 *   npx tsx bench/embedded.ts [--width 128] [--layers 4] [--heads 4] [--vocab 4096] [--batch 16]
 *                             [--seq 256] [--repeats 3] [--prompt 64] [--gen 192] [--group 8]
 */
import { GrpoLearner, type GrpoSequence } from '../src/learner/embedded/grpo.js';
import { SupervisedTrainer } from '../src/learner/embedded/supervised.js';
import { Gpt, type GptConfig, gemmNT, matmul, matmulNT, matmulTNAcc } from '../src/policy/embedded/model.js';
import { Rng } from '../src/policy/embedded/rng.js';
import { sample, sampleBatch } from '../src/policy/embedded/sampler.js';

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

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const time = (f: () => void): number => {
  const t0 = performance.now();
  f();
  return (performance.now() - t0) / 1000;
};
const fmt = (x: number, d = 1): string => x.toFixed(d);

// --- matmul ceiling --------------------------------------------------------------------------
// The float32 products run in the WebAssembly SIMD kernel (through matmul, matmulNT, matmulTNAcc);
// the scalar JS kernel (gemmNT, still used for float64) is timed on the same float32 data for
// comparison.
function matmulCeiling(): { name: string; js: number; wasm: number[] }[] {
  const rng = new Rng(1);
  const fill = (n: number): Float32Array => Float32Array.from({ length: n }, () => rng.normal());
  const shapes: [number, number, number][] = [
    [seq, width, 4 * width],
    [seq, 4 * width, width],
    [256, 256, 256],
    [seq, width, vocab],
  ];
  const rate = (flops: number, f: () => void): number => {
    f(); // warm up (and let V8 tier the wasm up)
    const reps = Math.max(1, Math.round(4e8 / flops));
    const ts: number[] = [];
    for (let r = 0; r < 5; r++) ts.push(time(() => Array.from({ length: reps }, f)));
    return (flops * reps) / median(ts) / 1e9;
  };
  const out: { name: string; js: number; wasm: number[] }[] = [];
  for (const [M, K, N] of shapes) {
    const a = fill(M * K);
    const w = fill(K * N);
    const c = new Float32Array(M * N);
    const d = fill(M * N);
    const g = new Float32Array(K * N);
    const wT = fill(N * K);
    const flops = 2 * M * K * N;
    const js = rate(flops, () => gemmNT(c, 0, a, 0, wT, 0, M, K, N, false, null, 0));
    const wasm = [
      rate(flops, () => matmul(c, a, 0, w, 0, null, 0, M, K, N)),
      rate(flops, () => matmulNT(c, a, 0, wT, 0, M, K, N)),
      rate(flops, () => matmulTNAcc(g, 0, a, d, M, K, N)),
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
// (QK^T and AV: 2 * 2 * T/2 * d per layer forward on average, times 3 with the backward)
const matmulWeights = layers * 12 * width * width + width * vocab;
const flopsPerTrainToken = 6 * matmulWeights + 3 * layers * 2 * seq * width;

console.log(
  `embedded GPT: ${layers} layers, ${heads} heads, width ${width}, vocab ${vocab} (tied), ${(model.numParams / 1e6).toFixed(2)}M parameters; batch ${batchSize} x ${seq}, ${repeats} repeats, 1 thread`,
);

const mm = matmulCeiling();
for (const r of mm) {
  console.log(
    `  matmul ${r.name.padEnd(14)} JS gemmNT ${fmt(r.js, 2).padStart(6)} GFLOP/s | WASM SIMD NN ${fmt(r.wasm[0]!, 2)}, NT ${fmt(r.wasm[1]!, 2)}, TN ${fmt(r.wasm[2]!, 2)} GFLOP/s (median ${fmt(median(r.wasm) / r.js)}x)`,
  );
}
const jsCeiling = Math.max(...mm.map((r) => r.js));
const ceiling = Math.max(...mm.flatMap((r) => r.wasm));
console.log(
  `matmul ceiling: WASM SIMD ${fmt(ceiling, 2)} GFLOP/s, JS ${fmt(jsCeiling, 2)} GFLOP/s (${fmt(ceiling / jsCeiling)}x); the ratios below are to the WASM ceiling`,
);

const sup = new SupervisedTrainer(model, { lr: 1e-4 });
const supBatch = batch.map((tokens) => ({ tokens }));
const supTimes: number[] = [];
for (let r = 0; r < repeats; r++) supTimes.push(time(() => sup.step(supBatch)));
const trainTps = (batchSize * seq) / median(supTimes);
const trainGflops = (trainTps * flopsPerTrainToken) / 1e9;
console.log(
  `training (supervised, fwd+bwd+Adam): ${fmt(trainTps)} tokens/s, ${fmt(median(supTimes), 2)} s/step, ~${fmt(trainGflops, 2)} GFLOP/s = ${fmt((100 * trainGflops) / ceiling)}% of the matmul ceiling`,
);

const reference = model.clone();
const grpo = new GrpoLearner(model, reference, { lr: 1e-5 });
const grpoBatch: GrpoSequence[] = batch.map((tokens, i) => ({
  tokens,
  lossMask: tokens.map((_, t) => (t >= seq / 4 ? 1 : 0)),
  oldLogprobs: tokens.map(() => -Math.log(vocab)),
  advantage: i % 2 ? 1 : -1,
}));
const grpoTimes: number[] = [];
for (let r = 0; r < repeats; r++) grpoTimes.push(time(() => grpo.update(grpoBatch)));
const grpoTps = (batchSize * seq) / median(grpoTimes);
console.log(
  `training (GRPO incl. reference forward): ${fmt(grpoTps)} tokens/s, ${fmt(median(grpoTimes), 2)} s/step`,
);

const prompt = Array.from({ length: promptLen }, () => rng.nextU32() % vocab);
const sampleTimes: number[] = [];
for (let r = 0; r < repeats; r++) {
  sampleTimes.push(time(() => sample(model, prompt, { seed: r, maxTokens: genLen, temperature: 1 })));
}
const sampleTps = genLen / median(sampleTimes);
const forwardFlopsPerSampled = 2 * matmulWeights + layers * 2 * 2 * (promptLen + genLen / 2) * width;
const sampleGflops = (sampleTps * forwardFlopsPerSampled) / 1e9;
console.log(
  `sampling (KV cache, prompt ${promptLen}, ${genLen} new tokens, temperature 1): ${fmt(sampleTps)} tokens/s (prefill included), ~${fmt(sampleGflops, 2)} GFLOP/s = ${fmt((100 * sampleGflops) / ceiling)}% of the matmul ceiling`,
);
const groupTimes: number[] = [];
const prompts = Array.from({ length: group }, () => prompt);
for (let r = 0; r < repeats; r++) {
  groupTimes.push(
    time(() => sampleBatch(model, prompts, { seed: r * group, maxTokens: genLen, temperature: 1 })),
  );
}
const groupTps = (group * genLen) / median(groupTimes);
console.log(
  `sampling a group of ${group} together (sampleBatch, KV caches): ${fmt(groupTps)} tokens/s (${fmt(groupTps / sampleTps, 2)}x one at a time)`,
);
console.log(
  `ratios: batched sampled/training tokens = ${fmt(groupTps / trainTps, 2)}; sampled/training tokens = ${fmt(sampleTps / trainTps, 2)}; training GFLOP/s / matmul ceiling = ${fmt(trainGflops / ceiling, 2)}; sampling GFLOP/s / matmul ceiling = ${fmt(sampleGflops / ceiling, 2)}`,
);
