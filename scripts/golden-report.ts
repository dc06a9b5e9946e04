/**
 * Developer tool: replay the reference's golden traces and error cases and print every
 * difference. `npx tsx scripts/golden-report.ts [--class TravelAPI] [--limit 20]`
 */
import {
  checkErrorCase,
  checkGoldenTrace,
  type ErrorCase,
  type GoldenTrace,
  readJsonl,
} from '../test/support/golden.js';

const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const cls = opt('--class');
const limit = Number(opt('--limit') ?? 30);

const traces = readJsonl<GoldenTrace>('golden_traces.jsonl').filter(
  (t) => !cls || t.involved_classes.includes(cls as never),
);
const cases = readJsonl<ErrorCase>('error_cases.jsonl').filter(
  (c) => !cls || c.involved_classes.includes(cls as never),
);

let shown = 0;
let badTraces = 0;
for (const t of traces) {
  const m = checkGoldenTrace(t);
  if (m.length === 0) continue;
  badTraces++;
  for (const x of m.slice(0, 3)) {
    if (shown++ < limit) console.log(`TRACE ${x.where}\n  expected: ${x.expected}\n  actual:   ${x.actual}`);
  }
}
let badCases = 0;
for (const c of cases) {
  const m = checkErrorCase(c);
  if (m.length === 0) continue;
  badCases++;
  for (const x of m.slice(0, 3)) {
    if (shown++ < limit)
      console.log(`CASE ${x.where} (${c.note})\n  expected: ${x.expected}\n  actual:   ${x.actual}`);
  }
}
console.log(
  `\ngolden traces: ${traces.length - badTraces}/${traces.length} identical; error cases: ${cases.length - badCases}/${cases.length} identical${cls ? ` (class ${cls})` : ''}`,
);
