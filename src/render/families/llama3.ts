/**
 * llama3: Llama 3.x Instruct's chat format (Llama-3.1-8B-Instruct, Llama-3.3-70B-Instruct).
 *
 *   <|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n{system}<|eot_id|>
 *   <|start_header_id|>user<|end_header_id|>\n\n{user}<|eot_id|>
 *   <|start_header_id|>assistant<|end_header_id|>\n\n{answer}<|eot_id|>
 *
 * Text turns are the cookbook's llama3 renderer exactly: no "Cutting Knowledge Date" lines in a
 * plain system message and no trimming of message text (Meta's Hugging Face template adds the
 * first and trims), each header and each body encoded on its own.
 *
 * Tools are where seal follows Llama 3.1's Hugging Face chat template instead of the cookbook,
 * which refuses to declare tools for Llama 3 (bare JSON calls cannot be told from JSON answers in
 * general) and renders an assistant's calls as nothing and a tool result under a `tool` header.
 * Seal, as the template does:
 * - declares the tools in the system message, the template's `tools_in_user_message=false` form:
 *   "Environment: ipython", the knowledge and today dates, the instruction to answer with
 *   `{"name": function name, "parameters": ...}` (its wording, including the missing spaces
 *   between sentences), then each tool as OpenAI's `{"type": "function", "function": {...}}`
 *   written as `tojson(indent=4)` does, then the system prompt, trimmed. The template's default
 *   puts the tools in the first user message instead; seal's declaration is messages put before
 *   the conversation, and the system form keeps it independent of the first user turn. The date
 *   is FamilyOptions.today when given, else the template's own default, 26 Jul 2024.
 * - writes an assistant's call as `{"name": "<name>", "parameters": <arguments>}` followed by
 *   <|eot_id|>, under the assistant header, and drops the message's text (the template has no
 *   place for it). The arguments are written as the JSON text the call holds, which is what the
 *   template's `tojson` gives for arguments in Python's json.dumps layout (the model's own output).
 * - writes a tool result under an `ipython` header, as a JSON string: the template's test
 *   `content is iterable` holds for a string, so `tojson` quotes and escapes it.
 * Where seal goes beyond the template: the template refuses a message with several calls ("only
 * supports single tool-calls at once"); seal writes them joined by "; ", the separator vLLM's
 * Llama 3 JSON tool parser reads, so a BFCL turn with parallel calls can be rendered and parsed.
 *
 * One sequence across turns (the cookbook's extension property) holds for text turns, and for a
 * call the model wrote in the template's layout; a call written otherwise (other spacing, text
 * around it, <|python_tag|>) comes back into the history in that layout.
 *
 * Parsing: a completion ends at <|eot_id|> (<|eom_id|>, the template's end of a call in its
 * built-in-tools mode, is accepted too). The message is a tool call when its text, trimmed, and
 * after an optional <|python_tag|>, is one or more JSON objects `{"name": string, "parameters":
 * object}` ("arguments" is read as well) separated by ';' or white space; the arguments are kept
 * as written. A message that starts like a call (`{"name":`, or <|python_tag|>) but is not one is
 * an unparsed call. Any other text, JSON answers included, is the message's content.
 */

import type { TemplateValue } from '../renderer.js';
import { pyJsonDumps, toRuntime } from '../template.js';
import {
  type ChatFamily,
  type FamilyMessage,
  type FamilyToolCall,
  type ParsedCompletion,
  type Piece,
  RenderRefused,
  type ToolSpec,
  type UnparsedCall,
} from './family.js';
import { type FamilyOptions, registerFamily } from './index.js';
import { jsonString } from './python.js';

const BOS = '<|begin_of_text|>';
const EOT = '<|eot_id|>';
const EOM = '<|eom_id|>';
const PYTHON_TAG = '<|python_tag|>';
const CALL_SEPARATOR = '; ';

const header = (role: string): string => `<|start_header_id|>${role}<|end_header_id|>\n\n`;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `YYYY-MM-DD` as the template's `strftime("%d %b %Y")` */
function templateDate(today: string | undefined): string {
  const m = today ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(today) : null;
  if (!m) return '26 Jul 2024';
  return `${m[3]} ${MONTHS[Number(m[2]) - 1] ?? 'Jan'} ${m[1]}`;
}

/** Python's json.dumps(s, ensure_ascii=False): transformers' tojson of a string */
const jsonText = (s: string): string => jsonString(s, false);

function declaration(tools: readonly ToolSpec[], systemPrompt: string, date: string): string {
  const listed = tools.map(
    (t) =>
      pyJsonDumps(
        toRuntime({
          type: 'function',
          function: { name: t.name, description: t.description, parameters: t.parameters as TemplateValue },
        }),
        { indent: 4 },
      ) + '\n\n',
  );
  return (
    'Environment: ipython\n' +
    'Cutting Knowledge Date: December 2023\n' +
    `Today Date: ${date}\n\n` +
    'You have access to the following functions. To call a function, please respond with JSON for a function call.' +
    'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' +
    'Do not use variables.\n\n' +
    listed.join('') +
    systemPrompt.trim()
  );
}

function callText(calls: readonly FamilyToolCall[]): string {
  return calls.map((c) => `{"name": "${c.name}", "parameters": ${c.arguments}}`).join(CALL_SEPARATOR);
}

function messagePieces(m: FamilyMessage): Piece[] {
  if (m.thinking !== undefined)
    throw new RenderRefused(`llama3 renders text only; this ${m.role} message has a reasoning part`);
  if (m.role === 'tool' || m.role === 'ipython')
    return [{ text: header('ipython') }, { text: jsonText(m.content) + EOT }];
  if (m.role === 'assistant' && m.toolCalls?.length)
    return [{ text: header('assistant') }, { text: callText(m.toolCalls) + EOT }];
  return [{ text: header(m.role) }, { text: m.content + EOT }];
}

/** where the JSON value starting at `i` ends (exclusive), or -1 when it is not one */
function valueEnd(text: string, i: number): number {
  const c = text[i];
  if (c === '"') {
    for (let j = i + 1; j < text.length; j++) {
      if (text[j] === '\\') j++;
      else if (text[j] === '"') return j + 1;
    }
    return -1;
  }
  if (c === '{' || c === '[') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const d = text[j];
      if (d === '"') {
        const end = valueEnd(text, j);
        if (end < 0) return -1;
        j = end - 1;
      } else if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return -1;
  }
  const literal = /^[^,}\]\s]+/.exec(text.slice(i));
  return literal ? i + literal[0].length : -1;
}

const skipSpace = (text: string, i: number): number => {
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
};

/**
 * The raw text of each member of the JSON object `text` (valid JSON, checked before), so the
 * arguments keep the model's spelling (`30.0` stays `30.0`); a repeated key keeps its last value,
 * as JSON.parse does.
 */
function memberTexts(text: string): Map<string, string> {
  const members = new Map<string, string>();
  let i = skipSpace(text, text.indexOf('{') + 1);
  while (i < text.length && text[i] !== '}') {
    const keyEnd = valueEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    const start = skipSpace(text, skipSpace(text, keyEnd) + 1);
    const end = valueEnd(text, start);
    members.set(key, text.slice(start, end));
    i = skipSpace(text, end);
    if (text[i] === ',') i = skipSpace(text, i + 1);
  }
  return members;
}

type CallRead = { call: FamilyToolCall } | { error: string } | { notACall: true };

/** one JSON object of a call message */
function readCall(objectText: string): CallRead {
  let value: unknown;
  try {
    value = JSON.parse(objectText);
  } catch (e) {
    return { error: `invalid JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { notACall: true };
  const v = value as Record<string, unknown>;
  const key = 'parameters' in v ? 'parameters' : 'arguments' in v ? 'arguments' : undefined;
  if (typeof v.name !== 'string' || key === undefined) return { notACall: true };
  const args = v[key];
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    return { error: `the call's "${key}" is not a JSON object` };
  return { call: { name: v.name, arguments: memberTexts(objectText).get(key)! } };
}

/** a message's text as tool calls, or undefined when it is an ordinary answer */
function readCalls(body: string): { calls: FamilyToolCall[]; unparsed: UnparsedCall[] } | undefined {
  let text = body.trim();
  const tagged = text.startsWith(PYTHON_TAG);
  if (tagged) text = text.slice(PYTHON_TAG.length).trim();
  const looksLikeCall = tagged || /^\{\s*"name"\s*:/.test(text);
  if (!text.startsWith('{')) return tagged ? failed(text, 'no JSON call after <|python_tag|>') : undefined;
  const calls: FamilyToolCall[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] !== '{') return looksLikeCall ? failed(text, 'text that is not a JSON call') : undefined;
    const end = valueEnd(text, i);
    if (end < 0) return looksLikeCall ? failed(text, 'an unterminated JSON object') : undefined;
    const read = readCall(text.slice(i, end));
    if ('call' in read) calls.push(read.call);
    else if ('error' in read) return looksLikeCall ? failed(text, read.error) : undefined;
    // a JSON object that is not a call: the whole message is an answer, unless it began as a call
    else return looksLikeCall ? failed(text, 'a JSON object without "name" and "parameters"') : undefined;
    i = skipSpace(text, end);
    if (text[i] === ';') i = skipSpace(text, i + 1);
  }
  return { calls, unparsed: [] };
}

function failed(raw: string, error: string): { calls: FamilyToolCall[]; unparsed: UnparsedCall[] } {
  return { calls: [], unparsed: [{ raw, error }] };
}

function parse(completion: string): ParsedCompletion {
  const end = /<\|eot_id\|>|<\|eom_id\|>/.exec(completion);
  if (!end) return { content: completion, reasoning: null, toolCalls: [], unparsed: [], ok: false };
  const ends = completion.split(EOT).length + completion.split(EOM).length - 2;
  const body = completion.slice(0, end.index);
  const read = readCalls(body);
  if (!read) return { content: body, reasoning: null, toolCalls: [], unparsed: [], ok: ends === 1 };
  return {
    content: '',
    reasoning: null,
    toolCalls: read.calls,
    unparsed: read.unparsed,
    ok: ends === 1 && read.unparsed.length === 0,
  };
}

export function llama3(options: FamilyOptions): ChatFamily {
  const date = templateDate(options.today);
  return {
    name: 'llama3',
    extension: true,
    stop: [EOT],
    toolDeclaration(tools, systemPrompt) {
      if (tools.length === 0) return [{ role: 'system', content: systemPrompt }];
      return [{ role: 'system', content: declaration(tools, systemPrompt, date) }];
    },
    generationPrompt(messages) {
      return [{ text: BOS }, ...messages.flatMap(messagePieces), { text: header('assistant') }];
    },
    supervised(messages) {
      return [{ text: BOS }, ...messages.flatMap(messagePieces)];
    },
    parse,
  };
}

registerFamily('llama3', llama3);
