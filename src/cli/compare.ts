/** `seal compare`: several evaluation runs side by side. */

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { compareTable } from '../eval/compare.js';
import { RUN_FILES, RUN_FORMAT } from '../train/record.js';
import { UsageError } from '../util/errors.js';

/** `seal compare DIR...` */
export function registerCompare(program: Command): void {
  program
    .command('compare')
    .description('Compare evaluation runs side by side (Table 1 layout, differences to the first)')
    .argument(
      '<dirs...>',
      'run folders written by seal eval, or seal train run folders (their final evaluation)',
    )
    .action((dirs: string[]) => runCompareCommand(dirs, (s) => console.log(s)));
}

export function runCompareCommand(dirs: string[], print: (s: string) => void): void {
  checkSameProtocol(dirs);
  print(compareTable(dirs.map(evaluationDir)));
}

/** the suite and split a folder's results come from, as its records say (undefined: unknown) */
function protocolOf(dir: string): { suite?: string; split?: string } {
  const read = (path: string): Record<string, unknown> | undefined => {
    try {
      const v = JSON.parse(readFileSync(path, 'utf8')) as unknown;
      return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  };
  const m = read(join(dir, RUN_FILES.manifest));
  // a training run is compared by its final evaluation, which is always the full test split
  if (m?.format === RUN_FORMAT)
    return { ...(typeof m.suite === 'string' ? { suite: m.suite } : {}), split: 'test' };
  return {
    ...(typeof m?.suite === 'string' ? { suite: m.suite } : {}),
    ...(typeof m?.split === 'string' ? { split: m.split } : {}),
  };
}

/** results of different suites or splits are not comparable: refused, naming each run's */
function checkSameProtocol(dirs: readonly string[]): void {
  const runs = dirs.map((dir) => ({ dir, ...protocolOf(dir) }));
  for (const key of ['suite', 'split'] as const) {
    const known = runs.filter((r) => r[key] !== undefined);
    if (new Set(known.map((r) => r[key])).size > 1)
      throw new UsageError(
        `these runs are of different ${key}s, and their scores are not comparable: ${known.map((r) => `${r.dir} (${key} ${r[key]})`).join(', ')}. Compare runs of one ${key}.`,
      );
  }
}

/** a `seal train` run folder is compared by its final strict evaluation */
function evaluationDir(dir: string): string {
  const manifest = join(dir, RUN_FILES.manifest);
  if (!existsSync(manifest)) return dir;
  try {
    const m = JSON.parse(readFileSync(manifest, 'utf8')) as { format?: unknown };
    return m.format === RUN_FORMAT ? join(dir, RUN_FILES.evalFinal) : dir;
  } catch {
    return dir;
  }
}
