/**
 * A BFCL rollout: a whole task played by the one agent loop (`converse`) through BFCL's episode,
 * the way the official inference loop plays it (user turns, the miss_func reveal turn, steps until
 * the policy stops calling tools, the episode's step limit), optionally through the
 * training-time interface as a view, and traced into the trajectory record the SEAL diagnosis
 * reads, with everything a trainer needs (raw text, token ids and logprobs, calls, results,
 * latencies, usage).
 */
import type { BfclData, BfclTask } from '../envs/bfcl/data/tasks.js';
import { BfclSuiteEpisode } from '../envs/bfcl/suite.js';
import type { Opening } from '../envs/suite.js';
import type { ChatMessage, CompletionRequest, Policy, SamplingOptions } from '../policy/policy.js';
import { fitInterface } from '../seal/interface/budget.js';
import type { InterfaceState } from '../seal/interface/state.js';
import {
  decorateSystemPrompt,
  decorateToolResult,
  decorateTools,
  parseFailureHelp,
  type TrainingContext,
} from '../seal/interface.js';
import type { Trajectory } from '../seal/trajectory.js';
import { type ConversationView, converse, openingChat } from './conversation.js';
import { CALL_SKELETONS, type FormatAdapter } from './format.js';
import { EpisodeRecorder } from './recorder.js';
import type { CallRecorder } from './trajectory.js';

export interface TrainingInterface {
  readonly ctx: TrainingContext;
  readonly state: InterfaceState;
}

export interface RolloutOptions {
  readonly format: FormatAdapter;
  readonly sampling?: SamplingOptions;
  /**
   * What happens to output that does not parse: `end_turn` is the official BFCL inference loop
   * (strict evaluation); `reply` is the SEAL env service (training): an error message goes back
   * and the policy may retry, each retry counting toward the step limit.
   */
  readonly onParseError?: 'end_turn' | 'reply';
  /** training only: the evolved interface shown to the policy */
  readonly trainingInterface?: TrainingInterface;
  readonly signal?: AbortSignal;
  readonly recorder?: CallRecorder;
  /**
   * Steps a turn may take, calls and retries alike; the episode enforces it (default: BFCL's 20,
   * which strict evaluation keeps).
   */
  readonly maxStepsPerTurn?: number;
  /**
   * A sample that fails for good (`SampleFailedError`): `throw` (strict evaluation: the run stops
   * and can be continued) or `end` (training: the rollout ends there as a forced quit, recorded in
   * `sampleFailure`, and the round goes on)
   */
  readonly onSampleFailure?: 'throw' | 'end';
  /**
   * training under the interface only (the guided update): told, before each completion, the
   * request the original environment would make at this point of the same rollout: the same
   * actions and tool outputs, shown without schema cues, error hints, format help or guidelines
   */
  readonly onOriginalRequest?: (request: CompletionRequest) => void;
}

export async function rollout(
  task: BfclTask,
  data: BfclData,
  policy: Policy,
  options: RolloutOptions,
): Promise<Trajectory> {
  return (await rolloutTranscript(task, data, policy, options)).trajectory;
}

/**
 * The training-time interface as a view of the conversation: decorated tools and system prompt,
 * a hint after a failed tool result (from the call's evidence in the trace), format help after
 * output that did not decode.
 */
function interfaceView(
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
        functions: rec.episode.observe().functions,
      });
    },
    formatHelp: (error) =>
      parseFailureHelp(ti.ctx, state, {
        skeleton: CALL_SKELETONS[format.format],
        toolNames: rec.episode.observe().functions.map((f) => f.name),
        error,
      }),
  };
}

/** A rollout and the exact chat the policy saw and wrote (what supervised demonstrations train on). */
export async function rolloutTranscript(
  task: BfclTask,
  data: BfclData,
  policy: Policy,
  options: RolloutOptions,
): Promise<{ trajectory: Trajectory; messages: readonly ChatMessage[] }> {
  const { format } = options;
  const ti = options.trainingInterface;
  const rec = new EpisodeRecorder(task, data, {
    modelName: policy.name,
    ...(options.maxStepsPerTurn !== undefined ? { maxStepsPerTurn: options.maxStepsPerTurn } : {}),
    ...(options.recorder ? { recorder: options.recorder } : {}),
  });
  const episode = new BfclSuiteEpisode(rec.episode, {
    onUnparsed: options.onParseError ?? 'end_turn',
    onStep: (step) => rec.played(step),
  });
  const view = (opening: Opening): ConversationView | undefined => {
    if (!ti) return undefined;
    if (!policy.promptLength) return interfaceView(ti, ti.state, format, rec);
    // A policy with a prompt budget is shown as much of the interface as fits its first prompt
    // (interface/budget.ts); what was left out goes into the trajectory.
    const measure = policy.promptLength;
    const fitted = fitInterface(
      ti.state,
      (state) => {
        const { tokens, budget } = measure({
          ...options.sampling,
          messages: openingChat(format, opening, interfaceView(ti, state, format, rec)),
        });
        return tokens <= budget;
      },
      format.schemaShown,
    );
    if (fitted.dropped.length > 0) rec.interfaceDropped = fitted.dropped;
    return interfaceView(ti, fitted.state, format, rec);
  };
  const played = await converse(episode, policy, {
    format,
    ...(options.sampling ? { sampling: options.sampling } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(ti ? { view } : {}),
    ...(options.onOriginalRequest ? { onOriginalRequest: options.onOriginalRequest } : {}),
    ...(options.onSampleFailure ? { onSampleFailure: options.onSampleFailure } : {}),
  });
  if (played.sampleFailure !== undefined) rec.sampleFailure = played.sampleFailure;
  return { trajectory: rec.finish(), messages: played.messages };
}

/** Run `work` over `items` with at most `limit` in flight, preserving nothing but completion order. */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!, i);
    }
  });
  await Promise.all(lanes);
  return out;
}
