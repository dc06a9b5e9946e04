/**
 * The training-time learning interface Omega_t of SEAL (docs/method.md, section 5: Interface evolution):
 *
 *   o~ = o (+) phi_schema(F) (+) phi_err(o, H_t) (+) phi_cap(C_t)
 *
 * It changes only how existing information is shown: tool descriptions gain schema cues, failed
 * tool results gain one repair hint, unparsable output gets format help, and the system prompt
 * gains an instruction line, an affordance cue and up to a few capability guidelines. Tasks,
 * tools, tool outputs, the verifier and the reward never change.
 *
 * Every function that changes what a policy sees takes a `TrainingContext` (see
 * interface/context.ts): evaluation has no way to apply the interface, by type and at runtime.
 * The state and its evolution are in interface/state.ts; they need no context, because a state
 * alone shows nothing to a policy.
 */

import type { FunctionDoc } from '../envs/bfcl/data/tasks.js';
import type { TurnObservation } from '../envs/bfcl/episode.js';
import type { OpenAiTool } from '../envs/tools.js';
import { assertTrainingContext, type TrainingContext } from './interface/context.js';
import {
  classifyToolResult,
  formatHelpText,
  hintGroup,
  type ParseFailure,
  repairHint,
  type ToolCallInfo,
} from './interface/errors.js';
import { AFFORDANCE_LINE, GUIDELINE_TEXT, INSTRUCTION_LINE, PROMPT_HEADER } from './interface/prompt.js';
import {
  decorateFunctionDoc,
  decorateOpenAiTool,
  type SchemaCueSet,
  type SchemaShown,
} from './interface/schema-cues.js';
import {
  cueActive,
  INTERFACE_STATE_VERSION,
  type InterfaceState,
  InterfaceStateError,
} from './interface/state.js';

export {
  assertTrainingContext,
  type EvaluationContext,
  evaluationContext,
  InterfaceUnavailableError,
  type TrainingContext,
  trainingContext,
} from './interface/context.js';
export {
  calledName,
  classifyToolResult,
  EXECUTION_ERROR_PREFIX,
  isFailedToolResult,
  type ParseFailure,
  TOOL_ERROR_CLASSES,
  type ToolCallInfo,
  type ToolErrorClass,
  type ToolFailure,
  toolErrorMessage,
} from './interface/errors.js';
export { AFFORDANCE_LINE, GUIDELINE_TEXT, INSTRUCTION_LINE, PROMPT_HEADER } from './interface/prompt.js';
export { REQUIRED_MARK, type SchemaShown } from './interface/schema-cues.js';
export {
  type ActivationThresholds,
  type ActiveGuideline,
  COMPONENTS,
  type ComponentMode,
  CUE_COMPONENT,
  CUE_GROUPS,
  type CueGroup,
  type CueStatus,
  componentEnabled,
  cueActive,
  DEFAULT_ACTIVATION,
  DEFAULT_ALWAYS_ON,
  DEFAULT_CUE_TRIGGERS,
  DEFAULT_RETENTION,
  evolve,
  GUIDELINE_LABELS,
  INTERFACE_STATE_VERSION,
  type InterfaceComponent,
  type InterfaceConfig,
  InterfaceConfigError,
  type InterfaceState,
  InterfaceStateError,
  initialInterfaceState,
  parseInterfaceState,
  type ResolvedInterfaceConfig,
  resolveInterfaceConfig,
  summarise,
} from './interface/state.js';

/** Both halves of the guard: a live training context, and a state this build understands. */
function guard(ctx: TrainingContext, state: InterfaceState): void {
  assertTrainingContext(ctx);
  if (state?.version !== INTERFACE_STATE_VERSION)
    throw new InterfaceStateError(
      `interface state version ${JSON.stringify(state?.version)} is not ${INTERFACE_STATE_VERSION}; read it with parseInterfaceState`,
    );
}

function schemaCues(state: InterfaceState, shown: SchemaShown = {}): SchemaCueSet {
  return {
    requiredMarks: cueActive(state, 'requiredMarks') && shown.requiredMarks !== true,
    allowedValues: cueActive(state, 'allowedValues') && shown.allowedValues !== true,
    types: cueActive(state, 'types') && shown.types !== true,
  };
}

/**
 * phi_schema on OpenAI tool schemas (what every format renders its tools from); `shown` is what
 * the format's rendering states already (its `schemaShown`), which no cue repeats.
 */
export function decorateTools(
  ctx: TrainingContext,
  state: InterfaceState,
  tools: readonly OpenAiTool[],
  shown: SchemaShown = {},
): OpenAiTool[] {
  guard(ctx, state);
  const cues = schemaCues(state, shown);
  return tools.map((t) => decorateOpenAiTool(t, cues));
}

/** phi_schema on BFCL function docs (what a prompting-style policy is shown). */
export function decorateFunctions(
  ctx: TrainingContext,
  state: InterfaceState,
  functions: readonly FunctionDoc[],
): FunctionDoc[] {
  guard(ctx, state);
  const cues = schemaCues(state);
  return functions.map((f) => decorateFunctionDoc(f, cues));
}

/** The architecture's `apply(observation, state)`: the turn's tools and docs with schema cues. */
export function applyObservation(
  ctx: TrainingContext,
  state: InterfaceState,
  obs: TurnObservation,
): TurnObservation {
  guard(ctx, state);
  const cues = schemaCues(state);
  return {
    ...obs,
    functions: obs.functions.map((f) => decorateFunctionDoc(f, cues)),
    tools: obs.tools.map((t) => decorateOpenAiTool(t, cues)),
    ...(obs.functionsAdded
      ? { functionsAdded: obs.functionsAdded.map((f) => decorateFunctionDoc(f, cues)) }
      : {}),
  };
}

/** The lines the interface adds to the system prompt, in display order (empty when none). */
export function systemPromptLines(ctx: TrainingContext, state: InterfaceState): string[] {
  guard(ctx, state);
  const lines: string[] = [];
  if (cueActive(state, 'instruction')) lines.push(INSTRUCTION_LINE);
  if (cueActive(state, 'affordance')) lines.push(AFFORDANCE_LINE);
  if (state.components.guidelines !== 'off')
    for (const g of state.guidelines) {
      const text = GUIDELINE_TEXT[g.label];
      if (text) lines.push(text);
    }
  return lines;
}

/**
 * What of `state` shows in the system prompt and the tool schemas (`decorateTools`,
 * `decorateFunctions`, `decorateSystemPrompt`): two states with the same view render both the
 * same, whatever their rounds, so a cache of rendered prompts can outlive a round.
 */
export function promptView(ctx: TrainingContext, state: InterfaceState): string {
  const cues = schemaCues(state);
  const bits = `${+cues.requiredMarks}${+cues.allowedValues}${+cues.types}`;
  return [bits, ...systemPromptLines(ctx, state)].join('\n');
}

/** The system prompt with the interface's lines appended; unchanged when none are active. */
export function decorateSystemPrompt(ctx: TrainingContext, state: InterfaceState, base: string): string {
  const lines = systemPromptLines(ctx, state);
  if (lines.length === 0) return base;
  const block = [PROMPT_HEADER, ...lines.map((l) => `- ${l}`)].join('\n');
  return base === '' ? block : `${base}${base.endsWith('\n') ? '\n' : '\n\n'}${block}`;
}

/** The repair hint for a tool result, or undefined when the call did not fail or hints are off. */
export function toolResultHint(
  ctx: TrainingContext,
  state: InterfaceState,
  result: string,
  info: ToolCallInfo = {},
): string | undefined {
  guard(ctx, state);
  const failure = classifyToolResult(result, info);
  if (!failure || !cueActive(state, hintGroup(failure.errorClass))) return undefined;
  return repairHint(failure, info);
}

export const HINT_PREFIX = '\nHint: ';

/** A tool result as the policy should see it: failures get one hint appended, successes pass unchanged. */
export function decorateToolResult(
  ctx: TrainingContext,
  state: InterfaceState,
  result: string,
  info: ToolCallInfo = {},
): string {
  const hint = toolResultHint(ctx, state, result, info);
  return hint === undefined ? result : `${result}${HINT_PREFIX}${hint}`;
}

/** Format help after output that did not parse into tool calls; undefined when format help is off. */
export function parseFailureHelp(
  ctx: TrainingContext,
  state: InterfaceState,
  failure: ParseFailure,
): string | undefined {
  guard(ctx, state);
  return cueActive(state, 'formatHelp') ? formatHelpText(failure) : undefined;
}
