import { ValueError_ } from './errors.js';
import type { PyKey, PyValue } from './values.js';
import { PyObject, PyOpaque, PySet, PyTuple, typeName } from './values.js';

/** CPython 3.11's default `sys.get_int_max_str_digits()`. */
const INT_MAX_STR_DIGITS = 4300;
/** The smallest int with more digits than that. */
const INT_TOO_LONG = 10n ** BigInt(INT_MAX_STR_DIGITS);

/**
 * `repr(int)` (also what `str()` and json.dumps write). CPython refuses to convert an int of more
 * than 4300 decimal digits (the sign not counted) and raises ValueError instead, so e.g. a method
 * returning `{"result": 10 ** 5000}` reads as that error in the executor. Comparing with 10^4300
 * decides that without the (quadratic) decimal conversion of a huge int.
 */
function intRepr(v: bigint): string {
  if (v >= INT_TOO_LONG || v <= -INT_TOO_LONG) {
    throw ValueError_(
      `Exceeds the limit (${INT_MAX_STR_DIGITS} digits) for integer string conversion; ` +
        'use sys.set_int_max_str_digits() to increase the limit',
    );
  }
  return v.toString();
}

/**
 * Python's `repr(float)`: the shortest digits that round-trip (JavaScript finds the same
 * digits), laid out the Python way: fixed notation for decimal exponents in [-4, 16) with a
 * trailing `.0` when integral, otherwise `d.ddde+XX`.
 */
export function floatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Number.POSITIVE_INFINITY) return 'inf';
  if (x === Number.NEGATIVE_INFINITY) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const ax = Math.abs(x);
  if (ax >= 1e-4 && ax < 1e16) {
    // Fast path: in this range JavaScript also writes the shortest digits in fixed notation.
    const s = String(x);
    return s.includes('.') ? s : `${s}.0`;
  }
  const sign = x < 0 ? '-' : '';
  const [mant, expText] = Math.abs(x).toExponential().split('e') as [string, string];
  const exp = Number(expText);
  const digits = mant.replace('.', '');
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
    const intLen = exp + 1;
    if (digits.length <= intLen) return `${sign}${digits}${'0'.repeat(intLen - digits.length)}.0`;
    return `${sign}${digits.slice(0, intLen)}.${digits.slice(intLen)}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const e = Math.abs(exp) < 10 ? `0${Math.abs(exp)}` : String(Math.abs(exp));
  return `${sign}${m}e${exp < 0 ? '-' : '+'}${e}`;
}

/** Python's `repr(str)`. */
export function strRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${hex(cp, 2)}`;
    else if (cp < 0x7f) out += ch;
    else if (isPrintable(ch)) out += ch;
    else if (cp <= 0xff) out += `\\x${hex(cp, 2)}`;
    else if (cp <= 0xffff) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return out + quote;
}

// Python's str.isprintable: everything except categories Cc, Cf, Cs, Co, Cn, Zl, Zp, Zs (but ' ').
const NON_PRINTABLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;
function isPrintable(ch: string): boolean {
  return !NON_PRINTABLE.test(ch);
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

/** Python's `repr(value)`. */
export function repr(v: PyValue): string {
  if (v === null) return 'None';
  switch (typeof v) {
    case 'boolean':
      return v ? 'True' : 'False';
    case 'bigint':
      return intRepr(v);
    case 'number':
      return floatRepr(v);
    case 'string':
      return strRepr(v);
  }
  if (Array.isArray(v)) return `[${v.map(repr).join(', ')}]`;
  if (v instanceof Map) {
    const parts: string[] = [];
    for (const [k, val] of v) parts.push(`${repr(k)}: ${repr(val)}`);
    return `{${parts.join(', ')}}`;
  }
  if (v instanceof PyTuple) {
    if (v.items.length === 1) return `(${repr(v.items[0]!)},)`;
    return `(${v.items.map(repr).join(', ')})`;
  }
  if (v instanceof PySet) {
    if (v.size === 0) return 'set()';
    return `{${[...v.items].map((x) => repr(x)).join(', ')}}`;
  }
  if (v instanceof PyOpaque) return v.reprText;
  if (v instanceof PyObject) return v.pyRepr();
  return String(v);
}

/** Python's `str(value)`: strings as they are, everything else as repr. */
export function str(v: PyValue): string {
  return typeof v === 'string' ? v : repr(v);
}

/** Python str ordering (by code point; JavaScript's default compares UTF-16 units). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a.charCodeAt(i) !== b.charCodeAt(i)) return a.codePointAt(i)! - b.codePointAt(i)!;
  }
  return a.length - b.length;
}

/** Raised by `jsonDumps` where Python's json.dumps raises TypeError. */
export class NotJsonSerializable extends Error {}

/** The keyword arguments of Python's `json.dumps` that seal writes with. */
export interface JsonDumpsOptions {
  /** Escape everything outside printable ASCII (Python's default, true). */
  readonly ensureAscii?: boolean;
  /** A number of spaces or the indent string; null or absent for one line. */
  readonly indent?: number | string | null;
  /** The item and key separators: Python's default `", "` and `": "` (`","` and `": "` with an indent). */
  readonly separators?: readonly [string, string] | null;
  /** Keys in Python's sorted() order (by code point); a dict with keys other than str raises. */
  readonly sortKeys?: boolean;
}

interface DumpContext {
  readonly string: (s: string) => string;
  readonly indent: string | null;
  readonly item: string;
  readonly key: string;
  readonly sortKeys: boolean;
}

const DEFAULT_DUMP: DumpContext = {
  string: jsonString,
  indent: null,
  item: ', ',
  key: ': ',
  sortKeys: false,
};

/**
 * Python's `json.dumps(value, **options)`; by default separators `", "` / `": "`,
 * `ensure_ascii=True` (non-ASCII as `\uXXXX`, astral characters as surrogate pairs), floats in
 * repr form with `NaN`/`Infinity`, int/float/bool/None keys turned into strings.
 */
export function jsonDumps(v: PyValue, options?: JsonDumpsOptions): string {
  const out: string[] = [];
  dumpInto(v, out, options ? dumpContext(options) : DEFAULT_DUMP, 0);
  return out.join('');
}

function dumpContext(o: JsonDumpsOptions): DumpContext {
  const indent =
    o.indent === null || o.indent === undefined
      ? null
      : typeof o.indent === 'number'
        ? ' '.repeat(o.indent)
        : o.indent;
  const [item, key] = o.separators ?? (indent === null ? [', ', ': '] : [',', ': ']);
  const ascii = o.ensureAscii ?? true;
  return {
    string: ascii ? jsonString : (s) => jsonString(s, false),
    indent,
    item,
    key,
    sortKeys: o.sortKeys ?? false,
  };
}

// Appends to one array instead of concatenating per level: long-context results hold lists of
// thousands of floats.
function dumpInto(v: PyValue, out: string[], c: DumpContext, depth: number): void {
  if (v === null) out.push('null');
  else if (typeof v === 'boolean') out.push(v ? 'true' : 'false');
  else if (typeof v === 'bigint') out.push(intRepr(v));
  else if (typeof v === 'number') out.push(jsonFloat(v));
  else if (typeof v === 'string') out.push(c.string(v));
  else if (Array.isArray(v) || v instanceof PyTuple) {
    const items = Array.isArray(v) ? v : v.items;
    out.push('[');
    for (let i = 0; i < items.length; i++) {
      newItem(out, c, depth, i);
      dumpInto(items[i]!, out, c, depth + 1);
    }
    closeWith(out, c, depth, items.length, ']');
  } else if (v instanceof Map) {
    out.push('{');
    let i = 0;
    for (const [k, val] of c.sortKeys ? sortedEntries(v) : v) {
      newItem(out, c, depth, i++);
      out.push(c.string(jsonKey(k)), c.key);
      dumpInto(val, out, c, depth + 1);
    }
    closeWith(out, c, depth, v.size, '}');
  } else {
    throw new NotJsonSerializable(`Object of type ${typeName(v)} is not JSON serializable`);
  }
}

function newItem(out: string[], c: DumpContext, depth: number, i: number): void {
  if (i > 0) out.push(c.item);
  if (c.indent !== null) out.push('\n', c.indent.repeat(depth + 1));
}

function closeWith(out: string[], c: DumpContext, depth: number, size: number, close: string): void {
  if (c.indent !== null && size > 0) out.push('\n', c.indent.repeat(depth));
  out.push(close);
}

function sortedEntries(d: ReadonlyMap<PyKey, PyValue>): [PyKey, PyValue][] {
  const entries = [...d];
  for (const [k] of entries)
    if (typeof k !== 'string')
      throw new NotJsonSerializable(`sort_keys: a key of type ${typeName(k)} among str keys`);
  return entries.sort(([a], [b]) => compareCodePoints(a as string, b as string));
}

function jsonFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Number.POSITIVE_INFINITY) return 'Infinity';
  if (x === Number.NEGATIVE_INFINITY) return '-Infinity';
  return floatRepr(x);
}

function jsonKey(k: PyKey): string {
  if (typeof k === 'string') return k;
  if (k === null) return 'null';
  if (typeof k === 'boolean') return k ? 'true' : 'false';
  if (typeof k === 'bigint') return intRepr(k);
  if (typeof k === 'number') return jsonFloat(k);
  throw new NotJsonSerializable('keys must be str, int, float, bool or None, not tuple');
}

const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

/**
 * A JSON string literal as Python's json.dumps writes it: with `ensure_ascii` (the default)
 * everything outside printable ASCII as `\uXXXX` (one per UTF-16 unit, so an astral character as
 * its surrogate pair), without it only `"`, `\` and control characters escaped.
 */
export function jsonString(s: string, ensureAscii = true): string {
  if (!ensureAscii)
    return `"${s.replace(/["\\\u0000-\u001f]/g, (c) => SHORT_ESCAPES[c] ?? `\\u${hex(c.charCodeAt(0), 4)}`)}"`;
  if (PLAIN_ASCII.test(s)) return `"${s}"`;
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c >= 0x20 && c < 0x7f) out += s[i];
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c === 0x08) out += '\\b';
    else if (c === 0x0c) out += '\\f';
    else out += `\\u${hex(c, 4)}`;
  }
  return out + '"';
}

/**
 * How the reference executor turns a method's return value into the result string:
 * str as is, dict through json.dumps (falling back to str(dict)), anything else str().
 */
export function resultToString(v: PyValue): string {
  if (typeof v === 'string') return v;
  if (v instanceof Map) {
    try {
      return jsonDumps(v);
    } catch (e) {
      if (e instanceof NotJsonSerializable) return repr(v);
      throw e;
    }
  }
  return str(v);
}
