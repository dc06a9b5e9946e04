/**
 * Fitting the interface to a policy's prompt budget.
 *
 * A policy with a small context (the embedded model keeps 895 prompt tokens) cuts a prompt that
 * does not fit from the left, and for the first prompt of an episode that loses the tool list at
 * the top of the system prompt: the interface's additions then cost the policy the environment's
 * own content. So when the decorated first prompt would not fit, interface parts are dropped, one
 * at a time in a fixed order, until it fits or nothing is left to drop. With everything dropped
 * the prompt is the one the policy sees without the interface, so the environment's content is
 * never cut differently from the no-interface case.
 *
 * The order (`DROP_ORDER`) keeps longest what the method values most: capability guidelines go
 * first, lowest pressure first (the weakest evidence); then the system prompt's affordance and
 * instruction lines; then the schema cues, the optional types first, the allowed-value lists next
 * and the required marks last (the paper's always-on schema annotation). Error hints and format
 * help are never dropped: they are not in the first prompt, they appear later in the episode,
 * where the policy's window drops the oldest turns instead.
 *
 * Pure: the caller says whether a rendering fits (for the embedded policy: by its tokenizer).
 */
import type { SchemaShown } from './schema-cues.js';
import { type CueGroup, cueActive, type InterfaceState, summarise } from './state.js';

/** A part of the interface that can be dropped: a guideline (by label) or a cue group. */
export type InterfacePart = `guideline:${string}` | CueGroup;

/** The cue groups in the order they are dropped, after every guideline. */
export const CUE_DROP_ORDER: readonly CueGroup[] = [
  'affordance',
  'instruction',
  'types',
  'allowedValues',
  'requiredMarks',
];

/**
 * The parts of `state` that show in the first prompt, in the order they are dropped. A schema cue
 * the format's rendering already states (`shown`) adds nothing, so it is not a part to drop.
 */
export function dropOrder(state: InterfaceState, shown: SchemaShown = {}): InterfacePart[] {
  const guidelines =
    state.components.guidelines === 'off'
      ? []
      : [...state.guidelines].reverse().map((g): InterfacePart => `guideline:${g.label}`);
  const stated = (g: CueGroup) =>
    (g === 'types' || g === 'allowedValues' || g === 'requiredMarks') && shown[g] === true;
  const cues = CUE_DROP_ORDER.filter((g) => cueActive(state, g) && !stated(g));
  return [...guidelines, ...cues];
}

/** `state` without `parts`: their cues inactive, their guidelines gone (the summary says so). */
export function withoutParts(state: InterfaceState, parts: readonly InterfacePart[]): InterfaceState {
  if (parts.length === 0) return state;
  const drop = new Set<string>(parts);
  const cues = Object.fromEntries(
    Object.entries(state.cues).map(([g, c]) => [g, drop.has(g) ? { ...c, active: false } : c]),
  ) as unknown as InterfaceState['cues'];
  const guidelines = state.guidelines.filter((g) => !drop.has(`guideline:${g.label}`));
  const rest = { ...state, cues, guidelines };
  return { ...rest, summary: summarise(rest) };
}

export interface FittedInterface {
  /** the state to render the episode with */
  readonly state: InterfaceState;
  /** the parts left out, in the order they were dropped (empty when the whole interface fit) */
  readonly dropped: readonly InterfacePart[];
  /** false when even the interface-free prompt does not fit (the policy cuts it as it would anyway) */
  readonly fits: boolean;
}

/**
 * The smallest reduction of `state` (in `dropOrder`) whose first prompt `fits`: drops parts one
 * at a time until `fits` holds or none are left. `fits` is called at most once per part plus one.
 */
export function fitInterface(
  state: InterfaceState,
  fits: (state: InterfaceState) => boolean,
  shown: SchemaShown = {},
): FittedInterface {
  const order = dropOrder(state, shown);
  for (let n = 0; n <= order.length; n++) {
    const dropped = order.slice(0, n);
    const candidate = withoutParts(state, dropped);
    if (fits(candidate)) return { state: candidate, dropped, fits: true };
  }
  return { state: withoutParts(state, order), dropped: order, fits: false };
}
