/**
 * The agent side of any suite's episode (envs/suite.ts): a policy in a tool-call format plays the
 * conversation to its end. The chat it is shown: the format's system prompt around the suite's
 * framing, followed by the episode's instructions (as the reference's prompting models have
 * BFCL's prompt first and the task's system message after it), then each input as it came (its own earlier messages, the user's, tool results in the
 * format's way). Each completion is decoded by the format (parsed, never evaluated) and sent to
 * the episode; output that does not decode is what the agent said, as text, since a user-facing
 * suite has no channel for format errors.
 */
import { calleeName, literalValue, parsePythonExpression } from '../envs/bfcl/calls/parse.js';
import type { OpenAiTool } from '../envs/bfcl/tools.js';
import type { PyDict } from '../envs/py/values.js';
import type { AgentCall, AgentInput, Episode, Observation } from '../envs/suite.js';
import type { ChatMessage, Completion, Policy, SamplingOptions } from '../policy/policy.js';
import type { FormatAdapter } from './format.js';
import { toolCallIds } from './formats/native.js';

export interface ConversationOptions {
  readonly format: FormatAdapter;
  readonly sampling?: SamplingOptions;
  readonly signal?: AbortSignal;
  /** told after each completion (progress, costs) */
  readonly onCompletion?: (completion: Completion) => void;
}

export interface ConversationResult {
  /** how the conversation ended, in the suite's words */
  readonly reason: string | undefined;
  /** the chat the policy saw and wrote */
  readonly messages: readonly ChatMessage[];
  readonly completions: number;
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

function inputMessages(inputs: readonly AgentInput[]): ChatMessage[] {
  return inputs
    .filter((i) => i.kind !== 'tool')
    .map(
      (i): ChatMessage =>
        i.kind === 'user' ? { role: 'user', content: i.content } : { role: 'assistant', content: i.content },
    );
}

/** Play `episode` to its end with `policy`. */
export async function converse(
  episode: Episode,
  policy: Policy,
  options: ConversationOptions,
): Promise<ConversationResult> {
  const { format } = options;
  const opening = await episode.open(options.signal);
  let tools: OpenAiTool[] = opening.tools.map((t) => t as OpenAiTool);
  const messages: ChatMessage[] = [
    {
      role: 'system',
      content: [format.systemPrompt(tools, opening.framing), opening.instructions]
        .filter((s): s is string => Boolean(s))
        .join('\n\n'),
    },
    ...inputMessages(opening.inputs),
  ];
  let obs: Observation = opening;
  let completions = 0;
  while (!obs.done) {
    const requestTools = format.requestTools(tools);
    const completion = await policy.complete(
      { ...options.sampling, messages, ...(requestTools ? { tools: requestTools } : {}) },
      options.signal,
    );
    completions++;
    options.onCompletion?.(completion);
    messages.push(format.assistantMessage(completion));
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
        // calls the suite cannot take (positional or computed arguments): what was written is said
        calls = [];
        text = completion.text;
      }
      // the text formats carry the calls in the text: it is not also said to the user
      if (calls.length > 0 && !completion.toolCalls?.length) text = null;
    }
    if (calls.length === 0 && text === null && decoded.kind === 'parse_error') text = completion.text;
    obs = await episode.send({ text, calls }, options.signal);
    const results = obs.inputs.filter((i) => i.kind === 'tool');
    if (results.length > 0 && decoded.kind === 'calls')
      messages.push(
        ...format.toolResultMessages(
          completion,
          decoded,
          results.map((r) => r.content),
        ),
      );
    messages.push(...inputMessages(obs.inputs));
    if (obs.toolsAdded) tools = [...tools, ...obs.toolsAdded.map((t) => t as OpenAiTool)];
  }
  return { reason: obs.reason, messages, completions };
}
