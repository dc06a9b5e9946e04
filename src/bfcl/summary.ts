/**
 * Accuracy per BFCL category and the paper's Table 1 layout. The JSON shape is a stable
 * contract that scripts build on: `{"categories": {"base": {"n", "accuracy"}, ...}, "average"}`,
 * accuracy in percent.
 */
import { CATEGORIES, CATEGORY_TITLES, type Category } from '../envs/bfcl/data/tasks.js';
import { markdownTable } from '../eval/table.js';

export interface CategoryScore {
  readonly n: number;
  readonly accuracy: number;
}

export interface Summary {
  readonly categories: Readonly<Record<Category, CategoryScore>>;
  /** mean of the category accuracies over categories that have tasks */
  readonly average: number;
}

export function summarise(
  verdicts: Iterable<{ readonly category: Category; readonly valid: boolean }>,
): Summary {
  const n: Record<string, number> = {};
  const ok: Record<string, number> = {};
  for (const v of verdicts) {
    n[v.category] = (n[v.category] ?? 0) + 1;
    if (v.valid) ok[v.category] = (ok[v.category] ?? 0) + 1;
  }
  const categories = Object.fromEntries(
    CATEGORIES.map((c) => [c, { n: n[c] ?? 0, accuracy: n[c] ? round2((100 * (ok[c] ?? 0)) / n[c]) : 0 }]),
  ) as Record<Category, CategoryScore>;
  const present = CATEGORIES.filter((c) => categories[c].n > 0);
  const average = present.length
    ? round2(present.reduce((s, c) => s + categories[c].accuracy, 0) / present.length)
    : 0;
  return { categories, average };
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** The paper's Table 1 row: Average, Base, Miss Func, Miss Param, Long Context. */
export function summaryTable(summary: Summary, label = 'result'): string {
  const head = ['', 'Average', ...CATEGORIES.map((c) => CATEGORY_TITLES[c])];
  const row = [label, summary.average.toFixed(2), ...CATEGORIES.map((c) => cell(summary.categories[c]))];
  const counts = [
    'tasks',
    String(CATEGORIES.reduce((s, c) => s + summary.categories[c].n, 0)),
    ...CATEGORIES.map((c) => String(summary.categories[c].n)),
  ];
  return markdownTable(head, [row, counts]);
}

function cell(s: CategoryScore): string {
  return s.n === 0 ? '-' : s.accuracy.toFixed(2);
}
