/** `seal compare`: several evaluation runs side by side. */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { compareTable } from '../report/compare.js';
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
  // a suite or split mismatch is said first: no evaluation would make those runs comparable
  checkSameProtocol(dirs);
  const evaluations = dirs.map(evaluationDir);
  print(compareTable(dirs, evaluations));
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

/**
 * Where a folder's scores are: a `seal train` run folder is compared by its final strict
 * evaluation, any other folder is taken as a `seal eval` one. A folder that is not there, or a
 * train run without a final evaluation, is refused saying which and what to do.
 */
function evaluationDir(dir: string): string {
  if (!existsSync(dir))
    throw new UsageError(`${dir} does not exist: give run folders of seal eval or seal train.`);
  const manifest = join(dir, RUN_FILES.manifest);
  let m:
    | { format?: unknown; config?: { evalFinal?: unknown; learner?: unknown; suite?: unknown } }
    | undefined;
  try {
    m = JSON.parse(readFileSync(manifest, 'utf8')) as typeof m;
  } catch {
    return dir;
  }
  if (m?.format !== RUN_FORMAT) return dir;
  const evaluation = join(dir, RUN_FILES.evalFinal);
  if (existsSync(join(evaluation, 'summary.json'))) return evaluation;
  if (m.config?.evalFinal === false) {
    const last = lastCheckpoint(dir);
    const how =
      m.config.learner !== 'tinker' && last
        ? `\`seal eval --suite ${String(m.config.suite ?? 'mini')} --policy embedded --model ${last} --out ${dir}-final\``
        : '`seal eval` of its last checkpoint';
    throw new UsageError(
      `${dir} is a seal train run made with --eval-final false: it has no final evaluation to compare. Evaluate its final policy with ${how}, and compare that folder.`,
    );
  }
  throw new UsageError(
    `${dir} is a seal train run whose final evaluation has not finished; \`seal train --resume ${dir}\` completes it.`,
  );
}

/** the newest `checkpoints/round-NNNN` folder of a train run, if any */
function lastCheckpoint(dir: string): string | undefined {
  const root = join(dir, RUN_FILES.checkpoints);
  if (!existsSync(root)) return undefined;
  const rounds = readdirSync(root)
    .filter((n) => /^round-\d+$/.test(n))
    .sort();
  return rounds.length > 0 ? join(root, rounds.at(-1)!) : undefined;
}
