/** `seal train`: the SEAL loop (src/train). Every config key is also a flag, derived from the schema. */
import type { Command } from 'commander';
import type { BfclData } from '../envs/bfcl/data/tasks.js';
import { loadSuite } from '../envs/suites.js';
import { writeReport } from '../report/report.js';
import { resolveConfig, TRAIN_KEYS, TRAIN_SETTINGS, type TrainConfig } from '../train/config.js';
import { RunFolder, releaseOwnLock } from '../train/run-folder.js';
import { resumeTraining, startTraining } from '../train/train.js';
import { UsageError } from '../util/errors.js';
import { flagOf } from '../util/settings.js';
import { addSettingOptions, dataDirOption } from './flags.js';
import { type RunPlan, trainHooks } from './train-progress.js';

/** progress on stderr: a live line on a terminal, a line every 30 s in a log */
export function stderrProgress(quiet: boolean) {
  const stream = process.stderr;
  return { quiet, tty: !!stream.isTTY, write: (text: string) => void stream.write(text) };
}

/** what the ETA needs of a run: its rounds and its final evaluation's tasks */
export function runPlan(c: TrainConfig, data: BfclData): RunPlan {
  return { rounds: c.rounds, finalTasks: c.evalFinal ? data.split.test.length : 0 };
}

function defaultOutDir(method: string, seed: number): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `runs/${stamp}-${method}-s${seed}`;
}

/**
 * Ctrl-C ends the run at once (what the round in flight did is written again on resume) and says
 * how to continue; the folder's lock is released so that the resume does not have to take it over.
 */
function onInterrupt(dir: string): void {
  process.once('SIGINT', () => {
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[2K');
    console.error(
      `\nseal: interrupted. The completed rounds are kept in ${dir}; continue with: seal train --resume ${dir}`,
    );
    releaseOwnLock(dir);
    process.exit(130);
  });
}

export function registerTrain(program: Command): void {
  const cmd = program
    .command('train')
    .description(
      'Train a policy (the embedded one, or a LoRA on a Tinker service) with the SEAL loop (or an ablation) and evaluate it under the strict protocol',
    )
    .option(
      '--config <file>',
      'YAML file of config keys, e.g. a preset under configs/train/ (flags override it)',
    )
    .option('--out <dir>', 'run folder (default: a new dated folder under runs/)')
    .option(
      '--resume <dir>',
      'continue a run folder from its last completed round (with --rounds N: raise its rounds to N, also of a finished run)',
    )
    .addOption(dataDirOption())
    .option('--quiet', 'no progress lines')
    .option(
      '--dry-run',
      "learner tinker: print the requests one round would send, its token count and each task's first prompt (shortened), and stop (no key, no network)",
    );
  addSettingOptions(cmd, TRAIN_SETTINGS);
  cmd.action(async (opts: Record<string, string | boolean | undefined>) => {
    let plan: RunPlan = { rounds: 0, finalTasks: 0 };
    const hooks = trainHooks(() => plan, stderrProgress(!!opts.quiet));
    const log = hooks.log;
    if (opts.resume) {
      // --rounds alone may come along: it raises the budget (resumeTraining refuses a lower one)
      const given = TRAIN_KEYS.filter((k) => opts[k] !== undefined && k !== 'rounds');
      if (given.length || opts.config || opts.out)
        throw new UsageError(
          `--resume continues a run with its recorded config (only --rounds N may raise its rounds); drop ${[...given.map(flagOf), ...(opts.config ? ['--config'] : []), ...(opts.out ? ['--out'] : [])].join(', ')}`,
        );
      const rounds =
        opts.rounds === undefined
          ? undefined
          : (TRAIN_SETTINGS.ofFlags({ rounds: opts.rounds }).rounds as number);
      onInterrupt(opts.resume as string);
      const outcome = await resumeTraining(
        opts.resume as string,
        (c) => {
          const data = loadSuite(c.suite, opts.dataDir as string | undefined);
          plan = runPlan(c, data);
          return data;
        },
        hooks,
        rounds === undefined ? undefined : { rounds, command: ['seal', ...process.argv.slice(2)].join(' ') },
      );
      // a finished run is left as it is, its report included
      if (!outcome.complete) log(`run folder: ${outcome.dir}; report: ${writeReport([outcome.dir]).path}`);
      return;
    }
    const { config, overrides } = resolveConfig(
      opts.config as string | undefined,
      TRAIN_SETTINGS.fromFlags(opts),
    );
    if (opts.dryRun) {
      if (config.learner !== 'tinker')
        throw new UsageError('--dry-run is for --learner tinker (the embedded learner sends nothing)');
      // the Tinker path's modules (renderers, tokenizers, the wire) load only when it is taken
      const { planRound } = await import('../train/tinker.js');
      const plan = await planRound(config, loadSuite(config.suite, opts.dataDir as string | undefined));
      for (const line of plan.lines) console.log(line);
      return;
    }
    const out = (opts.out as string | undefined) ?? defaultOutDir(config.method, config.seed);
    // a bad --out fails here, before the data and the model are loaded
    new RunFolder(out).checkNew();
    const data = loadSuite(config.suite, opts.dataDir as string | undefined);
    plan = runPlan(config as TrainConfig, data);
    onInterrupt(out);
    const command = ['seal', ...process.argv.slice(2)].join(' ');
    const outcome = await startTraining(config as TrainConfig, overrides, out, command, data, hooks);
    log(`run folder: ${outcome.dir}; report: ${writeReport([outcome.dir]).path}`);
    if (outcome.start && outcome.final)
      log(
        `strict test average: start ${outcome.start.summary.average.toFixed(2)} -> final ${outcome.final.summary.average.toFixed(2)}`,
      );
  });
}
