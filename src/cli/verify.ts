/** `seal verify`: score a BFCL result file with the official checker. */
import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { z } from 'zod';
import { summarise, summaryTable } from '../bfcl/summary.js';
import { CallRecorder, trajectoryFromCalls } from '../bfcl/trajectory.js';
import { decodeStep } from '../envs/bfcl/calls/decode.js';
import { type CheckResult, checkTask } from '../envs/bfcl/checker.js';
import { DATA_DIR_ENV, resolveDataDir } from '../envs/bfcl/data/locate.js';
import type { BfclData, BfclTask } from '../envs/bfcl/data/tasks.js';
import { CATEGORIES, CATEGORY_TITLES } from '../envs/bfcl/data/tasks.js';
import { EVAL_SUITES, loadSuite } from '../envs/suites.js';
import { TAU2_DATA_ENV } from '../envs/tau2/data.js';
import { markdownTable } from '../eval/table.js';
import { diagnose, labelsOf } from '../seal/diagnosis.js';
import { LABELS, type Label } from '../seal/labels.js';
import { rolloutWeight } from '../seal/weighting.js';
import { UsageError } from '../util/errors.js';
import { fileAccessError, writeJsonLines } from '../util/files.js';
import { dataDirSetting, suiteSetting } from '../util/fragments.js';
import { Settings } from '../util/settings.js';
import { addSettingOptions, commaList } from './flags.js';
import { hasAgenticIds, runVerifyAgentic } from './verify-agentic.js';
import { checkOutPath } from './verify-out.js';

export { checkOutPath };

/** The flags of `seal verify`, declared once (util/settings.ts). */
export const VERIFY_SCHEMA = z
  .object({
    suite: suiteSetting(
      EVAL_SUITES,
      'bfcl',
      'task suite: bfcl (the BFCL multi-turn data), mini (built in, synthetic) or tau2 (τ²-bench retail, airline, telecom)',
    ),
    results: z.string().min(1).optional().meta({
      description:
        "BFCL result file: JSON lines of {id, result} (turns -> steps -> calls), multi-turn or memory / web search; tau2: a results file in the reference's format (one domain)",
      placeholder: 'file',
    }),
    groundTruth: z
      .literal(true)
      .optional()
      .describe('replay the ground truth as the result file (a self-check: 100.00 everywhere)'),
    split: z.string().min(1).optional().meta({
      description: 'only these tasks: train, test, dev (mini), all, or comma-separated ids',
      placeholder: 'split',
    }),
    json: z.literal(true).optional().describe('print the summary as one JSON object'),
    out: z
      .string()
      .min(1)
      .optional()
      .meta({ description: 'write one JSON line per task with its per-turn verdicts', placeholder: 'file' }),
    diagnose: z
      .literal(true)
      .optional()
      .describe('add per-turn diagnosis labels and the rollout weight w_j; print the label mix per category'),
    dataDir: dataDirSetting(DATA_DIR_ENV),
    tau2Data: z
      .string()
      .min(1)
      .optional()
      .meta({
        description: `tau2: the folder holding data/tau2/ (default: $${TAU2_DATA_ENV}, else the cache \`seal data pull tau2\` fills)`,
        placeholder: 'dir',
      }),
  })
  .strict();
export const VERIFY_SETTINGS = new Settings(VERIFY_SCHEMA, 'flag');

/** `seal verify` */
export function registerVerify(program: Command): void {
  const cmd = program
    .command('verify')
    .description('Score a BFCL result file with the official multi-turn or agentic checker');
  addSettingOptions(cmd, VERIFY_SETTINGS);
  cmd.action(async (opts: Record<string, unknown>) => {
    const config = VERIFY_SETTINGS.ofFlags(opts);
    const suite = config.suite;
    if (suite === 'tau2') {
      const { runTau2Verify } = await import('./verify-tau2.js');
      await runTau2Verify(config, (s) => console.log(s));
      return;
    }
    if (config.results && !config.groundTruth) {
      // BFCL v4's agentic categories have their own data and checker: peek at the ids first.
      const results = await readResultFile(config.results);
      if (hasAgenticIds(results)) {
        runVerifyAgentic(resolveDataDir(config.dataDir), results, config, (s) => console.log(s));
        return;
      }
    }
    const data = loadSuite(suite, config.dataDir);
    await runVerify(data, config, (s) => console.log(s));
  });
}

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

/**
 * Read `{id, result}` lines. Whatever would make the score mean something else is refused with
 * the line it is on: a line that is not a JSON object, a missing `id` or `result` (a verdict file
 * given by mistake), an id given twice (which line would count?), and a file with no line at all.
 */
export async function readResultFile(path: string): Promise<Map<string, unknown>> {
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new UsageError(`results file not found: ${path}`);
    throw fileAccessError(e, 'read', path);
  }
  if (!isFile)
    throw new UsageError(`--results ${path} is a folder; give the result file (JSON lines) in it.`);
  const out = new Map<string, unknown>();
  const lineOf = new Map<string, number>();
  const shape = 'Each line must be {"id": ..., "result": [[[...]]]} (turns -> steps -> calls).';
  const rl = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
  let lineNo = 0;
  try {
    for await (const line of rl) {
      lineNo++;
      if (!line.trim()) continue;
      let row: unknown;
      try {
        row = JSON.parse(line);
      } catch {
        throw new UsageError(`${path}:${lineNo}: not a JSON line. ${shape}`);
      }
      if (typeof row !== 'object' || row === null || Array.isArray(row))
        throw new UsageError(`${path}:${lineNo}: not a JSON object. ${shape}`);
      const r = row as { id?: unknown; result?: unknown };
      if (typeof r.id !== 'string')
        throw new UsageError(`${path}:${lineNo}: missing string field "id". ${shape}`);
      if (!('result' in r))
        throw new UsageError(
          `${path}:${lineNo}: no "result" field (is this a verdict file written by --out?). ${shape}`,
        );
      const first = lineOf.get(r.id);
      if (first !== undefined)
        throw new UsageError(
          `${path}: task ${r.id} appears twice (lines ${first} and ${lineNo}); keep one line per task.`,
        );
      lineOf.set(r.id, lineNo);
      out.set(r.id, r.result);
    }
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw fileAccessError(e, 'read', path);
  }
  if (out.size === 0) throw new UsageError(`${path} has no result lines. ${shape}`);
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
  if (opts.out) checkOutPath(opts.out, opts.results ? [opts.results] : []);
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
    if (entries.length === 0)
      throw new UsageError(
        `--split ${opts.split} selects none of the ${opts.groundTruth ? 'tasks' : `tasks in ${opts.results}`}; nothing to score.`,
      );
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
  if (split === 'dev') {
    if (!data.split.dev)
      throw new UsageError(
        `--split dev: the ${data.suite} suite has no development split (the mini suite has one). Use train, test, all or a comma-separated id list.`,
      );
    return new Set(data.split.dev);
  }
  const ids = commaList(split);
  if (ids.length === 0)
    throw new UsageError(
      `--split "${split}" names no task. Use train, test, dev, all or a comma-separated id list.`,
    );
  const bad = ids.filter((id) => !data.byId.has(id));
  if (bad.length)
    throw new UsageError(
      `--split: unknown task id(s) ${bad.slice(0, 3).join(', ')}. Use train, test, dev, all or a comma-separated id list.`,
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
