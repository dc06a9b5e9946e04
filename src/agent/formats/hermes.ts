/**
 * Hermes / Qwen2.5 style: the tool schemas are rendered in the system prompt (a `# Tools`
 * section with one JSON schema per line inside `<tools></tools>`, as Qwen2.5's chat template
 * does) and the model calls tools in its text:
 *
 *     <tool_call>
 *     {"name": <function-name>, "arguments": <args-json-object>}
 *     </tool_call>
 *
 * Results go back in one `user` message of `<tool_response>` blocks, one per call, in order
 * (what Qwen's template makes of consecutive `tool` messages).
 *
 * Decoding rules (the JSON is read by the project's JSON reader, never evaluated):
 * - reasoning is dropped first (`<think>` blocks, see `stripThinking`), so calls inside it do not count;
 * - every `<tool_call>` opens a block, which ends at `</tool_call>`; text outside blocks is ignored;
 * - a block not closed by `</tool_call>` (cut off, or closed by the next `<tool_call>`) is accepted
 *   when its content is one complete JSON value, and is a parse error otherwise; an empty unclosed
 *   block after a call is ignored (some models close blocks with a second `<tool_call>`);
 * - a block's content may sit in a code fence; it must be a JSON object with a string `name` and
 *   `arguments` (or `parameters`) that is an object, its JSON text, or absent/null/"" for none; a
 *   JSON array of such objects in one block is several calls;
 * - function and argument names must be identifiers;
 * - no block at all is a text answer, but a `</tool_call>` with no `<tool_call>` is a parse error;
 * - any bad block makes the whole step a parse error (its reason names the block).
 */

import { parsePyJson } from '../../envs/py/json.js';
import type { PyValue } from '../../envs/py/values.js';
import type { OpenAiTool } from '../../envs/tools.js';
import type { DecodedStep, FormatAdapter } from '../format.js';
import {
  argumentsObject,
  callString,
  errorText,
  pyJson,
  pythonLiteralHint,
  stripThinking,
  stripWholeFence,
  textFormat,
} from './common.js';

function toolsBlock(tools: readonly OpenAiTool[]): string {
  return ['<tools>', ...tools.map(pyJson), '</tools>'].join('\n');
}

export function hermesToolsSection(tools: readonly OpenAiTool[]): string {
  return [
    '# Tools',
    'You may call one or more functions to help with the user query.',
    'The signatures of the functions are given inside <tools></tools> XML tags, one JSON schema per line:\n' +
      toolsBlock(tools),
    'To call a function, write a JSON object with the function name and its arguments inside ' +
      '<tool_call></tool_call> XML tags, one block per call:\n' +
      '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>',
  ].join('\n\n');
}

interface Block {
  readonly content: string;
  readonly closed: boolean;
}

/** The `<tool_call>` blocks of a text, or why they cannot be read. */
function blocksOf(text: string): Block[] | { error: string } {
  const tag = /<(\/?)tool_call>/gi;
  const tags: { index: number; end: number; closing: boolean }[] = [];
  for (let m = tag.exec(text); m !== null; m = tag.exec(text))
    tags.push({ index: m.index, end: m.index + m[0].length, closing: m[1] === '/' });
  const blocks: Block[] = [];
  let strayClose = false;
  for (let i = 0; i < tags.length; i++) {
    const open = tags[i]!;
    if (open.closing) {
      strayClose = true;
      continue;
    }
    const next = tags[i + 1];
    const content = text.slice(open.end, next ? next.index : text.length).trim();
    const closed = next?.closing === true;
    if (closed) i++;
    if (!closed && content === '' && blocks.length > 0) continue;
    blocks.push({ content, closed });
  }
  if (blocks.length === 0 && strayClose)
    return { error: 'found </tool_call> without an opening <tool_call>' };
  return blocks;
}

function callsOfBlock(block: Block, n: number): string[] {
  const where = `<tool_call> block ${n}`;
  const body = stripWholeFence(block.content);
  if (body === '') throw new Error(`${where} is empty`);
  let value: PyValue;
  try {
    value = parsePyJson(body);
  } catch (e) {
    const reason = `${errorText(e)}${pythonLiteralHint(body)}`;
    if (!block.closed)
      throw new Error(`${where} is not closed by </tool_call> and its JSON is incomplete: ${reason}`);
    throw new Error(`${where} is not valid JSON: ${reason}`);
  }
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) throw new Error(`${where} holds an empty list`);
  return items.map((item) => {
    if (!(item instanceof Map)) throw new Error(`${where} is not a JSON object with "name" and "arguments"`);
    const name = item.get('name');
    if (typeof name !== 'string' || name.trim() === '') throw new Error(`${where} has no "name" string`);
    const args = item.has('arguments') ? item.get('arguments') : item.get('parameters');
    return callString(name, argumentsObject(name, args));
  });
}

function decodeHermes(text: string): DecodedStep {
  const found = blocksOf(stripThinking(text));
  if (!Array.isArray(found)) return { kind: 'parse_error', error: found.error };
  if (found.length === 0) return { kind: 'text' };
  const calls: string[] = [];
  for (const [i, block] of found.entries()) {
    try {
      for (const call of callsOfBlock(block, i + 1)) calls.push(call);
    } catch (e) {
      return { kind: 'parse_error', error: errorText(e) };
    }
  }
  return { kind: 'calls', calls };
}

/** One `<tool_response>` block, as Qwen's template renders a `tool` message. */
export function toolResponseBlock(result: string): string {
  return `<tool_response>\n${result}\n</tool_response>`;
}

export const hermesFormat: FormatAdapter = textFormat({
  format: 'hermes',
  toolsSection: hermesToolsSection,
  addedTools: toolsBlock,
  decodeText: decodeHermes,
  resultsText: (_calls, results) => results.map(toolResponseBlock).join('\n'),
});
