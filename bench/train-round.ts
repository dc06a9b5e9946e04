/**
 * Benchmark: whole rounds of the default `seal train` configuration (B tasks x G rollouts through
 * the interface, verify, diagnose, one update) with the embedded policy, no evaluations. Prints,
 * from one run: rounds per minute and rollouts/s (median round), sampled tokens/s (median), and
 * the share of the rounds' wall time in sampling, environment + diagnosis, and learning (over the
 * rounds together; the first round, which starts the thread pools, is reported apart).
 *
 *   npx tsx bench/train-round.ts [--rounds 4] [--method seal] [--kernels auto|wasm|native]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadMiniSuite } from '../src/envs/mini/index.js';
import { resolveConfig } from '../src/train/config.js';
import { startTraining } from '../src/train/train.js';

const args = process.argv.slice(2);
const opt = (n: string, d: string) => (args.includes(n) ? args[args.indexOf(n) + 1]! : d);
const rounds = Number(opt('--rounds', '4'));
const { config, overrides } = resolveConfig(undefined, {
  rounds,
  method: opt('--method', 'seal') as never,
  evalStart: false,
  evalFinal: false,
  validateEvery: 0,
  ...(args.includes('--sampler-workers') ? { samplerWorkers: Number(opt('--sampler-workers', '2')) } : {}),
  ...(args.includes('--kernels') ? { kernels: opt('--kernels', 'auto') as never } : {}),
});
const out = join(mkdtempSync(join(tmpdir(), 'seal-bench-train-')), 'run');
const records: import('../src/train/record.js').RoundRecord[] = [];
const t0 = performance.now();
await startTraining(config, overrides, out, 'bench/train-round.ts', loadMiniSuite(), {
  log: () => {},
  onRound: (r) => {
    records.push(r);
    const t = r.timings;
    console.log(
      `round ${r.round}: ${(t.totalMs / 1000).toFixed(1)} s (sampling ${(t.samplingMs / 1000).toFixed(1)}, env+diagnosis ${(t.envMs / 1000).toFixed(1)}, learning ${(t.learnMs / 1000).toFixed(1)}), ${r.rollouts.count} rollouts, ${r.learner.sequences} sequences / ${r.learner.tokens} trained tokens`,
    );
  },
});
const wall = (performance.now() - t0) / 1000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const steady = records.length > 1 ? records.slice(1) : records;
const secs = steady.map((r) => r.timings.totalMs / 1000);
// over the steady rounds together, so the shares add up (a median of each would mix rounds: one
// that trains many sequences and one that trains none)
const share = (k: 'samplingMs' | 'envMs' | 'learnMs') =>
  steady.reduce((s, r) => s + r.timings[k], 0) / steady.reduce((s, r) => s + r.timings.totalMs, 0);
const tokens = steady.map(
  (r) => (r.rollouts.meanCompletionTokens * r.rollouts.count) / (r.timings.samplingMs / 1000),
);
console.log(
  `\n${config.tasksPerRound} tasks x ${config.groupSize} rollouts a round, ${records.length} rounds in ${wall.toFixed(0)} s`,
);
console.log(`first round (starts the pools): ${(records[0]!.timings.totalMs / 1000).toFixed(1)} s`);
console.log(`median round: ${median(secs).toFixed(1)} s -> ${(60 / median(secs)).toFixed(2)} rounds/min`);
console.log(`rollouts/s: ${((config.tasksPerRound * config.groupSize) / median(secs)).toFixed(2)}`);
console.log(`sampled tokens/s (during sampling): ${median(tokens).toFixed(0)}`);
console.log(
  `share of a round: sampling ${(100 * share('samplingMs')).toFixed(0)}%, environment + diagnosis ${(100 * share('envMs')).toFixed(0)}%, learning ${(100 * share('learnMs')).toFixed(0)}%`,
);
