/**
 * Python's way of reading and writing values, for the families whose cookbook renderer writes tool
 * schemas and call arguments with Python (`json.dumps`, `str()`, `repr()`) after `json.loads`, and
 * reads a model's calls with `json.loads`: Qwen3's and Qwen3.5's declarations and calls, Kimi K2's
 * JSON declaration and K2.5's TypeScript one, Nemotron 3's XML declaration and call parameters,
 * gpt-oss's defaults and examples.
 *
 * Why Python's values and not JavaScript's: a JSON number keeps whether it was an int or a float
 * (Python writes `30.0` for the float and `30` for the int, `1e+21` for the float 1e21), a string
 * is escaped as json.dumps escapes it (`"Zoë"` becomes `"Zo\u00eb"`), a scalar's `str()` is
 * Python's (`True`, `None`). The value model, the JSON reader and the writers are the BFCL port's
 * (src/envs/py), so there is one of each in the project; this module adds what the families
 * need on top: the strict reader that keeps the text of each value, the conversion of the
 * JavaScript values a chat holds, and Python's whitespace.
 */
import { type JsonDumpsOptions, jsonDumps, jsonString, repr, str } from '../../envs/py/format.js';
import { PyJsonSyntaxError, parsePySpanned, type Spanned } from '../../envs/py/json.js';
import type { PyDict, PyValue } from '../../envs/py/values.js';
import { PyFloat } from '../renderer.js';

export type { JsonDumpsOptions, PyDict, PyValue, Spanned };
/** Python's `json.dumps(value, **options)`; `jsonString` is json.dumps of one str */
export { jsonDumps as dumps, jsonString, repr as pyRepr, str as pyStr };

/**
 * Strict JSON as Python's `json.loads` reads it (ints and floats kept apart, a repeated key keeps
 * its first place and its last value), less NaN and Infinity, which no JSON consumer downstream
 * reads; with where the value's text is (and each member's, for an object), so that a model's
 * `30.0` can be passed on as written. Bad JSON gives the reason.
 */
export function parseJson(text: string): Spanned | { readonly error: string } {
  try {
    return parsePySpanned(text, { strict: true });
  } catch (e) {
    if (e instanceof PyJsonSyntaxError) return { error: e.message };
    throw e;
  }
}

/**
 * A JavaScript value (a tool's schema, a call's arguments object) as the Python value it stands
 * for. A chat read by readChatLine keeps Python's types: an integral float is a PyFloat, an int
 * beyond 2^53 a bigint. Where only a JavaScript number is left, an integer within 2^53 is an int
 * (a schema's `1` and `1.0` are one number by then, and the int is the common text) and any other
 * number a float (`1e21`). Objects and Maps become dicts in their order, without undefined members.
 */
export function fromJs(x: unknown): PyValue {
  if (x === null || x === undefined) return null;
  if (typeof x === 'string' || typeof x === 'boolean' || typeof x === 'bigint') return x;
  if (typeof x === 'number') return Number.isSafeInteger(x) ? BigInt(x) : x;
  if (x instanceof PyFloat) return x.value;
  if (Array.isArray(x)) return x.map(fromJs);
  const entries = x instanceof Map ? x.entries() : Object.entries(x as object);
  const dict: PyDict = new Map();
  for (const [k, v] of entries) if (v !== undefined) dict.set(String(k), fromJs(v));
  return dict;
}

/**
 * How the templates write a value between tags (Qwen3.5's and Nemotron 3's parameters):
 * json.dumps of a dict or a list, str() of anything else.
 */
export const tagText = (v: PyValue): string => (v instanceof Map || Array.isArray(v) ? jsonDumps(v) : str(v));

/** Python's `str.isspace()` characters, what `str.strip()` and `\s` in a `re` pattern mean */
export const PY_SPACE =
  '\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const LEAD = new RegExp(`^[${PY_SPACE}]+`);
const TRAIL = new RegExp(`[${PY_SPACE}]+$`);

/** Python's `s.strip()` */
export const pyStrip = (s: string): string => s.replace(LEAD, '').replace(TRAIL, '');

/** Python's `s.strip(chars)` / `lstrip(chars)` for a set of single characters */
export function stripChars(s: string, chars: string, side: 'both' | 'left' = 'both'): string {
  let a = 0;
  let b = s.length;
  while (a < b && chars.includes(s[a]!)) a++;
  if (side === 'both') while (b > a && chars.includes(s[b - 1]!)) b--;
  return s.slice(a, b);
}
