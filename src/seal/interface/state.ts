/**
 * The interface state Omega_t and its evolution (docs/method.md, section 5: Interface evolution).
 *
 * The state is plain JSON so that every round's interface can be written to the run record and
 * read back on resume. It says which components are switched on, which cue groups and which
 * capability guidelines are active, and why: the failure label whose pressure activated them and
 * the round they first appeared in. Evolution reads only the aggregate failure profile, so a cue
 * is chosen by failure type and never by task instance.
 */
import { INTERFACE_MODES, type InterfaceMode } from '../../util/fragments.js';
import { isLabel, type Label, POLICY_FAILURES } from '../labels.js';
import type { LabelStats, ProfileScope, ProfileSnapshot } from '../profile.js';

export const INTERFACE_STATE_VERSION = 1;

export const COMPONENTS = ['schemaCues', 'errorFeedback', 'guidelines'] as const;
export type InterfaceComponent = (typeof COMPONENTS)[number];

/**
 * `auto`: evolution decides (the schema's always-on groups are shown from the start);
 * `on`: every cue group of the component is shown from round 0 (for guidelines, which need a
 * profile to pick labels, `on` equals `auto`); `off`: nothing of the component is ever shown.
 */
export type ComponentMode = InterfaceMode;
const MODES: readonly ComponentMode[] = INTERFACE_MODES;

export const CUE_GROUPS = [
  'requiredMarks',
  'allowedValues',
  'types',
  'instruction',
  'affordance',
  'errorHints',
  'formatHelp',
] as const;
export type CueGroup = (typeof CUE_GROUPS)[number];

/**
 * Affordance cues sit with the schema cues: they are about what the listed tools afford, and the
 * method has three switchable components, not four.
 */
export const CUE_COMPONENT: Readonly<Record<CueGroup, InterfaceComponent>> = {
  requiredMarks: 'schemaCues',
  allowedValues: 'schemaCues',
  types: 'schemaCues',
  instruction: 'schemaCues',
  affordance: 'schemaCues',
  errorHints: 'errorFeedback',
  formatHelp: 'errorFeedback',
};

/**
 * Which failure labels switch a cue group on (docs/method.md, section 5). The instruction line also
 * answers `invalid_tool_call`, because half of it is "never invent a tool".
 */
export const DEFAULT_CUE_TRIGGERS: Readonly<Record<CueGroup, readonly Label[]>> = {
  requiredMarks: ['argument_mismatch'],
  allowedValues: ['argument_mismatch'],
  types: ['argument_mismatch'],
  instruction: ['argument_mismatch', 'invalid_tool_call'],
  affordance: ['missing_tool_call'],
  errorHints: ['recovery_failure'],
  formatHelp: ['invalid_tool_call'],
};

/** The paper's always-on part: schema annotation with required marks and allowed values. */
export const DEFAULT_ALWAYS_ON: readonly CueGroup[] = ['requiredMarks', 'allowedValues'];

/** Labels that have a capability guideline: the policy's own failures, in their order. */
export const GUIDELINE_LABELS: readonly Label[] = POLICY_FAILURES;

/** When a label counts as a current weakness of the policy. */
export interface ActivationThresholds {
  readonly minPrevalence: number;
  /** the label qualifies only while the mean reward where it occurs is below this */
  readonly maxMeanReward: number;
  readonly minCount: number;
}

export interface InterfaceConfig {
  readonly components?: Partial<Record<InterfaceComponent, ComponentMode>>;
  readonly alwaysOn?: readonly CueGroup[];
  readonly triggers?: Partial<Record<CueGroup, readonly Label[]>>;
  /** to switch something on (defaults: prevalence >= 0.10, mean reward < 0.6, count >= 8) */
  readonly activation?: Partial<ActivationThresholds>;
  /**
   * Hysteresis: what already-active cues and guidelines need to stay on (defaults: prevalence >=
   * 0.05, mean reward < 0.7, count >= 4). Without it a label hovering at a threshold would flip
   * the interface every round; set it equal to `activation` to turn hysteresis off.
   */
  readonly retention?: Partial<ActivationThresholds>;
  readonly maxGuidelines?: number;
  /** which part of the profile evolution reads */
  readonly profileScope?: 'window' | 'total';
}

export interface ResolvedInterfaceConfig {
  readonly components: Readonly<Record<InterfaceComponent, ComponentMode>>;
  readonly alwaysOn: readonly CueGroup[];
  readonly triggers: Readonly<Record<CueGroup, readonly Label[]>>;
  readonly activation: ActivationThresholds;
  readonly retention: ActivationThresholds;
  readonly maxGuidelines: number;
  readonly profileScope: 'window' | 'total';
}

export const DEFAULT_ACTIVATION: ActivationThresholds = {
  minPrevalence: 0.1,
  maxMeanReward: 0.6,
  minCount: 8,
};
export const DEFAULT_RETENTION: ActivationThresholds = {
  minPrevalence: 0.05,
  maxMeanReward: 0.7,
  minCount: 4,
};

export class InterfaceConfigError extends Error {
  override readonly name = 'InterfaceConfigError';
}

function thresholds(where: string, base: ActivationThresholds, over?: Partial<ActivationThresholds>) {
  const t = { ...base, ...over };
  if (!(t.minPrevalence >= 0 && t.minPrevalence <= 1))
    throw new InterfaceConfigError(`${where}.minPrevalence must be in [0, 1], got ${t.minPrevalence}`);
  if (!(t.maxMeanReward >= 0 && t.maxMeanReward <= 1))
    throw new InterfaceConfigError(`${where}.maxMeanReward must be in [0, 1], got ${t.maxMeanReward}`);
  if (!(Number.isInteger(t.minCount) && t.minCount >= 0))
    throw new InterfaceConfigError(`${where}.minCount must be a non-negative integer, got ${t.minCount}`);
  return t;
}

/** Fills defaults and rejects values that would make evolution meaningless, with a clear message. */
export function resolveInterfaceConfig(config: InterfaceConfig = {}): ResolvedInterfaceConfig {
  const given = Object.entries(config.components ?? {}).filter(([, v]) => v !== undefined);
  const components = {
    schemaCues: 'auto',
    errorFeedback: 'auto',
    guidelines: 'auto',
    ...Object.fromEntries(given),
  };
  for (const [k, v] of Object.entries(components)) {
    if (!(COMPONENTS as readonly string[]).includes(k))
      throw new InterfaceConfigError(`unknown interface component '${k}' (known: ${COMPONENTS.join(', ')})`);
    if (!MODES.includes(v as ComponentMode))
      throw new InterfaceConfigError(`component ${k} must be one of ${MODES.join(', ')}, got '${String(v)}'`);
  }
  const alwaysOn = [...(config.alwaysOn ?? DEFAULT_ALWAYS_ON)];
  for (const g of alwaysOn)
    if (!(CUE_GROUPS as readonly string[]).includes(g))
      throw new InterfaceConfigError(
        `unknown cue group '${g}' in alwaysOn (known: ${CUE_GROUPS.join(', ')})`,
      );
  const triggers = { ...DEFAULT_CUE_TRIGGERS, ...config.triggers };
  for (const [g, labels] of Object.entries(triggers)) {
    if (!(CUE_GROUPS as readonly string[]).includes(g))
      throw new InterfaceConfigError(
        `unknown cue group '${g}' in triggers (known: ${CUE_GROUPS.join(', ')})`,
      );
    for (const l of labels ?? [])
      if (!isLabel(l)) throw new InterfaceConfigError(`unknown label '${l}' in triggers.${g}`);
  }
  const activation = thresholds('activation', DEFAULT_ACTIVATION, config.activation);
  const retention = thresholds('retention', DEFAULT_RETENTION, config.retention);
  if (
    retention.minPrevalence > activation.minPrevalence ||
    retention.maxMeanReward < activation.maxMeanReward ||
    retention.minCount > activation.minCount
  )
    throw new InterfaceConfigError(
      'retention thresholds must be no stricter than activation thresholds: hysteresis may make staying on ' +
        'easier than switching on, never harder',
    );
  const maxGuidelines = config.maxGuidelines ?? 3;
  if (!(Number.isInteger(maxGuidelines) && maxGuidelines >= 0))
    throw new InterfaceConfigError(`maxGuidelines must be a non-negative integer, got ${maxGuidelines}`);
  const profileScope = config.profileScope ?? 'window';
  if (profileScope !== 'window' && profileScope !== 'total')
    throw new InterfaceConfigError(`profileScope must be 'window' or 'total', got '${String(profileScope)}'`);
  return {
    components: components as Record<InterfaceComponent, ComponentMode>,
    alwaysOn,
    triggers: triggers as Record<CueGroup, readonly Label[]>,
    activation,
    retention,
    maxGuidelines,
    profileScope,
  };
}

/** Why a cue group is (or is not) shown. */
export interface CueStatus {
  readonly active: boolean;
  /** base: always-on part; forced: its component is switched `on`; evolved: a failure label activated it */
  readonly source: 'base' | 'forced' | 'evolved' | null;
  /** the label that activated an evolved cue (the highest-pressure one among its triggers) */
  readonly trigger: Label | null;
  readonly pressure: number | null;
  /** the first round the cue is shown in, counting from 0 */
  readonly activatedRound: number | null;
}

export interface ActiveGuideline {
  readonly label: Label;
  /** prevalence x (1 - mean reward), the ranking key */
  readonly pressure: number;
  readonly prevalence: number;
  readonly meanReward: number;
  readonly count: number;
  readonly activatedRound: number;
}

export interface InterfaceState {
  readonly version: typeof INTERFACE_STATE_VERSION;
  /** rounds of evolution so far: the interface shown during training round `round` */
  readonly round: number;
  readonly components: Readonly<Record<InterfaceComponent, ComponentMode>>;
  readonly cues: Readonly<Record<CueGroup, CueStatus>>;
  /** highest pressure first */
  readonly guidelines: readonly ActiveGuideline[];
  /** what the step that produced this state switched on and off, one line each */
  readonly changes: readonly string[];
  /** one line for logs */
  readonly summary: string;
}

const INACTIVE: CueStatus = {
  active: false,
  source: null,
  trigger: null,
  pressure: null,
  activatedRound: null,
};

export function componentEnabled(state: InterfaceState, c: InterfaceComponent): boolean {
  return state.components[c] !== 'off';
}

/** Whether a cue group is shown: active, and its component not switched off. */
export function cueActive(state: InterfaceState, g: CueGroup): boolean {
  return state.cues[g].active && componentEnabled(state, CUE_COMPONENT[g]);
}

/** The interface before any profile exists: the config's forced and always-on cues, no guidelines. */
export function initialInterfaceState(config: InterfaceConfig = {}): InterfaceState {
  const cfg = resolveInterfaceConfig(config);
  const cues = Object.fromEntries(
    CUE_GROUPS.map((g): [CueGroup, CueStatus] => [g, fixedCue(cfg, g, undefined, 0) ?? INACTIVE]),
  ) as Record<CueGroup, CueStatus>;
  return finish({
    version: INTERFACE_STATE_VERSION,
    round: 0,
    components: { ...cfg.components },
    cues,
    guidelines: [],
    changes: CUE_GROUPS.filter((g) => cues[g].active).map((g) => `+${g} (${cues[g].source})`),
  });
}

/** A cue the config decides regardless of the profile: off, forced on, or always on. */
function fixedCue(
  cfg: ResolvedInterfaceConfig,
  g: CueGroup,
  prev: CueStatus | undefined,
  round: number,
): CueStatus | undefined {
  const mode = cfg.components[CUE_COMPONENT[g]];
  if (mode === 'off') return INACTIVE;
  const source = mode === 'on' ? 'forced' : cfg.alwaysOn.includes(g) ? 'base' : undefined;
  if (!source) return undefined;
  const activatedRound = prev?.active ? (prev.activatedRound ?? round) : round;
  return { active: true, source, trigger: null, pressure: null, activatedRound };
}

interface Weakness {
  readonly label: Label;
  readonly stats: LabelStats;
  readonly pressure: number;
}

function weakness(scope: ProfileScope, label: Label): Weakness | undefined {
  const stats = scope.labels[label];
  if (!stats || !Number.isFinite(stats.prevalence) || !Number.isFinite(stats.meanReward)) return undefined;
  return { label, stats, pressure: stats.prevalence * (1 - stats.meanReward) };
}

function meets(w: Weakness, t: ActivationThresholds): boolean {
  return (
    w.stats.count >= t.minCount &&
    w.stats.prevalence >= t.minPrevalence &&
    w.stats.meanReward < t.maxMeanReward
  );
}

/** Highest pressure first; ties broken by the fixed label order so evolution is deterministic. */
function byPressure(a: Weakness, b: Weakness): number {
  return b.pressure - a.pressure || GUIDELINE_LABELS.indexOf(a.label) - GUIDELINE_LABELS.indexOf(b.label);
}

/**
 * Omega_{t+1} = Evolve(Omega_t, C_t). Pure. A label activates cues and a guideline when it
 * qualifies under `activation`; what is already on stays on while its label still meets
 * `retention`, and drops out once the policy has mastered it. A window without any labelled
 * turn carries no evidence, so it keeps the interface as it was (only the round advances).
 */
export function evolve(
  state: InterfaceState,
  profile: ProfileSnapshot,
  config: InterfaceConfig = {},
): InterfaceState {
  const cfg = resolveInterfaceConfig(config);
  const round = state.round + 1;
  const scope = profile[cfg.profileScope].overall;
  const components = { ...cfg.components };
  if (scope.turns === 0) {
    const { cues, guidelines } = keepWithoutEvidence(cfg, state, round);
    return finish({
      version: INTERFACE_STATE_VERSION,
      round,
      components,
      cues,
      guidelines,
      changes: changesBetween(state, cues, guidelines, scope, components),
    });
  }
  const seen = (label: Label, wasActive: boolean): Weakness | undefined => {
    const w = weakness(scope, label);
    if (!w) return undefined;
    return meets(w, cfg.activation) || (wasActive && meets(w, cfg.retention)) ? w : undefined;
  };

  const cues = {} as Record<CueGroup, CueStatus>;
  for (const g of CUE_GROUPS) {
    const prev = state.cues[g];
    const fixed = fixedCue(cfg, g, prev, round);
    if (fixed) {
      cues[g] = fixed;
      continue;
    }
    const wasActive = prev.active && prev.source === 'evolved';
    const best = cfg.triggers[g]
      .map((l) => seen(l, wasActive))
      .filter((w): w is Weakness => w !== undefined)
      .sort(byPressure)[0];
    cues[g] = best
      ? {
          active: true,
          source: 'evolved',
          trigger: best.label,
          pressure: best.pressure,
          activatedRound: wasActive ? (prev.activatedRound ?? round) : round,
        }
      : INACTIVE;
  }

  let guidelines: ActiveGuideline[] = [];
  if (components.guidelines !== 'off') {
    const before = new Map(state.guidelines.map((g) => [g.label, g]));
    guidelines = GUIDELINE_LABELS.map((l) => seen(l, before.has(l)))
      .filter((w): w is Weakness => w !== undefined)
      .sort(byPressure)
      .slice(0, cfg.maxGuidelines)
      .map((w) => ({
        label: w.label,
        pressure: w.pressure,
        prevalence: w.stats.prevalence,
        meanReward: w.stats.meanReward,
        count: w.stats.count,
        activatedRound: before.get(w.label)?.activatedRound ?? round,
      }));
  }

  return finish({
    version: INTERFACE_STATE_VERSION,
    round,
    components,
    cues,
    guidelines,
    changes: changesBetween(state, cues, guidelines, scope, components),
  });
}

/** Without evidence: keep evolved cues and guidelines, but honour the config's switches. */
function keepWithoutEvidence(cfg: ResolvedInterfaceConfig, state: InterfaceState, round: number) {
  const cues = Object.fromEntries(
    CUE_GROUPS.map((g): [CueGroup, CueStatus] => {
      const prev = state.cues[g];
      const fixed = fixedCue(cfg, g, prev, round);
      return [g, fixed ?? (prev.source === 'evolved' ? prev : INACTIVE)];
    }),
  ) as Record<CueGroup, CueStatus>;
  const guidelines = cfg.components.guidelines === 'off' ? [] : state.guidelines.slice(0, cfg.maxGuidelines);
  return { cues, guidelines };
}

function fmt(x: number): string {
  return x.toFixed(3);
}

function changesBetween(
  prev: InterfaceState,
  cues: Record<CueGroup, CueStatus>,
  guidelines: readonly ActiveGuideline[],
  scope: ProfileScope,
  components: Readonly<Record<InterfaceComponent, ComponentMode>>,
): string[] {
  const out: string[] = [];
  for (const g of CUE_GROUPS) {
    const a = prev.cues[g];
    const b = cues[g];
    if (!a.active && b.active)
      out.push(b.trigger ? `+${g} (${b.trigger}, pressure ${fmt(b.pressure ?? 0)})` : `+${g} (${b.source})`);
    else if (a.active && !b.active) {
      const off = components[CUE_COMPONENT[g]] === 'off' || !a.trigger;
      out.push(`-${g} (${off ? 'switched off' : `${a.trigger} no longer qualifies`})`);
    }
  }
  const now = new Set(guidelines.map((g) => g.label));
  const was = new Set(prev.guidelines.map((g) => g.label));
  for (const g of guidelines)
    if (!was.has(g.label)) out.push(`+guideline ${g.label} (pressure ${fmt(g.pressure)})`);
  for (const g of prev.guidelines) {
    if (now.has(g.label)) continue;
    const w = weakness(scope, g.label);
    const why =
      components.guidelines === 'off'
        ? 'switched off'
        : w
          ? `pressure ${fmt(w.pressure)}, no longer in the top`
          : 'not seen';
    out.push(`-guideline ${g.label} (${why})`);
  }
  return out;
}

type Unfinished = Omit<InterfaceState, 'summary'>;

function finish(s: Unfinished): InterfaceState {
  return { ...s, summary: summarise(s) };
}

/** e.g. `round 3 | schemaCues: requiredMarks, allowedValues, types | errorFeedback: errorHints | guidelines: missing_tool_call 0.210` */
export function summarise(s: Omit<InterfaceState, 'summary' | 'changes'>): string {
  const part = (c: InterfaceComponent, items: string[]) =>
    `${c}: ${s.components[c] === 'off' ? 'off' : items.length > 0 ? items.join(', ') : 'none'}`;
  const groups = (c: InterfaceComponent) =>
    CUE_GROUPS.filter((g) => CUE_COMPONENT[g] === c && s.cues[g].active);
  return [
    `round ${s.round}`,
    part('schemaCues', groups('schemaCues')),
    part('errorFeedback', groups('errorFeedback')),
    part(
      'guidelines',
      s.guidelines.map((g) => `${g.label} ${fmt(g.pressure)}`),
    ),
  ].join(' | ');
}

export class InterfaceStateError extends Error {
  override readonly name = 'InterfaceStateError';
}

const isRecord = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);
const isNumOrNull = (x: unknown) => x === null || (typeof x === 'number' && Number.isFinite(x));

/** Checks a state read back from JSON (a run record on resume); throws saying what is wrong. */
export function parseInterfaceState(value: unknown): InterfaceState {
  const fail = (what: string): never => {
    throw new InterfaceStateError(`not a SEAL interface state: ${what}`);
  };
  if (!isRecord(value)) return fail('expected an object');
  if (value.version !== INTERFACE_STATE_VERSION)
    fail(
      `unsupported version ${JSON.stringify(value.version)} (this build reads version ${INTERFACE_STATE_VERSION})`,
    );
  if (!(Number.isInteger(value.round) && (value.round as number) >= 0))
    fail('round must be a non-negative integer');
  const comps = value.components;
  if (!isRecord(comps)) return fail('components must be an object');
  for (const c of COMPONENTS)
    if (!MODES.includes(comps[c] as ComponentMode))
      fail(`components.${c} must be one of ${MODES.join(', ')}`);
  const cues = value.cues;
  if (!isRecord(cues)) return fail('cues must be an object');
  for (const g of CUE_GROUPS) {
    const c = cues[g];
    if (!isRecord(c) || typeof c.active !== 'boolean') return fail(`cues.${g} must have a boolean 'active'`);
    if (![null, 'base', 'forced', 'evolved'].includes(c.source as string | null))
      fail(`cues.${g}.source is invalid`);
    if (!(c.trigger === null || (typeof c.trigger === 'string' && isLabel(c.trigger))))
      fail(`cues.${g}.trigger is not a label`);
    if (!isNumOrNull(c.pressure) || !isNumOrNull(c.activatedRound)) fail(`cues.${g} has a non-numeric field`);
  }
  if (!Array.isArray(value.guidelines)) return fail('guidelines must be an array');
  for (const g of value.guidelines) {
    if (!isRecord(g) || typeof g.label !== 'string' || !GUIDELINE_LABELS.includes(g.label as Label))
      fail(`guideline ${JSON.stringify(g)} has no guideline label`);
    const r = g as Record<string, unknown>;
    for (const k of ['pressure', 'prevalence', 'meanReward', 'count', 'activatedRound'])
      if (typeof r[k] !== 'number' || !Number.isFinite(r[k]))
        fail(`guideline ${String(r.label)}.${k} must be a number`);
  }
  if (!Array.isArray(value.changes) || !value.changes.every((c) => typeof c === 'string'))
    fail('changes must be an array of strings');
  if (typeof value.summary !== 'string') fail('summary must be a string');
  return value as unknown as InterfaceState;
}
