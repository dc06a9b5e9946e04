/**
 * From loaded `seal eval` folders to what the page shows: the facts of each evaluation, its scores
 * (per group, with pass^k where there were trials), a bounded sample of episodes per group to
 * browse, and, for several evaluations, their scores side by side. No markup here.
 */
import { basename, dirname, resolve } from 'node:path';
import { type Summary, summarise } from '../bfcl/summary.js';
import { CATEGORIES, CATEGORY_TITLES, type Category } from '../envs/bfcl/data/tasks.js';
import { type EpisodeSummary, summariseEpisodes } from '../eval/episodes.js';
import type { ChatMessage } from '../policy/policy.js';
import {
  type ChatLineView,
  clipText,
  type EpisodeView,
  type EvalPage,
  type PageData,
  type ReportOptions,
  RUN_COLORS,
  type ScoreTable,
  sampleRollouts,
  turnViews,
} from './data.js';
import type { EvalEpisode, LoadedEvaluation } from './load-eval.js';

const fmt = (x: number | null | undefined): string =>
  typeof x === 'number' && Number.isFinite(x) ? x.toFixed(2) : '-';

const str = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** the config keys shown, in this order, and what a reader calls them */
const FACT_KEYS: readonly (readonly [string, string])[] = [
  ['suite', 'suite'],
  ['policy', 'policy'],
  ['model', 'model'],
  ['baseUrl', 'reached at'],
  ['format', 'tool-call format'],
  ['renderer', 'renderer'],
  ['thinking', 'thinking'],
  ['split', 'tasks'],
  ['groups', 'groups'],
  ['trials', 'trials'],
  ['seed', 'seed'],
  ['sampling', 'sampling'],
  ['counterpart', 'also deciding the verdict'],
  ['extraBody', 'extra request fields'],
  ['started', 'started'],
];

function facts(e: LoadedEvaluation): [string, string][] {
  const shown = FACT_KEYS.filter(([k]) => e.config[k] !== undefined).map(([k, name]): [string, string] => [
    name,
    Array.isArray(e.config[k]) ? (e.config[k] as unknown[]).join(', ') : str(e.config[k]),
  ]);
  const scored = e.episodes.filter((x) => x.scored);
  return [
    ['folder', e.dir],
    ...shown,
    [
      'finished episodes',
      `${scored.length} scored${scored.length < e.episodes.length ? `, ${e.episodes.length - scored.length} played unscored (what later ones start from)` : ''}`,
    ],
  ];
}

/** the groups in the suite's order: BFCL's categories, or those run.json names, then any other played */
function groupOrder(e: LoadedEvaluation): string[] {
  const named =
    e.kind === 'bfcl'
      ? [...CATEGORIES]
      : Array.isArray(e.config.groups)
        ? (e.config.groups as unknown[]).map(String)
        : [];
  const played = new Set(e.episodes.map((x) => x.group));
  return [...named, ...[...played].filter((g) => !named.includes(g))];
}

/** the scores as written at the end of the run, else computed here from the finished rows */
function summaryOf(e: LoadedEvaluation): { summary: Summary | EpisodeSummary; computed: boolean } {
  if (e.summary) return { summary: e.summary, computed: false };
  if (e.kind === 'bfcl')
    return {
      summary: summarise(
        e.episodes
          .filter((x) => (CATEGORIES as readonly string[]).includes(x.group))
          .map((x) => ({ category: x.group as Category, valid: x.solved })),
      ),
      computed: true,
    };
  const rows = e.episodes.map((x) => ({
    task_id: x.taskId,
    group: x.group,
    reward: x.reward,
    solved: x.solved,
    ...(x.scored ? {} : { scored: false as const }),
  }));
  const trials = typeof e.config.trials === 'number' ? e.config.trials : 1;
  return {
    summary: summariseEpisodes(rows, groupOrder(e), {
      suite: str(e.config.suite),
      model: str(e.config.model),
      trials,
    }),
    computed: true,
  };
}

const isBfclSummary = (s: Summary | EpisodeSummary): s is Summary => 'categories' in s;

/** One evaluation's scores: a row per group (BFCL: per category, accuracy %), then the average. */
export function evalScoreTable(summary: Summary | EpisodeSummary): ScoreTable {
  if (isBfclSummary(summary)) {
    const present = CATEGORIES.filter((c) => (summary.categories[c]?.n ?? 0) > 0);
    return {
      columns: ['', 'accuracy %', 'tasks'],
      rows: [
        ...present.map((c) => ({
          label: CATEGORY_TITLES[c],
          cells: [fmt(summary.categories[c].accuracy), String(summary.categories[c].n)],
        })),
        {
          label: 'average',
          cells: [fmt(summary.average), String(present.reduce((n, c) => n + summary.categories[c].n, 0))],
        },
      ],
    };
  }
  const k = summary.trials;
  const passCols = k > 1 ? Array.from({ length: k }, (_, i) => `pass^${i + 1}`) : [];
  const played = summary.groups.filter((g) => g.episodes > 0);
  return {
    columns: ['', 'average reward', 'tasks', 'episodes', ...passCols],
    rows: [
      ...played.map((g) => ({
        label: g.group,
        cells: [
          fmt(g.averageReward),
          String(g.tasks),
          String(g.episodes),
          ...(k > 1 ? g.passHatK.map((p) => fmt(p)) : []),
        ],
      })),
      ...(summary.columns ?? []).map((c) => ({
        label: `${c.name} (mean of ${c.groups.join(', ')})`,
        cells: [fmt(c.averageReward), '', '', ...passCols.map(() => '')],
      })),
      { label: 'average', cells: [fmt(summary.average), '', '', ...passCols.map(() => '')] },
    ],
  };
}

/** An evaluation's scores by group name (BFCL: category titles), with `average` last. */
function scoresByGroup(summary: Summary | EpisodeSummary): Map<string, number | null> {
  const out = new Map<string, number | null>();
  if (isBfclSummary(summary)) {
    for (const c of CATEGORIES)
      if ((summary.categories[c]?.n ?? 0) > 0) out.set(CATEGORY_TITLES[c], summary.categories[c].accuracy);
  } else {
    for (const g of summary.groups) if (g.episodes > 0) out.set(g.group, g.averageReward);
    for (const c of summary.columns ?? []) out.set(c.name, c.averageReward);
  }
  out.set('average', summary.average);
  return out;
}

/** Several evaluations' scores side by side: a row per group any of them played, a column each. */
export function sideBySide(
  evals: readonly { name: string; summary: Summary | EpisodeSummary }[],
): ScoreTable {
  const maps = evals.map((e) => scoresByGroup(e.summary));
  const groups = [...new Set(maps.flatMap((m) => [...m.keys()].filter((g) => g !== 'average'))), 'average'];
  return {
    columns: ['', ...evals.map((e) => e.name)],
    rows: groups.map((g) => ({ label: g, cells: maps.map((m) => (m.has(g) ? fmt(m.get(g)) : '-')) })),
  };
}

function chatLines(chat: readonly ChatMessage[], max: number): ChatLineView[] {
  return chat.map((m) => ({
    role: String(m?.role),
    content: clipText(typeof m?.content === 'string' ? m.content : '', max),
    calls:
      m?.role === 'assistant' && Array.isArray(m.tool_calls)
        ? m.tool_calls.map((c) => clipText(`${c.function?.name}(${c.function?.arguments ?? ''})`, max))
        : [],
  }));
}

function episodeView(x: EvalEpisode, max: number): EpisodeView {
  const { group: _, detail, chat, trajectory, ...kept } = x;
  return {
    ...kept,
    ...(detail !== undefined ? { detail: clipText(JSON.stringify(detail, null, 1) ?? '', max) } : {}),
    ...(chat ? { chat: chatLines(chat, max) } : {}),
    ...(trajectory ? { turns: turnViews(trajectory, x.labels, max) } : {}),
  };
}

export function evalPage(
  e: LoadedEvaluation,
  id: string,
  name: string,
  color: string,
  options: ReportOptions,
): EvalPage & { readonly summary: Summary | EpisodeSummary } {
  const { summary, computed } = summaryOf(e);
  // the suite's order, not the order episodes ended in
  const played = new Set(e.episodes.map((x) => x.group));
  const order = groupOrder(e).filter((g) => played.has(g));
  const groups = order.map((group) => {
    const mine = e.episodes.filter((x) => x.group === group);
    return {
      group,
      total: mine.length,
      solved: mine.filter((x) => x.solved).length,
      shown: sampleRollouts(mine, options.episodesPerGroup).map((x) => episodeView(x, options.maxTextChars)),
    };
  });
  const notes = [
    ...(computed
      ? [
          `No summary.json yet: the evaluation has not finished (it is running, or was stopped; the same \`seal eval\` command resumes it). The scores below are computed from the ${e.episodes.length} episode(s) finished so far${e.kind === 'episodes' ? ', with the plain pass^k formula' : ''}.`,
        ]
      : []),
    ...(e.dropped > 0 ? [`${e.dropped} line(s) of the results could not be read and are left out.`] : []),
    ...(e.kind === 'episodes' && e.episodes.length > 0 && e.episodes.every((x) => !x.chat)
      ? ['This folder was written before evaluations kept the chat: each episode shows its verdict only.']
      : []),
  ];
  return {
    id,
    name,
    dir: e.dir,
    color,
    facts: facts(e),
    notes,
    scores: evalScoreTable(summary),
    summary,
    browserNote:
      `Up to ${options.episodesPerGroup} episodes per group: solved and unsolved in equal parts where both occur. ` +
      (e.kind === 'bfcl'
        ? 'Each task by turn and step, as the strict evaluation played it (no training interface). '
        : "Each episode's chat after the system prompt (the tools and the suite's framing are left out), and the verdict's breakdown. ") +
      `Text is cut after ${options.maxTextChars} characters.`,
    groups,
  };
}

/**
 * The train runs' page with the evaluations added after them: each its own section (ids and
 * colours go on from the runs'), and their scores side by side when there are several.
 */
export function withEvaluations(
  page: PageData,
  evals: readonly LoadedEvaluation[],
  options: ReportOptions,
): PageData {
  if (evals.length === 0) return page;
  // eval-final of two runs: told apart by their run's folder, then by their place
  const taken = page.runs.map((r) => r.name);
  const clash = (name: string) =>
    taken.filter((x) => x === name).length + evals.filter((e) => e.name === name).length > 1;
  const named = evals.map((e) => (clash(e.name) ? `${basename(dirname(resolve(e.dir)))}/${e.name}` : e.name));
  const pages = evals.map((e, i) => {
    const n = page.runs.length + i;
    const name = named.filter((x) => x === named[i]).length > 1 ? `${named[i]} (${n + 1})` : named[i]!;
    return evalPage(e, `run${n + 1}`, name, RUN_COLORS[n % RUN_COLORS.length]!, options);
  });
  const all = [...page.runs.map((r) => r.name), ...pages.map((p) => p.name)];
  return {
    ...page,
    title: `seal report: ${all.join(', ')}`,
    evaluations: pages.map(({ summary: _, ...p }) => p),
    ...(pages.length > 1 ? { sideBySide: sideBySide(pages) } : {}),
  };
}
