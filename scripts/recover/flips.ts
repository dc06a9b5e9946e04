/**
 * Where two arms of an experiment part ways, task by task (docs/results-mechanism.md): for every
 * seed, the tasks one arm's final strict evaluation passes and the other's fails, pooled over the
 * seeds and counted per category by the diagnosis label of the first turn the losing arm failed.
 * A `missing_tool_call` there is a turn answered without the call it needed (an agent that learnt
 * to ask, asking where nothing was missing); `spurious_tool_call` a call where nothing was to be
 * called; the others a call made wrong or its effects.
 *
 *   npx tsx scripts/recover/flips.ts EXPDIR --a seal --b vanilla --seeds 31,32,33,34,35
 *
 * EXPDIR holds `seal experiment`'s run folders (METHOD-sSEED). An arm is a method, or
 * `METHOD:start` for that method's start evaluation; `--b-dir` reads arm b from another folder
 * (the supervised control's runs, say),
 * and `--b-name` names it in the table.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { EvalResultRow } from '../../src/bfcl/eval.js';
import { readFinished } from '../../src/bfcl/eval.js';
import { CATEGORIES } from '../../src/envs/bfcl/data/tasks.js';
import { SUCCESS_LABELS } from '../../src/seal/labels.js';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    'b-dir': { type: 'string' },
    'b-name': { type: 'string' },
    seeds: { type: 'string' },
  },
});
const dir = positionals[0];
if (!dir || !flags.a || !flags.b || !flags.seeds) {
  console.error(
    'usage: flips.ts EXPDIR --a METHOD[:start] --b METHOD[:start] --seeds S,S,... [--b-dir DIR] [--b-name NAME]',
  );
  process.exit(2);
}
const seeds = flags.seeds.split(',').map(Number);
const bName = flags['b-name'] ?? flags.b;

function arm(spec: string, root: string, seed: number): Map<string, EvalResultRow> {
  const [method, which] = spec.split(':');
  const rows = readFinished(
    join(root, `${method}-s${seed}`, which === 'start' ? 'eval-start' : 'eval-final'),
  );
  if (rows.size === 0) throw new Error(`no evaluation of ${spec} seed ${seed} under ${root}`);
  return rows;
}

/** the label of the first turn the rollout failed (a run that passed every turn and still failed: `final state`) */
const firstFailure = (r: EvalResultRow): string =>
  r.labels.find((l) => !SUCCESS_LABELS.has(l)) ?? 'final state';

type Tally = { won: number; lost: number; aLost: Map<string, number>; bLost: Map<string, number> };
const tallies = new Map<string, Tally>(
  CATEGORIES.map((c) => [c, { won: 0, lost: 0, aLost: new Map(), bLost: new Map() }]),
);
const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
for (const seed of seeds) {
  const a = arm(flags.a, dir, seed);
  const b = arm(flags.b, flags['b-dir'] ?? dir, seed);
  for (const [id, ra] of a) {
    const rb = b.get(id);
    if (!rb || ra.valid === rb.valid) continue;
    const t = tallies.get(ra.category)!;
    if (ra.valid) {
      t.won++;
      bump(t.bLost, firstFailure(rb));
    } else {
      t.lost++;
      bump(t.aLost, firstFailure(ra));
    }
  }
}
const show = (m: Map<string, number>) =>
  [...m]
    .sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ') || '-';
console.log(
  `${flags.a} against ${bName}, seeds ${seeds.join(', ')}: tasks one passes and the other fails, pooled`,
);
console.log(`\n| category | ${flags.a} won / lost | where ${flags.a} failed | where ${bName} failed |`);
console.log('|---|--:|---|---|');
for (const [c, t] of tallies)
  console.log(`| ${c} | ${t.won} / ${t.lost} | ${show(t.aLost)} | ${show(t.bLost)} |`);
