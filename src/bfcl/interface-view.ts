/**
 * SEAL's training-time interface as a view of a BFCL conversation (agent/conversation.ts): tool
 * schemas with the active cues, the system prompt with its lines, one repair hint after a failed
 * tool result (read off the call's evidence in the episode's trace), and format help after output
 * that did not decode. The rollout loop and `seal serve`'s sessions show the interface through it.
 */

import type { ConversationView } from '../agent/conversation.js';
import { CALL_SKELETONS, type FormatAdapter } from '../agent/format.js';
import { fitInterface } from '../seal/interface/budget.js';
import type { InterfaceState } from '../seal/interface/state.js';
import {
  decorateSystemPrompt,
  decorateToolResult,
  decorateTools,
  parseFailureHelp,
  type TrainingContext,
} from '../seal/interface.js';
import type { EpisodeRecorder } from './recorder.js';

export interface TrainingInterface {
  readonly ctx: TrainingContext;
  readonly state: InterfaceState;
}

/** The interface in `state` as a view; `rec` is the trace of the episode it shows. */
export function interfaceView(
  ti: TrainingInterface,
  state: InterfaceState,
  format: FormatAdapter,
  rec: EpisodeRecorder,
): ConversationView {
  return {
    tools: (tools) => decorateTools(ti.ctx, state, tools, format.schemaShown),
    system: (prompt) => decorateSystemPrompt(ti.ctx, state, prompt),
    toolResult: (content, call, i) => {
      const record = rec.lastStep()?.calls[i];
      return decorateToolResult(ti.ctx, state, content, {
        call,
        ...(record?.name ? { name: record.name } : {}),
        issues: [...(record?.argumentIssues ?? [])],
        functions: rec.episode.functions,
      });
    },
    formatHelp: (error) =>
      parseFailureHelp(ti.ctx, state, {
        skeleton: CALL_SKELETONS[format.format],
        toolNames: rec.episode.functions.map((f) => f.name),
        error,
      }),
  };
}

/**
 * The view of as much of the interface as fits a prompt budget (interface/budget.ts): `fits` says
 * whether the first prompt under a view is within it. What was left out is returned to be recorded.
 */
export function fittedInterfaceView(
  ti: TrainingInterface,
  format: FormatAdapter,
  rec: EpisodeRecorder,
  fits: (view: ConversationView) => boolean,
): { view: ConversationView; dropped: readonly string[] } {
  const fitted = fitInterface(
    ti.state,
    (state) => fits(interfaceView(ti, state, format, rec)),
    format.schemaShown,
  );
  return { view: interfaceView(ti, fitted.state, format, rec), dropped: fitted.dropped };
}
