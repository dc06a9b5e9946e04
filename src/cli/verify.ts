/** `seal verify`: score a BFCL result file with the official checker. */
import { createReadStream, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { decodeStep } from '../envs/bfcl/calls/decode.js';
import { type CheckResult, checkTask } from '../envs/bfcl/checker.js';
import type { BfclData, BfclTask } from '../envs/bfcl/data/tasks.js';
import { summarise, summaryTable } from '../eval/summary.js';

export interface VerifyOptions {
  readonly results?: string;
  readonly groundTruth?: boolean;
  readonly json?: boolean;
  readonly out?: string;
  readonly split?: string;
}

export class UsageError extends Error {}

export interface TaskVerdict {
  readonly id: string;
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
  const verdicts = entries.map(([task, turns]) => toVerdict(task, checkTask(task, turns, data)));
  const summary = summarise(
    verdicts.map((v) => ({ category: v.category as BfclTask['category'], valid: v.valid })),
  );
  if (opts.out) writeJsonLines(opts.out, verdicts);
  if (opts.json) print(JSON.stringify(summary));
  else {
    print(summaryTable(summary, opts.groundTruth ? 'ground truth' : 'result'));
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

/** Write atomically: a reader never sees half a file. */
export function writeJsonLines(path: string, rows: readonly unknown[]): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
  renameSync(tmp, path);
}
