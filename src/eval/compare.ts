/** `seal compare`: several evaluation summaries side by side, with differences to the first. */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { CATEGORIES, CATEGORY_TITLES } from '../envs/bfcl/data/tasks.js';
import { UserError } from '../util/errors.js';
import type { Summary } from './summary.js';
import { markdownTable } from './table.js';

export class CompareError extends UserError {}

export function readSummary(dir: string): Summary {
  const path = join(dir, 'summary.json');
  if (!existsSync(path)) {
    throw new CompareError(
      `${dir} has no summary.json: point at a folder written by \`seal eval --out\` (finished runs only).`,
    );
  }
  return JSON.parse(readFileSync(path, 'utf8')) as Summary;
}

const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(2)}`;

export function compareTable(dirs: readonly string[]): string {
  if (dirs.length === 0) throw new CompareError('give at least one run folder');
  const runs = dirs.map((d) => ({ name: basename(resolve(d)), summary: readSummary(d) }));
  const head = ['run', 'Average', ...CATEGORIES.map((c) => CATEGORY_TITLES[c])];
  const values = (s: Summary) => [s.average, ...CATEGORIES.map((c) => s.categories[c].accuracy)];
  const base = values(runs[0]!.summary);
  const rows = runs.map((r, i) => {
    const v = values(r.summary);
    return [
      r.name,
      ...v.map((x, j) => (i === 0 ? x.toFixed(2) : `${x.toFixed(2)} (${signed(x - base[j]!)})`)),
    ];
  });
  return `${markdownTable(head, rows)}\n\nDifferences in points against ${runs[0]!.name}.`;
}
