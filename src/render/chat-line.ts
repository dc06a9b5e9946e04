/**
 * One chat to render, read from a JSON line `{messages, tools, add_generation_prompt,
 * enable_thinking?}` without losing what the template prints: Python's json.loads keeps `30.0` a
 * float and `30` an int, and a template's `tojson` writes them so; JSON.parse cannot tell them
 * apart. So the line is read by the project's Python-faithful JSON reader, and floats with an
 * integral value become PyFloat.
 */
import { parsePyJson } from '../envs/py/json.js';
import type { PyValue } from '../envs/py/values.js';
import { type ChatInput, PyFloat, type RenderMessage, type TemplateValue } from './renderer.js';

/** a chat line that cannot be rendered: the message says which key and why */
export class ChatLineError extends Error {
  override name = 'ChatLineError';
}

/**
 * A Python value from JSON as a TemplateValue (JSON has only str keys, lists and dicts): ints as
 * numbers, or as bigint beyond 2^53 so their digits print exactly; floats with an integral value
 * as PyFloat
 */
export function templateValue(v: PyValue): TemplateValue {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v;
  if (typeof v === 'number') return Number.isInteger(v) ? new PyFloat(v) : v;
  if (Array.isArray(v)) return v.map(templateValue);
  if (v instanceof Map) {
    // a null-prototype object: a "__proto__" key is an ordinary key
    const o: Record<string, TemplateValue> = Object.create(null) as Record<string, TemplateValue>;
    for (const [k, item] of v) o[String(k)] = templateValue(item);
    return o;
  }
  throw new ChatLineError('unexpected value'); // JSON makes none other
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof PyFloat);

/** the chat of one line; a ChatLineError naming what is wrong */
export function readChatLine(line: string): ChatInput {
  let parsed: PyValue;
  try {
    parsed = parsePyJson(line);
  } catch (e) {
    throw new ChatLineError(`not valid JSON (${(e as Error).message})`);
  }
  const v = templateValue(parsed);
  if (!isObject(v)) throw new ChatLineError('not a JSON object {messages, tools, add_generation_prompt}');
  const { messages, tools, add_generation_prompt: gen, enable_thinking: thinking } = v;
  if (!Array.isArray(messages)) throw new ChatLineError('"messages" must be a list of chat messages');
  for (const [i, m] of messages.entries()) {
    if (!isObject(m) || typeof m.role !== 'string')
      throw new ChatLineError(`messages[${i}] must be an object with a string "role"`);
    if (m.content !== undefined && m.content !== null && typeof m.content !== 'string')
      throw new ChatLineError(`messages[${i}].content must be a string or null`);
    if (m.tool_calls !== undefined && m.tool_calls !== null && !Array.isArray(m.tool_calls))
      throw new ChatLineError(`messages[${i}].tool_calls must be a list`);
  }
  if (tools !== undefined && tools !== null && !Array.isArray(tools))
    throw new ChatLineError('"tools" must be a list of OpenAI function tools, or null');
  if (gen !== undefined && typeof gen !== 'boolean')
    throw new ChatLineError('"add_generation_prompt" must be true or false');
  if (thinking !== undefined && thinking !== null && typeof thinking !== 'boolean')
    throw new ChatLineError('"enable_thinking" must be true or false');
  return {
    messages: messages as unknown as RenderMessage[],
    tools: (tools ?? null) as TemplateValue[] | null,
    addGenerationPrompt: gen ?? false,
    ...(typeof thinking === 'boolean' ? { enableThinking: thinking } : {}),
  };
}
