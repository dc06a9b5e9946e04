/**
 * The reference's `Environment.set_state`: a task's initial state applied to a fresh environment,
 * then every tool call of a conversation replayed in order, each replayed result compared with the
 * recorded one. A conversation whose recorded results the environment does not give again is
 * refused: its final state would not be the one the agent saw.
 */
import { UserError } from '../../../util/errors.js';
import { parsePyJson } from '../../py/json.js';
import { type PyValue, pyEquals } from '../../py/values.js';
import type { InitialState, Tau2Environment, Tau2Message, Tau2ToolCall, Tau2ToolMessage } from '../types.js';

/** A conversation the evaluator cannot replay (the reference raises ValueError). */
export class Tau2ReplayError extends UserError {
  override name = 'Tau2ReplayError';
}

/** Every tool call of the conversation, by agent or user, in order (`is_tool_call`: tool_calls not None). */
export function toolCallsOf(messages: readonly Tau2Message[]): Tau2ToolCall[] {
  const calls: Tau2ToolCall[] = [];
  for (const m of messages)
    if ((m.role === 'assistant' || m.role === 'user') && m.tool_calls !== null && m.tool_calls !== undefined)
      calls.push(...m.tool_calls);
  return calls;
}

interface RecordedCall {
  readonly call: Tau2ToolCall;
  readonly result: Tau2ToolMessage;
  /** where the result is in the conversation */
  readonly index: number;
}

/** Pairs each call with the tool message that must follow it, as `get_actions_from_messages` does. */
function recordedCalls(messages: readonly Tau2Message[]): RecordedCall[] {
  const out: RecordedCall[] = [];
  let i = 0;
  while (i < messages.length) {
    const m = messages[i++]!;
    if (m.role === 'tool')
      throw new Tau2ReplayError(
        `message ${i - 1}: a tool message that follows no tool call (tool messages must follow the call they answer)`,
      );
    if (
      (m.role === 'assistant' || m.role === 'user') &&
      m.tool_calls !== null &&
      m.tool_calls !== undefined
    ) {
      for (const call of m.tool_calls) {
        if (i >= messages.length)
          throw new Tau2ReplayError(
            `message ${i - 1}: the call ${call.name} (id ${JSON.stringify(call.id)}) has no tool message after it`,
          );
        const r = messages[i++]!;
        if (r.role !== 'tool')
          throw new Tau2ReplayError(
            `message ${i - 1}: a tool message was expected for the call ${call.name} (id ${JSON.stringify(call.id)}), found a ${r.role} message`,
          );
        if (r.id !== call.id)
          throw new Tau2ReplayError(
            `message ${i - 1}: tool call id mismatch: the call has ${JSON.stringify(call.id)}, the tool message ${JSON.stringify(r.id)}`,
          );
        out.push({ call, result: r, index: i - 1 });
      }
    }
  }
  return out;
}

/** `json.loads(text)`, or the text itself when it is not JSON (as set_state compares them). */
function loadsOrText(text: string): PyValue {
  try {
    return parsePyJson(text);
  } catch {
    return text;
  }
}

/**
 * `set_state(initialization_data, initialization_actions, messages)` on `env`: update the
 * databases, run the initialisation actions, replay the conversation's tool calls (refusing one
 * whose result differs), then sync the tools.
 */
export function setState(
  env: Tau2Environment,
  initial: InitialState | null | undefined,
  messages: readonly Tau2Message[],
): void {
  const data = initial?.initialization_data;
  if (data) {
    if (data.agent_data !== null && data.agent_data !== undefined) env.updateDb('assistant', data.agent_data);
    if (data.user_data !== null && data.user_data !== undefined) env.updateDb('user', data.user_data);
  }
  for (const action of initial?.initialization_actions ?? []) env.runFunction(action);
  for (const { call, result, index } of recordedCalls(messages)) {
    const replayed = env.respond(call);
    if (result.content === null)
      // json.loads(None) is a TypeError in the reference: the replay stops there too.
      throw new Tau2ReplayError(
        `message ${index}: the tool message for ${call.name} (id ${JSON.stringify(call.id)}) has no content to compare with the replayed result`,
      );
    if (!pyEquals(loadsOrText(replayed.content), loadsOrText(result.content)))
      throw new Tau2ReplayError(
        `message ${index}: the recorded result of ${call.name} (id ${JSON.stringify(call.id)}, by ${call.requestor}) is not what the environment returns when the conversation is replayed; recorded: ${clip(result.content)}; replayed: ${clip(replayed.content)}`,
      );
  }
  env.syncTools();
}

function clip(text: string, max = 300): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}...` : text);
}
