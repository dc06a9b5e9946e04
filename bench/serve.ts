/**
 * Load benchmark of `seal serve` on loopback. This process is the load generator; the server
 * runs in its own process (`node --expose-gc bin/seal.js serve`, so its memory can be read after
 * a full collection). 256 concurrent lanes each play whole ground-truth episodes the way a
 * trainer does (create, one step per turn's calls in Hermes format, a text answer ending each
 * turn, dense evaluate, release). The server ends a SEAL round every 256 evaluated rollouts (the
 * paper's batch: 32 prompts x 8 rollouts), so the profile, interface and weights work as in
 * training.
 *
 * Prints steps/s and /step latency p50/p99 over the episodes after a warm-up, and the server's
 * memory after 1,000 and after 10,000 episodes. Bounded: stops at --episodes or --max-seconds.
 * With --runs N, each run gets a fresh server and the medians are printed.
 *
 * The baseline, measured in the same run after each `seal serve` run (unless --no-baseline): the
 * same load against a server on the same HTTP stack that only replays, byte for byte, the answers
 * `seal serve` gave (bench/serve-replay-server.ts). Its figures are what HTTP, Fastify and JSON
 * cost alone on this machine at this moment; the ratios say what the environment adds.
 *
 *   npm run bench:serve -- [--suite bfcl|mini] [--concurrency 256] [--episodes 10000] [--runs 1]
 *                          [--max-seconds 240] [--profile DIR (the server's CPU profile)]
 *                          [--bin PATH (another build's bin/seal.js)] [--rate STEPS_PER_S]
 *                          [--workers N (the server's --workers; absent: its default)] [--no-baseline]
 *
 * By default every lane sends its next request as soon as it has the answer: 256 requests are
 * always in flight, so the latency is mostly the queue (256 / throughput). With --rate, /step
 * requests are started on a shared clock at that total rate, as a trainer's instances step
 * after their model has answered; the latency is then the server's own, at that load.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { createInterface } from 'node:readline';
import { resolveDataDir } from '../src/envs/bfcl/data/locate.js';
import { type BfclData, loadBfclData } from '../src/envs/bfcl/data/tasks.js';
import { loadMiniSuite } from '../src/envs/mini/index.js';
import type { LoopDelayMs } from '../src/server/loop-delay.js';
import { encodeCalls } from '../test/server/client.js';
import type { RecordedEpisode } from './serve-replay-server.js';

const args = process.argv.slice(2);
const opt = (n: string, d: string) => (args.includes(n) ? args[args.indexOf(n) + 1]! : d);
const suite = opt('--suite', 'bfcl');
const concurrency = Number(opt('--concurrency', '256'));
const episodes = Number(opt('--episodes', '10000'));
const warmup = Number(opt('--warmup', '256'));
const runs = Number(opt('--runs', '1'));
const maxSeconds = Number(opt('--max-seconds', '240'));
const profileDir = args.includes('--profile') ? opt('--profile', '') : undefined;
/** steps per second offered in total, spread over the lanes; 0: every lane steps as soon as it has its answer */
const rate = Number(opt('--rate', '0'));
/** the server's `--workers`, passed only when given (a build from before the flag has none) */
const workers = args.includes('--workers') ? opt('--workers', '') : undefined;
/** after each run, the same load against the replay baseline (bench/serve-replay-server.ts) */
const baseline = !args.includes('--no-baseline');
const checkpoint = 1000;
const ROOT = join(import.meta.dirname, '..');
/** the server to load: this build's, or another build's bin/seal.js (to compare builds with one generator) */
const bin = resolvePath(opt('--bin', join(ROOT, 'bin', 'seal.js')));
// the data as seal finds it: $SEAL_BFCL_DATA, else the `seal data pull bfcl` cache
const dataDir = resolveDataDir(undefined);
const data: BfclData = suite === 'mini' ? loadMiniSuite() : loadBfclData(dataDir);

/** Per task: the assistant messages of its ground-truth episode, already JSON. */
const scripts = data.split.train.map((id) => {
  const task = data.byId.get(id)!;
  const msgs: string[] = [];
  for (const gt of task.groundTruth) {
    if (gt.length > 0) msgs.push(JSON.stringify({ role: 'assistant', ...encodeCalls(gt, 'hermes', data) }));
    msgs.push(JSON.stringify({ role: 'assistant', content: 'Done.' }));
  }
  return { id, msgs };
});

interface Memory {
  readonly rss: number;
  readonly heap_used: number;
}

interface Stats {
  readonly memory_mb: Memory;
  readonly cpu_s: number;
  readonly steps: number;
  /** since the last reset; absent from builds before it was added */
  readonly event_loop_delay_ms?: LoopDelayMs;
}

interface RunResult {
  readonly stepsPerSec: number;
  readonly requestsPerSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly episodes: number;
  readonly failed: number;
  readonly mem1k?: Memory;
  readonly mem10k?: Memory;
  /** server CPU time per /step request, the other requests of the episode included */
  readonly cpuMsPerStep?: number;
  /** CPU time of the server and of this load generator over the same span, in cores (1 = one core busy) */
  readonly serverCores?: number;
  readonly generatorCores?: number;
  /** this load generator's CPU time per /step request, over the same span */
  readonly generatorMsPerStep?: number;
  /** how long the server's event loop was held up, from the 1k mark to the end */
  readonly loopDelay?: Stats['event_loop_delay_ms'];
}

/** Both processes' CPU seconds and the wall clock, read together. */
interface CpuMark {
  readonly server: number;
  readonly generator: number;
  readonly wall: number;
}

function quantile(sorted: Float64Array, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** `seal serve`, or the replay baseline answering with the recorded answers in this file */
type ServerKind = { readonly kind: 'seal' } | { readonly kind: 'replay'; readonly answers: string };

async function startServer(
  server: ServerKind,
): Promise<{ host: string; port: number; stop: () => Promise<void> }> {
  const args =
    server.kind === 'replay'
      ? ['--import', 'tsx', join(ROOT, 'bench', 'serve-replay-server.ts'), server.answers]
      : [
          ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
          bin,
          'serve',
          '--port',
          '0',
          '--suite',
          suite,
          ...(suite === 'bfcl' ? ['--data-dir', dataDir] : []),
          '--round-every',
          '256',
          ...(workers ? ['--workers', workers] : []),
        ];
  const child = spawn(process.execPath, ['--expose-gc', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`seal serve exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', resolve);
  });
  const m = /http:\/\/([\d.]+):(\d+)/.exec(line);
  if (!m) throw new Error(`unexpected first line from seal serve: ${line}`);
  return {
    host: m[1]!,
    port: Number(m[2]),
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** per task, the answers `seal serve` gave to its first whole episode (what the replay baseline sends) */
const recorded = new Map<string, RecordedEpisode>();

async function oneRun(kind: ServerKind): Promise<RunResult> {
  const played = kind.kind === 'replay' ? scripts.filter((sc) => recorded.has(sc.id)) : scripts;
  const server = await startServer(kind);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const request = (method: string, path: string, body?: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const buf = body === undefined ? undefined : Buffer.from(body);
      const req = http.request(
        {
          host: server.host,
          port: server.port,
          method,
          path,
          agent,
          headers: buf ? { 'content-type': 'application/json', 'content-length': buf.length } : {},
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString() }));
        },
      );
      req.on('error', reject);
      req.end(buf);
    });
  // A memory reading forces a full collection in the server, which stalls every request in
  // flight; so the lanes stop at a barrier first (no request starts while `paused`, and the
  // reading waits until none is in flight), and no measured latency includes the collection.
  let paused: Promise<void> | undefined;
  let inFlight = 0;
  let drained: (() => void) | undefined;
  /** the answer and its wall time in ms, the wait at the barrier excluded */
  const timedPost = async (path: string, body: string): Promise<[string, number]> => {
    while (paused) await paused;
    inFlight++;
    const start = performance.now();
    const r = await request('POST', path, body).finally(() => {
      if (--inFlight === 0) drained?.();
    });
    const ms = performance.now() - start;
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text.slice(0, 300)}`);
    return [r.text, ms];
  };
  const post = async (path: string, body: string) => (await timedPost(path, body))[0];
  const stats = async (): Promise<Stats> => JSON.parse((await request('GET', '/stats?gc=1')).text) as Stats;

  const latencies: number[] = [];
  let started = 0;
  let finished = 0;
  let failed = 0;
  let measuredSteps = 0;
  let measuredRequests = 0;
  let t0 = 0;
  let t1 = 0;
  let at1k: Stats | undefined;
  let atEnd: Stats | undefined;
  let cpu1k: CpuMark | undefined;
  let cpuEnd: CpuMark | undefined;
  const mark = (st: Stats, wall: number): CpuMark => {
    const c = process.cpuUsage();
    return { server: st.cpu_s, generator: (c.user + c.system) / 1e6, wall: wall / 1000 };
  };
  const deadline = performance.now() + maxSeconds * 1000;
  let nextSlot = 0;
  /** Waits for this request's start on the shared clock (at once when not pacing). */
  const pace = async () => {
    if (rate <= 0) return;
    const now = performance.now();
    const slot = Math.max(nextSlot, now);
    nextSlot = slot + 1000 / rate;
    if (slot > now) await new Promise((r) => setTimeout(r, slot - now));
  };

  async function lane(l: number): Promise<void> {
    while (started < episodes && performance.now() < deadline) {
      const k = started++;
      const measured = k >= warmup;
      if (k === warmup) t0 = performance.now();
      const script = played[k % played.length]!;
      const id = `bench-${l}-${k}`;
      const env = (extra: string) => `{"instance_id":"${id}",${extra}}`;
      const create = await post('/create', env(`"env_type":"bfcl","task_id":"${script.id}","params":{}`));
      let last = '';
      const steps: string[] = [];
      for (const msg of script.msgs) {
        await pace();
        const [text, ms] = await timedPost('/step', env(`"messages":${msg}`));
        last = text;
        steps.push(text);
        if (measured) {
          latencies.push(ms);
          measuredSteps++;
        }
      }
      const evaluated = await post('/evaluate', env('"params":{"sparse":false}'));
      const dense = JSON.parse(evaluated) as { data: { accuracy: number } };
      const release = await post('/release', env('"params":{}'));
      if (kind.kind === 'seal' && !recorded.has(script.id))
        recorded.set(script.id, { create, steps, evaluate: evaluated, release });
      if (measured) measuredRequests += script.msgs.length + 3;
      if (dense.data.accuracy !== 1 || !last.includes('"is_terminated":true')) failed++;
      finished++;
      if (finished === checkpoint || finished === episodes) {
        // Reading memory while the lanes run would measure garbage in flight; pause them.
        let resume!: () => void;
        paused = new Promise((r) => {
          resume = r;
        });
        const at = finished;
        const wait = performance.now();
        if (inFlight > 0) await new Promise<void>((r) => (drained = r));
        drained = undefined;
        const st = await stats();
        if (at === checkpoint) {
          at1k = st;
          cpu1k = mark(st, wait);
          // the loop delay from here on: after the collection's stall has been recorded
          await new Promise((r) => setTimeout(r, 50));
          await request('GET', '/stats?reset_delay=1');
        } else {
          atEnd = st;
          cpuEnd = mark(st, wait);
        }
        t0 += performance.now() - wait;
        resume();
        paused = undefined;
      }
      if (paused) await paused;
      t1 = performance.now();
    }
  }
  await Promise.all(Array.from({ length: concurrency }, (_, l) => lane(l)));
  if (!atEnd && finished > checkpoint) {
    const wall = performance.now();
    atEnd = await stats();
    cpuEnd = mark(atEnd, wall);
  }
  agent.destroy();
  await server.stop();
  const secs = (t1 - t0) / 1000;
  const lat = Float64Array.from(latencies).sort();
  return {
    stepsPerSec: measuredSteps / secs,
    requestsPerSec: measuredRequests / secs,
    p50: quantile(lat, 0.5),
    p99: quantile(lat, 0.99),
    episodes: finished,
    failed,
    ...(at1k ? { mem1k: at1k.memory_mb } : {}),
    ...(atEnd ? { mem10k: atEnd.memory_mb } : {}),
    ...(at1k && atEnd?.event_loop_delay_ms ? { loopDelay: atEnd.event_loop_delay_ms } : {}),
    ...(at1k && atEnd && atEnd.steps > at1k.steps
      ? { cpuMsPerStep: ((atEnd.cpu_s - at1k.cpu_s) * 1000) / (atEnd.steps - at1k.steps) }
      : {}),
    ...(cpu1k && cpuEnd && cpuEnd.wall > cpu1k.wall
      ? {
          serverCores: (cpuEnd.server - cpu1k.server) / (cpuEnd.wall - cpu1k.wall),
          generatorCores: (cpuEnd.generator - cpu1k.generator) / (cpuEnd.wall - cpu1k.wall),
        }
      : {}),
    ...(cpu1k && cpuEnd && at1k && atEnd && atEnd.steps > at1k.steps
      ? { generatorMsPerStep: ((cpuEnd.generator - cpu1k.generator) * 1000) / (atEnd.steps - at1k.steps) }
      : {}),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (m?: Memory) => (m ? `rss ${m.rss.toFixed(0)} MB, heap ${m.heap_used.toFixed(1)} MB` : 'n/a');

console.log(
  `seal serve load: suite ${suite}, ${scripts.length} train tasks, ${concurrency} concurrent instances, ` +
    `${episodes} episodes (${warmup} warm-up), ${runs} run(s)${rate > 0 ? `, /step offered at ${rate}/s` : ''}` +
    `${workers ? `, server --workers ${workers}` : ''}`,
);
const results: RunResult[] = [];
const baselines: RunResult[] = [];
const answersDir = mkdtempSync(join(tmpdir(), 'seal-bench-serve-'));
const answersFile = join(answersDir, 'answers.json');
const describe = (name: string, res: RunResult) =>
  console.log(
    `${name}: ${res.episodes} episodes (${res.failed} not 1.0), ${res.stepsPerSec.toFixed(0)} steps/s, ` +
      `${res.requestsPerSec.toFixed(0)} requests/s, /step p50 ${res.p50.toFixed(2)} ms, p99 ${res.p99.toFixed(2)} ms, ` +
      `server CPU ${res.cpuMsPerStep?.toFixed(3) ?? 'n/a'} ms per step (all requests of an episode included); ` +
      `load generator CPU ${res.generatorMsPerStep?.toFixed(3) ?? 'n/a'} ms per step; ` +
      `CPU in use (cores): server ${res.serverCores?.toFixed(2) ?? 'n/a'}, load generator ${res.generatorCores?.toFixed(2) ?? 'n/a'}; ` +
      `server event loop held up p50 ${res.loopDelay?.p50 ?? 'n/a'} ms, p99 ${res.loopDelay?.p99 ?? 'n/a'} ms, max ${res.loopDelay?.max ?? 'n/a'} ms; ` +
      `server after 1k episodes: ${mb(res.mem1k)}; after ${res.episodes}: ${mb(res.mem10k)}`,
  );
const ratio = (a?: number, b?: number) => (a !== undefined && b ? (a / b).toFixed(2) : 'n/a');
for (let r = 0; r < runs; r++) {
  const res = await oneRun({ kind: 'seal' });
  results.push(res);
  describe(`run ${r + 1}`, res);
  if (!baseline) continue;
  writeFileSync(answersFile, JSON.stringify(Object.fromEntries(recorded)));
  const base = await oneRun({ kind: 'replay', answers: answersFile });
  baselines.push(base);
  describe(`  baseline ${r + 1} (the same HTTP stack replaying seal serve's answers)`, base);
  console.log(
    `  seal serve / baseline: steps/s ${ratio(res.stepsPerSec, base.stepsPerSec)}, ` +
      `server CPU per step ${ratio(res.cpuMsPerStep, base.cpuMsPerStep)}, ` +
      `load generator CPU per step ${ratio(res.generatorMsPerStep, base.generatorMsPerStep)}`,
  );
}
rmSync(answersDir, { recursive: true, force: true });
if (runs > 1)
  console.log(
    `median of ${runs}: ${median(results.map((r) => r.stepsPerSec)).toFixed(0)} steps/s, ` +
      `/step p50 ${median(results.map((r) => r.p50)).toFixed(2)} ms, p99 ${median(results.map((r) => r.p99)).toFixed(2)} ms, ` +
      `server CPU ${median(results.map((r) => r.cpuMsPerStep ?? Number.NaN)).toFixed(3)} ms per step, ` +
      `load generator CPU ${median(results.map((r) => r.generatorMsPerStep ?? Number.NaN)).toFixed(3)} ms per step, ` +
      `cores: server ${median(results.map((r) => r.serverCores ?? Number.NaN)).toFixed(2)}, ` +
      `load generator ${median(results.map((r) => r.generatorCores ?? Number.NaN)).toFixed(2)}, ` +
      `rss after 1k ${median(results.map((r) => r.mem1k?.rss ?? Number.NaN)).toFixed(0)} MB vs after 10k ` +
      `${median(results.map((r) => r.mem10k?.rss ?? Number.NaN)).toFixed(0)} MB, heap ` +
      `${median(results.map((r) => r.mem1k?.heap_used ?? Number.NaN)).toFixed(1)} vs ` +
      `${median(results.map((r) => r.mem10k?.heap_used ?? Number.NaN)).toFixed(1)} MB`,
  );
if (runs > 1 && baselines.length > 0)
  console.log(
    `baseline, median of ${runs}: ${median(baselines.map((r) => r.stepsPerSec)).toFixed(0)} steps/s, ` +
      `/step p50 ${median(baselines.map((r) => r.p50)).toFixed(2)} ms, p99 ${median(baselines.map((r) => r.p99)).toFixed(2)} ms, ` +
      `server CPU ${median(baselines.map((r) => r.cpuMsPerStep ?? Number.NaN)).toFixed(3)} ms per step; ` +
      `seal serve / baseline, median of the runs' ratios: steps/s ` +
      `${median(results.map((r, i) => r.stepsPerSec / baselines[i]!.stepsPerSec)).toFixed(2)}, server CPU per step ` +
      `${median(results.map((r, i) => (r.cpuMsPerStep ?? Number.NaN) / (baselines[i]!.cpuMsPerStep ?? Number.NaN))).toFixed(2)}`,
  );
if ([...results, ...baselines].some((r) => r.failed > 0)) process.exitCode = 1;
