/**
 * The one agent loop: a policy in a tool-call format plays any suite's episode (envs/suite.ts) to
 * its end. The chat it is shown: the format's system prompt around the suite's framing, followed
 * by the episode's instructions (as the reference's prompting models have BFCL's prompt first and
 * the task's system message after it), then each input as it came (its own earlier messages, the
 * user's, tool results in the format's way). Each completion is decoded by the format (parsed,
 * never evaluated) and sent to the episode with the calls both structured and as written; output
 * that does not decode goes as what was written, with why, and the suite decides what it means
 * (a user-facing suite hears it as text; BFCL ends the turn, or answers it for a retry in training).
 */

import { calleeName, literalValue, parsePythonExpression } from '../envs/py/parse.js';
import type { PyDict } from '../envs/py/values.js';
import type { AgentCall, Episode, MessageMeta, Observation, Opening } from '../envs/suite.js';
import type { OpenAiTool } from '../envs/tools.js';
import {
  type ChatMessage,
  type Completion,
  type CompletionRequest,
  type Policy,
  SampleFailedError,
  type SamplingOptions,
} from '../policy/policy.js';
import type { FormatAdapter } from './format.js';
import { toolCallIds } from './formats/native.js';

/**
 * How the conversation is shown to the policy in place of what the episode gives (SEAL's
 * training-time interface): the tools' schemas, the system prompt, tool results, and help after
 * output that did not decode. What the agent does, and what the episode answers, never change.
 */
export interface ConversationView {
  tools(tools: readonly OpenAiTool[]): readonly OpenAiTool[];
  /** the system prompt shown, from the format's (built on the tools as shown) */
  system(prompt: string): string;
  /** the `index`-th result of the calls just sent, as shown (`call`: the call as the format decoded it) */
  toolResult(content: string, call: string, index: number): string;
  /** help added to the suite's answer to output that did not decode */
  formatHelp(error: string): string | undefined;
}

export interface ConversationOptions {
  readonly format: FormatAdapter;
  readonly sampling?: SamplingOptions;
  readonly signal?: AbortSignal;
  /** told after each completion (progress, costs) */
  readonly onCompletion?: (completion: Completion) => void;
  /** the view for this episode, chosen once it has opened (a prompt budget may trim it to fit) */
  readonly view?: (opening: Opening) => ConversationView | undefined;
  /**
   * told, before each completion, the request the episode as it is would make at this point of
   * the same conversation: the same actions and answers shown without the view (SEAL's guided
   * update trains the policy on that rendering)
   */
  readonly onOriginalRequest?: (request: CompletionRequest) => void;
  /**
   * a sample that fails for good (`SampleFailedError`): `throw` (the default; an evaluation stops
   * and can be continued) or `end` (training: the episode is aborted there, the reason is kept in
   * `sampleFailure`, and the round goes on)
   */
  readonly onSampleFailure?: 'throw' | 'end';
}

export interface ConversationResult {
  /** how the conversation ended, in the suite's words (`sample_failed` for a sample that failed for good) */
  readonly reason: string | undefined;
  /** the chat the policy saw and wrote */
  readonly messages: readonly ChatMessage[];
  readonly completions: number;
  /** the sampler's reason, when a sample failed for good and ended the conversation */
  readonly sampleFailure?: string;
}

/** A call string the formats decode to (`name(a=1, b='x')`) as the tool's name and its keyword arguments. */
export function callParts(call: string): { name: string; arguments: PyDict } {
  const e = parsePythonExpression(call);
  const name = e.kind === 'call' ? calleeName(e.callee) : undefined;
  if (e.kind !== 'call' || name === undefined) throw new Error(`not a call: ${call}`);
  if (e.args.length > 0) throw new Error(`positional arguments in ${call}: name every argument`);
  const args: PyDict = new Map();
  for (const k of e.kwargs) {
    const v = literalValue(k.value);
    if (v === undefined) throw new Error(`argument ${k.name} of ${name} is not a literal value`);
    args.set(k.name, v);
  }
  return { name, arguments: args };
}

/**
 * The chat messages of an observation's user and assistant inputs; a user message that comes with
 * revealed tools is shown with the tools as the format writes them (as they are, not as a view
 * shows them: the reference reveals them so).
 */
function inputMessages(obs: Observation, format: FormatAdapter): ChatMessage[] {
  const added = obs.toolsAdded;
  return obs.inputs.flatMap((i): ChatMessage[] => {
    if (i.kind === 'user')
      return [{ role: 'user', content: added ? format.addedFunctionsMessage(added, i.content) : i.content }];
    return i.kind === 'assistant' ? [{ role: 'assistant', content: i.content }] : [];
  });
}

/** The system prompt: the format's around the suite's framing (through the view), then the episode's instructions. */
function systemMessage(
  format: FormatAdapter,
  opening: Opening,
  view: ConversationView | undefined,
): ChatMessage {
  const tools = opening.tools;
  const prompt = view
    ? view.system(format.systemPrompt(view.tools(tools), opening.framing))
    : format.systemPrompt(tools, opening.framing);
  return {
    role: 'system',
    content: [prompt, opening.instructions].filter((s): s is string => Boolean(s)).join('\n\n'),
  };
}

/** The chat of an episode's first request: what a prompt budget is measured on. */
export function openingChat(format: FormatAdapter, opening: Opening, view?: ConversationView): ChatMessage[] {
  return [systemMessage(format, opening, view), ...inputMessages(opening, format)];
}

/** What the sampler reported of a completion, as a suite's trace keeps it. */
export function completionMeta(c: Completion): MessageMeta {
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

/** Play `episode` to its end with `policy`. */
export async function converse(
  episode: Episode,
  policy: Policy,
  options: ConversationOptions,
): Promise<ConversationResult> {
  const { format } = options;
  const opening = await episode.open(options.signal);
  const view = options.view?.(opening);
  let tools: readonly OpenAiTool[] = opening.tools;
  const messages: ChatMessage[] = openingChat(format, opening, view);
  // the same conversation without the view, kept beside it when asked for
  const original: ChatMessage[] | undefined =
    view && options.onOriginalRequest ? openingChat(format, opening) : undefined;
  const request = (chat: readonly ChatMessage[], shown: readonly OpenAiTool[]): CompletionRequest => {
    const requestTools = format.requestTools(shown);
    return { ...options.sampling, messages: chat, ...(requestTools ? { tools: requestTools } : {}) };
  };
  let obs: Observation = opening;
  let completions = 0;
  while (!obs.done) {
    // a copy: the conversation goes on after the hook has kept the request
    if (original) options.onOriginalRequest!(request([...original], tools));
    let completion: Completion;
    try {
      completion = await policy.complete(request(messages, view ? view.tools(tools) : tools), options.signal);
    } catch (e) {
      if (!(e instanceof SampleFailedError) || options.onSampleFailure !== 'end') throw e;
      episode.abort('sample_failed');
      return { reason: 'sample_failed', messages, completions, sampleFailure: e.message };
    }
    completions++;
    options.onCompletion?.(completion);
    const said = format.assistantMessage(completion);
    messages.push(said);
    original?.push(said);
    const decoded = format.decode(completion);
    let calls: AgentCall[] = [];
    let text: string | null = completion.text === '' ? null : completion.text;
    if (decoded.kind === 'calls') {
      const ids =
        completion.toolCalls?.length === decoded.calls.length ? toolCallIds(completion.toolCalls) : undefined;
      try {
        calls = decoded.calls.map((c, i) => ({
          id: ids?.[i] ?? `call_${completions}_${i}`,
          ...callParts(c),
        }));
      } catch {
        // calls a suite of structured calls cannot take (positional or computed arguments): what
        // was written is said (a suite that runs call text reads `callText`)
        calls = [];
        text = completion.text;
      }
      // the text formats carry the calls in the text: it is not also said to the user
      if (calls.length > 0 && !completion.toolCalls?.length) text = null;
    }
    if (calls.length === 0 && text === null && decoded.kind === 'parse_error') text = completion.text;
    obs = await episode.send(
      {
        text,
        calls,
        ...(decoded.kind === 'calls' ? { callText: decoded.calls } : {}),
        ...(decoded.kind === 'parse_error' ? { unparsed: decoded.error } : {}),
        meta: completionMeta(completion),
      },
      options.signal,
    );
    const results = obs.inputs.filter((i) => i.kind === 'tool');
    if (results.length > 0 && decoded.kind === 'calls') {
      const shown = results.map((r, i) =>
        view ? view.toolResult(r.content, decoded.calls[i]!, i) : r.content,
      );
      messages.push(...format.toolResultMessages(completion, decoded, shown));
      original?.push(
        ...format.toolResultMessages(
          completion,
          decoded,
          results.map((r) => r.content),
        ),
      );
    }
    const refused = obs.inputs.find((i) => i.kind === 'format_error');
    if (refused) {
      const help = view?.formatHelp(refused.content);
      messages.push(
        ...format.parseErrorMessage(completion, help ? `${refused.content}\n${help}` : refused.content),
      );
      original?.push(...format.parseErrorMessage(completion, refused.content));
    }
    const heard = inputMessages(obs, format);
    messages.push(...heard);
    original?.push(...heard);
    if (obs.toolsAdded) tools = [...tools, ...obs.toolsAdded];
  }
  return { reason: obs.reason, messages, completions };
}
