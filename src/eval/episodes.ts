/**
 * Evaluation of a policy on a suite played through the one episode interface (envs/suite.ts),
 * with trials: every task is played `trials` times, each trial with its own seed. The run folder
 * resumes as the BFCL evaluation's does:
 *
 *   run.json        what was evaluated and how (a rerun with other settings is refused)
 *   episodes.jsonl  one line per finished (task, trial): reward, solved, why it ended, the
 *                   suite's breakdown, its record of the conversation and the agent's chat
 *   summary.json    per group (τ²: domain) the average reward and pass^k, and their average;
 *                   summary.md the same as a table
 *
 * Finished episodes are appended one line at a time, so an interrupted run loses nothing that
 * finished; rerunning into the same folder plays only the rest.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { converse } from '../agent/conversation.js';
import type { FormatAdapter } from '../agent/format.js';
import type { Suite } from '../envs/suite.js';
import type { ChatMessage, Policy, SamplingOptions } from '../policy/policy.js';
import { readJsonLines, writeAtomic } from '../util/files.js';
import {
  checkRunRecord,
  type EvalProgress,
  openRunFolder,
  RUN_FILE,
  RunFolderError,
  runUntilFailure,
  startOver,
} from './folder.js';

export const EPISODE_FILES = [RUN_FILE, 'episodes.jsonl', 'summary.json', 'summary.md'] as const;
const EPISODES_FILE = EPISODE_FILES[1];

export interface EpisodeEvalConfig {
  readonly suite: string;
  readonly policy: string;
  readonly model: string;
  readonly baseUrl?: string;
  readonly format: string;
  readonly sampling: SamplingOptions;
  /** a Tinker policy's chat format, resolved (never `auto`), and its enable_thinking choice */
  readonly renderer?: string;
  readonly thinking?: string;
  /** the groups (τ²: domains) and tasks selected */
  readonly groups: readonly string[];
  readonly split: string;
  readonly trials: number;
  /** the seed the trials' seeds are drawn from */
  readonly seed: number;
  /** what else decides a verdict (τ²: the user model) */
  readonly counterpart?: Readonly<Record<string, unknown>>;
  readonly extraBody?: Record<string, unknown>;
}

/** settings a resumed folder must share: each changes what was played or what a reward means */
export const EPISODE_RESUME_KEYS = [
  'suite',
  'policy',
  'model',
  'format',
  'sampling',
  'renderer',
  'thinking',
  'groups',
  'split',
  'trials',
  'seed',
  'counterpart',
  'extraBody',
] as const satisfies readonly (keyof EpisodeEvalConfig)[];

export interface EpisodeRow {
  readonly task_id: string;
  readonly group: string;
  readonly trial: number;
  readonly seed: number;
  readonly reward: number;
  readonly solved: boolean;
  readonly reason: string | undefined;
  readonly completions: number;
  readonly detail: unknown;
  readonly record: unknown;
  /**
   * the chat as the agent saw and wrote it, after its system prompt (left out: it repeats the
   * tools and the framing in every row); what `seal report` shows whatever the suite
   */
  readonly chat?: readonly ChatMessage[];
  /** false: an episode played for what later ones start from, not scored (BFCL memory's prerequisites) */
  readonly scored?: false;
}

export interface GroupScore {
  readonly group: string;
  readonly tasks: number;
  readonly episodes: number;
  /** mean reward over every episode, x100 */
  readonly averageReward: number;
  /** pass^k x100 for k = 1..trials (τ²'s estimator: per task C(solved, k) / C(trials, k), averaged) */
  readonly passHatK: readonly number[];
}

/** A column of the summary: the mean of its groups' average rewards (those played), x100. */
export interface ColumnScore {
  readonly name: string;
  readonly groups: readonly string[];
  /** null when none of its groups was played */
  readonly averageReward: number | null;
}

export interface EpisodeSummary {
  readonly suite: string;
  readonly model: string;
  readonly trials: number;
  readonly groups: readonly GroupScore[];
  /** the suite's columns when it has them (BFCL agentic: web search, memory) */
  readonly columns?: readonly ColumnScore[];
  /** the mean of the columns' (else the groups') average rewards, the paper's "average" column */
  readonly average: number;
}

const key = (taskId: string, trial: number) => `${taskId}#${trial}`;

function binomial(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

/** pass^k over tasks with `trials` trials each: per task C(c, k) / C(n, k), averaged over tasks. */
export function passHatK(successesPerTask: readonly number[], trials: number, k: number): number {
  if (successesPerTask.length === 0) return 0;
  const total = successesPerTask.reduce((s, c) => s + binomial(c, k) / binomial(trials, k), 0);
  return total / successesPerTask.length;
}

export function summariseEpisodes(
  rows: readonly Pick<EpisodeRow, 'task_id' | 'group' | 'reward' | 'solved' | 'scored'>[],
  groups: readonly string[],
  config: { suite: string; model: string; trials: number },
  suite?: Pick<Suite, 'summarise' | 'columns'>,
): EpisodeSummary {
  const scores = groups.map((group): GroupScore => {
    const mine = rows.filter((r) => r.group === group && r.scored !== false);
    const perTask = new Map<string, number>();
    for (const r of mine) perTask.set(r.task_id, (perTask.get(r.task_id) ?? 0) + (r.solved ? 1 : 0));
    // a suite that computes its metrics its own way (τ²'s agent_metrics) is asked; else the plain formulas
    const own =
      mine.length > 0 && suite?.summarise
        ? suite.summarise(
            group,
            mine.map((r) => ({ taskId: r.task_id, reward: r.reward })),
            config.trials,
          )
        : undefined;
    const average = mine.length === 0 ? 0 : mine.reduce((s, r) => s + r.reward, 0) / mine.length;
    return {
      group,
      tasks: perTask.size,
      episodes: mine.length,
      averageReward: 100 * (own?.averageReward ?? average),
      passHatK: Array.from(
        { length: config.trials },
        (_, i) =>
          100 * (own ? (own.passHatK[i] ?? 0) : passHatK([...perTask.values()], config.trials, i + 1)),
      ),
    };
  });
  const mean = (xs: readonly number[]) =>
    xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
  const played = (names: readonly string[]) =>
    scores.filter((s) => names.includes(s.group) && s.episodes > 0).map((s) => s.averageReward);
  const columns = suite?.columns?.map(
    (c): ColumnScore => ({ name: c.name, groups: c.groups, averageReward: mean(played(c.groups)) }),
  );
  const average = columns
    ? mean(columns.map((c) => c.averageReward).filter((x): x is number => x !== null))
    : mean(played(groups));
  return {
    suite: config.suite,
    model: config.model,
    trials: config.trials,
    groups: scores,
    ...(columns ? { columns } : {}),
    average: average ?? 0,
  };
}

/**
 * The summary as a Markdown table: a column per group (or per column of the suite's, then a second
 * table of its groups), then the average (the paper's Table 2 layout).
 */
export function episodeTable(summary: EpisodeSummary): string {
  const fmt = (x: number | null) => (x === null ? '-' : x.toFixed(2));
  const head = summary.columns
    ? summary.columns.map((c) => ({ name: c.name, score: c.averageReward }))
    : summary.groups.map((g) => ({ name: g.group, score: g.averageReward }));
  const cols = head.map((c) => c.name);
  const header = `| ${['model', ...cols, 'average'].join(' | ')} |`;
  const rule = `|${['---', ...cols.map(() => '---:'), '---:'].join('|')}|`;
  const row = `| ${[summary.model, ...head.map((c) => fmt(c.score)), fmt(summary.average)].join(' | ')} |`;
  const lines = [header, rule, row];
  if (summary.columns) {
    const groups = summary.groups.filter((g) => g.episodes > 0);
    lines.push('', `| ${['model', ...groups.map((g) => g.group)].join(' | ')} |`);
    lines.push(`|${['---', ...groups.map(() => '---:')].join('|')}|`);
    lines.push(`| ${[summary.model, ...groups.map((g) => fmt(g.averageReward))].join(' | ')} |`);
  }
  const groupCols = summary.groups.map((g) => g.group);
  if (summary.trials > 1) {
    lines.push('', `| pass^k | ${groupCols.join(' | ')} |`, `|---|${groupCols.map(() => '---:').join('|')}|`);
    for (let k = 1; k <= summary.trials; k++)
      lines.push(`| k=${k} | ${summary.groups.map((g) => fmt(g.passHatK[k - 1] ?? 0)).join(' | ')} |`);
  }
  return lines.join('\n');
}

export interface EpisodeEvalOptions {
  readonly concurrency: number;
  readonly format: FormatAdapter;
  readonly progress?: EvalProgress;
  readonly force?: boolean;
  /** each trial's seed (index = trial) */
  readonly seeds: readonly number[];
  /** extra files the suite writes from all finished rows (τ²: the reference's results files) */
  readonly writeRecords?: (rows: readonly EpisodeRow[], outDir: string) => void;
}

export interface EpisodeEvalOutcome {
  readonly summary: EpisodeSummary;
  readonly table: string;
  readonly ran: number;
  readonly resumed: number;
}

export function readEpisodes(dir: string): Map<string, EpisodeRow> {
  const isRow = (r: unknown): r is EpisodeRow =>
    typeof r === 'object' &&
    r !== null &&
    typeof (r as EpisodeRow).task_id === 'string' &&
    typeof (r as EpisodeRow).trial === 'number';
  const { rows } = readJsonLines(join(dir, EPISODES_FILE), isRow, { repair: true });
  return new Map(rows.map((r) => [key(r.task_id, r.trial), r]));
}

export async function runEpisodes(
  suite: Suite,
  taskIds: readonly string[],
  policy: Policy,
  config: EpisodeEvalConfig,
  outDir: string,
  options: EpisodeEvalOptions,
): Promise<EpisodeEvalOutcome> {
  const unlock = openRunFolder(outDir);
  try {
    if (taskIds.length === 0) throw new RunFolderError('no task selected; nothing to evaluate.');
    if (options.force) startOver(outDir, EPISODE_FILES);
    checkRunRecord(outDir, config, EPISODE_RESUME_KEYS, { resultsFile: EPISODES_FILE });
    const byId = new Map(suite.tasks.map((t) => [t.id, t]));
    const selected = withPrerequisites(suite, taskIds);
    const finished = readEpisodes(outDir);
    const all: { taskId: string; trial: number }[] = [];
    for (let trial = 0; trial < config.trials; trial++)
      for (const taskId of selected) all.push({ taskId, trial });
    // what finished before is handed back to the suite first, in the suite's order (resume)
    for (const e of all) {
      const row = finished.get(key(e.taskId, e.trial));
      if (row) suite.settle?.(e.taskId, { seed: row.seed, trial: e.trial }, row.record);
    }
    const todo = all.filter((e) => !finished.has(key(e.taskId, e.trial)));
    const ended = new Map<string, Promise<void>>();
    const release = new Map<string, () => void>();
    for (const e of todo)
      ended.set(key(e.taskId, e.trial), new Promise<void>((r) => release.set(key(e.taskId, e.trial), r)));
    options.progress?.start(all.length, all.length - todo.length);
    try {
      await runUntilFailure(todo, options.concurrency, async ({ taskId, trial }, signal) => {
        // an episode that starts from others' state waits for them; they came earlier in the
        // list, so they are running or done and the wait ends (or the run stops)
        for (const dep of byId.get(taskId)?.after ?? []) await untilEnded(ended.get(key(dep, trial)), signal);
        const seed = options.seeds[trial]!;
        const episode = suite.episode(taskId, { seed, trial });
        const played = await converse(episode, policy, {
          format: options.format,
          sampling: { ...config.sampling, seed },
          signal,
        });
        const verdict = episode.verdict();
        const record = episode.record();
        const task = byId.get(taskId);
        const row: EpisodeRow = {
          task_id: taskId,
          group: task?.group ?? '',
          trial,
          seed,
          reward: verdict.reward,
          solved: verdict.solved,
          reason: played.reason,
          completions: played.completions,
          detail: verdict.detail,
          record,
          chat: played.messages.filter((m) => m.role !== 'system'),
          ...(task?.scored === false ? { scored: false as const } : {}),
        };
        const line = JSON.stringify(row, pyReplacer);
        appendFileSync(join(outDir, EPISODES_FILE), `${line}\n`);
        finished.set(key(taskId, trial), row);
        // the suite gets the record as a resumed run reads it back: from the line written
        suite.settle?.(taskId, { seed, trial }, (JSON.parse(line) as EpisodeRow).record);
        release.get(key(taskId, trial))?.();
        options.progress?.tick();
      });
    } finally {
      options.progress?.stop();
    }
    const rows = all
      .map((e) => finished.get(key(e.taskId, e.trial)))
      .filter((r): r is EpisodeRow => r !== undefined);
    const summary = summariseEpisodes(rows, config.groups, config, suite);
    const table = episodeTable(summary);
    writeAtomic(join(outDir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
    writeAtomic(
      join(outDir, 'summary.md'),
      `# ${config.model} on ${config.suite} (${config.trials} trial${config.trials === 1 ? '' : 's'}, ${config.format})\n\n${table}\n`,
    );
    options.writeRecords?.(rows, outDir);
    return { summary, table, ran: todo.length, resumed: all.length - todo.length };
  } finally {
    unlock();
  }
}

/**
 * The tasks to play: those asked for, with every task they start from (their `after`, and
 * theirs), in the suite's order.
 */
export function withPrerequisites(suite: Pick<Suite, 'tasks'>, taskIds: readonly string[]): string[] {
  const byId = new Map(suite.tasks.map((t) => [t.id, t]));
  const wanted = new Set<string>();
  const add = (id: string) => {
    if (wanted.has(id)) return;
    wanted.add(id);
    for (const dep of byId.get(id)?.after ?? []) add(dep);
  };
  for (const id of taskIds) add(id);
  return suite.tasks.filter((t) => wanted.has(t.id)).map((t) => t.id);
}

/** Resolves when `ended` does, or rejects when the run is stopped. */
function untilEnded(ended: Promise<void> | undefined, signal: AbortSignal): Promise<void> {
  if (!ended) return Promise.resolve();
  signal.throwIfAborted();
  return new Promise<void>((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    ended.then(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    });
  });
}

/** JSON for records that hold Python values: dicts as objects, ints as numbers. */
export function pyReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), v]));
  if (typeof value === 'bigint') return Number(value);
  return value;
}
