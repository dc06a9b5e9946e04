/**
 * `seal train` from start to end: the run folder and its manifest, the strict evaluation of the
 * start policy (reused from a cache when the checkpoint and settings are unchanged: it is
 * deterministic), the rounds, and the strict evaluation of the final policy. `resumeTraining`
 * continues a run folder from its last completed round.
 */

import { cpSync, existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import envPaths from 'env-paths';
import { abstentionByCategory } from '../bfcl/abstention.js';
import { readFinished } from '../bfcl/eval.js';
import type { BfclData, BfclTask } from '../envs/bfcl/data/tasks.js';
import { EmbeddedLearner } from '../learner/embedded/learner.js';
import type { Learner } from '../learner/learner.js';
import { resolveKernels } from '../nn/backends.js';
import { BASE_CHECKPOINT_DIR, loadCheckpoint } from '../nn/checkpoint.js';
import type { Kernels } from '../nn/ops.js';
import { HF_TEMPLATE } from '../render/open.js';
import { UsageError } from '../util/errors.js';
import { fileAccessError, writeAtomic, writeJsonAtomic } from '../util/files.js';
import { codeChanged, codeVersion, describeCode, roundCode, startEvalKey } from './code-version.js';
import type { TrainConfig } from './config.js';
import { crashPoint } from './crash-points.js';
import { initialTrainState, type LoopHooks, runRounds, validate } from './loop.js';
import {
  earlierFinalDir,
  RUN_FILES,
  RUN_FORMAT,
  RUN_VERSION,
  type RunExtension,
  type RunFinished,
  type RunManifest,
  type ValidationRecord,
} from './record.js';
import { type CheckedRun, checkManifest, checkRunFolder } from './run-check.js';
import { RunFolder, RunFolderError } from './run-folder.js';
import { poolIds, poolTasks, trainingTasks, validationTasks } from './tasks.js';
import { MlflowTracker } from './track/mlflow.js';
import { checkTracking, openTracking, roundMetrics, summaryMetrics, type Tracking } from './track/track.js';
import { WandbTracker } from './track/wandb.js';

export interface TrainOutcome {
  readonly dir: string;
  readonly start?: ValidationRecord;
  readonly final?: ValidationRecord;
  readonly rounds: number;
  /** the run was finished before: nothing was done, nothing written */
  readonly complete?: boolean;
}

const checkpointOf = (c: TrainConfig) => resolve(c.checkpoint ?? BASE_CHECKPOINT_DIR);

/** the embedded policy's name in a run's records, before its `@version` */
const embeddedName = (run: RunFolder): string =>
  `embedded:${run.dir.split(/[\\/]/).filter(Boolean).at(-1) ?? 'run'}`;

function openLearner(run: RunFolder, c: TrainConfig, kernels: Kernels, resumeFrom?: string): EmbeddedLearner {
  return EmbeddedLearner.open(
    checkpointOf(c),
    {
      gradientWorkers: c.gradientWorkers,
      kernels,
      samplerWorkers: c.samplerWorkers,
      samplerDir: run.path('sampler'),
      name: embeddedName(run),
    },
    resumeFrom,
  );
}

/** what the full evaluations' records call their tasks: `seal eval --split test`'s name for them */
const TEST_SPLIT = 'test';

/**
 * A start evaluation copied from the cache was made by another run: its records get this run's
 * policy name, and the test split's name where a cache from before the split was named calls it
 * a validation subset (`seal compare` would refuse to set it beside a test evaluation).
 */
function relabelReused(dir: string, model: string): void {
  const record = join(dir, 'run.json');
  const before = JSON.parse(readFileSync(record, 'utf8')) as { model?: unknown; split?: unknown };
  writeJsonAtomic(record, { ...before, model, split: TEST_SPLIT });
  const md = join(dir, 'summary.md');
  if (!existsSync(md)) return;
  const [title = '', ...rest] = readFileSync(md, 'utf8').split('\n');
  const renamed = title
    .replace(`# ${String(before.model)} on `, `# ${model} on `)
    .replace(`(${String(before.split)}, `, `(${TEST_SPLIT}, `);
  writeAtomic(md, [renamed, ...rest].join('\n'));
}

/**
 * The full test split under the strict protocol into `dir`. The start evaluation of an unchanged
 * checkpoint is deterministic (greedy), so it is copied from a cache keyed by the checkpoint's
 * sha256 and the settings when one exists; `cache.json` in the folder says so.
 */
async function evaluateFull(
  run: RunFolder,
  c: TrainConfig,
  data: BfclData,
  learner: Learner,
  dir: string,
  round: number,
  hooks: LoopHooks,
  cache?: { readonly key: string; readonly model: string },
): Promise<{ readonly record: ValidationRecord; readonly reused: boolean }> {
  const which = dir === RUN_FILES.evalStart ? 'start' : 'final';
  const test = data.split.test.map((id) => data.byId.get(id)!).filter(Boolean) as BfclTask[];
  const cacheDir = cache ? join(envPaths('seal', { suffix: '' }).cache, 'eval-start', cache.key) : undefined;
  const target = run.path(dir);
  if (cache && cacheDir && existsSync(join(cacheDir, 'summary.json')) && !existsSync(target)) {
    cpSync(cacheDir, target, { recursive: true });
    relabelReused(target, cache.model);
    writeJsonAtomic(join(target, 'cache.json'), { reused: true, key: cache.key });
    const summary = JSON.parse(readFileSync(join(target, 'summary.json'), 'utf8'));
    const abstention = abstentionByCategory(readFinished(target).values());
    return { record: { round, summary, abstention, dir }, reused: true };
  }
  const policy = await learner.samplingPolicy();
  const v = await validate(
    { config: c, data, learner, run, hooks },
    policy,
    test,
    dir,
    round,
    TEST_SPLIT,
    (done, total) => hooks.evaluation?.({ which, done, total }),
  );
  if (cache && cacheDir) {
    rmSync(cacheDir, { recursive: true, force: true });
    cpSync(target, cacheDir, { recursive: true });
    writeJsonAtomic(join(target, 'cache.json'), { reused: false, key: cache.key });
  }
  return { record: v, reused: false };
}

/** the ids `trainPool` names, checked against the training split the loop will draw from */
function readPool(c: TrainConfig, data: BfclData): readonly string[] {
  const file = c.trainPool!;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw fileAccessError(e, 'read', file);
  }
  const ids = poolIds(text);
  const valTasks = validationTasks(data, c.seed, c.validationTasks);
  poolTasks(trainingTasks(data, valTasks), ids, `trainPool ${file}`);
  return ids;
}

async function runToEnd(
  run: RunFolder,
  c: TrainConfig,
  data: BfclData,
  learner: Learner,
  hooks: LoopHooks,
): Promise<TrainOutcome> {
  const manifest = run.manifest();
  // read (and its ids checked) before the start evaluation's minutes are spent
  const pool = c.trainPool === undefined ? undefined : readPool(c, data);
  const tracking = await openTracking(
    c.track,
    {
      name: basename(resolve(run.dir)),
      config: c,
      dir: run.dir,
      resumedAfter: run.state()?.round ?? 0,
      env: process.env,
    },
    hooks.log,
    (name, s) => (name === 'mlflow' ? MlflowTracker.open(s) : WandbTracker.open(s)),
  );
  try {
    const outcome = await trackedRun(run, c, data, learner, hooks, manifest, pool, tracking);
    await tracking.close('finished');
    return outcome;
  } catch (e) {
    await tracking.close('failed');
    throw e;
  }
}

async function trackedRun(
  run: RunFolder,
  c: TrainConfig,
  data: BfclData,
  learner: Learner,
  untracked: LoopHooks,
  manifest: RunManifest,
  pool: readonly string[] | undefined,
  tracking: Tracking,
): Promise<TrainOutcome> {
  const hooks: LoopHooks = {
    ...untracked,
    onRound: (r) => {
      untracked.onRound?.(r);
      tracking.log(r.round, roundMetrics(r));
    },
  };
  let start: ValidationRecord | undefined;
  let evalStartMs: number | null | undefined;
  if (c.evalStart && learner.version === 0) {
    hooks.log('evaluating the start policy on the test split (strict protocol)');
    // a Tinker base model's evaluation is not cached: its weights are not on this machine
    const key = manifest.learner
      ? undefined
      : startEvalKey({
          modelSha256: manifest.base.modelSha256,
          suite: c.suite,
          maxTokens: c.maxTokens,
          code: manifest.code,
        });
    const t0 = performance.now();
    const cache = key === undefined ? undefined : { key, model: `${embeddedName(run)}@0` };
    const evaluated = await evaluateFull(run, c, data, learner, RUN_FILES.evalStart, 0, hooks, cache);
    start = evaluated.record;
    evalStartMs = evaluated.reused ? null : performance.now() - t0;
    hooks.log(
      `start: average ${start.summary.average.toFixed(2)}${evalStartMs === null ? ' (reused from the cache)' : ''}`,
    );
    tracking.log(0, summaryMetrics('eval_start', start.summary));
  }
  const state = run.state() ?? initialTrainState(c);
  run.rounds(state);
  const code = roundCode(codeVersion(manifest.code.trainingKernels ?? 'wasm'));
  await runRounds({ config: c, data, learner, run, hooks, code, ...(pool ? { pool } : {}) }, state);
  let final: ValidationRecord | undefined;
  let evalFinalMs: number | undefined;
  if (c.evalFinal) {
    hooks.log('evaluating the final policy on the test split (strict protocol)');
    const t0 = performance.now();
    final = (await evaluateFull(run, c, data, learner, RUN_FILES.evalFinal, c.rounds, hooks)).record;
    evalFinalMs = performance.now() - t0;
    hooks.log(`final: average ${final.summary.average.toFixed(2)}`);
    tracking.log(c.rounds, summaryMetrics('eval_final', final.summary));
  }
  const billing = learner.billed ? await billingOf(run, learner, manifest.started, hooks.log) : undefined;
  const finished: RunFinished = {
    finished: new Date().toISOString(),
    rounds: c.rounds,
    ...(evalStartMs !== undefined ? { evalStartMs } : {}),
    ...(evalFinalMs !== undefined ? { evalFinalMs } : {}),
    ...(billing ? { billing } : {}),
  };
  writeJsonAtomic(run.path(RUN_FILES.finished), finished);
  return { dir: run.dir, ...(start ? { start } : {}), ...(final ? { final } : {}), rounds: c.rounds };
}

/**
 * The service's bill for the sessions the run's rounds worked in, since it started; a service that
 * will not say (no billing access, no such route) costs the run nothing but a line.
 */
async function billingOf(
  run: RunFolder,
  learner: Learner,
  started: string,
  log: (line: string) => void,
): Promise<RunFinished['billing']> {
  const sessions = [...new Set(run.rounds().flatMap((r) => (r.usage?.session ? [r.usage.session] : [])))];
  try {
    const b = await learner.billed!(sessions, new Date(started));
    log(
      `the service bills this run's sessions $${b.costUsd.toFixed(2)} so far (${b.rows} usage rows${b.unpriced > 0 ? `, ${b.unpriced} not priced yet` : ''}; its data lags by up to a few hours)`,
    );
    return b;
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    log(`the service's billing could not be read (${why}); the rounds' estimates stand`);
    return { unavailable: why };
  }
}

/** the run record's fields that do not depend on the learner */
function manifestOf(
  c: TrainConfig,
  overrides: Partial<TrainConfig>,
  command: string,
  code: RunManifest['code'],
): Omit<RunManifest, 'base'> {
  return {
    format: RUN_FORMAT,
    version: RUN_VERSION,
    method: c.method,
    seed: c.seed,
    suite: c.suite,
    config: c,
    overrides,
    command,
    code,
    budget: {
      rounds: c.rounds,
      tasksPerRound: c.tasksPerRound,
      groupSize: c.groupSize,
      rollouts: c.rounds * c.tasksPerRound * c.groupSize,
    },
    sampling: { temperature: c.temperature, topP: 1, maxTokens: c.maxTokens },
    started: new Date().toISOString(),
  };
}

export async function startTraining(
  c: TrainConfig,
  overrides: Partial<TrainConfig>,
  outDir: string,
  command: string,
  data: BfclData,
  hooks: LoopHooks,
): Promise<TrainOutcome> {
  // a pool that does not read, or a tracker without its server, is said before the run folder is made
  if (c.trainPool !== undefined) readPool(c, data);
  checkTracking(c.track, process.env);
  const run = new RunFolder(outDir);
  const release = run.claimNew();
  try {
    if (c.learner === 'tinker') {
      // connected before anything is written: a service that cannot be reached leaves an empty folder;
      // the Tinker path's modules (client, wire, renderers) load only when it is taken
      const { learner, record } = await (await import('./tinker.js')).openTinker(c, hooks.log);
      try {
        run.create({
          ...manifestOf(c, overrides, command, codeVersion('wasm')),
          base: {
            checkpoint: `${c.baseModel} (on the Tinker service)`,
            modelSha256: 'none (weights on the service)',
          },
          learner: record,
        });
        return await runToEnd(run, c, data, learner, hooks);
      } finally {
        await learner.close();
      }
    }
    const base = loadCheckpoint(checkpointOf(c));
    const kernels = resolveKernels(c.kernels);
    run.create({
      ...manifestOf(c, overrides, command, codeVersion(kernels.label)),
      base: {
        checkpoint: c.checkpoint ?? 'checkpoints/embedded-base (shipped)',
        modelSha256: base.config.modelSha256,
      },
    });
    hooks.log(`training on ${kernels.label} kernels (--kernels ${c.kernels})`);
    const learner = openLearner(run, c, kernels.kernels);
    try {
      return await runToEnd(run, c, data, learner, hooks);
    } finally {
      await learner.close();
    }
  } finally {
    release();
  }
}

/**
 * Continues a run folder. Everything is checked before anything is written (run-check.ts): a
 * folder that does not add up is refused as it is, and a finished run is left untouched.
 */
/**
 * A Tinker run recorded before the renderer setting existed rendered with the model's Hugging Face
 * template, and so (format auto) with the tools as text: it continues so, not in the family format
 * `auto` now picks.
 */
export function asRecordedRenderer(c: TrainConfig, learner: RunManifest['learner']): TrainConfig {
  if (c.learner !== 'tinker' || learner?.kind !== 'tinker' || learner.renderer !== undefined) return c;
  return { ...c, renderer: HF_TEMPLATE };
}

/** `seal train --resume DIR --rounds N`: the budget raised to N rounds, and the command that did it */
export interface Extend {
  readonly rounds: number;
  readonly command: string;
}

/**
 * The record of raising a run's budget to `extend.rounds`, or a UsageError when that is not a
 * raise. A finished run's final evaluation is moved aside (the new last round gets its own).
 */
function extensionOf(run: RunFolder, checked: CheckedRun, extend: Extend): RunExtension {
  const { config, state, complete } = checked;
  const upTo = state?.round ?? 0;
  if (extend.rounds <= config.rounds)
    throw new UsageError(
      `--rounds ${extend.rounds} with --resume raises a run's budget, and ${run.dir} already has ${config.rounds} rounds (${upTo} done): give more than ${config.rounds}, or leave --rounds out to continue it as it is`,
    );
  const finished = complete
    ? (JSON.parse(readFileSync(run.path(RUN_FILES.finished), 'utf8')) as RunFinished)
    : undefined;
  const evalFinal = complete && existsSync(run.path(RUN_FILES.evalFinal)) ? earlierFinalDir(upTo) : undefined;
  if (evalFinal && existsSync(run.path(evalFinal)))
    throw new RunFolderError(
      `${run.dir}: ${evalFinal}/ is in the way of the final evaluation of the ${config.rounds} rounds, which a raise of the budget moves there; move it out of the run folder first`,
    );
  return {
    afterRound: upTo,
    fromRounds: config.rounds,
    toRounds: extend.rounds,
    at: new Date().toISOString(),
    command: extend.command,
    ...(finished ? { finished } : {}),
    ...(evalFinal ? { evalFinal } : {}),
  };
}

/**
 * The extension's moves after run.json records it (the commit point): the final evaluation of the
 * budget before to its own folder, then finished.json removed. Each step is skipped when done, so
 * a resume after a kill between them completes them.
 */
function completeExtension(run: RunFolder, ext: RunExtension): void {
  const from = run.path(RUN_FILES.evalFinal);
  if (ext.evalFinal && existsSync(from) && !existsSync(run.path(ext.evalFinal))) {
    renameSync(from, run.path(ext.evalFinal));
    crashPoint(ext.afterRound, 'eval-final-moved');
  }
  rmSync(run.path(RUN_FILES.finished), { force: true });
}

export async function resumeTraining(
  dir: string,
  data: (c: TrainConfig) => BfclData,
  hooks: LoopHooks,
  extend?: Extend,
): Promise<TrainOutcome> {
  const run = new RunFolder(dir);
  checkManifest(run); // a folder that is not a run is not locked either
  const release = run.claim();
  try {
    const checked = checkRunFolder(run);
    const { state, complete } = checked;
    let { manifest } = checked;
    const extension = extend ? extensionOf(run, checked, extend) : undefined;
    const c = asRecordedRenderer(
      extension ? { ...checked.config, rounds: extension.toRounds } : checked.config,
      manifest.learner,
    );
    if (complete && !extension) {
      hooks.log(`${dir} is complete (${c.rounds} rounds); nothing to do`);
      return { dir, rounds: c.rounds, complete: true };
    }
    const tinker = c.learner === 'tinker';
    if (!tinker && !existsSync(checkpointOf(c)))
      throw new RunFolderError(
        `${dir} started from the base checkpoint ${checkpointOf(c)}, which is not there; give it back (the run continues from it and its own checkpoint)`,
      );
    if (!tinker && loadCheckpoint(checkpointOf(c)).config.modelSha256 !== manifest.base.modelSha256)
      throw new RunFolderError(
        `${dir} started from another base checkpoint (sha256 differs); it cannot continue from this one`,
      );
    // runs recorded before the setting existed trained on wasm; a Tinker run trains on the service
    const kernels = tinker ? undefined : resolveKernels(c.kernels);
    const label = kernels?.label ?? 'wasm';
    const before = manifest.code.trainingKernels ?? 'wasm';
    const now = codeVersion(label);
    const last = manifest.codeChanges?.at(-1)?.code ?? manifest.code;
    const data_ = data(c);
    // all checked: from here on the folder is written
    const pending = checked.pendingExtension ? manifest.extensions?.at(-1) : undefined;
    if (pending) completeExtension(run, pending);
    if (extension) {
      manifest = {
        ...manifest,
        config: { ...manifest.config, rounds: extension.toRounds },
        overrides: { ...manifest.overrides, rounds: extension.toRounds },
        budget: {
          ...manifest.budget,
          rounds: extension.toRounds,
          rollouts: extension.toRounds * manifest.budget.tasksPerRound * manifest.budget.groupSize,
        },
        extensions: [...(manifest.extensions ?? []), extension],
      };
      // the commit point of the raise: what follows only carries it out
      writeJsonAtomic(run.path(RUN_FILES.manifest), manifest);
      crashPoint(extension.afterRound, 'extension');
      completeExtension(run, extension);
      hooks.log(
        `${dir}: rounds raised from ${extension.fromRounds} to ${extension.toRounds}${extension.evalFinal ? ` (the final evaluation of the ${extension.fromRounds} rounds is kept in ${extension.evalFinal}/)` : ''}`,
      );
    }
    if (state) hooks.log(`resuming ${dir} after round ${state.round} of ${c.rounds}`);
    if (label !== before)
      hooks.log(
        `training continues on ${label} kernels (it ran on ${before}): updates differ at rounding level`,
      );
    if (codeChanged(last, now)) {
      const after = state?.round ?? 0;
      hooks.log(
        `warning: the code changed since this run last ran (${describeCode(last)}; now ${describeCode(now)}): rounds after ${after} run on the new code, and run.json and each round's record say so`,
      );
      writeJsonAtomic(run.path(RUN_FILES.manifest), {
        ...manifest,
        codeChanges: [
          ...(manifest.codeChanges ?? []),
          { afterRound: after, code: now, at: new Date().toISOString() },
        ],
      });
    }
    // a kill after a commit and before its prune leaves the previous checkpoint (a kill inside a
    // round, that round's own): only the committed one stays, also when no round is left to run
    // (and, off-policy, the checkpoint the next round samples from)
    run.pruneCheckpoints([state?.checkpoint ?? null, state?.nextSampler?.checkpoint ?? null]);
    const from = state?.checkpoint ? run.path(state.checkpoint) : undefined;
    // Tinker: a new model on the service whose first request loads the last round's saved state
    const learner = kernels
      ? openLearner(run, c, kernels.kernels, from)
      : (await (await import('./tinker.js')).openTinker(c, hooks.log, from)).learner;
    try {
      return await runToEnd(run, c, data_, learner, hooks);
    } finally {
      await learner.close();
    }
  } finally {
    release();
  }
}
