/**
 * What resume checks before it writes anything: the manifest and its config (by the same schema
 * as the flags), and `state.json`, `rounds.jsonl`, the rollouts, the checkpoint and the
 * evaluations against each other. A run is written in a fixed order (checkpoint, validation,
 * rollouts, then state.json as the commit point, then the rounds.jsonl line, then the old
 * checkpoint pruned), so a kill leaves only a few shapes of folder, all of them explained:
 * a round after the committed one half-written (its files are written again), a torn or missing
 * last rounds.jsonl line (restored from state.json), an older checkpoint not yet pruned. Anything
 * else is damage that resuming would paper over or make worse; it is refused with every problem
 * named, and the folder is left as it is.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { CATEGORIES } from '../envs/bfcl/data/tasks.js';
import { readTinkerCheckpoint, TINKER_CHECKPOINT_FILE } from '../learner/tinker/learner.js';
import { loadCheckpoint } from '../nn/checkpoint.js';
import { parseInterfaceState } from '../seal/interface/state.js';
import { FailureProfile } from '../seal/profile.js';
import { UserError } from '../util/errors.js';
import { checkTrainConfig, TRAIN_KEYS, TRAIN_SETTINGS, type TrainConfig } from './config.js';
import {
  METHODS,
  type RoundRecord,
  RUN_FILES,
  RUN_FORMAT,
  RUN_VERSION,
  type RunManifest,
  roundName,
} from './record.js';
import { type RunFolder, RunFolderError, type TrainState } from './run-folder.js';

export interface CheckedRun {
  readonly manifest: RunManifest;
  readonly config: TrainConfig;
  /** null: no round committed yet */
  readonly state: TrainState | null;
  /** finished.json is there and agrees with the rest: nothing is left to do */
  readonly complete: boolean;
  /**
   * a raise of the budget (`--resume --rounds N`) recorded in run.json whose moves a kill cut
   * short: finished.json (and maybe eval-final/) of the budget before are still there; resume
   * completes them (train.ts, completeExtension)
   */
  readonly pendingExtension: boolean;
}

const CODE = z.object({
  version: z.string(),
  git: z.string().optional(),
  dirty: z.boolean().optional(),
  kernels: z.string().optional(),
  trainingKernels: z.string().optional(),
  sources: z.string().optional(),
});

const MANIFEST = z.object({
  format: z.literal(RUN_FORMAT),
  version: z.number(),
  method: z.enum(METHODS),
  seed: z.number().int(),
  suite: z.enum(['mini', 'bfcl']),
  config: z.record(z.string(), z.unknown()),
  overrides: z.record(z.string(), z.unknown()),
  command: z.string(),
  code: CODE,
  // a Tinker run's weights are on the service: its base has no sha256 here
  base: z.object({ checkpoint: z.string(), modelSha256: z.string().min(1) }),
  learner: z
    .object({ kind: z.literal('tinker') })
    .loose()
    .optional(),
  extensions: z
    .array(
      z
        .object({
          afterRound: z.number().int().min(0),
          fromRounds: z.number().int().min(1),
          toRounds: z.number().int().min(1),
          at: z.string(),
          command: z.string(),
          finished: z.object({ rounds: z.number().int() }).loose().optional(),
          evalFinal: z.string().optional(),
        })
        .loose(),
    )
    .optional(),
  started: z.string(),
});

const STATE = z.object({
  round: z.number().int().min(0),
  checkpoint: z.string().nullable(),
  interface: z.unknown(),
  profile: z.unknown(),
  taskRates: z.record(z.string(), z.number()).optional(),
  lastRound: z.object({ round: z.number().int() }).loose().nullable(),
  nextSampler: z.object({ checkpoint: z.string().nullable(), version: z.number().int().min(0) }).optional(),
});

/** keys a recorded config may lack, and the value runs recorded before them behaved by */
// what a run recorded before a setting existed ran with
const LEGACY: Partial<Record<keyof TrainConfig, unknown>> = {
  kernels: 'wasm',
  revisit: 0,
  policyGradient: true,
  learner: 'embedded',
  format: 'auto',
  loraRank: 32,
  wire: 'auto',
  thinking: 'template',
  maxInFlight: 64,
  // before expiry and pipelining: every checkpoint kept, each round sampled from its own weights
  checkpointTtl: 0,
  saveEvery: 1,
  // before the anchor could be kept to some categories: it drew from all four
  anchorCategories: [...CATEGORIES],
  retries: 10,
  maxStepsOffPolicy: 0,
  // before trackers: none
  track: [],
  pricePrefill: 0,
  priceSample: 0,
  priceTrain: 0,
};
/** settings that are absent from a config when not given (no default) */
const OPTIONAL_KEYS = new Set(['checkpoint', 'baseModel', 'baseUrl', 'tokenizer', 'trainPool']);

const issueText = (e: z.ZodError): string =>
  e.issues.map((i) => `${i.path.length ? i.path.join('.') : 'the file'}: ${i.message}`).join('; ');

function readJson(path: string): { value?: unknown; error?: string } {
  try {
    return { value: JSON.parse(readFileSync(path, 'utf8')) };
  } catch (e) {
    return { error: e instanceof SyntaxError ? `is not valid JSON (${e.message})` : (e as Error).message };
  }
}

/** a number list as "2, 5-7" */
function ranges(xs: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < xs.length; ) {
    let j = i;
    while (j + 1 < xs.length && xs[j + 1] === xs[j]! + 1) j++;
    out.push(j === i ? `${xs[i]}` : `${xs[i]}-${xs[j]}`);
    i = j + 1;
  }
  return out.join(', ');
}

const NEW_RUN = 'start a new run with seal train --out NEW_FOLDER (with the same flags)';

/** the manifest and its config, or a RunFolderError saying what is wrong with them */
export function checkManifest(run: RunFolder): { manifest: RunManifest; config: TrainConfig } {
  const p = run.path(RUN_FILES.manifest);
  if (!existsSync(p))
    throw new RunFolderError(`${run.dir} is not a seal train run folder (no ${RUN_FILES.manifest})`);
  const { value, error } = readJson(p);
  if (error) throw new RunFolderError(`${p} ${error}; restore it from a copy, or ${NEW_RUN}`);
  if ((value as { format?: unknown })?.format !== RUN_FORMAT)
    throw new RunFolderError(`${p} is not a seal train manifest`);
  const m = MANIFEST.safeParse(value);
  if (!m.success)
    throw new RunFolderError(
      `${p} is damaged (${issueText(m.error)}); restore it from a copy, or ${NEW_RUN}`,
    );
  if (m.data.version !== RUN_VERSION)
    throw new RunFolderError(
      `${p}: run record version ${m.data.version} is not supported (this seal writes ${RUN_VERSION})`,
    );
  const recorded = m.data.config;
  const lacking = TRAIN_KEYS.filter(
    (k) => !OPTIONAL_KEYS.has(k) && !Object.hasOwn(recorded, k) && !Object.hasOwn(LEGACY, k),
  );
  if (lacking.length)
    throw new RunFolderError(
      `${p}: its config lacks ${lacking.join(', ')}; it was written by an older seal or edited, and cannot be resumed by this one (${NEW_RUN})`,
    );
  let config: TrainConfig;
  try {
    config = TRAIN_SETTINGS.resolve([{ source: `${p} (config)`, values: { ...LEGACY, ...recorded } }]).config;
    checkTrainConfig(config);
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    throw new RunFolderError(
      `${e.message}; the recorded config is not one seal train accepts (was run.json edited?). Restore it from a copy, or ${NEW_RUN}`,
    );
  }
  const ext = m.data.extensions?.at(-1);
  if (ext && ext.toRounds !== config.rounds)
    throw new RunFolderError(
      `${p}: its last extension raised the rounds to ${ext.toRounds}, but its config says ${config.rounds}; restore run.json from a copy`,
    );
  for (const k of ['method', 'seed', 'suite'] as const)
    if (m.data[k] !== config[k])
      throw new RunFolderError(
        `${p}: ${k} is ${JSON.stringify(m.data[k])} but its config says ${JSON.stringify(config[k])}; restore run.json from a copy`,
      );
  return { manifest: value as RunManifest, config };
}

function readState(run: RunFolder, problems: string[]): TrainState | null {
  const p = run.path(RUN_FILES.state);
  if (!existsSync(p)) return null;
  const { value, error } = readJson(p);
  if (error) {
    problems.push(`${RUN_FILES.state} ${error}`);
    return null;
  }
  const s = STATE.safeParse(value);
  if (!s.success) {
    problems.push(`${RUN_FILES.state} is damaged (${issueText(s.error)})`);
    return null;
  }
  try {
    parseInterfaceState(s.data.interface);
    FailureProfile.fromJSON(s.data.profile);
  } catch (e) {
    problems.push(`${RUN_FILES.state} is damaged (${(e as Error).message})`);
    return null;
  }
  return value as TrainState;
}

/** rounds.jsonl's rounds in file order; a line that does not parse is a problem unless it is the torn last one */
function readRounds(run: RunFolder, problems: string[]): RoundRecord[] {
  const p = run.path(RUN_FILES.rounds);
  if (!existsSync(p)) return [];
  const lines = readFileSync(p, 'utf8').split('\n');
  const rows: RoundRecord[] = [];
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      // a kill can tear only the last line, which has no newline after it
      if (i !== lines.length - 1) problems.push(`line ${i + 1} of ${RUN_FILES.rounds} is damaged`);
      return;
    }
    if (typeof row === 'object' && row !== null && Number.isInteger((row as RoundRecord).round))
      rows.push(row as RoundRecord);
    else problems.push(`line ${i + 1} of ${RUN_FILES.rounds} is not a round record`);
  });
  return rows;
}

/** `round-0007` (with `ext`) as 7; undefined for any other name */
function roundOf(name: string, ext = ''): number | undefined {
  const m = new RegExp(`^round-(\\d{4,})${ext.replace('.', '\\.')}$`).exec(name);
  return m ? Number(m[1]) : undefined;
}

const isTemp = (name: string) => /\.tmp-\d+$/.test(name);

function checkRounds(run: RunFolder, state: TrainState | null, hasState: boolean, problems: string[]): void {
  const upTo = state?.round ?? 0;
  const rows = readRounds(run, problems);
  const seen = rows.map((r) => r.round);
  if (!hasState && seen.length > 0) {
    problems.push(
      `${RUN_FILES.state} is missing, but ${RUN_FILES.rounds} records round(s) ${ranges(seen)}: without the commit point the run does not know which round it is at (a resume would start over and overwrite them)`,
    );
    return;
  }
  const dup = seen.filter((r, i) => seen.indexOf(r) !== i);
  if (dup.length)
    problems.push(`${RUN_FILES.rounds} records round(s) ${ranges([...new Set(dup)])} more than once`);
  if (seen.some((r, i) => i > 0 && r < seen[i - 1]!)) problems.push(`${RUN_FILES.rounds} is out of order`);
  const past = seen.filter((r) => r > upTo || r < 1);
  if (past.length)
    problems.push(
      `${RUN_FILES.rounds} records round(s) ${ranges(past)}, which ${RUN_FILES.state} (round ${upTo}) does not: ${RUN_FILES.state} is older than the record`,
    );
  // the last line may be missing (a kill after the commit): state.json holds it
  const missing = Array.from({ length: Math.max(0, upTo - 1) }, (_, i) => i + 1).filter(
    (r) => !seen.includes(r),
  );
  if (missing.length)
    problems.push(
      `${RUN_FILES.rounds} lacks round(s) ${ranges(missing)} (their records are lost; the rollouts of each are still in ${RUN_FILES.rolloutsDir}/)`,
    );
  const last = rows.find((r) => r.round === upTo);
  if (state?.lastRound && last && JSON.stringify(last) !== JSON.stringify(state.lastRound))
    problems.push(`the record of round ${upTo} differs between ${RUN_FILES.rounds} and ${RUN_FILES.state}`);
  for (const r of rows)
    if (r.validation && !existsSync(join(run.path(r.validation.dir), 'summary.json')))
      problems.push(`${r.validation.dir}/summary.json (the validation of round ${r.round}) is missing`);
}

function checkRollouts(run: RunFolder, upTo: number, perRound: number, problems: string[]): void {
  const dir = run.path(RUN_FILES.rolloutsDir);
  const names = existsSync(dir) ? readdirSync(dir).filter((n) => !isTemp(n)) : [];
  const rounds = new Set<number>();
  for (const n of names) {
    const r = roundOf(n, '.jsonl');
    // the round after the committed one may have written its rollouts before a kill
    if (r === undefined || r < 1 || r > upTo + 1)
      problems.push(`${RUN_FILES.rolloutsDir}/${n} is extra (the run is at round ${upTo})`);
    else rounds.add(r);
  }
  const missing: number[] = [];
  for (let r = 1; r <= upTo; r++) {
    if (!rounds.has(r)) {
      missing.push(r);
      continue;
    }
    const name = `${RUN_FILES.rolloutsDir}/${roundName(r)}.jsonl`;
    const lines = readFileSync(run.path(name), 'utf8')
      .split('\n')
      .filter((l) => l.trim());
    let ok = 0;
    for (const l of lines)
      try {
        if ((JSON.parse(l) as { round?: unknown }).round === r) ok++;
      } catch {
        // counted as missing below
      }
    if (ok !== perRound || lines.length !== perRound)
      problems.push(
        `${name} holds ${ok} readable rollouts of round ${r} in ${lines.length} lines; the round had ${perRound}`,
      );
  }
  if (missing.length)
    problems.push(
      `the rollouts of round(s) ${ranges(missing)} are missing (${RUN_FILES.rolloutsDir}/${roundName(missing[0]!)}.jsonl ...)`,
    );
}

function checkCheckpoint(run: RunFolder, state: TrainState | null, problems: string[], tinker = false): void {
  const upTo = state?.round ?? 0;
  const root = run.path(RUN_FILES.checkpoints);
  const names = existsSync(root) ? readdirSync(root) : [];
  for (const n of names) {
    const r = roundOf(n);
    // an older one not yet pruned, or the next round's saved before a kill
    if (r === undefined || r > upTo + 1)
      problems.push(`${RUN_FILES.checkpoints}/${n} is extra (the run is at round ${upTo})`);
  }
  if (!state || upTo === 0) {
    if (state?.checkpoint) problems.push(`${RUN_FILES.state} names a checkpoint at round 0`);
    return;
  }
  const expected = run.checkpointDir(upTo);
  if (state.checkpoint !== expected) {
    problems.push(`${RUN_FILES.state} names checkpoint ${state.checkpoint}, not ${expected} (round ${upTo})`);
    return;
  }
  const ahead = state.nextSampler?.checkpoint;
  if (ahead && (!tinker || !existsSync(join(run.path(ahead), TINKER_CHECKPOINT_FILE))))
    problems.push(`${ahead} (the tinker:// paths of the weights round ${upTo + 1} samples from) is missing`);
  const dir = run.path(expected);
  if (tinker) {
    // the weights are on the service; the folder holds the tinker:// paths of the saved state
    try {
      readTinkerCheckpoint(dir);
    } catch (e) {
      problems.push(
        `${expected} (the tinker:// paths of the state after round ${upTo}, which the run continues from) is missing or damaged (${(e as Error).message})`,
      );
    }
    return;
  }
  if (!existsSync(dir) || !statSync(dir).isDirectory() || !existsSync(join(dir, 'optimizer.bin'))) {
    problems.push(
      `${expected} (the weights and optimiser state after round ${upTo}, which the run continues from) is missing${existsSync(dir) ? ' in part' : ''}`,
    );
    return;
  }
  try {
    loadCheckpoint(dir);
  } catch (e) {
    problems.push(`${expected} is damaged (${(e as Error).message.split('. ')[0]})`);
    return;
  }
  const cfg = readJson(join(dir, 'config.json')).value as { trainedSteps?: unknown } | undefined;
  const last = state.lastRound;
  if (last && typeof cfg?.trainedSteps === 'number') {
    const steps = last.policyVersion + last.learner.steps;
    if (cfg.trainedSteps !== steps)
      problems.push(
        `${expected} holds weights after ${cfg.trainedSteps} optimiser steps, but round ${upTo} ended after ${steps}: it is not that round's checkpoint`,
      );
  }
}

/**
 * The run folder checked as a whole (see the top of this file); throws one RunFolderError that
 * lists every problem and what to do, having written nothing.
 */
export function checkRunFolder(run: RunFolder): CheckedRun {
  const { manifest, config } = checkManifest(run);
  const problems: string[] = [];
  const hasState = existsSync(run.path(RUN_FILES.state));
  const state = readState(run, problems);
  if (hasState && !state) return refuse(run, problems);
  const upTo = state?.round ?? 0;
  if (upTo > config.rounds)
    problems.push(`${RUN_FILES.state} says round ${upTo}, but the run has ${config.rounds} rounds`);
  if (
    state &&
    state.lastRound?.round !== (upTo === 0 ? undefined : upTo) &&
    !(upTo === 0 && state.lastRound === null)
  )
    problems.push(
      `${RUN_FILES.state} holds the record of round ${state.lastRound?.round ?? 'none'}, not of round ${upTo}`,
    );
  checkRounds(run, state, hasState, problems);
  checkRollouts(run, upTo, config.tasksPerRound * config.groupSize, problems);
  checkCheckpoint(run, state, problems, config.learner === 'tinker');
  if (config.evalStart && upTo > 0 && !existsSync(join(run.path(RUN_FILES.evalStart), 'summary.json')))
    problems.push(
      `${RUN_FILES.evalStart}/summary.json (the start policy's evaluation, made before round 1) is missing`,
    );
  const finished = existsSync(run.path(RUN_FILES.finished));
  const pendingExtension = finished && isPendingExtension(run, manifest, upTo);
  if (finished && !pendingExtension) {
    if (upTo !== config.rounds)
      problems.push(
        `${RUN_FILES.finished} says the run finished, but ${RUN_FILES.state} is at round ${upTo} of ${config.rounds}`,
      );
    if (config.evalFinal && !existsSync(join(run.path(RUN_FILES.evalFinal), 'summary.json')))
      problems.push(
        `${RUN_FILES.finished} says the run finished, but ${RUN_FILES.evalFinal}/summary.json is missing`,
      );
  }
  if (problems.length) return refuse(run, problems);
  return { manifest, config, state, complete: finished && !pendingExtension, pendingExtension };
}

/**
 * finished.json is the budget before the last extension's, which was raised at this very round:
 * a kill came between run.json's extension and the removal of finished.json
 */
function isPendingExtension(run: RunFolder, manifest: RunManifest, upTo: number): boolean {
  const ext = manifest.extensions?.at(-1);
  if (!ext || ext.afterRound !== upTo || ext.finished === undefined) return false;
  const { value } = readJson(run.path(RUN_FILES.finished));
  return JSON.stringify(value) === JSON.stringify(ext.finished);
}

function refuse(run: RunFolder, problems: readonly string[]): never {
  throw new RunFolderError(
    `${run.dir} cannot be resumed as it is; nothing was changed:\n${problems.map((p) => `  - ${p}`).join('\n')}\nRestore the folder (or the files named) from a copy if you have one; otherwise ${NEW_RUN}. A round cannot be recovered from the other files.`,
  );
}
