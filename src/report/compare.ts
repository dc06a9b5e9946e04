/** `seal compare`: several evaluation summaries side by side, with differences to the first. */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { RESULTS_FILE, readVerdictRows, readVerdicts } from '../bfcl/eval.js';
import { type Summary, summarise } from '../bfcl/summary.js';
import { CATEGORIES, CATEGORY_TITLES, type Category } from '../envs/bfcl/data/tasks.js';
import { EPISODE_FILES, type EpisodeSummary, readEpisodes } from '../eval/episodes.js';
import { PAIRED_HEAD, pairedCells, pairedNote, pooledComparison, signed } from '../eval/paired.js';
import { markdownTable } from '../eval/table.js';
import { UserError } from '../util/errors.js';
import { fileAccessError } from '../util/files.js';

export class CompareError extends UserError {}

const EPISODES_FILE_NAME = EPISODE_FILES[1];

export function readSummary(dir: string): Summary {
  const path = join(dir, 'summary.json');
  if (!existsSync(path)) {
    throw new CompareError(
      `${dir} has no summary.json: point at a folder written by \`seal eval --out\` (finished runs only).`,
    );
  }
  let summary: unknown;
  try {
    summary = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    if (e instanceof SyntaxError)
      throw new CompareError(`${path} is not valid JSON; rerun \`seal eval\` into ${dir} to rewrite it.`);
    throw fileAccessError(e, 'read', path);
  }
  if (!isSummary(summary))
    throw new CompareError(
      `${path} is not an evaluation summary ({"categories": {...}, "average": ...}); rerun \`seal eval\` into ${dir} to rewrite it.`,
    );
  return summary;
}

function isSummary(x: unknown): x is Summary {
  if (typeof x !== 'object' || x === null) return false;
  const s = x as { categories?: unknown; average?: unknown };
  if (typeof s.average !== 'number' || typeof s.categories !== 'object' || s.categories === null)
    return false;
  const cats = s.categories as Record<string, unknown>;
  return CATEGORIES.every((c) => {
    const v = cats[c] as { n?: unknown; accuracy?: unknown } | undefined;
    return typeof v === 'object' && v !== null && typeof v.n === 'number' && typeof v.accuracy === 'number';
  });
}

/**
 * Names that tell the runs apart: the folder's basename, or as many trailing path parts as it
 * takes when two runs share one (`a/out` and `b/out`).
 */
export function runLabels(dirs: readonly string[]): string[] {
  const parts = dirs.map((d) => resolve(d).split(sep).filter(Boolean));
  const label = (p: string[], k: number) => p.slice(-k).join('/');
  return parts.map((p, i) => {
    for (let k = 1; k < p.length; k++) {
      const mine = label(p, k);
      if (parts.every((q, j) => j === i || label(q, k) !== mine || resolve(dirs[j]!) === resolve(dirs[i]!)))
        return mine;
    }
    return resolve(dirs[i]!);
  });
}

/**
 * The table of `dirs`, each named by its folder; `evaluations[i]` is where run i's summary and
 * verdicts are (the folder itself for `seal eval`, its final evaluation for a `seal train` run).
 */
export function compareTable(dirs: readonly string[], evaluations: readonly string[] = dirs): string {
  if (dirs.length === 0) throw new CompareError('give at least one run folder');
  const labels = runLabels(dirs);
  if (evaluations.some(isEpisodeFolder)) return episodeCompareTable(dirs, evaluations, labels);
  const runs = evaluations.map((d, i) => ({ name: labels[i]!, summary: readSummary(d) }));
  // one table from the summary, the next from the results: they must tell the same story
  evaluations.forEach((d, i) => {
    checkAgreement(dirs[i]!, d, runs[i]!.summary);
  });
  const head = ['run', 'Average', ...CATEGORIES.map((c) => CATEGORY_TITLES[c])];
  // a category without tasks has no accuracy: shown as "-", and no difference is taken against it
  const values = (s: Summary): (number | undefined)[] => [
    CATEGORIES.some((c) => s.categories[c].n > 0) ? s.average : undefined,
    ...CATEGORIES.map((c) => (s.categories[c].n > 0 ? s.categories[c].accuracy : undefined)),
  ];
  const base = values(runs[0]!.summary);
  const rows = runs.map((r, i) => {
    const v = values(r.summary);
    return [
      r.name,
      ...v.map((x, j) => {
        if (x === undefined) return '-';
        const b = base[j];
        return i === 0 || b === undefined ? x.toFixed(2) : `${x.toFixed(2)} (${signed(x - b)})`;
      }),
    ];
  });
  const table = `${markdownTable(head, rows)}\n\nDifferences in points against ${runs[0]!.name}.`;
  const paired = pairedTable(evaluations, labels);
  return paired ? `${table}\n\n${paired}` : table;
}

/** Whether a folder holds an evaluation of episodes (`eval/episodes.ts`: τ², BFCL agentic), not a BFCL multi-turn one. */
function isEpisodeFolder(dir: string): boolean {
  return existsSync(join(dir, EPISODES_FILE_NAME));
}

function readEpisodeSummary(name: string, dir: string): EpisodeSummary {
  const path = join(dir, 'summary.json');
  if (!existsSync(path))
    throw new CompareError(
      `${name} has no summary.json yet: finish its run (the same seal eval command resumes it), then compare.`,
    );
  let s: unknown;
  try {
    s = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    if (e instanceof SyntaxError)
      throw new CompareError(`${path} is not valid JSON; rerun \`seal eval\` into ${name} to rewrite it.`);
    throw fileAccessError(e, 'read', path);
  }
  const ok =
    typeof s === 'object' &&
    s !== null &&
    Array.isArray((s as EpisodeSummary).groups) &&
    typeof (s as EpisodeSummary).average === 'number';
  if (!ok)
    throw new CompareError(
      `${path} is not a summary of episodes ({"groups": [...], "average": ...}); rerun \`seal eval\` into ${name}.`,
    );
  return s as EpisodeSummary;
}

/**
 * Runs of a suite played as episodes (τ²): average reward per group and overall, differences to
 * the first run, and task by task (each task and trial solved or not) the sign test.
 */
function episodeCompareTable(
  dirs: readonly string[],
  evaluations: readonly string[],
  labels: readonly string[],
): string {
  const runs = evaluations.map((d, i) => {
    if (!isEpisodeFolder(d))
      throw new CompareError(
        `${dirs[i]} is not a run of the same suite as ${dirs[0]}: compare BFCL runs with BFCL runs and τ² runs with τ² runs.`,
      );
    return { name: labels[i]!, summary: readEpisodeSummary(dirs[i]!, d) };
  });
  const suite = runs[0]!.summary.suite;
  const other = runs.find((r) => r.summary.suite !== suite);
  if (other)
    throw new CompareError(
      `${other.name} is a ${other.summary.suite} run and ${runs[0]!.name} a ${suite} run; compare runs of one suite.`,
    );
  const groups = [...new Set(runs.flatMap((r) => r.summary.groups.map((g) => g.group)))];
  // a suite's columns (BFCL agentic: web search, memory) come before its groups
  const columns = [...new Set(runs.flatMap((r) => (r.summary.columns ?? []).map((c) => c.name)))];
  const values = (s: EpisodeSummary): (number | undefined)[] => [
    s.average,
    ...columns.map((c) => s.columns?.find((x) => x.name === c)?.averageReward ?? undefined),
    ...groups.map((g) => {
      const found = s.groups.find((x) => x.group === g);
      return found && found.episodes > 0 ? found.averageReward : undefined;
    }),
  ];
  const base = values(runs[0]!.summary);
  const rows = runs.map((r, i) => [
    r.name,
    ...values(r.summary).map((x, j) => {
      if (x === undefined) return '-';
      const b = base[j];
      return i === 0 || b === undefined ? x.toFixed(2) : `${x.toFixed(2)} (${signed(x - b)})`;
    }),
  ]);
  const table = `${markdownTable(['run', 'Average', ...columns, ...groups], rows)}\n\nAverage reward x100; differences in points against ${runs[0]!.name}.`;
  if (runs.length < 2) return table;
  const solved = (d: string) =>
    new Map(
      [...readEpisodes(d).values()]
        .filter((r) => r.scored !== false)
        .map((r) => [`${r.task_id}#${r.trial}`, r.solved]),
    );
  const first = solved(evaluations[0]!);
  const paired = evaluations
    .slice(1)
    .map((d, i) => [labels[i + 1]!, ...pairedCells(pooledComparison([{ first, other: solved(d) }]))]);
  return `${table}\n\n${markdownTable(['task by task', ...PAIRED_HEAD], paired)}\n\n${pairedNote(labels[0]!, false)} A task played several times counts once per trial.`;
}

const taskCount = (s: Summary) => CATEGORIES.reduce((n, c) => n + s.categories[c].n, 0);

/**
 * A folder whose results.jsonl says other than its summary.json (a task twice, tasks the summary
 * does not count, another score) is refused: it mixes runs, and a comparison of it would print one
 * result in the summary table and another task by task. `name` is the folder as the user gave it.
 */
function checkAgreement(name: string, dir: string, summary: Summary): void {
  const rows = readVerdictRows(dir);
  if (rows.length === 0) return;
  const fix = `Rerun \`seal eval\` into ${name} with the settings its run.json records (that rewrites summary.json from results.jsonl), or evaluate again into a new folder.`;
  const seen = new Set<string>();
  for (const r of rows) {
    if (seen.has(r.id))
      throw new CompareError(
        `${name} mixes runs: its ${RESULTS_FILE} holds task ${r.id} more than once. ${fix}`,
      );
    seen.add(r.id);
  }
  const counted = summarise(
    rows.flatMap((r) =>
      r.category !== undefined && (CATEGORIES as readonly string[]).includes(r.category)
        ? [{ category: r.category as Category, valid: r.valid }]
        : [],
    ),
  );
  const agree = (a: Summary, b: Summary) =>
    a.average === b.average &&
    CATEGORIES.every(
      (c) => a.categories[c].n === b.categories[c].n && a.categories[c].accuracy === b.categories[c].accuracy,
    );
  if (!agree(counted, summary))
    throw new CompareError(
      `${name} mixes runs: its summary.json counts ${taskCount(summary)} task(s), average ${summary.average.toFixed(2)}, but its ${RESULTS_FILE} holds ${rows.length}, average ${counted.average.toFixed(2)}. ${fix}`,
    );
}

/**
 * Task by task against the first run (when both keep per-task results): how many tasks each run
 * won and lost, the sign test on them, and the bootstrap interval of the difference, so that a
 * difference of averages can be told from churn.
 */
function pairedTable(dirs: readonly string[], labels: readonly string[]): string | undefined {
  if (dirs.length < 2) return undefined;
  const first = readVerdicts(dirs[0]!);
  if (!first) return undefined;
  const rows = dirs.slice(1).map((d, i) => {
    const other = readVerdicts(d);
    if (!other) return [labels[i + 1]!, ...PAIRED_HEAD.map(() => '-')];
    return [labels[i + 1]!, ...pairedCells(pooledComparison([{ first, other }]))];
  });
  return `${markdownTable(['task by task', ...PAIRED_HEAD], rows)}

${pairedNote(labels[0]!, false)}`;
}
