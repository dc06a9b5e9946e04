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
import {
  collectResults,
  EXPERIMENT_SETTINGS,
  experimentTable,
  pairedTables,
  runDirName,
} from '../train/experiment.js';
import { RUN_FILES } from '../train/record.js';
import { RunFolder } from '../train/run-folder.js';
import { resumeTraining, startTraining } from '../train/train.js';
import { addSettingOptions, dataDirOption } from './flags.js';
import { runPlan, stderrProgress } from './train.js';
import { trainHooks } from './train-progress.js';

export function registerExperiment(program: Command): void {
  const cmd = program
    .command('experiment')
    .description(
      'Run several methods (default: all five) on the same seeds and config, then print the comparison (mean ± std over seeds)',
    )
    .option('--config <file>', 'YAML file of config keys shared by every run (flags override it)')
    .addOption(dataDirOption())
    .option('--quiet', 'no progress lines');
  addSettingOptions(cmd, EXPERIMENT_SETTINGS);
  addSettingOptions(cmd, TRAIN_SETTINGS, ['method', 'seed']);
  cmd.action(async (opts: Record<string, string | boolean | undefined>) => {
    const { methods, seeds, out } = EXPERIMENT_SETTINGS.ofFlags(opts);
    const { config, overrides } = resolveConfig(
      opts.config as string | undefined,
      TRAIN_SETTINGS.fromFlags(opts),
    );
    const data = loadSuite(config.suite, opts.dataDir as string | undefined);
    const started = Date.now();
    for (const seed of seeds) {
      for (const method of methods) {
        const dir = join(out, runDirName(method, seed));
        const hooks = trainHooks(() => runPlan(config, data), stderrProgress(!!opts.quiet));
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
