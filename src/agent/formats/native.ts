/**
 * Native tool calling: the tools go in the request's `tools` field, the system prompt is the
 * shared base prompt without schemas, and the backend's structured `tool_calls` (name + JSON
 * arguments text) decode into call strings. Tool results go back as `tool` messages, one per
 * call, answering the call's id.
 */

import { parsePyJson } from '../../envs/py/json.js';
import type { PyValue } from '../../envs/py/values.js';
import type { OpenAiTool } from '../../envs/tools.js';
import type { ChatMessage, Completion, NativeToolCall } from '../../policy/policy.js';
import type { DecodedStep, FormatAdapter } from '../format.js';
import {
  argumentsObject,
  BASE_SYSTEM_PROMPT,
  callString,
  errorText,
  guardDecode,
  invalidFormatText,
  pythonLiteralHint,
} from './common.js';

/**
 * The id each tool call is answered under: the backend's id, or `call_<i>` when it is missing
 * or repeats an earlier one (tool messages must answer distinct ids).
 */
export function toolCallIds(calls: readonly NativeToolCall[]): string[] {
  const seen = new Set<string>();
  return calls.map((c, i) => {
    let id = typeof c.id === 'string' && c.id !== '' ? c.id : `call_${i}`;
    while (seen.has(id)) id = `${id}_${i}`;
    seen.add(id);
    return id;
  });
}

function decodeNative(completion: Completion): DecodedStep {
  const unparsed = completion.unparsedToolCalls ?? [];
  if (unparsed.length > 0)
    return {
      kind: 'parse_error',
      error: unparsed.map((u) => `a tool call that does not parse (${u.error}): ${u.raw}`).join('; '),
    };
  const calls = completion.toolCalls ?? [];
  if (calls.length === 0) return { kind: 'text' };
  const out: string[] = [];
  for (const [i, tc] of calls.entries()) {
    const where = `tool call ${i + 1}`;
    const name: unknown = tc?.function?.name;
    if (typeof name !== 'string' || name.trim() === '')
      return { kind: 'parse_error', error: `${where} has no function name` };
    const raw: unknown = tc.function.arguments;
    let args: PyValue;
    if (typeof raw === 'string') {
      const text = raw.trim();
      try {
        args = text === '' ? new Map() : parsePyJson(text);
      } catch (e) {
        return {
          kind: 'parse_error',
          error: `arguments of ${where} (${name}) are not valid JSON: ${errorText(e)}${pythonLiteralHint(text)}`,
        };
      }
    } else if (raw === undefined || raw === null) {
      args = new Map();
    } else {
      // a backend that already parsed the arguments
      args = parsePyJson(JSON.stringify(raw));
    }
    try {
      out.push(callString(name, argumentsObject(name, args)));
    } catch (e) {
      return { kind: 'parse_error', error: `${where}: ${errorText(e)}` };
    }
  }
  return { kind: 'calls', calls: out };
}

export const nativeFormat: FormatAdapter = {
  format: 'native',

  systemPrompt(_tools: readonly OpenAiTool[], framing?: string): string {
    return framing ?? BASE_SYSTEM_PROMPT;
  },

  requestTools(tools: readonly OpenAiTool[]): readonly OpenAiTool[] {
    return tools;
  },

  addedFunctionsMessage(_added, fixedText: string): string {
    return fixedText;
  },

  decode(completion: Completion): DecodedStep {
    return guardDecode(() => decodeNative(completion));
  },

  assistantMessage(completion: Completion): ChatMessage {
    const calls = completion.toolCalls ?? [];
    if (calls.length === 0) return { role: 'assistant', content: completion.text };
    const ids = toolCallIds(calls);
    return {
      role: 'assistant',
      content: completion.text === '' ? null : completion.text,
      tool_calls: calls.map((c, i) => ({
        id: ids[i]!,
        type: 'function' as const,
        function: { name: c.function.name, arguments: c.function.arguments },
      })),
    };
  },

  toolResultMessages(
    completion: Completion,
    decoded: DecodedStep,
    results: readonly string[],
  ): ChatMessage[] {
    if (decoded.kind !== 'calls') return [];
    const calls = completion.toolCalls ?? [];
    if (results.length !== calls.length)
      throw new Error(`${results.length} results for ${calls.length} native tool calls`);
    return toolCallIds(calls).map((id, i) => ({ role: 'tool', tool_call_id: id, content: results[i]! }));
  },

  parseErrorMessage(completion: Completion, error: string): ChatMessage[] {
    const text = invalidFormatText(error);
    const calls = completion.toolCalls ?? [];
    if (calls.length === 0) return [{ role: 'user', content: text }];
    // every tool call of the assistant message must be answered for the history to stay valid
    return toolCallIds(calls).map((id) => ({ role: 'tool', tool_call_id: id, content: text }));
  },
};
