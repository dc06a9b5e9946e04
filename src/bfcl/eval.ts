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
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ToolCallFormat } from '../agent/format.js';
import { formatAdapter } from '../agent/formats/index.js';
import type { BfclData, BfclTask, Category, SuiteName } from '../envs/bfcl/data/tasks.js';
import { keywordCallString } from '../envs/py/calls.js';
import {
  checkRunRecord,
  type EvalProgress,
  openRunFolder,
  RUN_FILE,
  RunFolderError,
  runUntilFailure,
  startOver,
} from '../eval/folder.js';
import type { Policy, SamplingOptions } from '../policy/policy.js';
import { diagnose, labelsOf } from '../seal/diagnosis.js';
import type { Label } from '../seal/labels.js';
import type { Trajectory } from '../seal/trajectory.js';
import { rolloutWeight } from '../seal/weighting.js';
import { readJsonLines, writeAtomic } from '../util/files.js';
import { type AbstentionCount, abstentionByCategory } from './abstention.js';
import { rollout } from './rollout.js';
import { type Summary, summarise, summaryTable } from './summary.js';
import { CallRecorder, paramsOfTool } from './trajectory.js';

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
  RUN_FILE,
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

function checkRunConfig(dir: string, config: EvalRunConfig): void {
  checkRunRecord(dir, config, RESUME_KEYS, { resultsFile: RESULTS_FILE, laterKeys: LATER_KEYS });
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

/** a line of results.jsonl as much as a comparison reads of it */
export interface VerdictRow {
  readonly id: string;
  readonly valid: boolean;
  readonly category?: string;
}

/** the verdict lines of the folder's results.jsonl, in file order (none when it has none) */
export function readVerdictRows(dir: string): VerdictRow[] {
  const isVerdict = (r: unknown): r is VerdictRow =>
    typeof r === 'object' &&
    r !== null &&
    typeof (r as { id?: unknown }).id === 'string' &&
    typeof (r as { valid?: unknown }).valid === 'boolean';
  return readJsonLines(join(dir, RESULTS_FILE), isVerdict).rows;
}

/** per task id its verdict, from the folder's results.jsonl (undefined when it has none) */
export function readVerdicts(dir: string): Map<string, boolean> | undefined {
  const rows = readVerdictRows(dir);
  return rows.length > 0 ? new Map(rows.map((r) => [r.id, r.valid])) : undefined;
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
  if (options.force) startOver(outDir, RUN_FOLDER_FILES);
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
