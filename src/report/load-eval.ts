/**
 * Reads a `seal eval` folder for the report: a BFCL multi-turn evaluation (results.jsonl, one
 * trajectory a task) or an evaluation played through the episode interface (episodes.jsonl: τ²,
 * BFCL memory and web search). Read only, like the train run loader: a torn line is left out, not
 * repaired, so the report can run beside a live evaluation.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { EpisodeRow, EpisodeSummary } from '../eval/episodes.js';
import type { EvalResultRow } from '../eval/run.js';
import type { Summary } from '../eval/summary.js';
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

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/** Which kind of `seal eval` folder a run.json (and the files beside it) describe, or undefined. */
export function evalKindOf(dir: string, record: unknown): LoadedEvaluation['kind'] | undefined {
  if (!isObject(record) || !('model' in record) || !('split' in record)) return undefined;
  return existsSync(join(dir, 'episodes.jsonl')) || 'trials' in record ? 'episodes' : 'bfcl';
}

const isResultRow = (r: unknown): r is EvalResultRow =>
  isObject(r) && typeof r.id === 'string' && isObject(r.trajectory) && Array.isArray(r.trajectory.turns);

const isEpisodeRow = (r: unknown): r is EpisodeRow =>
  isObject(r) && typeof r.task_id === 'string' && typeof r.trial === 'number' && typeof r.reward === 'number';

function readSummaryFile(dir: string): unknown {
  try {
    return JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

export function loadEvaluation(
  dir: string,
  record: Readonly<Record<string, unknown>>,
  kind: LoadedEvaluation['kind'],
): LoadedEvaluation {
  const base = { dir, name: basename(resolve(dir)), kind, config: record };
  const summary = readSummaryFile(dir);
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
    const ok = isObject(summary) && typeof summary.average === 'number' && isObject(summary.categories);
    return { ...base, episodes, dropped, ...(ok ? { summary: summary as unknown as Summary } : {}) };
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
  const ok = isObject(summary) && typeof summary.average === 'number' && Array.isArray(summary.groups);
  return { ...base, episodes, dropped, ...(ok ? { summary: summary as unknown as EpisodeSummary } : {}) };
}
