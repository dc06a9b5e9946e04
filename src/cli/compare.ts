/** `seal compare`: several evaluation runs side by side. */

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { compareTable } from '../eval/compare.js';
import { RUN_FILES, RUN_FORMAT } from '../train/record.js';

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
  print(compareTable(dirs.map(evaluationDir)));
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
