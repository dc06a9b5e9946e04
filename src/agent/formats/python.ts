/**
 * BFCL prompting style: the system prompt lists the tool docs as JSON and asks for calls written
 * as a Python list, `[func_name1(params_name1=params_value1, ...), func_name2(params)]`, and
 * nothing else (the wording follows BFCL's default prompting system prompt). Calls are parsed,
 * never evaluated.
 *
 * Two decoding rules:
 *
 * - **official** (`pythonFormat`, what `seal eval --format python` scores with): BFCL's default
 *   prompting decoder exactly (envs/py/prompting.ts): text after the last `</think>`, backticks,
 *   newlines and spaces stripped at the ends, the rest must be one list of calls; keyword
 *   arguments only (positional ones are dropped, as the official decoder drops them). Anything
 *   else ends the turn: a text answer when it has no call in it, a parse error otherwise.
 * - **lenient** (`pythonLenientFormat` and the compact format; for training rollouts, where a
 *   readable reason beats a silent drop): reasoning is dropped first (`<think>` blocks, see
 *   `stripThinking`); call lists are found where they are clearly delimited: a code fence
 *   (```python, ```py, ```tool_code or a bare ```) whose content starts like a call (`[name(`,
 *   `[]` or `name(`), and, outside fences, a line that starts with `[name(` or `[]` (the list
 *   runs to its matching `]`, brackets inside strings ignored); prose around them is ignored and
 *   several lists are concatenated in order; without such a list, a whole text that is a bare
 *   call `name(...)` (or several, comma separated) counts as a list; anything else is a text
 *   answer, and so is an empty list `[]`; a delimited list that does not parse is a parse error
 *   carrying the parser's message. Positional arguments are kept and bound by the executor in
 *   the method's parameter order.
 *
 * Tool results go back as one `user` message: a header line, then per call, in order, the call
 * string on its own line followed by its result, calls separated by a blank line (see
 * `pythonResultsText`). BFCL's prompting handlers use a `tool` role message named by the call;
 * chat templates without tool calls render that as plain text, which this mirrors.
 */
import { decodePythonCallList } from '../../envs/py/calls.js';
import { decodeExecutePrompting, stripReasoningOfficial } from '../../envs/py/prompting.js';
import type { OpenAiTool } from '../../envs/tools.js';
import type { DecodedStep, FormatAdapter } from '../format.js';
import { errorText, stripThinking, textFormat } from './common.js';

export const PYTHON_CALL_FORMAT =
  '[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]';

/** Tool docs as BFCL's prompting prompt shows them: a JSON list of the functions, indented by 4. */
export function functionDocsJson(tools: readonly OpenAiTool[]): string {
  return JSON.stringify(
    tools.map((t) => t.function),
    null,
    4,
  );
}

export function pythonToolsSection(tools: readonly OpenAiTool[]): string {
  return [
    'If you decide to call any of the functions, your response MUST be only the calls, in the ' +
      `format ${PYTHON_CALL_FORMAT}, with literal argument values. Do not add any other text to ` +
      'such a response.',
    `Here is a list of functions in JSON format that you can invoke.\n${functionDocsJson(tools)}`,
  ].join('\n\n');
}

/** `[name(` or `[]` (with spaces allowed) at the start of s */
const LIST_START = /^\[\s*(?:[A-Za-z_][A-Za-z0-9_.]*\s*\(|\])/;
const LIST_START_AT = new RegExp(LIST_START.source.slice(1), 'y');
/** `name(` at the start of s */
const CALL_START = /^[A-Za-z_][A-Za-z0-9_.]*\s*\(/;

function looksLikeCalls(s: string): boolean {
  return LIST_START.test(s) || (CALL_START.test(s) && s.endsWith(')'));
}

/**
 * The end (exclusive) of the bracketed list that starts at `start` (a `[`): the matching `]`,
 * skipping brackets inside Python string literals. The text's end when it never closes.
 */
function listEnd(text: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      const triple = text.startsWith(c.repeat(3), i);
      const q = triple ? c.repeat(3) : c;
      i += q.length;
      while (i < text.length && !text.startsWith(q, i)) {
        if (text[i] === '\\') i++;
        else if (!triple && text[i] === '\n') break;
        i++;
      }
      i += q.length;
      continue;
    }
    if (c === '[' || c === '(' || c === '{') depth++;
    else if (c === ']' || c === ')' || c === '}') {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return text.length;
}

/** The clearly delimited call lists in a text (see the module's rules), in order. */
export function callListCandidates(text: string): string[] {
  const out: string[] = [];
  const lines = text.split('\n');
  // offset of each line in text
  const offsets: number[] = [];
  let off = 0;
  for (const l of lines) {
    offsets.push(off);
    off += l.length + 1;
  }
  let skipUntil = 0;
  for (let i = 0; i < lines.length; i++) {
    if (offsets[i]! < skipUntil) continue;
    const line = lines[i]!.trim();
    if (line.startsWith('```')) {
      let inside: string;
      if (line.length >= 6 && line.endsWith('```')) {
        inside = line.slice(3, -3).trim(); // ```[f(a=1)]``` on one line
      } else {
        let j = i + 1;
        while (j < lines.length && !lines[j]!.trim().startsWith('```')) j++;
        inside = lines
          .slice(i + 1, j)
          .join('\n')
          .trim();
        i = j;
      }
      if (looksLikeCalls(inside))
        out.push(inside.startsWith('[') ? inside.slice(0, listEnd(inside, 0)) : inside);
      continue;
    }
    const start = offsets[i]! + lines[i]!.indexOf('[');
    LIST_START_AT.lastIndex = start;
    if (line.startsWith('[') && LIST_START_AT.test(text)) {
      const end = listEnd(text, start);
      out.push(text.slice(start, end));
      skipUntil = end;
    }
  }
  return out;
}

/** The lenient rule (see the module's comment): for training rollouts and the compact format. */
export function decodePythonTextLenient(text: string): DecodedStep {
  const s = stripThinking(text).trim();
  if (s === '') return { kind: 'text' };
  let candidates = callListCandidates(s);
  if (candidates.length === 0 && CALL_START.test(s) && s.endsWith(')')) candidates = [s];
  if (candidates.length === 0) return { kind: 'text' };
  const calls: string[] = [];
  for (const c of candidates) {
    try {
      // one at a time: spreading a long flat list into push() would overflow the call stack
      for (const call of decodePythonCallList(c)) calls.push(call);
    } catch (e) {
      return { kind: 'parse_error', error: errorText(e) };
    }
  }
  return calls.length === 0 ? { kind: 'text' } : { kind: 'calls', calls };
}

/** something that looks like a call: a name followed by `(` */
const CALL_ATTEMPT = /[A-Za-z_][A-Za-z0-9_.]*\s*\(/;

/**
 * The official rule (see the module's comment): BFCL's default prompting decoder. Every failure
 * ends the turn as it does there; whether it is recorded as a text answer or a parse error only
 * matters to the diagnosis, never to the verdict.
 */
export function decodePythonTextOfficial(text: string): DecodedStep {
  const r = decodeExecutePrompting(stripReasoningOfficial(text));
  if (r.ok) return r.calls.length === 0 ? { kind: 'text' } : { kind: 'calls', calls: r.calls };
  if (!CALL_ATTEMPT.test(text)) return { kind: 'text' };
  return { kind: 'parse_error', error: `${r.errorType}: ${r.message}`.replace(/: $/, '') };
}

/** The user message carrying a step's results back: each call string, then its result. */
export function pythonResultsText(calls: readonly string[], results: readonly string[]): string {
  const parts = calls.map((c, i) => `${c}\n${results[i]!}`);
  return `Results of your function calls, in order:\n\n${parts.join('\n\n')}`;
}

/** BFCL's prompting format, decoded by the official rule: what evaluation uses. */
export const pythonFormat: FormatAdapter = textFormat({
  format: 'python',
  toolsSection: pythonToolsSection,
  addedTools: functionDocsJson,
  decodeText: decodePythonTextOfficial,
  resultsText: pythonResultsText,
});

/** The same prompt, decoded by the lenient rule: for training rollouts. */
export const pythonLenientFormat: FormatAdapter = textFormat({
  format: 'python',
  toolsSection: pythonToolsSection,
  addedTools: functionDocsJson,
  decodeText: decodePythonTextLenient,
  resultsText: pythonResultsText,
});
