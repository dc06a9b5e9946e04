/**
 * How often a policy holds back on the turns whose ground truth is empty: a miss_param turn lacks a
 * value the calls need (the right answer asks for it), a miss_func turn a function (the right
 * answer says none fits). The official verifier does not check those turns; the diagnosis labels
 * them `correct_abstention` when no call was made and `spurious_tool_call` otherwise, so the count
 * is read from the labels alone. A habit such as guessing a missing value shows here before it
 * shows in the score, which also needs every later turn to pass.
 */
import { CATEGORIES, type Category } from '../envs/bfcl/data/tasks.js';
import type { Label } from '../seal/labels.js';

export interface AbstentionCount {
  /** empty-ground-truth turns answered without a call */
  readonly abstained: number;
  /** empty-ground-truth turns seen */
  readonly turns: number;
}

/** Per category with such turns, how many were answered without a call. */
export function abstentionByCategory(
  rows: Iterable<{ readonly category: Category; readonly labels: readonly Label[] }>,
): Partial<Record<Category, AbstentionCount>> {
  const counts = new Map<Category, { abstained: number; turns: number }>();
  for (const row of rows) {
    for (const label of row.labels) {
      if (label !== 'correct_abstention' && label !== 'spurious_tool_call') continue;
      const c = counts.get(row.category) ?? { abstained: 0, turns: 0 };
      c.turns++;
      if (label === 'correct_abstention') c.abstained++;
      counts.set(row.category, c);
    }
  }
  return Object.fromEntries(CATEGORIES.filter((c) => counts.has(c)).map((c) => [c, counts.get(c)!]));
}

/** `12 / 25 (48.0%)`, or `-` when there was no such turn */
export function abstentionText(count: AbstentionCount | undefined): string {
  if (!count || count.turns === 0) return '-';
  return `${count.abstained} / ${count.turns} (${((100 * count.abstained) / count.turns).toFixed(1)}%)`;
}
