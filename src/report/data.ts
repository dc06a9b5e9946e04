/**
 * From loaded runs to what the page shows: chart series (plain numbers for the browser), the
 * header and score tables, the interface timeline, and a bounded sample of rollouts. No markup
 * here; the renderer escapes and lays out.
 */

import type { Summary } from '../bfcl/summary.js';
import { CATEGORIES, CATEGORY_TITLES, type Category } from '../envs/bfcl/data/tasks.js';
import { CUE_COMPONENT, CUE_GROUPS, type CueGroup } from '../seal/interface/state.js';
import { LABELS, type Label } from '../seal/labels.js';
import type { Trajectory } from '../seal/trajectory.js';
import type { RolloutRecord } from '../train/record.js';
import type { LoadedRun } from './load.js';
import type { EvalEpisode } from './load-eval.js';

export interface ReportOptions {
  /** rollouts shown per round in the trajectory browser */
  readonly rolloutsPerRound: number;
  /** and per run, over all its rounds (the per-round cap shrinks to fit, to at least 2) */
  readonly rolloutsPerRun: number;
  /** raw model text per step and tool output per call are cut after this many characters */
  readonly maxTextChars: number;
  /** an evaluation's episodes shown per group (category, domain) */
  readonly episodesPerGroup: number;
}

export const DEFAULT_REPORT_OPTIONS: ReportOptions = {
  rolloutsPerRound: 12,
  rolloutsPerRun: 240,
  maxTextChars: 2000,
  episodesPerGroup: 40,
};

export interface Series {
  readonly label: string;
  readonly color: string;
  readonly values: readonly (number | null)[];
  readonly dash?: boolean;
  /** stacked charts: the series' own share (values are the running total it is drawn up to) */
  readonly own?: readonly (number | null)[];
}

export interface ChartSpec {
  readonly id: string;
  readonly title: string;
  readonly kind: 'line' | 'stacked';
  readonly yLabel: string;
  /** fixed y range, else fitted to the data */
  readonly yRange?: readonly [number, number];
  /** values print as percentages (0..1 shown as 0..100 %) */
  readonly share?: boolean;
  readonly x: readonly number[];
  /** only series with at least one value: the page draws a chart only when one is left */
  readonly series: readonly Series[];
  /** the line shown instead of a chart that has no rounds or no series with data */
  readonly nodata: string;
}

export interface ScoreTable {
  readonly columns: readonly string[];
  readonly rows: readonly { readonly label: string; readonly cells: readonly string[] }[];
}

export interface TimelineRow {
  readonly kind: 'cue' | 'guideline';
  readonly name: string;
  readonly component: string;
  /** per round: why it was shown (base / forced / evolved, with trigger), or null when off */
  readonly cells: readonly (string | null)[];
}

export interface Timeline {
  readonly rounds: readonly number[];
  readonly rows: readonly TimelineRow[];
  /** per round, what evolution changed for the next round */
  readonly changes: readonly (readonly string[])[];
}

export interface CallView {
  readonly call: string;
  readonly output: string;
  readonly executionError: boolean;
  readonly available: boolean;
  readonly issues: readonly string[];
}

export interface StepView {
  readonly rawText?: string;
  readonly parseError?: string;
  readonly calls: readonly CallView[];
}

export interface MessageView {
  readonly role: string;
  readonly content: string;
}

export interface TurnView {
  readonly turn: number;
  /** the messages that opened the turn (absent in records written before they were kept) */
  readonly request?: readonly MessageView[];
  readonly label?: Label;
  /** null: not checked (the turn needed no call) */
  readonly passed: boolean | null;
  readonly failure?: string;
  readonly tools: number;
  readonly steps: readonly StepView[];
}

export interface RolloutView {
  readonly taskId: string;
  readonly category: string;
  readonly group: number;
  readonly sample: number;
  readonly reward: number;
  readonly weight: number;
  readonly advantage: number;
  readonly weightedAdvantage: number;
  readonly completionTokens: number;
  readonly labels: readonly Label[];
  readonly forceQuit: boolean;
  readonly turns: readonly TurnView[];
}

export interface BrowserRound {
  readonly round: number;
  readonly total: number;
  readonly shown: readonly RolloutView[];
}

export interface RunPage {
  readonly id: string;
  readonly name: string;
  readonly dir: string;
  readonly color: string;
  readonly facts: readonly (readonly [string, string])[];
  readonly overrides: readonly (readonly [string, string])[];
  readonly notes: readonly string[];
  readonly scores: ScoreTable;
  /** label mix, w_j distribution (when recorded), wall time per round */
  readonly charts: readonly ChartSpec[];
  readonly timeline: Timeline;
  readonly browserNote: string;
  readonly browser: readonly BrowserRound[];
}

/** A chat message as the browser shows it: who, what was said, and the calls made (native tool calls). */
export interface ChatLineView {
  readonly role: string;
  readonly content: string;
  readonly calls: readonly string[];
}

/** An evaluation's episode as the browser shows it: what the record says, text cut. */
export interface EpisodeView
  extends Pick<EvalEpisode, 'taskId' | 'trial' | 'reward' | 'solved' | 'scored' | 'reason' | 'labels'> {
  /** the verdict's breakdown as indented JSON, cut */
  readonly detail?: string;
  /** episode suites: the chat after the system prompt */
  readonly chat?: readonly ChatLineView[];
  /** BFCL: per turn and step */
  readonly turns?: readonly TurnView[];
}

export interface EpisodeGroupView {
  readonly group: string;
  readonly total: number;
  readonly solved: number;
  readonly shown: readonly EpisodeView[];
}

export interface EvalPage {
  readonly id: string;
  readonly name: string;
  readonly dir: string;
  readonly color: string;
  readonly facts: readonly (readonly [string, string])[];
  readonly notes: readonly string[];
  readonly scores: ScoreTable;
  readonly browserNote: string;
  readonly groups: readonly EpisodeGroupView[];
}

export interface PageData {
  readonly title: string;
  /** `seal eval` folders given beside (or instead of) train runs */
  readonly evaluations: readonly EvalPage[];
  /** several evaluations' scores side by side */
  readonly sideBySide?: ScoreTable;
  readonly generated: string;
  readonly runs: readonly RunPage[];
  readonly accuracy: readonly ChartSpec[];
  readonly accuracyNote: string;
  readonly training: readonly ChartSpec[];
}

/** Colour-blind-friendly (Okabe-Ito, then Tol) so several runs stay apart. */
export const RUN_COLORS = [
  '#0072b2',
  '#d55e00',
  '#009e73',
  '#cc79a7',
  '#e69f00',
  '#56b4e9',
  '#882255',
  '#44aa99',
];

export const LABEL_COLORS: Readonly<Record<Label, string>> = {
  pass: '#4daf4a',
  correct_abstention: '#a6d96a',
  invalid_tool_call: '#e41a1c',
  argument_mismatch: '#ff7f00',
  state_mismatch: '#984ea3',
  instance_mismatch: '#c2a5cf',
  recovery_failure: '#a65628',
  missing_tool_call: '#377eb8',
  spurious_tool_call: '#f781bf',
  response_mismatch: '#ffd92f',
  checker_error: '#999999',
  gt_error: '#666666',
};

const fmt = (x: number | undefined, digits = 2): string =>
  x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(digits);

export function clipText(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}… [${s.length - max} more characters]`;
}

const categoriesOf = (summaries: readonly Summary[]): Category[] =>
  CATEGORIES.filter((c) => summaries.some((s) => (s.categories[c]?.n ?? 0) > 0));

/** how many tasks a summary scored */
const taskCount = (s: Summary): number => CATEGORIES.reduce((n, c) => n + (s.categories[c]?.n ?? 0), 0);

/**
 * The two accuracy series of one run, kept apart because they score different tasks: the full
 * test split (eval-start at round 0, eval-final at the last completed round) and the strict
 * validations on a fixed subset (of the development split; of the test split in runs recorded
 * before it existed). Joined in one line, a category the validation subset hardly holds read as a
 * collapse that never happened, and the last validation hid under the final evaluation.
 */
export function accuracyPoints(run: LoadedRun): {
  readonly test: Map<number, Summary>;
  readonly validation: Map<number, Summary>;
} {
  const test = new Map<number, Summary>();
  if (run.evalStart) test.set(0, run.evalStart);
  // a run whose rounds were raised keeps the final evaluations of its earlier budgets
  for (const e of run.earlierFinals) test.set(e.round, e.summary);
  if (run.evalFinal) test.set(run.rounds.at(-1)?.round ?? 0, run.evalFinal);
  return { test, validation: new Map(run.validation.map((v) => [v.round, v.summary])) };
}

/** whether a series has anything to draw */
export const hasData = (values: readonly (number | null)[]): boolean =>
  values.some((v) => v !== null && Number.isFinite(v));

const union = (lists: readonly (readonly number[])[]): number[] =>
  [...new Set(lists.flat())].sort((a, b) => a - b);

/** "test, 400 tasks" or "validation, 40 dev tasks, seed 1": what a series scored */
function seriesSplit(which: 'test' | 'validation', run: LoadedRun, points: Map<number, Summary>): string {
  // the eval record's name, "validation (40 dev tasks, seed 1)", without its brackets
  const named = which === 'validation' ? /^validation \((.+)\)$/.exec(run.validationSplit ?? '') : null;
  if (named) return `validation, ${named[1]}`;
  const sizes = [...new Set([...points.values()].map(taskCount))];
  return `${which}, ${sizes.join(' / ')} tasks`;
}

function accuracyCharts(runs: readonly LoadedRun[], pages: readonly RunPage[]): ChartSpec[] {
  const points = runs.map(accuracyPoints);
  const x = union(points.flatMap((p) => [[...p.test.keys()], [...p.validation.keys()]]));
  const categories = categoriesOf(points.flatMap((p) => [...p.test.values(), ...p.validation.values()]));
  const panels: { key: 'average' | Category; title: string }[] = [
    { key: 'average', title: 'Average' },
    ...categories.map((c) => ({ key: c, title: CATEGORY_TITLES[c] })),
  ];
  const scoreOf = (s: Summary | undefined, key: 'average' | Category): number | null => {
    if (!s) return null;
    if (key === 'average') return s.average;
    const c = s.categories[key];
    return c && c.n > 0 ? c.accuracy : null;
  };
  return panels.map((panel) => ({
    id: `accuracy-${panel.key}`,
    title: panel.title,
    kind: 'line',
    yLabel: 'accuracy %',
    yRange: [0, 100],
    x,
    nodata: 'no evaluation yet: no eval-start, validation or eval-final in these runs',
    series: runs
      .flatMap((run, i) =>
        (['test', 'validation'] as const).map((which) => ({
          label: `${pages[i]!.name}: ${seriesSplit(which, run, points[i]![which])}`,
          color: pages[i]!.color,
          ...(which === 'validation' ? { dash: true } : {}),
          values: x.map((round) => scoreOf(points[i]![which].get(round), panel.key)),
        })),
      )
      .filter((s) => hasData(s.values)),
  }));
}

/**
 * The internalisation curve of a habit of not holding back: at each strict validation, the share of
 * turns with nothing to call (miss_param: a value is missing) answered without a call, one line a
 * run and category. Only rounds whose record counted them (runs before it did not) are drawn, and
 * no panel at all when none did.
 */
function abstentionCharts(runs: readonly LoadedRun[], pages: readonly RunPage[]): ChartSpec[] {
  const counted = runs.map(
    (run) =>
      new Map(
        run.rounds.flatMap((rd) => (rd.validation?.abstention ? [[rd.round, rd.validation.abstention]] : [])),
      ),
  );
  const x = union(counted.map((m) => [...m.keys()]));
  // runs recorded before the count have nothing to show: no panel rather than an empty one
  if (x.length === 0) return [];
  const categories = CATEGORIES.filter((c) => counted.some((m) => [...m.values()].some((a) => a[c])));
  const chart: ChartSpec = {
    id: 'accuracy-abstention',
    title:
      'Turns with nothing to call answered without a call, at strict validation (miss_param: asked for the missing value)',
    kind: 'line',
    yLabel: 'share',
    share: true,
    yRange: [0, 1],
    x,
    nodata: 'no validation counted them',
    series: runs
      .flatMap((_, i) =>
        categories.map((c, k) => ({
          label: `${pages[i]!.name} ${CATEGORY_TITLES[c]}`,
          color: pages[i]!.color,
          ...(k > 0 ? { dash: true } : {}),
          values: x.map((round) => {
            const a = counted[i]!.get(round)?.[c];
            return a && a.turns > 0 ? a.abstained / a.turns : null;
          }),
        })),
      )
      .filter((series) => hasData(series.values)),
  };
  return [chart];
}

function trainingCharts(runs: readonly LoadedRun[], pages: readonly RunPage[]): ChartSpec[] {
  const x = union(runs.map((r) => r.rounds.map((rd) => rd.round)));
  type Pick = (rd: LoadedRun['rounds'][number]) => number | undefined;
  const lines = (pick: Pick, suffix = '', dash = false): Series[] =>
    runs
      .map((run, i): Series => {
        const byRound = new Map(run.rounds.map((rd) => [rd.round, rd]));
        return {
          label: `${pages[i]!.name}${suffix}`,
          color: pages[i]!.color,
          ...(dash ? { dash: true } : {}),
          values: x.map((round) => {
            const rd = byRound.get(round);
            const v = rd ? pick(rd) : undefined;
            return v === undefined || !Number.isFinite(v) ? null : v;
          }),
        };
      })
      .filter((s) => hasData(s.values));
  const chart = (
    id: string,
    title: string,
    yLabel: string,
    series: Series[],
    share = false,
    nodata = 'no round recorded it',
  ): ChartSpec => ({
    id: `training-${id}`,
    title,
    kind: 'line',
    yLabel,
    ...(share ? { share: true, yRange: [0, 1] as const } : {}),
    x,
    series,
    nodata: x.length === 0 ? 'no completed round yet' : nodata,
  });
  // a learner that keeps running totals (a remote one) reports its KL prefills with its request
  // times; without them the record's 0 means "not counted", not "none spent"
  const reportsTotals = (rd: LoadedRun['rounds'][number]) => rd.usage?.requests !== undefined;
  // only for runs that recorded what they spent (older ones did not)
  const usageCharts = (): ChartSpec[] => [
    chart(
      'usage',
      'Tokens per round: prompt (solid); its shared prefix and what the service cached, sampled, trained and KL prefill (dashed)',
      'tokens',
      [
        ...lines((rd) => rd.usage?.promptTokens, ' prompt'),
        ...lines((rd) => rd.usage?.sharedPrefixTokens, ' shared prefix', true),
        ...lines((rd) => rd.usage?.cachedPromptTokens, ' cached (service)', true),
        ...lines((rd) => rd.usage?.sampledTokens, ' sampled', true),
        ...lines((rd) => rd.usage?.trainedTokens, ' trained', true),
        ...lines((rd) => (reportsTotals(rd) ? rd.usage?.klPrefillTokens : undefined), ' KL prefill', true),
      ],
    ),
    chart(
      'agreement',
      'Sampler against trainer: mean ratio pi/pi_old (solid), k3 KL(sampler || trainer) (dashed)',
      'ratio, KL',
      [...lines((rd) => rd.learner.meanRatio), ...lines((rd) => rd.learner.samplerKl, ' KL', true)],
      false,
      "no sampler/trainer comparison: no round recorded one (the ratio needs a round that trained on a token, the KL a learner that reports it, as Tinker's does)",
    ),
  ];
  return [
    chart(
      'reward',
      'Rollout reward (mean)',
      'reward',
      lines((rd) => rd.rollouts.meanReward),
      true,
    ),
    chart(
      'group-success',
      'Groups with a success',
      'share',
      lines((rd) => rd.rollouts.groupSuccess),
      true,
    ),
    chart('weights', 'w_j per round: mean (solid), min and max (dashed)', 'w_j', [
      ...lines((rd) => rd.weights.mean),
      ...lines((rd) => rd.weights.min, ' min', true),
      ...lines((rd) => rd.weights.max, ' max', true),
    ]),
    chart('advantages', 'mean |A| (solid) and mean |w A| (dashed)', '|A|', [
      ...lines((rd) => rd.advantages.meanAbs, ' |A|'),
      ...lines((rd) => rd.advantages.meanAbsWeighted, ' |w A|', true),
    ]),
    chart('loss', 'Learner loss (solid) and policy-gradient loss (dashed)', 'loss', [
      ...lines((rd) => rd.learner.loss),
      ...lines((rd) => rd.learner.pgLoss, ' pg', true),
    ]),
    chart(
      'tokens',
      'Completion tokens per rollout (mean)',
      'tokens',
      lines((rd) => rd.rollouts.meanCompletionTokens),
    ),
    chart(
      'kl',
      'KL to the reference policy (k3, token mean)',
      'KL',
      lines((rd) => rd.learner.kl),
    ),
    chart(
      'clip',
      'PPO clip fraction',
      'share',
      lines((rd) => rd.learner.clipFrac),
      true,
    ),
    ...(runs.some((run) => run.rounds.some((rd) => rd.usage)) ? usageCharts() : []),
    chart(
      'parse-errors',
      'Steps that did not parse',
      'share',
      lines((rd) => (rd.rollouts.steps > 0 ? rd.rollouts.parseErrors / rd.rollouts.steps : undefined)),
      true,
    ),
  ];
}

/**
 * A stacked bar per round. Series run from the top of the stack down: each bar is drawn up to its
 * running total, so the later (lower) ones cover the earlier ones' lower part.
 */
function stacked(
  id: string,
  title: string,
  yLabel: string,
  x: readonly number[],
  parts: readonly { label: string; color: string; values: readonly (number | null)[] }[],
  share: boolean,
  nodata: string,
): ChartSpec {
  // a part never above zero draws no bar, only a legend entry
  const drawn = parts.filter((p) => p.values.some((v) => v !== null && v > 0));
  const series: Series[] = drawn.map((p, pi) => ({
    label: p.label,
    color: p.color,
    values: x.map((_, xi) => drawn.slice(0, pi + 1).reduce((sum, q) => sum + (q.values[xi] ?? 0), 0)),
    own: p.values,
  }));
  return {
    id,
    title,
    kind: 'stacked',
    yLabel,
    ...(share ? { share: true, yRange: [0, 1] as const } : {}),
    x,
    series: series.reverse(),
    nodata: x.length === 0 ? 'no completed round yet' : nodata,
  };
}

function labelChart(run: LoadedRun, id: string): ChartSpec {
  const present = LABELS.filter((l) => run.rounds.some((r) => (r.labels[l] ?? 0) > 0));
  const totals = run.rounds.map((r) => present.reduce((s, l) => s + (r.labels[l] ?? 0), 0));
  return stacked(
    `labels-${id}`,
    'Diagnosis labels per round (share of user turns)',
    'share',
    run.rounds.map((r) => r.round),
    present.map((label) => ({
      label,
      color: LABEL_COLORS[label],
      values: run.rounds.map((r, i) => (totals[i]! > 0 ? (r.labels[label] ?? 0) / totals[i]! : 0)),
    })),
    true,
    'no diagnosis label recorded',
  );
}

const BIN_COLORS = ['#313695', '#4575b4', '#74add1', '#abd9e9', '#fee090', '#fdae61', '#f46d43', '#d73027'];

/** w_j histogram per round as shares of the round's rollouts; undefined when the record has none. */
function weightChart(run: LoadedRun, id: string): ChartSpec | undefined {
  const first = run.rounds.find((r) => r.weights.histogram)?.weights.histogram;
  if (!first) return undefined;
  const edges = first.edges;
  const same = (e: readonly number[] | undefined) =>
    !!e && e.length === edges.length && e.every((v, i) => v === edges[i]);
  const bins = edges.slice(1).map((hi, b) => ({
    label: `w ${fmt(edges[b])}–${fmt(hi)}`,
    color: BIN_COLORS[Math.floor((b * BIN_COLORS.length) / Math.max(1, edges.length - 1))]!,
    values: run.rounds.map((r) => {
      const h = r.weights.histogram;
      if (!h || !same(h.edges)) return null;
      const total = h.counts.reduce((s, c) => s + c, 0);
      return total > 0 ? (h.counts[b] ?? 0) / total : 0;
    }),
  }));
  return stacked(
    `weights-${id}`,
    'w_j distribution per round (share of rollouts per bin)',
    'share',
    run.rounds.map((r) => r.round),
    bins,
    true,
    'no w_j recorded',
  );
}

function timingChart(run: LoadedRun, id: string): ChartSpec {
  const parts = [
    ['sampling', 'samplingMs', '#0072b2'],
    ['environment + diagnosis', 'envMs', '#009e73'],
    ['learning', 'learnMs', '#d55e00'],
    ['validation', 'validationMs', '#999999'],
  ] as const;
  return stacked(
    `timings-${id}`,
    'Wall time per round (seconds)',
    's',
    run.rounds.map((r) => r.round),
    parts.map(([label, key, color]) => ({
      label,
      color,
      values: run.rounds.map((r) => {
        const ms = r.timings?.[key];
        return typeof ms === 'number' && Number.isFinite(ms) ? ms / 1000 : null;
      }),
    })),
    false,
    'no wall times recorded',
  );
}

function scoreTable(run: LoadedRun): ScoreTable {
  const summaries = [run.evalStart, run.evalFinal].filter((s): s is Summary => !!s);
  const categories = categoriesOf(summaries);
  const columns = ['', 'Average', ...categories.map((c) => CATEGORY_TITLES[c]), 'tasks'];
  const row = (label: string, s: Summary | undefined) => ({
    label,
    cells: s
      ? [
          fmt(s.average),
          ...categories.map((c) => (s.categories[c]?.n ? fmt(s.categories[c].accuracy) : '-')),
          String(CATEGORIES.reduce((n, c) => n + (s.categories[c]?.n ?? 0), 0)),
        ]
      : [
          `no ${label === 'start' ? 'eval-start' : 'eval-final'}/summary.json`,
          ...categories.map(() => ''),
          '',
        ],
  });
  const rows = [row('start', run.evalStart), row('final', run.evalFinal)];
  const { evalStart: a, evalFinal: b } = run;
  if (a && b) {
    const delta = (x: number, y: number) => `${y - x >= 0 ? '+' : ''}${(y - x).toFixed(2)}`;
    rows.push({
      label: 'change',
      cells: [
        delta(a.average, b.average),
        ...categories.map((c) => delta(a.categories[c]?.accuracy ?? 0, b.categories[c]?.accuracy ?? 0)),
        '',
      ],
    });
  }
  return { columns, rows };
}

function timeline(run: LoadedRun): Timeline {
  const rounds = run.rounds.map((r) => r.round);
  const cueRows: TimelineRow[] = CUE_GROUPS.map((g: CueGroup) => ({
    kind: 'cue',
    name: g,
    component: CUE_COMPONENT[g],
    cells: run.rounds.map((r) => {
      const cue = r.interface.cues?.[g];
      if (!cue?.active) return null;
      return cue.source === 'evolved' && cue.trigger
        ? `evolved (${cue.trigger}${cue.pressure !== null ? `, pressure ${fmt(cue.pressure, 3)}` : ''})`
        : (cue.source ?? 'active');
    }),
  }));
  const guidelineLabels = LABELS.filter((l) =>
    run.rounds.some((r) => (r.interface.guidelines ?? []).some((g) => g.label === l)),
  );
  const guidelineRows: TimelineRow[] = guidelineLabels.map((label) => ({
    kind: 'guideline',
    name: label,
    component: 'guidelines',
    cells: run.rounds.map((r) => {
      const g = (r.interface.guidelines ?? []).find((x) => x.label === label);
      return g
        ? `pressure ${fmt(g.pressure, 3)}, prevalence ${fmt(g.prevalence, 3)}, mean reward ${fmt(g.meanReward)}`
        : null;
    }),
  }));
  return {
    rounds,
    rows: [...cueRows, ...guidelineRows],
    changes: run.rounds.map((r) => r.nextInterface?.changes ?? []),
  };
}

/**
 * Which rollouts of a round the browser shows: successes and failures in equal parts where the
 * round has both (a failure-only sample would hide what worked), each part spread evenly over
 * the round's groups, then back in (group, sample) order.
 */
export function sampleRollouts<R extends { readonly reward: number }>(all: readonly R[], cap: number): R[] {
  if (all.length <= cap) return [...all];
  const spread = (xs: readonly R[], n: number) =>
    n >= xs.length ? [...xs] : Array.from({ length: n }, (_, i) => xs[Math.floor((i * xs.length) / n)]!);
  const wins = all.filter((r) => r.reward === 1);
  const losses = all.filter((r) => r.reward !== 1);
  const half = Math.ceil(cap / 2);
  const nWins = Math.min(wins.length, Math.max(half, cap - losses.length));
  const chosen = new Set([...spread(wins, nWins), ...spread(losses, cap - nWins)]);
  return all.filter((r) => chosen.has(r));
}

function rolloutView(r: RolloutRecord, max: number): RolloutView {
  return {
    taskId: r.taskId,
    category: r.category,
    group: r.group,
    sample: r.sample,
    reward: r.reward,
    weight: r.weight,
    advantage: r.advantage,
    weightedAdvantage: r.weightedAdvantage,
    completionTokens: r.completionTokens,
    labels: r.labels,
    forceQuit: r.trajectory.forceQuit,
    turns: turnViews(r.trajectory, r.labels, max),
  };
}

/** A trajectory's turns as the browser shows them, text cut after `max` characters. */
export function turnViews(trajectory: Trajectory, labels: readonly Label[], max: number): TurnView[] {
  // optional chaining below: a hand-edited or truncated trajectory should cost its details, not the report
  return trajectory.turns.map((t, i) => ({
    turn: t.turn,
    ...(Array.isArray(t.request)
      ? {
          request: t.request.map((m) => ({
            role: String(m?.role),
            content: clipText(String(m?.content), max),
          })),
        }
      : {}),
    ...(labels[i] ? { label: labels[i] } : {}),
    passed: t.check?.checked ? t.check.passed : null,
    ...(t.check?.failure ? { failure: t.check.failure } : {}),
    tools: t.availableTools?.length ?? 0,
    steps: (t.steps ?? []).map((s) => ({
      ...(typeof s.rawText === 'string' ? { rawText: clipText(s.rawText, max) } : {}),
      ...(typeof s.parseError === 'string' ? { parseError: clipText(s.parseError, max) } : {}),
      calls: (s.calls ?? []).map((c) => ({
        call: clipText(String(c.call), max),
        output: clipText(String(c.output), max),
        executionError: c.executionError === true,
        available: c.available !== false,
        issues: (c.argumentIssues ?? []).map((x) => clipText(`${x.kind} ${x.argument}: ${x.message}`, max)),
      })),
    })),
  }));
}

const minutes = (ms: number): string => `${(ms / 60_000).toFixed(1)} min`;

function finishedText(run: LoadedRun): string {
  const f = run.finished;
  if (!f) return 'not yet (running, stopped, or killed: seal train --resume continues it)';
  const evals = [
    f.evalStartMs === null
      ? 'start evaluation reused from the cache'
      : f.evalStartMs !== undefined
        ? `start evaluation ${minutes(f.evalStartMs)}`
        : '',
    f.evalFinalMs !== undefined ? `final evaluation ${minutes(f.evalFinalMs)}` : '',
    run.manifest.config?.evalFinal === false ? 'no final evaluation: --eval-final false' : '',
  ].filter(Boolean);
  return `${f.finished}${evals.length ? ` (${evals.join(', ')})` : ''}`;
}

function facts(run: LoadedRun): [string, string][] {
  const m = run.manifest;
  const done = run.rounds.length;
  return [
    [
      'method',
      // the control's record keeps its method's name; what it trained on is the point of the run
      m.config?.policyGradient === false
        ? `${m.method}, policy gradient off: the supervised anchor alone (the control)`
        : m.method,
    ],
    ['seed', String(m.seed)],
    ['suite', m.suite],
    ['rounds', `${done} of ${m.budget?.rounds ?? '?'} completed`],
    ...extensionFacts(run),
    [
      'budget',
      `${m.budget?.tasksPerRound} tasks x ${m.budget?.groupSize} rollouts per round, ${m.budget?.rollouts} rollouts in all`,
    ],
    [
      'sampling',
      `temperature ${m.sampling?.temperature}, top-p ${m.sampling?.topP}, max tokens ${m.sampling?.maxTokens}`,
    ],
    ...startingPoint(run),
    [
      'code',
      `${m.code?.version}${m.code?.git ? ` (git ${m.code.git}${m.code.dirty ? ', with uncommitted changes' : ''})` : ''}`,
    ],
    ...costFacts(run),
    ['started', m.started],
    ['last round finished', run.rounds.at(-1)?.finished ?? '-'],
    ['run finished', finishedText(run)],
    ['command', m.command],
    ['folder', run.dir],
  ];
}

/** each raise of the budget (`--resume --rounds N`), with the final evaluation of the budget before */
function extensionFacts(run: LoadedRun): [string, string][] {
  const exts = Array.isArray(run.manifest.extensions) ? run.manifest.extensions : [];
  return exts.map((e) => {
    const earlier = run.earlierFinals.find((f) => f.dir === e.evalFinal);
    const final = earlier
      ? `; the final evaluation of the ${e.fromRounds} rounds: average ${earlier.summary.average.toFixed(2)}, in ${earlier.dir}/`
      : '';
    return [
      'rounds raised',
      `from ${e.fromRounds} to ${e.toRounds} after round ${e.afterRound}, ${e.at}${e.finished ? ' (the run had finished)' : ''}${final}`,
    ];
  });
}

/** what the completed rounds spent, where the rounds recorded it */
function costFacts(run: LoadedRun): [string, string][] {
  const b = run.finished?.billing;
  const billed: [string, string][] = !b
    ? []
    : 'unavailable' in b
      ? [['billed', `not read from the service (${b.unavailable})`]]
      : [
          [
            'billed',
            `$${b.costUsd.toFixed(2)} by the service for the run's sessions, ${b.startingOn} to ${b.endingBefore}, as it stated when the run ended (${b.rows} usage rows${b.unpriced > 0 ? `, ${b.unpriced} not priced yet` : ''}; its data lags by hours)`,
          ],
        ];
  const used = run.rounds.flatMap((rd) => (rd.usage ? [rd.usage] : []));
  if (used.length === 0) return billed;
  const sum = (pick: (u: (typeof used)[number]) => number) => used.reduce((n, u) => n + pick(u), 0);
  const priced = used.filter((u) => u.estimatedCostUsd !== undefined);
  const cost =
    priced.length > 0
      ? `; about $${sum((u) => u.estimatedCostUsd ?? 0).toFixed(2)} at the prices the config gives${priced.length < used.length ? ` (${priced.length} of ${used.length} rounds priced)` : ''}`
      : '';
  return [
    [
      'tokens',
      `${sum((u) => u.promptTokens)} prompt (${sum((u) => u.sharedPrefixTokens)} a shared prefix${used.some((u) => u.cachedPromptTokens !== undefined) ? `, ${sum((u) => u.cachedPromptTokens ?? 0)} served from the service's cache` : ''}), ${sum((u) => u.sampledTokens)} sampled, ${sum((u) => u.trainedTokens)} trained (${sum((u) => u.trainReadTokens)} read by the passes)${used.some((u) => u.requests !== undefined) ? `, ${sum((u) => u.klPrefillTokens)} KL prefill` : ''}${cost}`,
    ],
    ...billed,
  ];
}

/** what a run started from: the embedded base's weights, or a Tinker run's model and last checkpoint */
function startingPoint(run: LoadedRun): [string, string][] {
  const m = run.manifest;
  if (m.learner?.kind !== 'tinker')
    return [['base checkpoint', `${m.base?.checkpoint} (weights sha256 ${m.base?.modelSha256})`]];
  const ck = run.tinkerCheckpoint;
  return [
    ['base model', `${m.learner.baseModel}, LoRA rank ${m.learner.loraRank}, on ${m.learner.service}`],
    [
      'checkpoint',
      ck ? `${ck.round}: training state ${ck.state}, sampler weights ${ck.sampler}` : 'none yet',
    ],
  ];
}

function notes(run: LoadedRun): string[] {
  const out: string[] = [];
  if (run.droppedRoundLines > 0)
    out.push(
      `${run.droppedRoundLines} line(s) of rounds.jsonl could not be read (a run killed mid-write leaves a torn last line); the report shows the ${run.rounds.length} completed round(s).`,
    );
  if (run.unfinishedRound !== undefined)
    out.push(
      `Round ${run.unfinishedRound} has rollouts but no round record: it was interrupted (or is still running) and is left out.`,
    );
  if (!run.evalFinal)
    out.push(
      run.manifest.config?.evalFinal === false
        ? 'No final evaluation: the run was started with --eval-final false.'
        : 'No eval-final/: the run has not finished its final evaluation.',
    );
  for (const r of run.rollouts)
    if (r.dropped > 0) out.push(`Round ${r.round}: ${r.dropped} rollout line(s) could not be read.`);
  return out;
}

export function buildPage(
  runs: readonly LoadedRun[],
  options: ReportOptions = DEFAULT_REPORT_OPTIONS,
  now: Date = new Date(),
): PageData {
  // Two runs of the same folder name (e.g. .../seal/run and .../vanilla/run) need telling apart.
  const names = runs.map((r) => r.name);
  const pages: RunPage[] = runs.map((run, i) => {
    const id = `run${i + 1}`;
    const perRound = Math.max(
      2,
      Math.min(options.rolloutsPerRound, Math.floor(options.rolloutsPerRun / Math.max(1, run.rounds.length))),
    );
    const browser = run.rollouts.map((r) => ({
      round: r.round,
      total: r.rollouts.length,
      shown: sampleRollouts(r.rollouts, perRound).map((x) => rolloutView(x, options.maxTextChars)),
    }));
    const name = names.filter((n) => n === run.name).length > 1 ? `${run.name} (${i + 1})` : run.name;
    return {
      id,
      name,
      dir: run.dir,
      color: RUN_COLORS[i % RUN_COLORS.length]!,
      facts: facts(run),
      overrides: Object.entries(run.manifest.overrides ?? {}).map(
        ([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)] as const,
      ),
      notes: notes(run),
      scores: scoreTable(run),
      charts: [labelChart(run, id), weightChart(run, id), timingChart(run, id)].filter(
        (c): c is ChartSpec => c !== undefined,
      ),
      timeline: timeline(run),
      browserNote:
        `Up to ${perRound} rollouts per round (of ${run.manifest.budget?.tasksPerRound * run.manifest.budget?.groupSize || '?'}): ` +
        'successes and failures in equal parts where both occur, spread evenly over the groups. ' +
        `Model text and tool outputs are cut after ${options.maxTextChars} characters; token ids and logprobs are left out.`,
      browser,
    };
  });
  const multi = runs.length > 1;
  return {
    title: multi
      ? `seal report: ${pages.map((p) => p.name).join(', ')}`
      : `seal report: ${pages[0]?.name ?? ''}`,
    generated: now.toISOString(),
    runs: pages,
    evaluations: [],
    accuracy: [...accuracyCharts(runs, pages), ...abstentionCharts(runs, pages)],
    accuracyNote:
      'Strict protocol (no training interface). Each run has two series, each named with its split and size: ' +
      'the test split in full (solid: eval-start at round 0, eval-final at the last round) and the validations on a fixed subset ' +
      'of the development split (dashed; runs recorded before it existed: of the test split), which are noisier and score other tasks, so the two are not one curve.',
    training: trainingCharts(runs, pages),
  };
}
