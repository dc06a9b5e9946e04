/** `seal verify`: score a BFCL result file with the official checker. */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { CallRecorder, trajectoryFromCalls } from '../agent/trajectory.js';
import { decodeStep } from '../envs/bfcl/calls/decode.js';
import { type CheckResult, checkTask } from '../envs/bfcl/checker.js';
import type { BfclData, BfclTask } from '../envs/bfcl/data/tasks.js';
import { CATEGORIES, CATEGORY_TITLES } from '../envs/bfcl/data/tasks.js';
import { summarise, summaryTable } from '../eval/summary.js';
import { markdownTable } from '../eval/table.js';
import { diagnose, labelsOf } from '../seal/diagnosis.js';
import { LABELS, type Label } from '../seal/labels.js';
import { rolloutWeight } from '../seal/weighting.js';
import { UsageError } from '../util/errors.js';
import { writeJsonLines } from '../util/files.js';

export interface VerifyOptions {
  /** add per-turn diagnosis labels and the rollout weight w_j to every verdict */
  readonly diagnose?: boolean;
  readonly results?: string;
  readonly groundTruth?: boolean;
  readonly json?: boolean;
  readonly out?: string;
  readonly split?: string;
}

export interface TaskVerdict {
  readonly id: string;
  /** with --diagnose: one label per user turn, in turn order */
  readonly labels?: readonly Label[];
  /** with --diagnose: w_j under the default rho */
  readonly weight?: number;
  readonly category: string;
  readonly valid: boolean;
  readonly error_type?: string;
  readonly error_message?: string;
  readonly failed_turn?: number;
  readonly turns: readonly {
    readonly turn: number;
    readonly checked: boolean;
    readonly passed: boolean | null;
    readonly failure?: string;
    readonly differing_attributes?: Readonly<Record<string, readonly string[]>>;
    readonly missing_items?: readonly string[];
  }[];
}

export function toVerdict(task: BfclTask, r: CheckResult): TaskVerdict {
  return {
    id: task.id,
    category: task.category,
    valid: r.valid,
    ...(r.errorType ? { error_type: r.errorType } : {}),
    ...(r.errorMessage ? { error_message: r.errorMessage } : {}),
    ...(r.failedTurn !== undefined ? { failed_turn: r.failedTurn } : {}),
    turns: r.turns.map((t) => ({
      turn: t.turn,
      checked: t.checked,
      passed: t.passed,
      ...(t.failure ? { failure: t.failure } : {}),
      ...(t.differingAttributes ? { differing_attributes: t.differingAttributes } : {}),
      ...(t.missingItems ? { missing_items: t.missingItems } : {}),
    })),
  };
}

/** Read `{id, result}` lines; a malformed line is an error that names the line. */
export async function readResultFile(path: string): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  const rl = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
  let lineNo = 0;
  try {
    for await (const line of rl) {
      lineNo++;
      if (!line.trim()) continue;
      let row: { id?: unknown; result?: unknown };
      try {
        row = JSON.parse(line) as typeof row;
      } catch {
        throw new UsageError(
          `${path}:${lineNo}: not a JSON line. Each line must be {"id": ..., "result": [[[...]]]}.`,
        );
      }
      if (typeof row.id !== 'string') throw new UsageError(`${path}:${lineNo}: missing string field "id".`);
      out.set(row.id, row.result);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new UsageError(`results file not found: ${path}`);
    throw e;
  }
  return out;
}

/** Turns -> steps -> call strings, decoding each step like the official evaluator. */
export function decodeModelResult(result: unknown): unknown {
  if (!Array.isArray(result)) return result;
  return result.map((turn) => (Array.isArray(turn) ? turn.map((step) => decodeStep(step)) : []));
}

export async function runVerify(
  data: BfclData,
  opts: VerifyOptions,
  print: (s: string) => void,
): Promise<TaskVerdict[]> {
  let entries: [BfclTask, unknown][];
  if (opts.groundTruth) {
    entries = data.tasks.map((t) => [t, t.groundTruth.map((turn) => (turn.length ? [turn] : []))]);
  } else {
    if (!opts.results)
      throw new UsageError(
        'give --results FILE (a BFCL result file), or --ground-truth to replay the answers.',
      );
    const results = await readResultFile(opts.results);
    const unknown = [...results.keys()].filter((id) => !data.byId.has(id));
    if (unknown.length > 0) {
      throw new UsageError(
        `${opts.results}: ${unknown.length} id(s) are not BFCL multi-turn tasks, e.g. ${unknown[0]}.`,
      );
    }
    entries = [...results].map(([id, r]) => [data.byId.get(id)!, decodeModelResult(r)]);
  }
  if (opts.split) {
    const keep = splitIds(data, opts.split);
    entries = entries.filter(([t]) => keep.has(t.id));
  }
  const recorder = opts.diagnose ? new CallRecorder(data) : undefined;
  const classOf = (name: string) => data.docs.get(name)?.className;
  const verdicts = entries.map(([task, turns]): TaskVerdict => {
    const result = checkTask(task, turns, data);
    const verdict = toVerdict(task, result);
    if (!recorder) return verdict;
    const labels = labelsOf(diagnose(trajectoryFromCalls(task, turns, data, recorder, result), classOf));
    return { ...verdict, labels, weight: rolloutWeight(labels) };
  });
  const summary = summarise(
    verdicts.map((v) => ({ category: v.category as BfclTask['category'], valid: v.valid })),
  );
  if (opts.out) writeJsonLines(opts.out, verdicts);
  if (opts.json) print(JSON.stringify(summary));
  else {
    print(summaryTable(summary, opts.groundTruth ? 'ground truth' : 'result'));
    if (opts.diagnose) print(`\n${labelDistributionTable(verdicts)}`);
    if (opts.out) print(`\nper-task verdicts: ${opts.out}`);
  }
  return verdicts;
}

export function splitIds(data: BfclData, split: string): Set<string> {
  if (split === 'all') return new Set(data.tasks.map((t) => t.id));
  if (split === 'train' || split === 'test') return new Set(data.split[split]);
  const ids = split
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = ids.filter((id) => !data.byId.has(id));
  if (bad.length)
    throw new UsageError(
      `--split: unknown task id(s) ${bad.slice(0, 3).join(', ')}. Use train, test, all or a comma-separated id list.`,
    );
  return new Set(ids);
}

/** Turn labels per category: count and share of the category's turns. */
export function labelDistributionTable(verdicts: readonly TaskVerdict[]): string {
  const counts = new Map<string, Map<Label, number>>();
  const totals = new Map<string, number>();
  for (const v of verdicts) {
    const row = counts.get(v.category) ?? new Map<Label, number>();
    counts.set(v.category, row);
    for (const l of v.labels ?? []) {
      row.set(l, (row.get(l) ?? 0) + 1);
      totals.set(v.category, (totals.get(v.category) ?? 0) + 1);
    }
  }
  const cats = CATEGORIES.filter((c) => counts.has(c));
  const used = LABELS.filter((l) => cats.some((c) => counts.get(c)!.has(l)));
  const head = ['label', ...cats.map((c) => CATEGORY_TITLES[c])];
  const rows = used.map((l) => [
    l,
    ...cats.map((c) => {
      const n = counts.get(c)!.get(l) ?? 0;
      return n === 0 ? '-' : `${n} (${((100 * n) / totals.get(c)!).toFixed(1)}%)`;
    }),
  ]);
  rows.push(['turns', ...cats.map((c) => String(totals.get(c) ?? 0))]);
  return `Turn labels per category\n${markdownTable(head, rows)}`;
}
