/**
 * Reads a `seal eval` folder for the report: a BFCL multi-turn evaluation (results.jsonl, one
 * trajectory a task) or an evaluation played through the episode interface (episodes.jsonl: τ²,
 * BFCL memory and web search). Read only, like the train run loader: a torn line is left out, not
 * repaired, so the report can run beside a live evaluation.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { EvalResultRow } from '../bfcl/eval.js';
import type { Summary } from '../bfcl/summary.js';
import type { EpisodeRow, EpisodeSummary } from '../eval/episodes.js';
import type { ChatMessage } from '../policy/policy.js';
import type { Label } from '../seal/labels.js';
import type { Trajectory } from '../seal/trajectory.js';
import { readJsonLines } from '../util/files.js';

/** One finished episode of either kind of folder, in the terms the page needs. */
export interface EvalEpisode {
  readonly taskId: string;
  /** BFCL: the category; episode suites: the group (τ²: the domain) */
  readonly group: string;
  readonly trial: number;
  readonly reward: number;
  readonly solved: boolean;
  /** false: played for what later episodes start from, not scored (BFCL memory's prerequisites) */
  readonly scored: boolean;
  readonly reason?: string;
  /** BFCL: the diagnosis, one label per user turn */
  readonly labels: readonly Label[];
  /** the suite's breakdown of the verdict (τ²: its reward info; BFCL: the error type) */
  readonly detail?: unknown;
  /** episode suites: the agent's chat (absent in folders written before it was kept) */
  readonly chat?: readonly ChatMessage[];
  /** BFCL: the trajectory, per turn and step */
  readonly trajectory?: Trajectory;
}

export interface LoadedEvaluation {
  readonly dir: string;
  readonly name: string;
  /** `bfcl`: BFCL multi-turn's strict evaluation; `episodes`: a suite played through the episode interface */
  readonly kind: 'bfcl' | 'episodes';
  /** run.json as written: what was evaluated and how */
  readonly config: Readonly<Record<string, unknown>>;
  readonly episodes: readonly EvalEpisode[];
  /** lines left out (torn, or not a row) */
  readonly dropped: number;
  /** summary.json, written when the evaluation finished; absent while it runs or after a kill */
  readonly summary?: Summary | EpisodeSummary;
}

export const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/** a BFCL evaluation's summary (the `seal verify --json` shape) */
export const isSummary = (x: unknown): x is Summary =>
  isObject(x) && typeof x.average === 'number' && isObject(x.categories);

const isEpisodeSummary = (x: unknown): x is EpisodeSummary =>
  isObject(x) && typeof x.average === 'number' && Array.isArray(x.groups);

/** summary.json of an eval folder, or undefined when it is missing or unreadable */
function readSummaryFile(dir: string): unknown {
  try {
    return JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** summary.json of a BFCL eval folder, or undefined when it is missing or not a summary */
export function readSummary(dir: string): Summary | undefined {
  const s = readSummaryFile(dir);
  return isSummary(s) ? s : undefined;
}

/** Which kind of `seal eval` folder a run.json (and the files beside it) describe, or undefined. */
export function evalKindOf(dir: string, record: unknown): LoadedEvaluation['kind'] | undefined {
  if (!isObject(record) || !('model' in record) || !('split' in record)) return undefined;
  return existsSync(join(dir, 'episodes.jsonl')) || 'trials' in record ? 'episodes' : 'bfcl';
}

const isResultRow = (r: unknown): r is EvalResultRow =>
  isObject(r) && typeof r.id === 'string' && isObject(r.trajectory) && Array.isArray(r.trajectory.turns);

const isEpisodeRow = (r: unknown): r is EpisodeRow =>
  isObject(r) && typeof r.task_id === 'string' && typeof r.trial === 'number' && typeof r.reward === 'number';

export function loadEvaluation(
  dir: string,
  record: Readonly<Record<string, unknown>>,
  kind: LoadedEvaluation['kind'],
): LoadedEvaluation {
  const base = { dir, name: basename(resolve(dir)), kind, config: record };
  if (kind === 'bfcl') {
    const { rows, dropped } = readJsonLines(join(dir, 'results.jsonl'), isResultRow);
    const episodes = rows.map(
      (r): EvalEpisode => ({
        taskId: r.id,
        group: r.category,
        trial: 0,
        reward: r.valid ? 1 : 0,
        solved: r.valid,
        scored: true,
        ...(r.trajectory.forceQuit ? { reason: 'step limit' } : {}),
        labels: Array.isArray(r.labels) ? r.labels : [],
        ...(r.error_type ? { detail: r.error_type } : {}),
        trajectory: r.trajectory,
      }),
    );
    const summary = readSummary(dir);
    return { ...base, episodes, dropped, ...(summary ? { summary } : {}) };
  }
  const { rows, dropped } = readJsonLines(join(dir, 'episodes.jsonl'), isEpisodeRow);
  const episodes = rows.map(
    (r): EvalEpisode => ({
      taskId: r.task_id,
      group: typeof r.group === 'string' ? r.group : '',
      trial: r.trial,
      reward: r.reward,
      solved: r.solved === true,
      scored: r.scored !== false,
      ...(typeof r.reason === 'string' ? { reason: r.reason } : {}),
      labels: [],
      ...(r.detail !== undefined && r.detail !== null ? { detail: r.detail } : {}),
      ...(Array.isArray(r.chat) ? { chat: r.chat } : {}),
    }),
  );
  const summary = readSummaryFile(dir);
  return { ...base, episodes, dropped, ...(isEpisodeSummary(summary) ? { summary } : {}) };
}
