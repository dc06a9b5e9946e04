/**
 * A simulated user played by a policy (any OpenAI-compatible server, in practice): the user
 * model's chat goes out as chat messages with native tool calls, and its reply comes back with
 * its tool calls' arguments read as Python values (json.loads semantics, as the reference reads
 * them). Arguments that are not JSON become an empty call the environment then refuses, as a
 * malformed call would be refused there.
 */
import { jsonDumps } from '../envs/py/format.js';
import { parsePyJson } from '../envs/py/json.js';
import { isDict, type PyDict } from '../envs/py/values.js';
import type { UserChatMessage, UserModel } from '../envs/suite.js';
import type { ChatMessage, Policy, SamplingOptions } from '../policy/policy.js';

function toChat(m: UserChatMessage): ChatMessage {
  if (m.role !== 'assistant') return m;
  return {
    role: 'assistant',
    content: m.content,
    ...(m.tool_calls
      ? {
          tool_calls: m.tool_calls.map((c) => ({
            id: c.id,
            type: 'function' as const,
            function: { name: c.name, arguments: jsonDumps(c.arguments) },
          })),
        }
      : {}),
  };
}

function readArguments(text: string): PyDict {
  try {
    const v = text.trim() === '' ? new Map() : parsePyJson(text);
    return isDict(v) ? v : new Map();
  } catch {
    return new Map();
  }
}

export function userModelFrom(policy: Policy, sampling: SamplingOptions = {}): UserModel {
  return async (request, signal) => {
    const completion = await policy.complete(
      {
        ...sampling,
        ...(request.seed !== undefined ? { seed: request.seed } : {}),
        messages: request.messages.map(toChat),
        ...(request.tools ? { tools: request.tools } : {}),
      },
      signal,
    );
    return {
      content: completion.text === '' && completion.toolCalls?.length ? null : completion.text,
      toolCalls: (completion.toolCalls ?? []).map((c, i) => ({
        id: c.id || `user_call_${i}`,
        name: c.function.name,
        arguments: readArguments(c.function.arguments),
      })),
      ...(completion.usage
        ? {
            usage: {
              prompt_tokens: completion.usage.promptTokens,
              completion_tokens: completion.usage.completionTokens,
            },
          }
        : {}),
    };
  };
}
