/**
 * BFCL v4's agentic checker (memory and web search), rule for rule: the reference's
 * `agentic_checker` and the part of its `agentic_runner` that picks the response to check.
 *
 * The answer and the response are both standardised (the characters `,./-_*^()` removed, then
 * Python's `str.lower()`, then `'` -> `"`); the verdict is whether some standardised answer occurs
 * in the standardised response between Python `re` word boundaries. Python's `\b` is Unicode-aware
 * (a word character is a letter, a number or `_`), JavaScript's is ASCII-only even with the `u`
 * flag, so the boundary is computed here by Python's rule instead of with a JS regex.
 */

import { str as pyStr } from '../../py/format.js';
import { parsePyJson } from '../../py/json.js';
import { decodeExecutePrompting } from '../../py/prompting.js';

/** The reference's `standardize_string`. */
export function standardize(s: string): string {
  return s
    .replace(/[,./\-_*^()]/g, '')
    .toLowerCase()
    .replaceAll("'", '"');
}

/** Python's `\w` for a `str` pattern: `str.isalnum()` or `_` (letters Lu/Ll/Lt/Lm/Lo, numbers). */
const WORD = /^[\p{L}\p{N}_]$/u;

/** The code point ending just before UTF-16 index `i` (undefined at the start). */
function codePointBefore(s: string, i: number): string | undefined {
  if (i <= 0) return undefined;
  const low = s.charCodeAt(i - 1);
  if (low >= 0xdc00 && low <= 0xdfff && i >= 2) {
    const high = s.charCodeAt(i - 2);
    if (high >= 0xd800 && high <= 0xdbff) return s.slice(i - 2, i);
  }
  return s[i - 1];
}

function codePointAt(s: string, i: number): string | undefined {
  if (i >= s.length) return undefined;
  return String.fromCodePoint(s.codePointAt(i)!);
}

const isWord = (c: string | undefined) => c !== undefined && WORD.test(c);

/** Python's `\b` at UTF-16 index `i` of `s`. */
function isBoundary(s: string, i: number): boolean {
  return isWord(codePointBefore(s, i)) !== isWord(codePointAt(s, i));
}

/** `re.search(rf"\b{re.escape(needle)}\b", haystack) is not None`, with Python's semantics. */
export function searchAtWordBoundaries(needle: string, haystack: string): boolean {
  // An empty needle (an answer made only of removed punctuation) matches at any boundary.
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + 1)) {
    if (isBoundary(haystack, at) && isBoundary(haystack, at + needle.length)) return true;
    if (at >= haystack.length) break;
  }
  return false;
}

/** What `str(x)` of a JSON value gives in Python (a result file's non-text response). */
function pythonStr(x: unknown): string {
  if (typeof x === 'string') return x;
  if (x === undefined) return 'None';
  return pyStr(parsePyJson(JSON.stringify(x)));
}

export interface AgenticCheck {
  readonly valid: boolean;
  readonly errorType?: string;
  readonly errorMessage?: string;
  /** the response that was checked (the last step that is not a tool call) */
  readonly lastMessage?: unknown;
  readonly standardizedResponse?: string;
  readonly standardizedAnswers?: readonly string[];
}

/** The reference's `agentic_checker(model_response, possible_answer_list)`. */
export function agenticChecker(response: unknown, possibleAnswers: readonly string[]): AgenticCheck {
  const answers = possibleAnswers.map(standardize);
  let r = response;
  if (Array.isArray(r)) r = r[0];
  const text = pythonStr(r);
  const standardized = standardize(text);
  for (const a of answers) if (searchAtWordBoundaries(a, standardized)) return { valid: true };
  return {
    valid: false,
    errorType: 'agentic:answer_not_found',
    errorMessage: 'None of the expected answers were found in the model response.',
    standardizedResponse: standardized,
    standardizedAnswers: answers,
  };
}

/**
 * Whether one step of a result file decodes to tool calls. Text is read by BFCL's default
 * prompting decoder (as `seal verify` reads multi-turn text); a list is a step of structured calls
 * (an FC model's), decoded as the FC handlers' `convert_to_function_call` does. A step that
 * decodes to nothing counts as not a call, as the reference's `is_empty_execute_response` says.
 */
export function isCallStep(step: unknown): boolean {
  if (typeof step === 'string') {
    const d = decodeExecutePrompting(step);
    return d.ok && !(d.calls.length === 0 || (d.calls.length === 1 && d.calls[0] === ''));
  }
  const items = Array.isArray(step) ? step : step && typeof step === 'object' ? [step] : undefined;
  if (!items || items.length === 0) return false;
  // what convert_to_function_call makes of it must be a non-empty list of calls
  let calls = 0;
  for (const item of items) {
    // a call string, as seal's own result files and the official multi-turn ones write calls
    if (typeof item === 'string') {
      if (!isCallStep(item)) return false;
      calls++;
      continue;
    }
    if (!item || typeof item !== 'object' || Array.isArray(item)) return false;
    for (const v of Object.values(item as Record<string, unknown>)) {
      let args: unknown = v;
      if (typeof v === 'string') {
        try {
          args = JSON.parse(v);
        } catch {
          return false;
        }
      }
      if (!args || typeof args !== 'object' || Array.isArray(args)) return false;
      calls++;
    }
  }
  return calls > 0;
}

/**
 * The reference's verdict on one result entry: the result must be one turn (a list of one list of
 * steps); the response checked is the last step that is not a tool call; a falsy one (no such step,
 * or an empty text) fails as `agentic:no_last_message`.
 */
export function checkAgenticResult(result: unknown, possibleAnswers: readonly string[]): AgenticCheck {
  if (!Array.isArray(result) || result.length !== 1)
    return {
      valid: false,
      errorType: 'agentic:inference_error',
      errorMessage: 'Error during inference phase. Model did not output a list of model responses.',
    };
  const steps: unknown = result[0];
  // The reference would crash on a turn that is not a list; it is an inference error here.
  if (!Array.isArray(steps))
    return {
      valid: false,
      errorType: 'agentic:inference_error',
      errorMessage: 'Error during inference phase. The turn is not a list of steps.',
    };
  let last: unknown;
  for (const step of steps) if (!isCallStep(step)) last = step;
  if (!pythonTruthy(last))
    return {
      valid: false,
      errorType: 'agentic:no_last_message',
      errorMessage: 'Cannot find the last chat message that is not a function call.',
    };
  return { ...agenticChecker(last, possibleAnswers), lastMessage: last };
}

function pythonTruthy(x: unknown): boolean {
  if (x === undefined || x === null || x === false || x === 0 || x === '') return false;
  if (Array.isArray(x)) return x.length > 0;
  if (typeof x === 'object') return Object.keys(x).length > 0;
  return true;
}
