/**
 * Fingerprints of the embedded model's behaviour, to show a refactor changed nothing to the bit:
 * the tokens (and their logprobs) sampled by the benchmark's one-sequence and group-of-8 runs
 * (the same model, prompt and seeds as bench/embedded.ts), and the trajectories of its mini round
 * (8 tasks x 8 rollouts, base checkpoint, compact format, default policy settings), in process
 * and on the pool's two sampler threads (as `seal train` samples). Each figure is FNV-1a, 32 bits.
 *
 *   npx tsx bench/fingerprint.ts [--kernels wasm|native] [--round-tasks 8] [--round-group 8]
 */
import { formatAdapter } from '../src/agent/formats/index.js';
import { rollout } from '../src/bfcl/rollout.js';
import { CallRecorder } from '../src/bfcl/trajectory.js';
import { loadMiniSuite } from '../src/envs/mini/index.js';
import { BASE_CHECKPOINT_DIR, loadCheckpoint } from '../src/nn/checkpoint.js';
import { Gpt, type GptConfig, type Kernels } from '../src/nn/model.js';
import { EmbeddedPolicy } from '../src/policy/embedded/policy.js';
import { EmbeddedPolicyPool } from '../src/policy/embedded/pool.js';
import { sample, sampleBatch } from '../src/policy/embedded/sampler.js';
import type { Policy } from '../src/policy/policy.js';
import { Rng } from '../src/util/rng.js';
import { mapConcurrent } from '../src/util/semaphore.js';

const args = process.argv.slice(2);
const opt = (n: string, d: string): string => (args.includes(n) ? args[args.indexOf(n) + 1]! : d);
const kernels = opt('--kernels', 'wasm') as Kernels;
const roundTasks = Number(opt('--round-tasks', '8'));
const roundGroup = Number(opt('--round-group', '8'));

/** FNV-1a over 32-bit words */
const fnv = (words: Iterable<number>): number => {
  let h = 0x811c9dc5;
  for (const w of words) {
    for (let s = 0; s < 32; s += 8) h = Math.imul(h ^ ((w >>> s) & 0xff), 0x01000193) >>> 0;
  }
  return h;
};
/** the 32-bit words of float64 values */
const bits = (xs: readonly number[]): Uint32Array => new Uint32Array(Float64Array.from(xs).buffer);
const fnvText = (s: string): number => fnv(Buffer.from(s, 'utf8'));

// as bench/embedded.ts with its defaults: the model, then the batch drawn before the prompt
const config: GptConfig = {
  vocabSize: 4096,
  contextLength: 512,
  nLayer: 4,
  nHead: 4,
  dModel: 128,
  tiedEmbeddings: true,
};
const model = Gpt.init(config, 1).withKernels(kernels);
const rng = new Rng(2);
for (let i = 0; i < 16 * 256; i++) rng.nextU32();
const prompt = Array.from({ length: 64 }, () => rng.nextU32() % 4096);
const one = [0, 1, 2].map((r) => sample(model, prompt, { seed: r, maxTokens: 192, temperature: 1 }));
const group = [0, 1, 2].flatMap((r) =>
  sampleBatch(
    model,
    Array.from({ length: 8 }, () => prompt),
    { seed: r * 8, maxTokens: 192, temperature: 1 },
  ),
);
for (const [label, rs] of [
  ['one sequence', one],
  ['group of 8', group],
] as const) {
  const ids = rs.flatMap((r) => r.tokenIds);
  console.log(
    `${label} [${kernels}]: ${ids.length} tokens, token checksum ${fnv(ids)}, logprob checksum ${fnv(bits(rs.flatMap((r) => r.logprobs)))}`,
  );
}

if (roundTasks > 0) {
  const data = loadMiniSuite();
  const { model: base, tokenizer } = loadCheckpoint(BASE_CHECKPOINT_DIR);
  const trainIds = new Set(data.split.train);
  const tasks = data.tasks.filter((t) => trainIds.has(t.id)).slice(0, roundTasks);
  const items = tasks.flatMap((t) => Array.from({ length: roundGroup }, () => t));
  const recorder = new CallRecorder(data);
  const round = async (policy: Policy): Promise<number> => {
    const trajectories = await mapConcurrent(items, items.length, (task) =>
      rollout(task, data, policy, {
        format: formatAdapter('compact'),
        sampling: { temperature: 1 },
        onParseError: 'reply',
        recorder,
      }),
    );
    // a turn's request is the task's text, not the model's: left out, so the figures stay those
    // of the builds before trajectories recorded it
    return fnvText(
      JSON.stringify(trajectories, (k, v) => (k === 'latencyMs' ? 0 : k === 'request' ? undefined : v)),
    );
  };
  const inProcess = await round(new EmbeddedPolicy(base.withKernels(kernels), tokenizer, { seed: 1 }));
  console.log(`mini round [${kernels}] (${roundTasks} x ${roundGroup}): trajectory hash ${inProcess}`);
  const pool = await EmbeddedPolicyPool.start(BASE_CHECKPOINT_DIR, { seed: 1, workers: 2 });
  const pooled = await round(pool);
  await pool.close();
  console.log(`mini round on 2 sampler threads (${roundTasks} x ${roundGroup}): trajectory hash ${pooled}`);
}
