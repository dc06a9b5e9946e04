/**
 * `seal experiment`: the five methods on the same seeds (src/train/experiment.ts), one run folder
 * each; rerunning the same command continues where it stopped. Prints the comparison with the
 * spread across seeds.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { loadSuite } from '../envs/suites.js';
import { writeReport } from '../report/report.js';
import { resolveConfig, TRAIN_SETTINGS } from '../train/config.js';
import { collectResults, experimentTable, pairedTables, runDirName } from '../train/experiment.js';
import { METHODS, type Method, RUN_FILES } from '../train/record.js';
import { RunFolder } from '../train/run-folder.js';
import { resumeTraining, startTraining } from '../train/train.js';
import { UsageError } from '../util/errors.js';
import { addSettingOptions, dataDirOption, parseNumberFlag } from './flags.js';
import { trainHooks } from './train.js';

function parseList<T extends string>(flag: string, text: string, allowed?: readonly T[]): T[] {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw new UsageError(`${flag}: give a comma-separated list`);
  if (allowed) {
    const bad = items.filter((i) => !allowed.includes(i as T));
    if (bad.length)
      throw new UsageError(`${flag}: unknown ${bad.join(', ')}; choose from ${allowed.join(', ')}`);
  }
  return items as T[];
}

export function registerExperiment(program: Command): void {
  const cmd = program
    .command('experiment')
    .description(
      'Run several methods (default: all five) on the same seeds and config, then print the comparison (mean ± std over seeds)',
    )
    .option('--methods <list>', `comma-separated methods (default: ${METHODS.join(',')})`)
    .option('--seeds <list>', 'comma-separated seeds (default: 1,2,3)')
    .option('--out <dir>', 'experiment folder, one run folder per method and seed (default: runs/experiment)')
    .option('--config <file>', 'YAML file of config keys shared by every run (flags override it)')
    .addOption(dataDirOption())
    .option('--quiet', 'no progress lines');
  addSettingOptions(cmd, TRAIN_SETTINGS, ['method', 'seed']);
  cmd.action(async (opts: Record<string, string | boolean | undefined>) => {
    const methods = parseList<Method>('--methods', (opts.methods as string) ?? METHODS.join(','), METHODS);
    const seeds = parseList('--seeds', (opts.seeds as string) ?? '1,2,3').map((s) =>
      parseNumberFlag('--seeds', s, { int: true, min: 0 }),
    );
    const out = (opts.out as string) ?? 'runs/experiment';
    const { config, overrides } = resolveConfig(
      opts.config as string | undefined,
      TRAIN_SETTINGS.fromFlags(opts),
    );
    const data = loadSuite(config.suite, opts.dataDir as string | undefined);
    const started = Date.now();
    for (const seed of seeds) {
      for (const method of methods) {
        const dir = join(out, runDirName(method, seed));
        const hooks = trainHooks(!!opts.quiet, () => config.rounds);
        if (
          existsSync(join(dir, RUN_FILES.evalFinal, 'summary.json')) ||
          (!config.evalFinal && isDone(dir, config.rounds))
        ) {
          hooks.log(`${dir}: done`);
          continue;
        }
        hooks.log(`== ${method}, seed ${seed} -> ${dir}`);
        if (new RunFolder(dir).exists) await resumeTraining(dir, () => data, hooks);
        else
          await startTraining(
            { ...config, method, seed },
            { ...overrides, method, seed },
            dir,
            ['seal', ...process.argv.slice(2)].join(' '),
            data,
            hooks,
          );
      }
    }
    console.log(experimentTable(collectResults(out, methods, seeds)));
    console.log(`\n${pairedTables(out, methods, seeds)}\n`);
    const runs = seeds.flatMap((seed) => methods.map((m) => join(out, runDirName(m, seed))));
    console.log(`report: ${writeReport(runs, join(out, RUN_FILES.report)).path}`);
    console.log(
      `\n${methods.length} method(s) x ${seeds.length} seed(s) in ${out}; this invocation took ${((Date.now() - started) / 60000).toFixed(1)} min`,
    );
  });
}

function isDone(dir: string, rounds: number): boolean {
  const state = new RunFolder(dir).exists ? new RunFolder(dir).state() : null;
  return (state?.round ?? 0) >= rounds;
}
