/**
 * What a Tinker run costs in the service's clock cycles. The hosted service runs training requests
 * in lock-step cycles; here the Tinker-protocol test server runs them only at the ticks of a clock
 * (`--clock-ms`, default 1000) and answers samples after `--sample-ms` (default 300). `seal train
 * --learner tinker` (the real binary, the mini suite, the oracle model that writes ground-truth
 * calls) runs `--rounds` rounds against it, `--runs` times on-policy (`--max-steps-off-policy 0`)
 * and `--runs` times sampling each round while the one before trains (`--max-steps-off-policy 1`),
 * alternating, the same settings otherwise.
 *
 * Prints per run: optimiser steps, the ticks training requests ran at, training requests sent
 * (the baseline: a client that awaits each request before the next needs at least one tick per
 * request), ticks per optimiser step, wall time; then for each mode the medians and the ratio of
 * ticks used to the baseline's, and the off-policy wall time against the on-policy one.
 *
 *   npx tsx bench/tinker-clock.ts [--rounds 4] [--runs 3] [--clock-ms 1000] [--sample-ms 300]
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { loadMiniSuite } from '../src/envs/mini/index.js';
import { QWEN3_DIR, qwen3Renderer } from '../test/support/render.js';
import { oracleModel } from '../test/support/tinker-oracle.js';
import { startTinkerServer } from '../test/support/tinker-server.js';
import { tinkerTrainArgs } from '../test/support/tiny-run.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '4' },
    runs: { type: 'string', default: '3' },
    'clock-ms': { type: 'string', default: '1000' },
    'sample-ms': { type: 'string', default: '300' },
  },
});
const rounds = Number(values.rounds);
const runs = Number(values.runs);
const clockMs = Number(values['clock-ms']);
const sampleMs = Number(values['sample-ms']);
const ROOT = join(import.meta.dirname, '..');
const KEY = 'tml-bench';
const model = oracleModel(loadMiniSuite(), qwen3Renderer());
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Run {
  steps: number;
  ticks: number;
  requests: number;
  wallS: number;
}

async function once(offPolicy: number): Promise<Run> {
  const server = await startTinkerServer({ model, apiKey: KEY, clockMs, sampleDelayMs: sampleMs });
  const dir = mkdtempSync(join(tmpdir(), 'seal-bench-clock-'));
  try {
    const t0 = performance.now();
    await promisify(execFile)(
      'node',
      [
        join(ROOT, 'bin', 'seal.js'),
        ...tinkerTrainArgs(join(dir, 'run'), QWEN3_DIR, {
          baseUrl: server.url,
          rounds,
          tasksPerRound: 4,
          groupSize: 4,
          maxSteps: 2,
          loraRank: 8,
          maxStepsOffPolicy: offPolicy,
        }),
      ],
      { env: { ...process.env, TINKER_API_KEY: KEY }, maxBuffer: 64 << 20 },
    );
    const wallS = (performance.now() - t0) / 1000;
    const ran = [...server.models.values()].flatMap((m) => m.ran);
    return {
      steps: ran.filter((r) => r.route === 'optim_step').length,
      ticks: new Set(ran.map((r) => r.tick)).size,
      requests: ran.length,
      wallS,
    };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `seal train --learner tinker, ${rounds} rounds, clock ${clockMs} ms, samples after ${sampleMs} ms`,
);
const modes = [0, 1] as const;
const results = new Map<number, Run[]>(modes.map((n) => [n, []]));
for (let i = 0; i < runs; i++)
  for (const n of modes) {
    const r = await once(n);
    results.get(n)!.push(r);
    console.log(
      `--max-steps-off-policy ${n}, run ${i + 1}: ${r.steps} optimiser steps, ${r.ticks} ticks with training (${(r.ticks / Math.max(1, r.steps)).toFixed(2)} a step), ${r.requests} training requests, ${r.wallS.toFixed(1)} s`,
    );
  }
const wall = new Map<number, number>();
for (const n of modes) {
  const rs = results.get(n)!;
  const m = {
    steps: median(rs.map((r) => r.steps)),
    ticks: median(rs.map((r) => r.ticks)),
    requests: median(rs.map((r) => r.requests)),
    perStep: median(rs.map((r) => r.ticks / Math.max(1, r.steps))),
    wallS: median(rs.map((r) => r.wallS)),
  };
  wall.set(n, m.wallS);
  console.log(
    `median, --max-steps-off-policy ${n}: ${m.ticks} ticks for ${m.steps} steps (${m.perStep.toFixed(2)} a step), ${m.requests} training requests (a client awaiting each: >= ${m.requests} ticks), ratio ${(m.ticks / m.requests).toFixed(2)}; wall ${m.wallS.toFixed(1)} s`,
  );
}
const ratio = wall.get(1)! / wall.get(0)!;
console.log(
  `wall time, off-policy against on-policy: ${ratio.toFixed(2)} (${((1 - ratio) * 100).toFixed(0)}% less)`,
);
