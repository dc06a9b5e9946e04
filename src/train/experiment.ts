/**
 * The five-method experiment: the same config, seeds, data, budget and decoding for every method
 * (record.ts, METHODS), one run folder per method and seed under one experiment folder, each
 * resumable on its own. The comparison reads every finished run's strict evaluations.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { readVerdicts } from '../bfcl/eval.js';
import type { Summary } from '../bfcl/summary.js';
import { CATEGORIES, CATEGORY_TITLES, type Category } from '../envs/bfcl/data/tasks.js';
import {
  type EvaluationPair,
  PAIRED_HEAD,
  pairedCells,
  pairedNote,
  pooledComparison,
} from '../eval/paired.js';
import { markdownTable } from '../eval/table.js';
import { Settings } from '../util/settings.js';
import { METHODS, type Method, RUN_FILES } from './record.js';

/** a comma-separated flag's text as the list of its items, each checked by `item` */
const commaList = <T extends z.ZodType<unknown, string>>(item: T) =>
  z
    .string()
    .transform((text) =>
      text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(z.array(item).min(1, 'give a comma-separated list'));

/**
 * The settings of `seal experiment` beyond the training config it shares with `seal train` (whose
 * method and seed it replaces by lists), declared once as util/settings.ts reads them.
 */
export const EXPERIMENT_SETTINGS = new Settings(
  z
    .object({
      methods: commaList(
        z.enum(METHODS, {
          error: (i) => `unknown method "${String(i.input)}"; choose from ${METHODS.join(', ')}`,
        }),
      )
        .default([...METHODS])
        .meta({ description: 'comma-separated methods', placeholder: 'list' }),
      seeds: commaList(
        z
          .string()
          .regex(/^\d+$/, 'a seed is an integer >= 0')
          .transform(Number)
          .pipe(z.number().max(2 ** 31 - 1)),
      )
        .default([1, 2, 3])
        .meta({ description: 'comma-separated seeds', placeholder: 'list' }),
      out: z
        .string()
        .min(1)
        .default('runs/experiment')
        .meta({ description: 'experiment folder, one run folder per method and seed', placeholder: 'dir' }),
    })
    .strict(),
  'flag',
);

export const runDirName = (method: Method, seed: number): string => `${method}-s${seed}`;

/** mean and sample standard deviation (0 for one value) */
export function meanStd(xs: readonly number[]): { mean: number; std: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const std = xs.length > 1 ? Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (xs.length - 1)) : 0;
  return { mean, std };
}

function readSummary(path: string): Summary | undefined {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Summary) : undefined;
}

export interface MethodResult {
  readonly method: Method;
  readonly seeds: number[];
  readonly start: Summary[];
  readonly final: Summary[];
}

export function collectResults(
  dir: string,
  methods: readonly Method[],
  seeds: readonly number[],
): MethodResult[] {
  return methods.map((method) => {
    const done = seeds
      .map((seed) => ({ seed, run: join(dir, runDirName(method, seed)) }))
      .map(({ seed, run }) => ({
        seed,
        start: readSummary(join(run, RUN_FILES.evalStart, 'summary.json')),
        final: readSummary(join(run, RUN_FILES.evalFinal, 'summary.json')),
      }))
      .filter((r) => r.final !== undefined);
    return {
      method,
      seeds: done.map((r) => r.seed),
      start: done.flatMap((r) => (r.start ? [r.start] : [])),
      final: done.map((r) => r.final!),
    };
  });
}

/**
 * The paper's Table 1 / Table 3 layout: one row per method, strict test accuracy per category and
 * the average, as mean +- std over seeds; the start policy first.
 */
export function experimentTable(results: readonly MethodResult[]): string {
  const cell = (xs: number[]) => {
    if (xs.length === 0) return '-';
    const { mean, std } = meanStd(xs);
    return xs.length > 1 ? `${mean.toFixed(2)} ± ${std.toFixed(2)}` : mean.toFixed(2);
  };
  const row = (name: string, ss: Summary[], seeds: number) => [
    name,
    String(seeds),
    cell(ss.map((s) => s.average)),
    ...CATEGORIES.map((c: Category) => cell(ss.map((s) => s.categories[c].accuracy))),
  ];
  const starts = results.flatMap((r) => r.start);
  const head = ['method', 'seeds', 'Average', ...CATEGORIES.map((c) => CATEGORY_TITLES[c])];
  const rows = [
    ...(starts.length ? [row('start (base)', starts.slice(0, 1), 1)] : []),
    ...results.map((r) => row(r.method, r.final, r.final.length)),
  ];
  return markdownTable(head, rows);
}

/** the start and final verdicts of one run (undefined where the run has no per-task results) */
function runVerdicts(dir: string, method: Method, seed: number) {
  const run = join(dir, runDirName(method, seed));
  return {
    start: readVerdicts(join(run, RUN_FILES.evalStart)),
    final: existsSync(join(run, RUN_FILES.evalFinal, 'summary.json'))
      ? readVerdicts(join(run, RUN_FILES.evalFinal))
      : undefined,
  };
}

/**
 * Task by task, pooled over seeds: every method's final policy against the base (its own run's
 * start evaluation), and every other method against seal on the same seed, with the won / lost
 * counts, the sign test and the bootstrap interval of the mean difference (src/eval/paired.ts).
 */
export function pairedTables(dir: string, methods: readonly Method[], seeds: readonly number[]): string {
  const pairs = (first: (s: number) => EvaluationPair['first'] | undefined, m: Method) =>
    seeds.flatMap((s) => {
      const a = first(s);
      const b = runVerdicts(dir, m, s).final;
      return a && b ? [{ seed: s, pair: { first: a, other: b } }] : [];
    });
  const row = (m: Method, ps: { seed: number; pair: EvaluationPair }[]) =>
    ps.length
      ? [m, String(ps.length), ...pairedCells(pooledComparison(ps.map((p) => p.pair)))]
      : [m, '0', ...PAIRED_HEAD.map(() => '-')];
  const head = ['method', 'seeds', ...PAIRED_HEAD];
  const base = markdownTable(
    head,
    methods.map((m) =>
      row(
        m,
        pairs((s) => runVerdicts(dir, m, s).start, m),
      ),
    ),
  );
  let out = `Against the base (each run's start evaluation), pooled over seeds:\n\n${base}\n\n${pairedNote('the base', true)}`;
  const others = methods.filter((m) => m !== 'seal');
  if (methods.includes('seal') && others.length) {
    const vsSeal = markdownTable(
      head,
      others.map((m) =>
        row(
          m,
          pairs((s) => runVerdicts(dir, 'seal', s).final, m),
        ),
      ),
    );
    out += `\n\nAgainst seal on the same seed, pooled over the seeds both finished:\n\n${vsSeal}\n\n${pairedNote('seal', true)}`;
  }
  return out;
}
