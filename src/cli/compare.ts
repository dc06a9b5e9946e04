/** `seal compare`: several evaluation runs side by side. */
import type { Command } from 'commander';
import { compareTable } from '../eval/compare.js';

/** `seal compare DIR...` */
export function registerCompare(program: Command): void {
  program
    .command('compare')
    .description('Compare evaluation runs side by side (Table 1 layout, differences to the first)')
    .argument('<dirs...>', 'run folders written by seal eval')
    .action((dirs: string[]) => runCompareCommand(dirs, (s) => console.log(s)));
}

export function runCompareCommand(dirs: string[], print: (s: string) => void): void {
  print(compareTable(dirs));
}
