/**
 * Failure profile C_t (docs/method.md, section 4): what the current policy gets wrong, aggregated
 * per label, per task category and per turn position, for the current window and in total.
 * The interface evolution and the dynamic label weights read its snapshots.
 */
import type { Category } from '../envs/bfcl/data/tasks.js';
import { FAILURE_PRIORITY, isLabel, LABELS, type Label, type TurnPosition, turnPosition } from './labels.js';

/** What one rollout contributes to the profile. */
export interface ProfileObservation {
  readonly taskId: string;
  readonly category: Category;
  /** 0 or 1 (the verifier's reward) */
  readonly reward: number;
  /** one label per user turn, in turn order */
  readonly labels: readonly Label[];
}

export interface LabelStats {
  /** turns with this label */
  readonly count: number;
  /** count / all labelled turns in the same scope */
  readonly prevalence: number;
  /** mean reward of the rollouts in which the label occurred (each rollout counted once) */
  readonly meanReward: number;
  /** rollouts in which the label occurred */
  readonly rollouts: number;
}

export type LabelTable = Readonly<Partial<Record<Label, LabelStats>>>;

export interface ProfileScope {
  readonly turns: number;
  readonly rollouts: number;
  readonly meanReward: number;
  readonly labels: LabelTable;
}

export interface ProfileSnapshot {
  readonly version: 1;
  /** the current window (e.g. one training round) */
  readonly window: ProfileView;
  /** everything observed since creation */
  readonly total: ProfileView;
}

export interface ProfileView {
  readonly overall: ProfileScope;
  readonly byCategory: Readonly<Partial<Record<Category, ProfileScope>>>;
  readonly byPosition: Readonly<Partial<Record<TurnPosition, ProfileScope>>>;
  /** per task: the dominant label (see `dominantLabel`) of its last rollout that had labels */
  readonly lastDominantByTask: Readonly<Record<string, Label>>;
}

/**
 * The dominance order behind `lastDominantByTask`: the failure priority of the diagnosis first
 * (directly executable failures before downstream verifier ones), then `spurious_tool_call`
 * (a policy failure that never shares a turn with those, so it has no rank among them), then
 * the excluded labels (the rollout's verdict is not the policy's doing, which matters more than
 * its successes), then the successes, the more specific `correct_abstention` before `pass`.
 * Labels added to `LABELS` later and missing here fall in at the end, in `LABELS` order.
 */
export const DOMINANCE_ORDER: readonly Label[] = (() => {
  const head: Label[] = [
    ...FAILURE_PRIORITY,
    'spurious_tool_call',
    'checker_error',
    'gt_error',
    'correct_abstention',
    'pass',
  ];
  const order = head.filter((label, i) => head.indexOf(label) === i);
  return [...order, ...LABELS.filter((label) => !order.includes(label))];
})();

/**
 * The dominant label of one rollout: of the labels present, the first in `DOMINANCE_ORDER`
 * (so `[pass, argument_mismatch, invalid_tool_call]` gives `invalid_tool_call` whatever the turn
 * order); undefined for a rollout without labels.
 */
export function dominantLabel(labels: readonly Label[]): Label | undefined {
  let best: Label | undefined;
  let bestRank = Number.POSITIVE_INFINITY;
  for (const label of labels) {
    const rank = DOMINANCE_ORDER.indexOf(label);
    if (rank < bestRank) {
      best = label;
      bestRank = rank;
    }
  }
  return best;
}

/**
 * How much a label is holding the policy back: frequent labels on rollouts that still fail score
 * high. The interface evolution ranks guidelines by it and the dynamic weights grow with it.
 */
export function labelPressure(stats: Pick<LabelStats, 'prevalence' | 'meanReward'>): number {
  return stats.prevalence * (1 - stats.meanReward);
}

// Serialised state. Only raw sums are stored, never derived ratios, so that a restored profile
// continues bit for bit: a ratio cannot be turned back into the sums it came from.

export interface LabelCounters {
  /** turns with this label */
  readonly count: number;
  /** rollouts in which the label occurred */
  readonly rollouts: number;
  /** sum of the rewards of those rollouts */
  readonly rewardSum: number;
}

export interface ScopeCounters {
  readonly turns: number;
  readonly rollouts: number;
  readonly rewardSum: number;
  readonly labels: Readonly<Partial<Record<Label, LabelCounters>>>;
}

export interface ViewCounters {
  readonly overall: ScopeCounters;
  readonly byCategory: Readonly<Partial<Record<Category, ScopeCounters>>>;
  readonly byPosition: Readonly<Partial<Record<TurnPosition, ScopeCounters>>>;
  readonly lastDominantByTask: Readonly<Record<string, Label>>;
}

/** What `FailureProfile.toJSON()` returns and `FailureProfile.fromJSON()` reads. */
export interface FailureProfileJSON {
  readonly version: 1;
  readonly window: ViewCounters;
  readonly total: ViewCounters;
}

// `seal/*` may import only types from `envs`, so the category list is restated here; the
// Record type makes the compiler reject it as soon as `Category` gains or loses a member.
const CATEGORY_KEYS: Readonly<Record<Category, true>> = {
  base: true,
  miss_func: true,
  miss_param: true,
  long_context: true,
};
const CATEGORY_ORDER = Object.keys(CATEGORY_KEYS) as Category[];
const POSITION_ORDER: readonly TurnPosition[] = ['early', 'middle', 'late'];

interface MutableLabelCounters {
  count: number;
  rollouts: number;
  rewardSum: number;
}

interface MutableScope {
  turns: number;
  rollouts: number;
  rewardSum: number;
  labels: Map<Label, MutableLabelCounters>;
}

interface MutableView {
  overall: MutableScope;
  byCategory: Map<Category, MutableScope>;
  byPosition: Map<TurnPosition, MutableScope>;
  lastDominantByTask: Map<string, Label>;
}

function emptyScope(): MutableScope {
  return { turns: 0, rollouts: 0, rewardSum: 0, labels: new Map() };
}

function emptyView(): MutableView {
  return {
    overall: emptyScope(),
    byCategory: new Map(),
    byPosition: new Map(),
    lastDominantByTask: new Map(),
  };
}

function scopeOf<K>(scopes: Map<K, MutableScope>, key: K): MutableScope {
  let scope = scopes.get(key);
  if (!scope) {
    scope = emptyScope();
    scopes.set(key, scope);
  }
  return scope;
}

/** One rollout's turns (all of them, or those of one position) enter one scope. */
function addToScope(scope: MutableScope, labels: readonly Label[], reward: number): void {
  scope.turns += labels.length;
  scope.rollouts += 1;
  scope.rewardSum += reward;
  const seen = new Set<Label>();
  for (const label of labels) {
    let counters = scope.labels.get(label);
    if (!counters) {
      counters = { count: 0, rollouts: 0, rewardSum: 0 };
      scope.labels.set(label, counters);
    }
    counters.count += 1;
    if (!seen.has(label)) {
      seen.add(label);
      counters.rollouts += 1;
      counters.rewardSum += reward;
    }
  }
}

function addToView(view: MutableView, obs: ProfileObservation): void {
  const { labels, reward } = obs;
  addToScope(view.overall, labels, reward);
  addToScope(scopeOf(view.byCategory, obs.category), labels, reward);
  const byPosition = new Map<TurnPosition, Label[]>();
  labels.forEach((label, turn) => {
    const position = turnPosition(turn, labels.length);
    const bucket = byPosition.get(position);
    if (bucket) bucket.push(label);
    else byPosition.set(position, [label]);
  });
  for (const position of POSITION_ORDER) {
    const bucket = byPosition.get(position);
    if (bucket) addToScope(scopeOf(view.byPosition, position), bucket, reward);
  }
  // A rollout without labels says nothing about the task, so the earlier verdict stands.
  const dominant = dominantLabel(labels);
  if (dominant !== undefined) view.lastDominantByTask.set(obs.taskId, dominant);
}

function meanOrZero(sum: number, n: number): number {
  return n > 0 ? sum / n : 0;
}

function scopeStats(scope: MutableScope): ProfileScope {
  const labels: Partial<Record<Label, LabelStats>> = {};
  for (const label of LABELS) {
    const counters = scope.labels.get(label);
    if (!counters || counters.count === 0) continue;
    labels[label] = {
      count: counters.count,
      prevalence: counters.count / scope.turns,
      meanReward: meanOrZero(counters.rewardSum, counters.rollouts),
      rollouts: counters.rollouts,
    };
  }
  return {
    turns: scope.turns,
    rollouts: scope.rollouts,
    meanReward: meanOrZero(scope.rewardSum, scope.rollouts),
    labels,
  };
}

function sortedTaskIds(tasks: Map<string, Label>): string[] {
  // Code-unit order, not localeCompare: the snapshot must not depend on the machine's locale.
  return [...tasks.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function viewStats(view: MutableView): ProfileView {
  const byCategory: Partial<Record<Category, ProfileScope>> = {};
  for (const category of CATEGORY_ORDER) {
    const scope = view.byCategory.get(category);
    if (scope) byCategory[category] = scopeStats(scope);
  }
  const byPosition: Partial<Record<TurnPosition, ProfileScope>> = {};
  for (const position of POSITION_ORDER) {
    const scope = view.byPosition.get(position);
    if (scope) byPosition[position] = scopeStats(scope);
  }
  // fromEntries defines own properties, so a task id such as "__proto__" stays plain data.
  const lastDominantByTask: Record<string, Label> = Object.fromEntries(
    sortedTaskIds(view.lastDominantByTask).map((id) => [id, view.lastDominantByTask.get(id)!]),
  );
  return { overall: scopeStats(view.overall), byCategory, byPosition, lastDominantByTask };
}

function scopeCounters(scope: MutableScope): ScopeCounters {
  const labels: Partial<Record<Label, LabelCounters>> = {};
  for (const label of LABELS) {
    const counters = scope.labels.get(label);
    if (counters) labels[label] = { ...counters };
  }
  return { turns: scope.turns, rollouts: scope.rollouts, rewardSum: scope.rewardSum, labels };
}

function viewCounters(view: MutableView): ViewCounters {
  const byCategory: Partial<Record<Category, ScopeCounters>> = {};
  for (const category of CATEGORY_ORDER) {
    const scope = view.byCategory.get(category);
    if (scope) byCategory[category] = scopeCounters(scope);
  }
  const byPosition: Partial<Record<TurnPosition, ScopeCounters>> = {};
  for (const position of POSITION_ORDER) {
    const scope = view.byPosition.get(position);
    if (scope) byPosition[position] = scopeCounters(scope);
  }
  const lastDominantByTask: Record<string, Label> = Object.fromEntries(
    sortedTaskIds(view.lastDominantByTask).map((id) => [id, view.lastDominantByTask.get(id)!]),
  );
  return { overall: scopeCounters(view.overall), byCategory, byPosition, lastDominantByTask };
}

// Reading a saved profile back: a corrupt file must fail loudly with the path of the bad
// field, never yield a profile that silently computes wrong ratios.

export class ProfileFormatError extends Error {
  override name = 'ProfileFormatError';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readRecord(value: unknown, path: string): Record<string, unknown> {
  if (!isRecord(value)) throw new ProfileFormatError(`${path}: expected an object`);
  return value;
}

function readCount(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ProfileFormatError(`${path}: expected a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return value;
}

function readSum(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new ProfileFormatError(`${path}: expected a finite number, got ${JSON.stringify(value)}`);
  }
  return value;
}

function readLabel(value: unknown, path: string): Label {
  if (typeof value !== 'string' || !isLabel(value)) {
    throw new ProfileFormatError(`${path}: unknown label ${JSON.stringify(value)}`);
  }
  return value;
}

function readScope(raw: unknown, path: string): MutableScope {
  const record = readRecord(raw, path);
  const scope: MutableScope = {
    turns: readCount(record.turns, `${path}.turns`),
    rollouts: readCount(record.rollouts, `${path}.rollouts`),
    rewardSum: readSum(record.rewardSum, `${path}.rewardSum`),
    labels: new Map(),
  };
  for (const [key, value] of Object.entries(readRecord(record.labels, `${path}.labels`))) {
    const label = readLabel(key, `${path}.labels`);
    const counters = readRecord(value, `${path}.labels.${key}`);
    scope.labels.set(label, {
      count: readCount(counters.count, `${path}.labels.${key}.count`),
      rollouts: readCount(counters.rollouts, `${path}.labels.${key}.rollouts`),
      rewardSum: readSum(counters.rewardSum, `${path}.labels.${key}.rewardSum`),
    });
  }
  return scope;
}

function readKeyedScopes<K extends string>(
  raw: unknown,
  keys: readonly K[],
  path: string,
): Map<K, MutableScope> {
  const scopes = new Map<K, MutableScope>();
  for (const [key, value] of Object.entries(readRecord(raw, path))) {
    if (!(keys as readonly string[]).includes(key)) {
      throw new ProfileFormatError(`${path}: unknown key ${JSON.stringify(key)}`);
    }
    scopes.set(key as K, readScope(value, `${path}.${key}`));
  }
  return scopes;
}

function readView(raw: unknown, path: string): MutableView {
  const record = readRecord(raw, path);
  const lastDominantByTask = new Map<string, Label>();
  for (const [taskId, label] of Object.entries(
    readRecord(record.lastDominantByTask, `${path}.lastDominantByTask`),
  )) {
    lastDominantByTask.set(taskId, readLabel(label, `${path}.lastDominantByTask.${taskId}`));
  }
  return {
    overall: readScope(record.overall, `${path}.overall`),
    byCategory: readKeyedScopes(record.byCategory, CATEGORY_ORDER, `${path}.byCategory`),
    byPosition: readKeyedScopes(record.byPosition, POSITION_ORDER, `${path}.byPosition`),
    lastDominantByTask,
  };
}

function checkObservation(obs: ProfileObservation): void {
  if (typeof obs.taskId !== 'string') throw new TypeError('observation.taskId must be a string');
  if (!(CATEGORY_ORDER as readonly string[]).includes(obs.category)) {
    throw new TypeError(`observation ${obs.taskId}: unknown category ${JSON.stringify(obs.category)}`);
  }
  if (typeof obs.reward !== 'number' || !Number.isFinite(obs.reward)) {
    throw new TypeError(`observation ${obs.taskId}: reward must be a finite number, got ${obs.reward}`);
  }
  obs.labels.forEach((label, turn) => {
    if (!isLabel(label)) {
      throw new TypeError(
        `observation ${obs.taskId}: turn ${turn} has unknown label ${JSON.stringify(label)}`,
      );
    }
  });
}

/**
 * The failure profile C_t: every observed rollout enters both the window (one training round,
 * emptied by `resetWindow`) and the running total.
 *
 * Per scope (overall, per category, per turn position) and label: `count` = turns with the
 * label, `prevalence` = count / all labelled turns of the scope, `meanReward` = mean reward of
 * the rollouts in which the label occurred (a rollout counts once however many of its turns
 * carry the label), `rollouts` = those rollouts. Within a position scope only the turns at that
 * position count, and a rollout belongs to the scope when at least one of its turns does.
 *
 * `checker_error` and `gt_error` are counted like every other label, in their own count and in
 * the denominators of all prevalences: the profile reports what happened, and those labels are
 * rare. They are left out where it matters, when the weights are computed (`seal/weighting`).
 *
 * Ratios with an empty denominator (a scope without rollouts) are 0, so a snapshot is always
 * valid JSON.
 */
export class FailureProfile {
  private window: MutableView = emptyView();
  private total: MutableView = emptyView();

  observe(obs: ProfileObservation): void {
    checkObservation(obs);
    addToView(this.window, obs);
    addToView(this.total, obs);
  }

  resetWindow(): void {
    this.window = emptyView();
  }

  snapshot(): ProfileSnapshot {
    return { version: 1, window: viewStats(this.window), total: viewStats(this.total) };
  }

  toJSON(): FailureProfileJSON {
    return { version: 1, window: viewCounters(this.window), total: viewCounters(this.total) };
  }

  /** Restores a profile from `toJSON()` output (after a JSON round trip); throws on bad data. */
  static fromJSON(json: unknown): FailureProfile {
    const record = readRecord(json, 'profile');
    if (record.version !== 1) {
      throw new ProfileFormatError(`profile.version: expected 1, got ${JSON.stringify(record.version)}`);
    }
    const profile = new FailureProfile();
    profile.window = readView(record.window, 'profile.window');
    profile.total = readView(record.total, 'profile.total');
    return profile;
  }
}
