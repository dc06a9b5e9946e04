/** `seal train`: the SEAL loop (src/train). Every config key is also a flag, derived from the schema. */
import type { Command } from 'commander';
import { loadSuite } from '../envs/suites.js';
import { abstentionText } from '../eval/abstention.js';
import { writeReport } from '../report/report.js';
import { resolveConfig, TRAIN_KEYS, TRAIN_SETTINGS, type TrainConfig } from '../train/config.js';
import type { RoundProgress } from '../train/loop.js';
import type { RoundRecord } from '../train/record.js';
import { RunFolder, releaseOwnLock } from '../train/run-folder.js';
import { planRound } from '../train/tinker.js';
import { resumeTraining, startTraining } from '../train/train.js';
import { UsageError } from '../util/errors.js';
import { flagOf } from '../util/settings.js';
import { addSettingOptions, dataDirOption } from './flags.js';

function defaultOutDir(method: string, seed: number): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `runs/${stamp}-${method}-s${seed}`;
}

function roundLine(r: RoundRecord, rounds: number, startedAt: number, roundsDone: number): string {
  const ro = r.rollouts;
  const labels = Object.entries(r.labels)
    .sort((a, b) => b[1]! - a[1]!)
    .slice(0, 3)
    .map(([l, n]) => `${l} ${n}`)
    .join(', ');
  const secs = (Date.now() - startedAt) / 1000;
  const eta = roundsDone > 0 ? ((secs / roundsDone) * (rounds - r.round)) / 60 : 0;
  const rps = ro.count / (r.timings.totalMs / 1000);
  const asked = r.validation?.abstention?.miss_param;
  const val = r.validation
    ? ` | validation ${r.validation.summary.average.toFixed(2)}${asked ? ` (asked for a missing value ${abstentionText(asked)})` : ''}`
    : '';
  return `round ${r.round}/${rounds} | ${rps.toFixed(1)} rollouts/s | reward ${ro.meanReward.toFixed(3)} | groups with signal ${ro.groupsWithVariance} | parse errors ${ro.parseErrors}/${ro.steps} | KL ${r.learner.kl.toFixed(4)} | ${labels}${val}${usageText(r)} | ETA ${eta.toFixed(1)} min`;
}

const count = (n: number) =>
  n >= 10_000 ? `${(n / 1000).toFixed(0)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : `${n}`;

/** the round's tokens, the sampler/trainer agreement and the estimated cost, where recorded */
function usageText(r: RoundRecord): string {
  const u = r.usage;
  if (!u) return '';
  const pct = (n: number) => Math.round((100 * n) / u.promptTokens);
  const cached =
    u.promptTokens === 0
      ? ''
      : u.cachedPromptTokens !== undefined
        ? ` (${pct(u.cachedPromptTokens)}% cached)`
        : ` (${pct(u.sharedPrefixTokens)}% a shared prefix)`;
  const kl = u.klPrefillTokens > 0 ? `, ${count(u.klPrefillTokens)} KL prefill` : '';
  const ratio = r.learner.meanRatio !== undefined ? ` | ratio ${r.learner.meanRatio.toFixed(3)}` : '';
  const cost = u.estimatedCostUsd !== undefined ? ` | ~$${u.estimatedCostUsd.toFixed(4)}` : '';
  return ` | tokens ${count(u.promptTokens)} prompt${cached}, ${count(u.sampledTokens)} sampled, ${count(u.trainedTokens)} trained${kl}${ratio}${cost}`;
}

function progressLine(p: RoundProgress): string {
  return `round ${p.round}/${p.rounds} ${p.phase} ${p.done}/${p.total}`;
}

/** the live progress display of a run: one line per round, a status line on a terminal */
export function trainHooks(quiet: boolean, rounds: () => number) {
  const tty = process.stderr.isTTY;
  let lastProgress = 0;
  let startedAt = 0;
  let roundsDone = 0;
  const log = (s: string) => console.error(s);
  return {
    log,
    progress: (p: RoundProgress) => {
      // the ETA counts from the first round, not from the start evaluation
      if (startedAt === 0) startedAt = Date.now();
      if (quiet) return;
      if (tty) process.stderr.write(`\r\x1b[2K${progressLine(p)}`);
      else if (Date.now() - lastProgress > 30_000) {
        lastProgress = Date.now();
        log(progressLine(p));
      }
    },
    onRound: (r: RoundRecord) => {
      roundsDone++;
      if (tty) process.stderr.write('\r\x1b[2K');
      if (!quiet) log(roundLine(r, rounds(), startedAt, roundsDone));
    },
  };
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
    let total = 0;
    const hooks = trainHooks(!!opts.quiet, () => total);
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
          total = c.rounds;
          return loadSuite(c.suite, opts.dataDir as string | undefined);
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
    total = config.rounds;
    if (opts.dryRun) {
      if (config.learner !== 'tinker')
        throw new UsageError('--dry-run is for --learner tinker (the embedded learner sends nothing)');
      const plan = await planRound(config, loadSuite(config.suite, opts.dataDir as string | undefined));
      for (const line of plan.lines) console.log(line);
      return;
    }
    const out = (opts.out as string | undefined) ?? defaultOutDir(config.method, config.seed);
    // a bad --out fails here, before the data and the model are loaded
    new RunFolder(out).checkNew();
    const data = loadSuite(config.suite, opts.dataDir as string | undefined);
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
