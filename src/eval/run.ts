/**
 * Strict evaluation of a policy on BFCL (the paper's protocol: the original environment, no
 * training interface), written to a run folder that resumes:
 *
 *   run.json           what was evaluated and how (a rerun with other settings is refused)
 *   results.jsonl      one line per finished task: verdict, labels, weight, trajectory
 *   bfcl_result.jsonl  the calls that ran, in BFCL's result format (steps as `[f(a=1), g(b=2)]`)
 *   summary.json       the `seal verify --json` shape; summary.md the Table 1 layout
 *
 * Finished tasks are appended one line at a time, so an interrupted run loses nothing that
 * finished; rerunning into the same folder runs only the rest.
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { ToolCallFormat } from '../agent/format.js';
import { formatAdapter } from '../agent/formats/index.js';
import type { BfclData, BfclTask, Category, SuiteName } from '../envs/bfcl/data/tasks.js';
import { keywordCallString } from '../envs/py/calls.js';
import type { Policy, SamplingOptions } from '../policy/policy.js';
import { rollout } from '../rollout/rollout.js';
import { CallRecorder, paramsOfTool } from '../rollout/trajectory.js';
import { diagnose, labelsOf } from '../seal/diagnosis.js';
import type { Label } from '../seal/labels.js';
import type { Trajectory } from '../seal/trajectory.js';
import { rolloutWeight } from '../seal/weighting.js';
import { UserError } from '../util/errors.js';
import { fileAccessError, readJsonLines, writeAtomic } from '../util/files.js';
import { mapConcurrent } from '../util/semaphore.js';
import { type AbstentionCount, abstentionByCategory } from './abstention.js';
import { type Summary, summarise, summaryTable } from './summary.js';

export interface EvalRunConfig {
  readonly suite: SuiteName;
  /** what kind of policy `model` names (`seal eval --policy`); absent in records of older builds and of seal train's evaluations */
  readonly policy?: string;
  readonly model: string;
  /** where the model was reached: not part of what a result means (a server may move between runs) */
  readonly baseUrl?: string;
  readonly format: ToolCallFormat;
  readonly split: string;
  readonly sampling: SamplingOptions;
  /** a Tinker policy's chat format, resolved (never `auto`), and its enable_thinking choice */
  readonly renderer?: string;
  readonly thinking?: string;
  /** a server's extra request fields, as given: they may change what the server samples */
  readonly extraBody?: Record<string, unknown>;
}

/**
 * The settings a resume must share with the run that started the folder: each changes which tasks
 * were run or what a verdict means, so results made under two of them would mix in one summary.
 */
export const RESUME_KEYS = [
  'suite',
  'split',
  'policy',
  'model',
  'format',
  'sampling',
  'renderer',
  'thinking',
  'extraBody',
] as const satisfies readonly (keyof EvalRunConfig)[];

/** keys added after the first records: a record without `policy` predates them all, so they go unchecked there */
const LATER_KEYS: readonly (keyof EvalRunConfig)[] = ['policy', 'renderer', 'thinking', 'extraBody'];

/** what `--force` removes: every file a run writes into its folder (other files are left alone) */
export const RUN_FOLDER_FILES = [
  'run.json',
  'results.jsonl',
  'bfcl_result.jsonl',
  'summary.json',
  'summary.md',
] as const;

export interface EvalResultRow {
  readonly id: string;
  readonly category: Category;
  readonly valid: boolean;
  readonly error_type?: string;
  readonly labels: readonly Label[];
  readonly weight: number;
  readonly trajectory: Trajectory;
}

export class RunFolderError extends UserError {}

const RUN_FILE = RUN_FOLDER_FILES[0];
/** one JSON line per finished task; `seal compare` reads its verdicts */
export const RESULTS_FILE = RUN_FOLDER_FILES[1];
const BFCL_RESULT_FILE = RUN_FOLDER_FILES[2];

/** Finished rows of an earlier run; a torn last line (the run was killed mid-write) is dropped. */
export function readFinished(dir: string): Map<string, EvalResultRow> {
  const path = join(dir, RESULTS_FILE);
  const isRow = (r: unknown): r is EvalResultRow =>
    typeof r === 'object' &&
    r !== null &&
    typeof (r as EvalResultRow).id === 'string' &&
    !!(r as EvalResultRow).trajectory;
  const { rows } = readJsonLines(path, isRow, { repair: true });
  return new Map(rows.map((r) => [r.id, r]));
}

const LOCK_FILE = '.lock';

/** Whether a process with this pid exists (EPERM: it does, owned by someone else). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the run folder for this process: two runs into one folder would run every task twice
 * and interleave their lines. The lock file holds the owner's pid; a lock whose owner is gone
 * (a killed run) is taken over. Returns the release.
 */
export function lockRunFolder(dir: string): () => void {
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx' });
      return () => {
        try {
          if (readFileSync(path, 'utf8').trim() === String(process.pid)) unlinkSync(path);
        } catch {
          // already gone
        }
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw fileAccessError(e, 'write', path);
    }
    let owner = Number.NaN;
    try {
      owner = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    } catch {
      // removed meanwhile: try again
    }
    if (Number.isSafeInteger(owner) && owner > 0 && owner !== process.pid && alive(owner))
      throw new RunFolderError(
        `${dir} is in use by another seal process (pid ${owner}). Wait for it to finish, or give another --out folder.`,
      );
    // stale (its owner is gone) or unreadable: take it over
    rmSync(path, { force: true });
  }
  throw new RunFolderError(`cannot lock ${dir}: another process keeps taking it. Give another --out folder.`);
}

/** the way out of a refused folder, as the command line says it */
const WAY_OUT =
  'Resume it with the settings its run.json records, give another --out folder, or pass --force to start this one over.';

function checkRunConfig(dir: string, config: EvalRunConfig): void {
  checkRunRecord(dir, config, RESUME_KEYS, LATER_KEYS);
}

/**
 * A run folder's record against this run's settings: written when the folder is new, compared
 * on `keys` when it is resumed (keys in `laterKeys` go unchecked in records older than them).
 */
export function checkRunRecord<C extends object>(
  dir: string,
  config: C,
  keys: readonly (keyof C)[],
  laterKeys: readonly (keyof C)[] = [],
): void {
  const path = join(dir, RUN_FILE);
  if (!existsSync(path)) {
    // results without the record that says what they are: never adopted as this run's
    if (existsSync(join(dir, RESULTS_FILE)))
      throw new RunFolderError(
        `${dir} holds ${RESULTS_FILE} but no ${RUN_FILE}, so what its results are is unknown. Give another --out folder, or pass --force to start this one over.`,
      );
    writeAtomic(path, `${JSON.stringify({ ...config, started: new Date().toISOString() }, null, 2)}\n`);
    return;
  }
  let before: C;
  try {
    before = JSON.parse(readFileSync(path, 'utf8')) as C;
    if (typeof before !== 'object' || before === null) throw new Error('not an object');
  } catch {
    throw new RunFolderError(
      `${path} is not a run record (corrupt JSON). Give another --out folder, or pass --force to start this one over.`,
    );
  }
  const legacy = !('policy' in before);
  const shown = (x: unknown) => (x === undefined ? 'none' : JSON.stringify(x));
  const differs = keys.filter(
    (k) => !(legacy && laterKeys.includes(k)) && JSON.stringify(before[k]) !== JSON.stringify(config[k]),
  );
  if (differs.length > 0) {
    throw new RunFolderError(
      `${dir} holds a run with a different ${differs.map(String).join(', ')} (${differs.map((k) => `${String(k)}: ${shown(before[k])} there, ${shown(config[k])} now`).join('; ')}); its results would not mean the same as this run's. ${WAY_OUT}`,
    );
  }
}

/** `--force`: the files of an earlier run removed, so that the folder starts over (other files stay) */
export function startOver(dir: string, files: readonly string[] = RUN_FOLDER_FILES): void {
  for (const name of files) {
    const path = join(dir, name);
    try {
      rmSync(path, { force: true });
    } catch (e) {
      throw fileAccessError(e, 'write', path);
    }
  }
}

/**
 * BFCL's result shape: turn -> step -> prompting-style call list text, the calls as they ran,
 * positional arguments named: the official evaluator's prompting decoder keeps keyword arguments
 * only, so this is what makes it score the file as the run was scored.
 */
export function bfclResultOf(t: Trajectory, data: BfclData): { id: string; result: string[][] } {
  const params = paramsOfTool(data);
  return {
    id: t.taskId,
    result: t.turns.map((turn) =>
      turn.steps
        .filter((s) => s.calls.length > 0)
        .map((s) => `[${s.calls.map((c) => keywordCallString(c.call, params)).join(', ')}]`),
    ),
  };
}

export interface EvalProgress {
  start(total: number, alreadyDone: number): void;
  tick(): void;
  stop(): void;
}

export interface EvalOptions {
  readonly concurrency: number;
  readonly progress?: EvalProgress;
  /** start the folder over: remove an earlier run's files (RUN_FOLDER_FILES) instead of resuming it */
  readonly force?: boolean;
}

export interface EvalOutcome {
  readonly summary: Summary;
  /** per category, the empty-ground-truth turns answered without a call (abstention.ts) */
  readonly abstention: Partial<Record<Category, AbstentionCount>>;
  readonly table: string;
  readonly ran: number;
  readonly resumed: number;
}

/** The `--out` folder made if missing and locked for this process; returns the release. */
export function openRunFolder(outDir: string): () => void {
  if (existsSync(outDir) && !statSync(outDir).isDirectory())
    throw new RunFolderError(
      `--out ${outDir} is a file; give a folder for the run (it is created if missing).`,
    );
  try {
    mkdirSync(outDir, { recursive: true });
  } catch (e) {
    throw fileAccessError(e, 'write', outDir);
  }
  return lockRunFolder(outDir);
}

/**
 * `work` over `items`, `limit` at a time, stopping at the first failure: the others in flight are
 * told by the signal, nothing new starts, and the failure is thrown once all have settled (what
 * finished is already on disk).
 */
export async function runUntilFailure<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const abort = new AbortController();
  let failure: unknown;
  await mapConcurrent(items, limit, async (item) => {
    if (abort.signal.aborted) return;
    try {
      await work(item, abort.signal);
    } catch (e) {
      if (!abort.signal.aborted) {
        failure = e;
        abort.abort();
      }
    }
  });
  if (failure !== undefined) throw failure;
}

export async function runEval(
  data: BfclData,
  tasks: readonly BfclTask[],
  policy: Policy,
  config: EvalRunConfig,
  outDir: string,
  options: EvalOptions,
): Promise<EvalOutcome> {
  const unlock = openRunFolder(outDir);
  try {
    return await runLocked(data, tasks, policy, config, outDir, options);
  } finally {
    unlock();
  }
}

async function runLocked(
  data: BfclData,
  tasks: readonly BfclTask[],
  policy: Policy,
  config: EvalRunConfig,
  outDir: string,
  options: EvalOptions,
): Promise<EvalOutcome> {
  if (tasks.length === 0) throw new RunFolderError('no task selected; nothing to evaluate.');
  if (options.force) startOver(outDir);
  checkRunConfig(outDir, config);
  const finished = readFinished(outDir);
  const todo = tasks.filter((t) => !finished.has(t.id));
  const format = formatAdapter(config.format);
  const recorder = new CallRecorder(data);
  const classOf = (name: string) => data.docs.get(name)?.className;
  options.progress?.start(tasks.length, tasks.length - todo.length);
  try {
    await runUntilFailure(todo, options.concurrency, async (task, signal) => {
      const trajectory = await rollout(task, data, policy, {
        format,
        sampling: config.sampling,
        onParseError: 'end_turn',
        signal,
        recorder,
      });
      const labels = labelsOf(diagnose(trajectory, classOf));
      const row: EvalResultRow = {
        id: task.id,
        category: task.category,
        valid: trajectory.reward === 1,
        ...(trajectory.errorType ? { error_type: trajectory.errorType } : {}),
        labels,
        weight: rolloutWeight(labels),
        trajectory,
      };
      appendFileSync(join(outDir, RESULTS_FILE), `${JSON.stringify(row)}\n`);
      finished.set(task.id, row);
      options.progress?.tick();
    });
  } finally {
    options.progress?.stop();
  }

  const rows = tasks.map((t) => finished.get(t.id)!).filter(Boolean);
  writeAtomic(
    join(outDir, BFCL_RESULT_FILE),
    rows.map((r) => JSON.stringify(bfclResultOf(r.trajectory, data))).join('\n') + '\n',
  );
  const summary = summarise(rows);
  const table = summaryTable(summary, config.model);
  writeAtomic(join(outDir, 'summary.json'), `${JSON.stringify(summary)}\n`);
  writeAtomic(
    join(outDir, 'summary.md'),
    `# ${config.model} on ${config.suite === 'mini' ? 'the mini suite' : 'BFCL multi-turn'} (${config.split}, ${config.format})\n\n${table}\n`,
  );
  return {
    summary,
    abstention: abstentionByCategory(rows),
    table,
    ran: todo.length,
    resumed: tasks.length - todo.length,
  };
}
