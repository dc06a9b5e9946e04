/**
 * Benchmark: rollouts through an OpenAI-compatible server that answers instantly (a scripted
 * server replaying ground truths, in its own process). Prints tasks/s at concurrency 1, 16 and 64
 * (medians over rounds) and, at concurrency 1, the share of wall time spent in our own code
 * (everything but waiting for the server), measured in the same run.
 *
 *   npx tsx bench/eval-throughput.ts [--tasks 60] [--rounds 3]
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { formatAdapter } from '../src/agent/formats/index.js';
import { rollout } from '../src/bfcl/rollout.js';
import { CallRecorder } from '../src/bfcl/trajectory.js';
import { resolveDataDir } from '../src/envs/bfcl/data/locate.js';
import { loadBfclData } from '../src/envs/bfcl/data/tasks.js';
import { OpenAiCompatiblePolicy } from '../src/policy/openai.js';
import type { Completion, CompletionRequest, Policy } from '../src/policy/policy.js';
import { mapConcurrent } from '../src/util/semaphore.js';

const args = process.argv.slice(2);
const opt = (n: string, d: string) => (args.includes(n) ? args[args.indexOf(n) + 1]! : d);
const nTasks = Number(opt('--tasks', '60'));
const rounds = Number(opt('--rounds', '3'));
// the data as seal finds it: $SEAL_BFCL_DATA, else the `seal data pull bfcl` cache
const dataDir = resolveDataDir(undefined);
const data = loadBfclData(dataDir);
const tasks = data.split.test.slice(0, nTasks).map((id) => data.byId.get(id)!);

const child = spawn(
  process.execPath,
  ['--import', 'tsx', join(import.meta.dirname, 'fake-server.ts'), ...tasks.map((t) => t.id)],
  {
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
const url = await new Promise<string>((resolve) =>
  createInterface({ input: child.stdout! }).once('line', resolve),
);

/** Wraps a policy to add up the time spent waiting for it. */
class Timed implements Policy {
  waitedMs = 0;
  constructor(private readonly inner: Policy) {}
  get name() {
    return this.inner.name;
  }
  async complete(req: CompletionRequest, signal?: AbortSignal): Promise<Completion> {
    const t0 = performance.now();
    try {
      return await this.inner.complete(req, signal);
    } finally {
      this.waitedMs += performance.now() - t0;
    }
  }
}

const format = formatAdapter('native');
const recorder = new CallRecorder(data);
async function once(concurrency: number): Promise<{ secs: number; waited: number; cpu: number }> {
  const policy = new Timed(
    new OpenAiCompatiblePolicy({ baseUrl: url, model: 'bench', maxRetries: 0, timeoutMs: 30_000 }),
  );
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const out = await mapConcurrent(tasks, concurrency, (t) => rollout(t, data, policy, { format, recorder }));
  const secs = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const bad = out.filter((t) => t.reward !== 1).length;
  if (bad) throw new Error(`${bad} ground-truth replays failed: the benchmark is broken`);
  return { secs, waited: policy.waitedMs / 1000, cpu: (cpu.user + cpu.system) / 1e6 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
await once(4); // warm-up
console.log(
  `tasks: ${tasks.length} (test split), rounds: ${rounds} (medians), server: zero-latency scripted, separate process`,
);
for (const c of [1, 16, 64]) {
  const rs = [];
  for (let i = 0; i < rounds; i++) rs.push(await once(c));
  const secs = median(rs.map((r) => r.secs));
  const line = `concurrency ${String(c).padStart(2)}: ${(tasks.length / secs).toFixed(1)} tasks/s, wall ${secs.toFixed(2)} s, our process busy ${((100 * median(rs.map((r) => r.cpu / r.secs))) / 1).toFixed(0)}% of one core`;
  if (c === 1) {
    const own = median(rs.map((r) => 1 - r.waited / r.secs));
    console.log(
      `${line}, share of wall time in our own code: ${(100 * own).toFixed(1)}% (the rest is inside policy.complete: the HTTP client and SDK in this process, and the server)`,
    );
  } else console.log(line);
}
child.kill('SIGTERM');
