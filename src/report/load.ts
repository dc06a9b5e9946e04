/**
 * Reads a `seal train` run folder (src/train/record.ts) for the report. Read only: unlike resume,
 * the report never repairs a torn line, it just leaves it out, so it can run beside a live run.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { Summary } from '../bfcl/summary.js';
import {
  type RolloutRecord,
  type RoundRecord,
  RUN_FILES,
  RUN_FORMAT,
  RUN_VERSION,
  type RunFinished,
  type RunManifest,
  roundName,
} from '../train/record.js';
import { UserError } from '../util/errors.js';
import { readJsonLines } from '../util/files.js';
import {
  evalKindOf,
  isObject,
  isSummary,
  type LoadedEvaluation,
  loadEvaluation,
  readSummary,
} from './load-eval.js';

export class NotARunError extends UserError {
  override name = 'NotARunError';
}

export interface EvalPoint {
  /** 0 before training; the round after which the policy was validated */
  readonly round: number;
  readonly summary: Summary;
}

export interface RoundRollouts {
  readonly round: number;
  /** every rollout of the round, in (group, sample) order */
  readonly rollouts: readonly RolloutRecord[];
  /** lines left out (torn or not a rollout) */
  readonly dropped: number;
}

export interface LoadedRun {
  /** as given on the command line */
  readonly dir: string;
  readonly name: string;
  readonly manifest: RunManifest;
  /** the completed rounds, in order */
  readonly rounds: readonly RoundRecord[];
  /** lines of rounds.jsonl left out: a torn tail means the run was killed mid-write */
  readonly droppedRoundLines: number;
  /** a round whose rollouts exist but that has no round record (killed mid-round, or running) */
  readonly unfinishedRound?: number;
  readonly evalStart?: Summary;
  readonly evalFinal?: Summary;
  /**
   * the final evaluations of the budgets a run had before `--resume --rounds N` raised them: after
   * which round, and the folder they were moved to
   */
  readonly earlierFinals: readonly {
    readonly round: number;
    readonly dir: string;
    readonly summary: Summary;
  }[];
  /** present once the run has done its last round and final evaluation */
  readonly finished?: RunFinished;
  /** a Tinker run: the tinker:// paths of its last round's checkpoint (training state, sampler weights) */
  readonly tinkerCheckpoint?: { readonly round: string; readonly state: string; readonly sampler: string };
  /** strict validation, by round (from the round records, else the validation folders) */
  readonly validation: readonly EvalPoint[];
  /** what the validations' eval records name their tasks, e.g. `validation (40 dev tasks, seed 1)` */
  readonly validationSplit?: string;
  readonly rollouts: readonly RoundRollouts[];
}

const isRound = (x: unknown): x is RoundRecord =>
  isObject(x) &&
  Number.isInteger(x.round) &&
  isObject(x.rollouts) &&
  isObject(x.labels) &&
  isObject(x.interface) &&
  isObject(x.weights) &&
  isObject(x.advantages) &&
  isObject(x.learner);

const isRollout = (x: unknown): x is RolloutRecord =>
  isObject(x) &&
  typeof x.taskId === 'string' &&
  typeof x.weight === 'number' &&
  Array.isArray(x.labels) &&
  isObject(x.trajectory) &&
  Array.isArray((x.trajectory as Record<string, unknown>).turns);

function readJson(path: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch (e) {
    throw new NotARunError(`${what}: cannot read ${path} (${(e as Error).message})`);
  }
}

/** run.json of a folder: a train run's manifest or an evaluation's record. */
function readRecord(dir: string): unknown {
  if (!existsSync(dir)) throw new NotARunError(`${dir}: no such folder`);
  if (!statSync(dir).isDirectory())
    throw new NotARunError(`${dir} is a file, not a seal train or seal eval folder`);
  const path = join(dir, RUN_FILES.manifest);
  if (!existsSync(path)) {
    throw new NotARunError(
      `${dir} is not a seal train or seal eval folder: it has no ${RUN_FILES.manifest} (the record both write first)`,
    );
  }
  return readJson(path, dir);
}

function checkManifest(dir: string, m: unknown): RunManifest {
  if (!isObject(m) || m.format !== RUN_FORMAT) {
    // a `seal eval` folder also has a run.json, whose `format` is the tool-call format
    throw new NotARunError(
      evalKindOf(dir, m)
        ? `${dir} is a \`seal eval\` folder, not a seal train run folder (its ${RUN_FILES.manifest} describes an evaluation)`
        : `${dir} is not a seal train run folder: its ${RUN_FILES.manifest} has no "format": "${RUN_FORMAT}"`,
    );
  }
  if (typeof m.version !== 'number' || m.version > RUN_VERSION) {
    throw new NotARunError(
      `${dir}: run record version ${JSON.stringify(m.version)} is newer than this seal reads (${RUN_VERSION})`,
    );
  }
  return m as unknown as RunManifest;
}

/** the tinker:// paths a Tinker run's checkpoint folder records, or undefined when unreadable */
function readTinkerPaths(dir: string, round: string): LoadedRun['tinkerCheckpoint'] {
  try {
    const v = JSON.parse(
      readFileSync(join(dir, RUN_FILES.checkpoints, round, 'tinker.json'), 'utf8'),
    ) as unknown;
    return isObject(v) && typeof v.state === 'string' && typeof v.sampler === 'string'
      ? { round, state: v.state, sampler: v.sampler }
      : undefined;
  } catch {
    return undefined;
  }
}

/** the split an eval folder's run.json names, or undefined when absent or unreadable */
function readSplit(evalDir: string): string | undefined {
  try {
    const r = JSON.parse(readFileSync(join(evalDir, 'run.json'), 'utf8')) as unknown;
    return isObject(r) && typeof r.split === 'string' ? r.split : undefined;
  } catch {
    return undefined;
  }
}

/** finished.json, or undefined when absent or unreadable (the run is then shown as not finished) */
function readFinished(path: string): RunFinished | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const f = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    return isObject(f) && typeof f.finished === 'string' ? (f as unknown as RunFinished) : undefined;
  } catch {
    return undefined;
  }
}

/** A folder `seal report` was given: a train run or an evaluation. */
export type LoadedFolder =
  | { readonly kind: 'train'; readonly run: LoadedRun }
  | { readonly kind: 'eval'; readonly evaluation: LoadedEvaluation };

export function loadFolder(dir: string): LoadedFolder {
  const record = readRecord(dir);
  if (isObject(record) && record.format === RUN_FORMAT)
    return { kind: 'train', run: loadManifestedRun(dir, checkManifest(dir, record)) };
  const kind = evalKindOf(dir, record);
  if (!kind)
    throw new NotARunError(
      `${dir} is not a seal train or seal eval folder: its ${RUN_FILES.manifest} is neither a run manifest (no "format": "${RUN_FORMAT}") nor an evaluation record (no "model" and "split")`,
    );
  return { kind: 'eval', evaluation: loadEvaluation(dir, record as Record<string, unknown>, kind) };
}

export function loadRun(dir: string): LoadedRun {
  return loadManifestedRun(dir, checkManifest(dir, readRecord(dir)));
}

function loadManifestedRun(dir: string, manifest: RunManifest): LoadedRun {
  const { rows, dropped } = readJsonLines(join(dir, RUN_FILES.rounds), isRound);
  // A resumed run may repeat a round's line if it was killed between the append and the next
  // round; the later line is the one resume continued from.
  const byRound = new Map<number, RoundRecord>();
  for (const r of rows) byRound.set(r.round, r);
  const rounds = [...byRound.values()].sort((a, b) => a.round - b.round);

  const validation = new Map<number, Summary>();
  const start = readSummary(join(dir, RUN_FILES.validationDir, roundName(0)));
  if (start) validation.set(0, start);
  for (const r of rounds) {
    const s = r.validation?.summary ?? readSummary(join(dir, RUN_FILES.validationDir, roundName(r.round)));
    if (s && isSummary(s)) validation.set(r.round, s);
  }

  const first = [...validation.keys()].sort((a, b) => a - b)[0];
  const validationSplit =
    first === undefined ? undefined : readSplit(join(dir, RUN_FILES.validationDir, roundName(first)));

  const rollouts = rounds.map((r) => {
    const path = join(dir, RUN_FILES.rolloutsDir, `${roundName(r.round)}.jsonl`);
    const read = readJsonLines(path, isRollout);
    const sorted = [...read.rows].sort((a, b) => a.group - b.group || a.sample - b.sample);
    return { round: r.round, rollouts: sorted, dropped: read.dropped };
  });
  const last = rounds.at(-1)?.round ?? 0;
  const unfinished = existsSync(join(dir, RUN_FILES.rolloutsDir, `${roundName(last + 1)}.jsonl`));

  const evalStart = readSummary(join(dir, RUN_FILES.evalStart));
  const evalFinal = readSummary(join(dir, RUN_FILES.evalFinal));
  const finished = readFinished(join(dir, RUN_FILES.finished));
  const earlierFinals = (Array.isArray(manifest.extensions) ? manifest.extensions : []).flatMap((e) => {
    const summary = typeof e.evalFinal === 'string' ? readSummary(join(dir, e.evalFinal)) : undefined;
    return summary ? [{ round: e.afterRound, dir: e.evalFinal!, summary }] : [];
  });
  const tinkerCheckpoint =
    manifest.learner?.kind === 'tinker' && last > 0 ? readTinkerPaths(dir, roundName(last)) : undefined;
  return {
    dir,
    name: basename(resolve(dir)),
    manifest,
    rounds,
    droppedRoundLines: dropped,
    ...(unfinished ? { unfinishedRound: last + 1 } : {}),
    ...(evalStart ? { evalStart } : {}),
    ...(evalFinal ? { evalFinal } : {}),
    earlierFinals,
    ...(finished ? { finished } : {}),
    ...(tinkerCheckpoint ? { tinkerCheckpoint } : {}),
    validation: [...validation].sort((a, b) => a[0] - b[0]).map(([round, summary]) => ({ round, summary })),
    ...(validationSplit ? { validationSplit } : {}),
    rollouts,
  };
}
