/**
 * Learning curves from `seal train` run folders (issue 30, item 1): per run, the strict score on
 * the development subset at each validation round against the base's on the same tasks, the mean
 * sampled success of the training rollouts by window of rounds, and the test split at the start and
 * the end; then, per seed, each run against the supervised control of that seed (`--policy-gradient
 * false`) on the same tasks and sampling seeds, group by group. A round's tasks and sampling seeds
 * are functions of (seed, round, group, sample), so runs of one seed sample the same tasks; only
 * the weights that sample them differ.
 *
 *   npx tsx bench/curves.ts RUN... [--base-dev SEED=DIR ...] [--window 12] [--json FILE]
 *   npx tsx bench/curves.ts --dev-ids SEED N     # the ids of `seal train --seed SEED
 *                                                # --validation-tasks N`'s subset, for seal eval --split
 *
 * `--base-dev SEED=DIR`: a `seal eval --suite mini --policy embedded --split <those ids>` folder,
 * the start of that seed's development curve.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readVerdicts } from '../src/bfcl/eval.js';
import { loadSuite } from '../src/envs/suites.js';
import { bootstrapMean } from '../src/eval/bootstrap.js';
import { pooledComparison, signTestP } from '../src/eval/paired.js';
import { validationTasks } from '../src/train/tasks.js';

interface Rollout {
  readonly round: number;
  readonly group: number;
  readonly reward: number;
}
interface Run {
  readonly dir: string;
  readonly arm: string;
  readonly seed: number;
  readonly rollouts: Rollout[];
  /** validation round -> the development subset's verdicts */
  readonly dev: Map<number, Map<string, boolean>>;
  readonly testStart?: Map<string, boolean>;
  readonly testFinal?: Map<string, boolean>;
}

const args = process.argv.slice(2);
if (args[0] === '--dev-ids') {
  const [seed, n] = args.slice(1).map(Number);
  console.log(
    validationTasks(loadSuite('mini'), seed!, n!)
      .map((t) => t.id)
      .join(','),
  );
  process.exit(0);
}
const flagValues = (flag: string): string[] =>
  args.flatMap((a, i) => (a === flag && args[i + 1] !== undefined ? [args[i + 1]!] : []));
const window = Number(flagValues('--window')[0] ?? 12);
const jsonOut = flagValues('--json')[0];
const baseDev = new Map(
  flagValues('--base-dev').map((s) => {
    const [seed, dir] = s.split('=');
    return [Number(seed), readVerdicts(dir!)!] as const;
  }),
);
const runDirs = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));

function readRun(dir: string): Run {
  const manifest = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'));
  const arm =
    manifest.config.policyGradient === false
      ? 'anchor-only'
      : `${manifest.method}${manifest.config.anchorCoef === 0 ? ' (anchor off)' : ''}`;
  const rollouts = readdirSync(join(dir, 'rollouts'))
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .flatMap((f) =>
      readFileSync(join(dir, 'rollouts', f), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Rollout),
    );
  const dev = new Map<number, Map<string, boolean>>();
  const vdir = join(dir, 'validation');
  if (existsSync(vdir))
    for (const f of readdirSync(vdir).sort()) {
      const v = readVerdicts(join(vdir, f));
      if (v && existsSync(join(vdir, f, 'summary.json'))) dev.set(Number(f.replace('round-', '')), v);
    }
  const testStart = readVerdicts(join(dir, 'eval-start'));
  const testFinal = existsSync(join(dir, 'eval-final', 'summary.json'))
    ? readVerdicts(join(dir, 'eval-final'))
    : undefined;
  return {
    dir,
    arm,
    seed: manifest.seed,
    rollouts,
    dev,
    ...(testStart ? { testStart } : {}),
    ...(testFinal ? { testFinal } : {}),
  };
}

const pct = (v: Map<string, boolean>) => (100 * [...v.values()].filter(Boolean).length) / v.size;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** won / lost of `b` against `a` on their common tasks */
function wonLost(a: Map<string, boolean>, b: Map<string, boolean>) {
  let won = 0;
  let lost = 0;
  for (const [id, ok] of b) {
    const ref = a.get(id);
    if (ref === undefined) continue;
    if (ok && !ref) won++;
    if (!ok && ref) lost++;
  }
  return { won, lost };
}

/** the mean reward of each (round, group) */
function groupMeans(rs: readonly Rollout[]): Map<string, number> {
  const sums = new Map<string, { s: number; n: number }>();
  for (const r of rs) {
    const k = `${r.round}/${r.group}`;
    const e = sums.get(k) ?? { s: 0, n: 0 };
    e.s += r.reward;
    e.n++;
    sums.set(k, e);
  }
  return new Map([...sums].map(([k, e]) => [k, e.s / e.n]));
}

const runs = runDirs.map(readRun);
const maxRound = Math.max(...runs.flatMap((r) => r.rollouts.map((x) => x.round)));
const windows: [number, number][] = [];
for (let lo = 1; lo <= maxRound; lo += window) windows.push([lo, Math.min(maxRound, lo + window - 1)]);
const inWindow = (r: { round: number }, [lo, hi]: [number, number]) => r.round >= lo && r.round <= hi;
const signed = (x: number, d = 2) => `${x >= 0 ? '+' : ''}${x.toFixed(d)}`;

const report: Record<string, unknown>[] = [];
console.log('## Per run\n');
for (const run of runs) {
  const rounds = Math.max(0, ...run.rollouts.map((r) => r.round));
  const base = baseDev.get(run.seed);
  const devCells = [...run.dev].map(([round, v]) => {
    const wl = base ? wonLost(base, v) : undefined;
    return `r${round} ${pct(v).toFixed(0)}${wl ? ` (${wl.won}/${wl.lost})` : ''}`;
  });
  const sampled = windows.map((w) => {
    const rs = run.rollouts.filter((r) => inWindow(r, w));
    return rs.length ? mean(rs.map((r) => r.reward)) : Number.NaN;
  });
  const groups = groupMeans(run.rollouts);
  const varied = [...groups.values()].filter((m) => m > 0 && m < 1).length;
  const test =
    run.testStart && run.testFinal
      ? { start: pct(run.testStart), final: pct(run.testFinal), ...wonLost(run.testStart, run.testFinal) }
      : undefined;
  console.log(
    `${run.arm} s${run.seed} (${rounds} rounds): dev ${base ? `r0 ${pct(base).toFixed(0)}, ` : ''}${devCells.join(', ')}; ` +
      `sampled success by ${window} rounds ${sampled.map((x) => (Number.isNaN(x) ? '-' : x.toFixed(3))).join(' / ')}; ` +
      `groups with reward variance ${varied} of ${groups.size}` +
      (test
        ? `; test ${test.start.toFixed(2)} -> ${test.final.toFixed(2)} (won ${test.won} / lost ${test.lost})`
        : ''),
  );
  report.push({
    dir: run.dir,
    arm: run.arm,
    seed: run.seed,
    rounds,
    groupsWithVariance: varied,
    devBase: base ? pct(base) : null,
    dev: Object.fromEntries(
      [...run.dev].map(([round, v]) => [round, { score: pct(v), ...(base ? wonLost(base, v) : {}) }]),
    ),
    sampledSuccess: Object.fromEntries(windows.map((w, i) => [`${w[0]}-${w[1]}`, sampled[i]])),
    ...(test ? { test } : {}),
  });
}

// each arm against the control of its seed, group by group, over the rounds both have
console.log('\n## Against the supervised control (same seed, tasks and sampling seeds)\n');
const paired: Record<string, unknown>[] = [];
const arms = [...new Set(runs.map((r) => r.arm))].filter((a) => a !== 'anchor-only');
for (const arm of arms)
  for (const w of windows) {
    const diffs: number[] = [];
    for (const run of runs.filter((r) => r.arm === arm)) {
      const control = runs.find((r) => r.arm === 'anchor-only' && r.seed === run.seed);
      if (!control) continue;
      const a = groupMeans(run.rollouts.filter((r) => inWindow(r, w)));
      const c = groupMeans(control.rollouts.filter((r) => inWindow(r, w)));
      for (const [k, v] of a) if (c.has(k)) diffs.push(v - c.get(k)!);
    }
    if (diffs.length === 0) continue;
    const better = diffs.filter((d) => d > 0).length;
    const worse = diffs.filter((d) => d < 0).length;
    const b = bootstrapMean(diffs, { resamples: 10_000, seed: 1 });
    const row = {
      arm,
      rounds: `${w[0]}-${w[1]}`,
      groups: diffs.length,
      better,
      worse,
      p: signTestP(better, worse),
      mean: b.mean,
      lo: b.lo,
      hi: b.hi,
    };
    paired.push(row);
    console.log(
      `${arm}, rounds ${row.rounds}: ${row.groups} groups, better ${better}, worse ${worse}, p ${row.p.toFixed(3)}, ` +
        `mean ${signed(b.mean, 3)} [${signed(b.lo, 3)}, ${signed(b.hi, 3)}]`,
    );
  }

// pooled over seeds, per arm: the test split's final policy against the start (the same 400 tasks
// in every seed, so the bootstrap resamples tasks), and the last common validation round of the
// development subsets against the base's (each seed has its own subset: won / lost summed)
console.log('\n## Pooled over seeds\n');
const pooled: Record<string, unknown>[] = [];
for (const arm of [...new Set(runs.map((r) => r.arm))]) {
  const armRuns = runs.filter((r) => r.arm === arm);
  const tested = armRuns.filter((r) => r.testStart && r.testFinal);
  const test = tested.length
    ? pooledComparison(
        tested.map((r) => ({ first: r.testStart!, other: r.testFinal! })),
        { resamples: 10_000, seed: 1 },
      )
    : undefined;
  const devRound = Math.min(...armRuns.map((r) => Math.max(0, ...r.dev.keys())));
  const devPairs = armRuns.flatMap((r) => {
    const base = baseDev.get(r.seed);
    const v = r.dev.get(devRound);
    return base && v ? [{ base, v }] : [];
  });
  const dev = devPairs.reduce(
    (acc, { base, v }) => {
      const wl = wonLost(base, v);
      return { won: acc.won + wl.won, lost: acc.lost + wl.lost, diff: acc.diff + pct(v) - pct(base) };
    },
    { won: 0, lost: 0, diff: 0 },
  );
  const row = {
    arm,
    seeds: armRuns.map((r) => r.seed),
    ...(test
      ? {
          test: {
            seeds: test.pairs,
            won: test.won,
            lost: test.lost,
            p: test.p,
            mean: test.diff.mean,
            lo: test.diff.lo,
            hi: test.diff.hi,
          },
        }
      : {}),
    ...(devPairs.length
      ? {
          dev: {
            round: devRound,
            seeds: devPairs.length,
            won: dev.won,
            lost: dev.lost,
            p: signTestP(dev.won, dev.lost),
            mean: dev.diff / devPairs.length,
          },
        }
      : {}),
  };
  pooled.push(row);
  console.log(
    `${arm} (seeds ${row.seeds.join(', ')}):` +
      (test
        ? ` test final against start over ${test.pairs} seed(s): won ${test.won}, lost ${test.lost}, p ${test.p.toFixed(3)}, ` +
          `mean ${signed(test.diff.mean)} [${signed(test.diff.lo)}, ${signed(test.diff.hi)}];`
        : '') +
      (row.dev
        ? ` dev round ${devRound} against the base over ${row.dev.seeds} seed(s): won ${dev.won}, lost ${dev.lost}, ` +
          `p ${row.dev.p.toFixed(3)}, mean ${signed(row.dev.mean)}`
        : ''),
  );
}

if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify({ window, runs: report, paired, pooled }, null, 1)}\n`);
