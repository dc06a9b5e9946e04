/**
 * A BFCL rollout: a whole task played by the one agent loop (`converse`) through BFCL's episode,
 * the way the official inference loop plays it (user turns, the miss_func reveal turn, steps until
 * the policy stops calling tools, the episode's step limit), optionally through the
 * training-time interface as a view, and traced into the trajectory record the SEAL diagnosis
 * reads, with everything a trainer needs (raw text, token ids and logprobs, calls, results,
 * latencies, usage).
 */

import { type ConversationView, converse, openingChat } from '../agent/conversation.js';
import type { FormatAdapter } from '../agent/format.js';
import type { BfclData, BfclTask } from '../envs/bfcl/data/tasks.js';
import { BfclSuiteEpisode } from '../envs/bfcl/suite.js';
import type { Opening } from '../envs/suite.js';
import type { ChatMessage, CompletionRequest, Policy, SamplingOptions } from '../policy/policy.js';
import type { Trajectory } from '../seal/trajectory.js';
import { fittedInterfaceView, interfaceView, type TrainingInterface } from './interface-view.js';
import { EpisodeRecorder } from './recorder.js';
import type { CallRecorder } from './trajectory.js';

export type { TrainingInterface } from './interface-view.js';

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
    const measure = policy.promptLength;
    if (!measure) return interfaceView(ti, ti.state, format, rec);
    // A policy with a prompt budget is shown as much of the interface as fits its first prompt;
    // what was left out goes into the trajectory.
    const fitted = fittedInterfaceView(ti, format, rec, (v) => {
      const { tokens, budget } = measure({ ...options.sampling, messages: openingChat(format, opening, v) });
      return tokens <= budget;
    });
    if (fitted.dropped.length > 0) rec.interfaceDropped = fitted.dropped;
    return fitted.view;
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
