/**
 * The python call protocol with the tools written as one-line signatures instead of indented JSON:
 *
 *     cd(folder: str) Change directory, one level at a time.
 *     wc(file_name: str, mode?: str) Count lines, words or characters of a file. mode: l, w or c
 *
 * A small model's context is a few hundred tokens; BFCL's JSON docs spend most of them on braces
 * and keys. This rendering keeps every fact a policy needs (names, types, which arguments are
 * optional, closed value sets, every description) at about a third of the length. Its signature
 * already says which arguments are required and of what type, so the interface's schema cues
 * leave those two out here (`schemaShown`). Calls and results are the python format's;
 * decoding is its lenient rule (the format is the project's own, so no official rule binds it).
 */
import type { JsonSchemaLike } from '../../envs/tools.js';
import { JSON_SCHEMA_TYPE_OF, type OpenAiTool } from '../../envs/tools.js';
import type { FormatAdapter } from '../format.js';
import { textFormat } from './common.js';
import { decodePythonTextLenient, pythonResultsText } from './python.js';

/** The framing for compact prompts: what BASE_SYSTEM_PROMPT and the python protocol say, briefly. */
export const COMPACT_SYSTEM_PROMPT =
  'You carry out requests by calling functions. To call, reply with only a Python list of calls ' +
  "with literal values: [func(arg=value), func2()]. If no function fits, or the request lacks a value a function requires, say so in plain text. When the turn's work is done, answer in plain text.";

const SHORT_TYPE: Readonly<Record<string, string>> = {
  string: 'str',
  integer: 'int',
  number: 'float',
  boolean: 'bool',
  object: 'dict',
  array: 'list',
};

/** `str`, `list[float]`, `dict{name: str, age?: int}`, `'asc'|'desc'` */
export function compactType(p: JsonSchemaLike): string {
  if (p.enum && p.enum.length > 0) return p.enum.map((v) => JSON.stringify(v)).join('|');
  const t = p.type === undefined ? 'string' : (JSON_SCHEMA_TYPE_OF[p.type] ?? p.type);
  const short = SHORT_TYPE[t] ?? t;
  if (t === 'array' && p.items) return `list[${compactType(p.items)}]`;
  if (t === 'object' && p.properties && Object.keys(p.properties).length > 0) {
    return `dict{${compactParams(p.properties, p.required ?? [])}}`;
  }
  return short;
}

function compactParams(props: Readonly<Record<string, JsonSchemaLike>>, required: readonly string[]): string {
  return Object.entries(props)
    .map(([k, v]) => `${k}${required.includes(k) ? '' : '?'}: ${compactType(v)}`)
    .join(', ');
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** Descriptions of a parameter and, for lists of objects and objects, of their fields. */
function paramNotes(name: string, p: JsonSchemaLike, out: string[]): void {
  const d = oneLine(p.description ?? '');
  if (d) out.push(`${name}: ${d}`);
  const fields = p.properties ?? p.items?.properties;
  if (fields) for (const [k, v] of Object.entries(fields)) paramNotes(`${name}.${k}`, v, out);
}

/** One tool as `name(arg: type, opt?: type) Description. arg: note; opt: note` */
export function compactToolLine(tool: OpenAiTool): string {
  const f = tool.function;
  const props = f.parameters.properties ?? {};
  const notes: string[] = [];
  for (const [k, v] of Object.entries(props)) paramNotes(k, v, notes);
  const description = oneLine(f.description);
  const tail = [description, notes.join('; ')].filter((s) => s !== '').join(' ');
  return `${f.name}(${compactParams(props, f.parameters.required ?? [])})${tail ? ` ${tail}` : ''}`;
}

export function compactToolLines(tools: readonly OpenAiTool[]): string {
  return tools.map(compactToolLine).join('\n');
}

export const compactFormat: FormatAdapter = textFormat({
  format: 'compact',
  schemaShown: { requiredMarks: true, types: true },
  basePrompt: COMPACT_SYSTEM_PROMPT,
  toolsSection: (tools) => `Functions:\n${compactToolLines(tools)}`,
  addedTools: compactToolLines,
  decodeText: decodePythonTextLenient,
  resultsText: pythonResultsText,
});
