/**
 * The rollout loop: plays a whole BFCL task with a policy, the way the official inference loop
 * does (user turns, the miss_func reveal turn, steps until the policy stops calling tools, the
 * episode's step limit), optionally through the training-time interface, and returns the trajectory
 * record with everything a trainer needs (raw text, token ids and logprobs, calls, results,
 * latencies, usage).
 */
import type { BfclData, BfclTask } from '../envs/bfcl/data/tasks.js';
import { ADDITIONAL_FUNCTION_MESSAGE } from '../envs/bfcl/episode.js';
import {
  type ChatMessage,
  type Completion,
  type CompletionRequest,
  type Policy,
  SampleFailedError,
  type SamplingOptions,
} from '../policy/policy.js';
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
import { CALL_SKELETONS, type FormatAdapter } from './format.js';
import { EpisodeRecorder, type StepMeta } from './recorder.js';
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

function stepMeta(c: Completion): StepMeta {
  const raw = c.toolCalls?.length
    ? `${c.text}${c.text ? '\n' : ''}${c.toolCalls.map((t) => JSON.stringify({ name: t.function.name, arguments: t.function.arguments })).join('\n')}`
    : c.text;
  return {
    rawText: raw,
    latencyMs: c.latencyMs,
    ...(c.tokenIds ? { tokenIds: c.tokenIds } : {}),
    ...(c.logprobs ? { logprobs: c.logprobs } : {}),
    ...(c.usage ? { usage: c.usage } : {}),
  };
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
): Promise<{ trajectory: Trajectory; messages: ChatMessage[] }> {
  const { format } = options;
  const ti = options.trainingInterface;
  const rec = new EpisodeRecorder(task, data, {
    modelName: policy.name,
    ...(options.maxStepsPerTurn !== undefined ? { maxStepsPerTurn: options.maxStepsPerTurn } : {}),
    ...(options.recorder ? { recorder: options.recorder } : {}),
  });
  const ep = rec.episode;
  const first = ep.observe();
  const turnMessages = (obs: typeof first): ChatMessage[] =>
    obs.functionsAdded
      ? [
          {
            role: 'user',
            content: format.addedFunctionsMessage(obs.functionsAdded, ADDITIONAL_FUNCTION_MESSAGE),
          },
        ]
      : obs.messages.map((m): ChatMessage => ({ role: 'user', content: m.content }));
  const systemFor = (state: InterfaceState | undefined): ChatMessage => {
    if (!ti || !state) return { role: 'system', content: format.systemPrompt([...first.tools]) };
    const base = format.systemPrompt(decorateTools(ti.ctx, state, first.tools, format.schemaShown));
    return { role: 'system', content: decorateSystemPrompt(ti.ctx, state, base) };
  };
  // A policy with a prompt budget is shown as much of the interface as fits its first prompt
  // (interface/budget.ts); what was left out goes into the trajectory.
  let shownState = ti?.state;
  if (ti && policy.promptLength) {
    const measure = policy.promptLength;
    const fitted = fitInterface(
      ti.state,
      (state) => {
        const { tokens, budget } = measure({
          ...options.sampling,
          messages: [systemFor(state), ...turnMessages(first)],
        });
        return tokens <= budget;
      },
      format.schemaShown,
    );
    shownState = fitted.state;
    if (fitted.dropped.length > 0) rec.interfaceDropped = fitted.dropped;
  }
  const shownTools = (tools: typeof first.tools) =>
    ti && shownState ? decorateTools(ti.ctx, shownState, tools, format.schemaShown) : [...tools];
  const messages: ChatMessage[] = [systemFor(shownState)];
  // the same rollout as the original environment shows it (guided update), kept beside it
  const original: ChatMessage[] | undefined =
    ti && options.onOriginalRequest ? [systemFor(undefined)] : undefined;

  let running = true;
  while (running) {
    const obs = ep.observe();
    const tools = shownTools(obs.tools);
    messages.push(...turnMessages(obs));
    original?.push(...turnMessages(obs));
    const toolNames = obs.functions.map((f) => f.name);
    for (;;) {
      if (original) {
        const originalTools = format.requestTools([...obs.tools]);
        options.onOriginalRequest!({
          ...options.sampling,
          messages: [...original],
          ...(originalTools ? { tools: originalTools } : {}),
        });
      }
      let completion: Completion;
      try {
        completion = await policy.complete(
          {
            ...options.sampling,
            messages,
            ...(format.requestTools(tools) ? { tools: format.requestTools(tools)! } : {}),
          },
          options.signal,
        );
      } catch (e) {
        if (!(e instanceof SampleFailedError) || options.onSampleFailure !== 'end') throw e;
        rec.sampleFailure = e.message;
        ep.abort();
        running = false;
        break;
      }
      const decoded = format.decode(completion);
      messages.push(format.assistantMessage(completion));
      original?.push(format.assistantMessage(completion));
      const meta = stepMeta(completion);
      if (decoded.kind === 'calls') {
        const outcome = rec.step(decoded, meta);
        const records = rec.lastStep()!.calls;
        const shown = outcome.results.map((r, i) =>
          ti
            ? decorateToolResult(ti.ctx, shownState!, r, {
                call: decoded.calls[i]!,
                ...(records[i]?.name ? { name: records[i]!.name! } : {}),
                issues: [...(records[i]?.argumentIssues ?? [])],
                functions: obs.functions,
              })
            : r,
        );
        messages.push(...format.toolResultMessages(completion, decoded, shown));
        original?.push(...format.toolResultMessages(completion, decoded, outcome.results));
        if (outcome.status === 'force_quit') {
          running = false;
          break;
        }
        continue;
      }
      if (decoded.kind === 'parse_error' && (options.onParseError ?? 'end_turn') === 'reply' && ep.canRetry) {
        rec.rejectStep(decoded.error, meta);
        const help = ti
          ? parseFailureHelp(ti.ctx, shownState!, {
              skeleton: CALL_SKELETONS[format.format],
              toolNames,
              error: decoded.error,
            })
          : undefined;
        const reply = format.parseErrorMessage(
          completion,
          help ? `${decoded.error}\n${help}` : decoded.error,
        );
        messages.push(...reply);
        original?.push(...format.parseErrorMessage(completion, decoded.error));
        continue;
      }
      rec.step(decoded, meta);
      break;
    }
    if (running) running = rec.nextTurn();
  }
  return { trajectory: rec.finish(), messages };
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
