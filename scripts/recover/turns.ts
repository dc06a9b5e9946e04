/**
 * The two turn counts issue 41's entries report for a strict evaluation (docs/results-mechanism.md):
 * how often the policy asks where a value is missing (miss_param turns with an empty ground truth
 * answered without a call), and how often the habit spills over (base turns that needed a call
 * answered without one: `missing_tool_call`). With the score per category, one line per folder.
 *
 *   npx tsx scripts/recover/turns.ts RUN/eval-final [RUN/eval-dev ...]
 */

import { abstentionByCategory } from '../../src/bfcl/abstention.js';
import { readFinished } from '../../src/bfcl/eval.js';
import { summarise } from '../../src/bfcl/summary.js';
import { CATEGORIES } from '../../src/envs/bfcl/data/tasks.js';

const dirs = process.argv.slice(2);
if (dirs.length === 0) {
  console.error(
    'usage: turns.ts EVALDIR [EVALDIR ...]  (folders of seal eval, or a run folder’s eval-final)',
  );
  process.exit(2);
}
console.log(
  ['folder', 'average', ...CATEGORIES, 'asked at missing value', 'base turns without needed call'].join('\t'),
);
for (const dir of dirs) {
  const rows = [...readFinished(dir).values()];
  if (rows.length === 0) {
    console.error(`${dir}: no finished tasks (is it an evaluation folder?)`);
    process.exitCode = 1;
    continue;
  }
  const { categories, average } = summarise(rows);
  const asked = abstentionByCategory(rows).miss_param;
  const spilled = rows
    .filter((r) => r.category === 'base')
    .reduce((n, r) => n + r.labels.filter((l) => l === 'missing_tool_call').length, 0);
  console.log(
    [
      dir,
      average.toFixed(2),
      ...CATEGORIES.map((c) => (categories[c].n === 0 ? '-' : categories[c].accuracy.toFixed(0))),
      asked ? `${asked.abstained} / ${asked.turns}` : '-',
      String(spilled),
    ].join('\t'),
  );
}
