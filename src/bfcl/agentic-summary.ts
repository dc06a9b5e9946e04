/**
 * Accuracy of BFCL v4's agentic categories in the SEAL paper's Table 2 layout (web search, memory,
 * their average), computed as the reference's leaderboard does: web search is the unweighted mean
 * of its two variants, memory of its three backends, the average the mean of the two. A group with
 * no scored category is left out of the average. The JSON shape is a stable contract:
 * `{"categories": {"web_search_base": {"n", "accuracy"}, ...}, "web_search", "memory", "average"}`.
 */
import {
  AGENTIC_CATEGORIES,
  AGENTIC_TITLES,
  type AgenticCategory,
  MEMORY_CATEGORIES,
  WEB_SEARCH_CATEGORIES,
} from '../envs/bfcl/agentic/data.js';
import { markdownTable } from '../eval/table.js';
import type { CategoryScore } from './summary.js';

export interface AgenticSummary {
  readonly categories: Readonly<Record<AgenticCategory, CategoryScore>>;
  /** null when neither web search category was scored */
  readonly web_search: number | null;
  readonly memory: number | null;
  readonly average: number;
}

const WEB: readonly AgenticCategory[] = WEB_SEARCH_CATEGORIES;
const MEMORY: readonly AgenticCategory[] = MEMORY_CATEGORIES;

export function summariseAgentic(
  verdicts: Iterable<{ readonly category: AgenticCategory; readonly valid: boolean }>,
): AgenticSummary {
  const n = new Map<AgenticCategory, number>();
  const ok = new Map<AgenticCategory, number>();
  for (const v of verdicts) {
    n.set(v.category, (n.get(v.category) ?? 0) + 1);
    if (v.valid) ok.set(v.category, (ok.get(v.category) ?? 0) + 1);
  }
  const raw = (c: AgenticCategory) => (ok.get(c) ?? 0) / n.get(c)!;
  const mean = (cs: readonly AgenticCategory[]): number | null => {
    const present = cs.filter((c) => n.has(c));
    return present.length ? present.reduce((s, c) => s + raw(c), 0) / present.length : null;
  };
  const web = mean(WEB);
  const memory = mean(MEMORY);
  const groups = [web, memory].filter((x): x is number => x !== null);
  const average = groups.length ? groups.reduce((a, b) => a + b, 0) / groups.length : 0;
  const categories = Object.fromEntries(
    AGENTIC_CATEGORIES.map((c) => [c, { n: n.get(c) ?? 0, accuracy: n.has(c) ? pct(raw(c)) : 0 }]),
  ) as Record<AgenticCategory, CategoryScore>;
  return {
    categories,
    web_search: web === null ? null : pct(web),
    memory: memory === null ? null : pct(memory),
    average: pct(average),
  };
}

const pct = (x: number) => Math.round(x * 10000) / 100;

/** Table 2's row: Average, Web Search (Base, No Snippet), Memory (KV, Vector, Rec Sum). */
export function agenticSummaryTable(s: AgenticSummary, label = 'result'): string {
  const head = [
    '',
    'Average',
    'Web Search',
    ...WEB.map((c) => AGENTIC_TITLES[c]),
    'Memory',
    ...MEMORY.map((c) => AGENTIC_TITLES[c]),
  ];
  const cell = (c: AgenticCategory) => (s.categories[c].n === 0 ? '-' : s.categories[c].accuracy.toFixed(2));
  const group = (x: number | null) => (x === null ? '-' : x.toFixed(2));
  const count = (cs: readonly AgenticCategory[]) => String(cs.reduce((a, c) => a + s.categories[c].n, 0));
  return markdownTable(head, [
    [
      label,
      s.average.toFixed(2),
      group(s.web_search),
      ...WEB.map(cell),
      group(s.memory),
      ...MEMORY.map(cell),
    ],
    [
      'tasks',
      count([...WEB, ...MEMORY]),
      count(WEB),
      ...WEB.map((c) => String(s.categories[c].n)),
      count(MEMORY),
      ...MEMORY.map((c) => String(s.categories[c].n)),
    ],
  ]);
}
