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
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ToolCallFormat } from '../agent/format.js';
import { formatAdapter } from '../agent/formats/index.js';
import { mapConcurrent, rollout } from '../agent/rollout.js';
import { CallRecorder, paramsOfTool } from '../agent/trajectory.js';
import { keywordCallString } from '../envs/bfcl/calls/decode.js';
import type { BfclData, BfclTask, Category, SuiteName } from '../envs/bfcl/data/tasks.js';
import type { Policy, SamplingOptions } from '../policy/policy.js';
import { diagnose, labelsOf } from '../seal/diagnosis.js';
import type { Label } from '../seal/labels.js';
import type { Trajectory } from '../seal/trajectory.js';
import { rolloutWeight } from '../seal/weighting.js';
import { UserError } from '../util/errors.js';
import { readJsonLines, writeAtomic } from '../util/files.js';
import { type Summary, summarise, summaryTable } from './summary.js';

export interface EvalRunConfig {
  readonly suite: SuiteName;
  readonly model: string;
  readonly baseUrl?: string;
  readonly format: ToolCallFormat;
  readonly split: string;
  readonly sampling: SamplingOptions;
}

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

const RUN_FILE = 'run.json';
const RESULTS_FILE = 'results.jsonl';
const BFCL_RESULT_FILE = 'bfcl_result.jsonl';

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
  const path = join(dir, RUN_FILE);
  if (!existsSync(path)) {
    writeAtomic(path, `${JSON.stringify({ ...config, started: new Date().toISOString() }, null, 2)}\n`);
    return;
  }
  const before = JSON.parse(readFileSync(path, 'utf8')) as EvalRunConfig;
  const keys: (keyof EvalRunConfig)[] = ['suite', 'model', 'format', 'sampling'];
  const differs = keys.filter((k) => JSON.stringify(before[k]) !== JSON.stringify(config[k]));
  if (differs.length > 0) {
    throw new RunFolderError(
      `${dir} holds a run with a different ${differs.join(', ')} (${differs.map((k) => `${k}: ${JSON.stringify(before[k])}`).join('; ')}). ` +
        'Resume it with the same settings, or pass another --out folder.',
    );
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
}

export interface EvalOutcome {
  readonly summary: Summary;
  readonly table: string;
  readonly ran: number;
  readonly resumed: number;
}

export async function runEval(
  data: BfclData,
  tasks: readonly BfclTask[],
  policy: Policy,
  config: EvalRunConfig,
  outDir: string,
  options: EvalOptions,
): Promise<EvalOutcome> {
  mkdirSync(outDir, { recursive: true });
  checkRunConfig(outDir, config);
  const finished = readFinished(outDir);
  const todo = tasks.filter((t) => !finished.has(t.id));
  const format = formatAdapter(config.format);
  const recorder = new CallRecorder(data);
  const classOf = (name: string) => data.docs.get(name)?.className;
  const abort = new AbortController();
  let failure: unknown;

  options.progress?.start(tasks.length, tasks.length - todo.length);
  await mapConcurrent(todo, options.concurrency, async (task) => {
    if (abort.signal.aborted) return;
    try {
      const trajectory = await rollout(task, data, policy, {
        format,
        sampling: config.sampling,
        onParseError: 'end_turn',
        signal: abort.signal,
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
    } catch (e) {
      // The first failure stops the run; what finished is already on disk.
      if (!abort.signal.aborted) {
        failure = e;
        abort.abort();
      }
    }
  });
  options.progress?.stop();
  if (failure !== undefined) throw failure;

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
  return { summary, table, ran: todo.length, resumed: tasks.length - todo.length };
}
