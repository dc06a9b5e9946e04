/**
 * Supervised training throughput of the embedded model with the gradient computed in process
 * (1 worker) versus on a pool of worker threads (data parallel, src/learner/embedded/parallel.ts):
 * tokens/s of full steps (forward + backward + gradient sum + clip + Adam), medians over repeats.
 * The configurations are measured in turn, step by step, so drifting machine load hits them alike.
 *
 *   npx tsx bench/parallel.ts [--workers 2] [--batch 8] [--seq 300] [--repeats 5] [--vocab 1024]
 *                             [--width 128] [--layers 4] [--heads 4]
 */
import { availableParallelism, loadavg } from 'node:os';
import { crossEntropy, type SupervisedSequence } from '../src/learner/embedded/losses.js';
import { sharedModel, splitByTokens } from '../src/learner/embedded/parallel.js';
import { DEFAULT_PRETRAIN_MODEL } from '../src/learner/embedded/pretrain-config.js';
import { Trainer } from '../src/learner/embedded/trainer.js';
import { Gpt, type GptConfig } from '../src/nn/model.js';
import { Rng } from '../src/util/rng.js';

const args = process.argv.slice(2);
const opt = (n: string, d: number): number => (args.includes(n) ? Number(args[args.indexOf(n) + 1]) : d);
const workers = opt('--workers', 2);
const batchSize = opt('--batch', 8);
const seq = opt('--seq', 300);
const repeats = opt('--repeats', 5);
const config: GptConfig = {
  ...DEFAULT_PRETRAIN_MODEL,
  vocabSize: opt('--vocab', DEFAULT_PRETRAIN_MODEL.vocabSize),
  dModel: opt('--width', DEFAULT_PRETRAIN_MODEL.dModel),
  nLayer: opt('--layers', DEFAULT_PRETRAIN_MODEL.nLayer),
  nHead: opt('--heads', DEFAULT_PRETRAIN_MODEL.nHead),
  contextLength: Math.max(DEFAULT_PRETRAIN_MODEL.contextLength, Math.ceil(seq * 1.2)),
};

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

// lengths spread +-20% around --seq, like demonstrations of different sizes; a masked prefix
// (the prompt) as in pre-training
const rng = new Rng(7);
const batch: SupervisedSequence[] = Array.from({ length: batchSize }, () => {
  const len = Math.round(seq * (0.8 + 0.4 * rng.next()));
  const tokens = Array.from({ length: len }, () => rng.nextU32() % config.vocabSize);
  return { tokens, lossMask: tokens.map((_, t) => (t >= len / 5 ? 1 : 0)) };
});
const tokensPerStep = batch.reduce((s, b) => s + b.tokens.length, 0);

const init = Gpt.init(config, 1);
const runs = [
  { name: '1 worker (in process)', trainer: new Trainer(init.clone(), { lr: 1e-4 }) },
  { name: `${workers} workers`, trainer: new Trainer(sharedModel(init), { lr: 1e-4, workers }) },
];

console.log(
  `embedded GPT: ${config.nLayer} layers, ${config.nHead} heads, width ${config.dModel}, vocab ${config.vocabSize}, context ${config.contextLength}, ${(init.numParams / 1e6).toFixed(2)}M parameters`,
);
console.log(
  `batch ${batchSize} sequences, ${tokensPerStep} tokens per step (mean ${Math.round(tokensPerStep / batchSize)}); ${repeats} repeats; ${availableParallelism()} CPUs, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);

const lengths = batch.map((b) => b.tokens.length);
const loads = splitByTokens(lengths, workers).map((p) => p.reduce((a, i) => a + lengths[i]!, 0));
console.log(
  `split over ${workers} workers: ${loads.join(' / ')} tokens (best possible speed-up ${(tokensPerStep / Math.max(...loads)).toFixed(2)}x)`,
);

const times: number[][] = runs.map(() => []);
// CPU seconds of the whole process (all threads): under contention, cpu / wall shows how many
// cores a configuration actually got, and tokens per CPU-second its overhead
const cpu: number[] = runs.map(() => 0);
try {
  // warm-up: starts the pool and lets the JIT settle
  for (const r of runs) await r.trainer.step(batch, crossEntropy);
  for (let k = 0; k < repeats; k++) {
    for (let i = 0; i < runs.length; i++) {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      await runs[i]!.trainer.step(batch, crossEntropy);
      const c = process.cpuUsage(c0);
      times[i]!.push((performance.now() - t0) / 1000);
      cpu[i] = cpu[i]! + (c.user + c.system) / 1e6;
    }
  }
} finally {
  for (const r of runs) await r.trainer.close();
}

// the best step too: on a machine shared with other jobs it is the least disturbed measurement
const tps = times.map((t) => tokensPerStep / median(t));
const best = times.map((t) => tokensPerStep / Math.min(...t));
for (let i = 0; i < runs.length; i++) {
  console.log(
    `${runs[i]!.name.padEnd(24)} median ${tps[i]!.toFixed(0).padStart(6)} tokens/s, best ${best[i]!.toFixed(0).padStart(6)}; ${((tokensPerStep * repeats) / cpu[i]!).toFixed(0)} tokens/CPU-s, ${(cpu[i]! / times[i]!.reduce((a, b) => a + b, 0)).toFixed(2)} cores used  (steps ${times[i]!.map((t) => t.toFixed(2)).join(' ')} s)`,
  );
}
console.log(
  `speed-up ${workers} workers / 1: ${(tps[1]! / tps[0]!).toFixed(2)}x (medians), ${(best[1]! / best[0]!).toFixed(2)}x (best steps); load after ${loadavg()[0]!.toFixed(2)}`,
);
