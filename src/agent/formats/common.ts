/**
 * What the three tool-call formats share: the base system prompt, stripping reasoning blocks,
 * turning a structured call (name + parsed JSON arguments) into a call string, and the
 * environment's answer to malformed output. Nothing here evaluates model output: JSON goes
 * through the project's JSON reader and Python call syntax through its parser.
 */

import { structuredCallToString } from '../../envs/py/calls.js';
import { jsonDumps } from '../../envs/py/format.js';
import { parsePyJson } from '../../envs/py/json.js';
import { PYTHON_KEYWORDS } from '../../envs/py/parse.js';
import type { PyDict, PyValue } from '../../envs/py/values.js';
import type { OpenAiTool } from '../../envs/tools.js';
import type { ChatMessage, Completion } from '../../policy/policy.js';
import type { SchemaShown } from '../../seal/interface.js';
import type { DecodedStep, FormatAdapter } from '../format.js';

/**
 * The task framing every format shares (native sends exactly this; the text formats append
 * their call protocol and the tool schemas).
 */
export const BASE_SYSTEM_PROMPT = [
  'You are an expert at using functions (tools) to carry out what a user asks. You are given a ' +
    "request and a set of functions. Use one or more function calls to achieve the request's goal. " +
    'If none of the functions fits, say so. If the request lacks a parameter a function requires, ' +
    'say so instead of guessing a value.',
  'At each turn, try your best to complete everything the user asked for within that turn. Keep ' +
    'calling functions, using their results, until you have done all you can. When you have no more ' +
    'functions to call, answer the user in plain text: the turn is then complete and the conversation ' +
    'moves on to the next request.',
].join('\n\n');

/** The environment's answer to output that does not decode (as the SEAL reference env says it). */
export function invalidFormatText(error: string): string {
  return `[ERROR] Invalid tool call format: ${error}`;
}

/**
 * Removes reasoning: every `<think>...</think>` (or `<thinking>...</thinking>`) block, everything
 * before a closing tag that has no opening one (chat templates that open the block in the
 * prompt), and everything after an opening tag that is never closed (output cut off while
 * thinking). Linear in the text's length.
 */
export function stripThinking(text: string): string {
  const tag = /<(\/?)think(?:ing)?>/gi;
  let parts: string[] = [];
  let start = 0;
  let inside = false;
  for (let m = tag.exec(text); m !== null; m = tag.exec(text)) {
    const closing = m[1] === '/';
    if (!closing) {
      if (!inside) parts.push(text.slice(start, m.index));
      inside = true;
    } else if (inside) {
      inside = false;
      start = m.index + m[0].length;
    } else {
      // a close without an open: everything so far was reasoning
      parts = [];
      start = m.index + m[0].length;
    }
  }
  if (!inside) parts.push(text.slice(start));
  return parts.join('');
}

/** The text between an opening ```lang line and a closing ``` (when the whole text is one fence). */
export function stripWholeFence(text: string): string {
  let s = text.trim();
  if (!s.startsWith('```')) return s;
  const nl = s.indexOf('\n');
  if (nl < 0) {
    // ```{...}``` on one line
    s = s.slice(3);
    return (s.endsWith('```') ? s.slice(0, -3) : s).trim();
  }
  s = s.slice(nl + 1);
  if (s.trimEnd().endsWith('```')) s = s.trimEnd().slice(0, -3);
  return s.trim();
}

const FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const ARGUMENT_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A short, printable quotation of model text for error messages. */
export function quote(s: string, max = 60): string {
  const t = s.length > max ? `${s.slice(0, max)}...` : s;
  return JSON.stringify(t);
}

/**
 * `name(k=repr(v), ...)` from a function name and parsed JSON arguments, through
 * `structuredCallToString`. Names that are not identifiers are rejected here: they would change
 * the call string's syntax (`"a=1, b"` as a key would smuggle in a second argument).
 */
export function callString(name: string, args: PyDict): string {
  if (!FUNCTION_NAME.test(name) || name.split('.').some((part) => PYTHON_KEYWORDS.has(part))) {
    throw new Error(`function name ${quote(name)} is not a valid identifier`);
  }
  for (const k of args.keys())
    if (typeof k !== 'string' || !ARGUMENT_NAME.test(k) || PYTHON_KEYWORDS.has(k))
      throw new Error(`argument name ${quote(String(k))} of ${name} is not a valid identifier`);
  return structuredCallToString(name, jsonDumps(args));
}

/**
 * Arguments as a model may give them: a JSON object, its JSON text ('' for none), or null /
 * absent for none. Anything else is an error naming the function.
 */
export function argumentsObject(name: string, args: PyValue | undefined): PyDict {
  if (args === undefined || args === null) return new Map();
  if (typeof args === 'string') {
    const text = args.trim();
    if (text === '') return new Map();
    let parsed: PyValue;
    try {
      parsed = parsePyJson(text);
    } catch (e) {
      throw new Error(`arguments of ${name} are a string that is not valid JSON: ${errorText(e)}`);
    }
    if (!(parsed instanceof Map)) throw new Error(`arguments of ${name} are not a JSON object`);
    return parsed;
  }
  if (!(args instanceof Map)) throw new Error(`arguments of ${name} are not a JSON object`);
  return args;
}

/** A hint when JSON failed because the model wrote Python literals. */
export function pythonLiteralHint(text: string): string {
  return /\b(True|False|None)\b/.test(text) ? ' (use JSON true/false/null, not Python True/False/None)' : '';
}

export function errorText(e: unknown): string {
  if (e instanceof RangeError && /call stack/i.test(e.message)) return 'input is nested too deeply';
  return e instanceof Error ? e.message : String(e);
}

/** Runs a decoder; anything it throws becomes a parse error (decode never throws). */
export function guardDecode(f: () => DecodedStep): DecodedStep {
  try {
    return f();
  } catch (e) {
    return { kind: 'parse_error', error: errorText(e) };
  }
}

/** Python's json.dumps(value) (", " and ": " separators, ASCII escapes), as chat templates render tools. */
export function pyJson(value: unknown): string {
  return jsonDumps(parsePyJson(JSON.stringify(value)));
}

/** What distinguishes one text tool-call format (tools in the prompt, calls in the text) from another. */
export interface TextFormatSpec {
  readonly format: 'hermes' | 'python' | 'compact';
  /** what the tools section states for every parameter already (FormatAdapter.schemaShown) */
  readonly schemaShown?: SchemaShown;
  /** the task framing before the tools section; default BASE_SYSTEM_PROMPT */
  readonly basePrompt?: string;
  /** the part of the system prompt that presents the tools */
  toolsSection(tools: readonly OpenAiTool[]): string;
  /** the tools revealed on the miss_func turn, placed before the fixed sentence */
  addedTools(tools: readonly OpenAiTool[]): string;
  decodeText(text: string): DecodedStep;
  resultsText(calls: readonly string[], results: readonly string[]): string;
}

/**
 * A format whose tools live in the system prompt and whose calls live in the assistant's text:
 * the text goes back into the history as is, results come back as one user message, and output
 * that does not parse is answered with the env service's error message.
 */
export function textFormat(spec: TextFormatSpec): FormatAdapter {
  return {
    format: spec.format,
    ...(spec.schemaShown ? { schemaShown: spec.schemaShown } : {}),
    systemPrompt: (tools, framing) =>
      `${framing ?? spec.basePrompt ?? BASE_SYSTEM_PROMPT}\n\n${spec.toolsSection(tools)}`,
    requestTools: () => undefined,
    addedFunctionsMessage: (added, fixedText) => `${spec.addedTools(added)}\n${fixedText}`,
    decode: (completion: Completion) =>
      guardDecode(() => spec.decodeText(typeof completion.text === 'string' ? completion.text : '')),
    assistantMessage: (completion: Completion): ChatMessage => ({
      role: 'assistant',
      content: completion.text,
    }),
    toolResultMessages(_completion, decoded, results): ChatMessage[] {
      if (decoded.kind !== 'calls') return [];
      if (results.length !== decoded.calls.length) {
        throw new Error(`${results.length} results for ${decoded.calls.length} calls`);
      }
      return [{ role: 'user', content: spec.resultsText(decoded.calls, results) }];
    },
    parseErrorMessage: (_completion, error): ChatMessage[] => [
      { role: 'user', content: invalidFormatText(error) },
    ],
  };
}
