/**
 * JSON as the cookbook's Python renderers read and write it. Several formats write a tool call's
 * arguments or a tool's schema with Python's `json.dumps` (ensure_ascii, `", "` and `": "`) or a
 * scalar with `str()`, after `json.loads`: `1e21` comes out `1e+21`, `30.0` stays `30.0` where
 * JavaScript would write `30`, `"Zoë"` becomes `"Zo\u00eb"`, `true` as a scalar becomes `True`.
 * So values are parsed into a tree that keeps each number's text and each value's source text,
 * and written back the Python way; JavaScript numbers never stand in for the model's.
 */

export type PyValue =
  | { readonly kind: 'object'; readonly entries: ReadonlyMap<string, PyValue>; readonly raw: string }
  | { readonly kind: 'array'; readonly items: readonly PyValue[]; readonly raw: string }
  | { readonly kind: 'string'; readonly value: string; readonly raw: string }
  | { readonly kind: 'number'; readonly raw: string }
  | { readonly kind: 'bool'; readonly value: boolean; readonly raw: string }
  | { readonly kind: 'null'; readonly raw: string };

class JsonError extends Error {}

const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;

/**
 * Strict JSON (what both `JSON.parse` and Python's `json.loads` accept, less Python's NaN and
 * Infinity, which no JSON consumer downstream reads), or an error message. Duplicate keys keep the
 * first key's place and the last value, as a Python dict does.
 */
export function parseJson(text: string): { value: PyValue } | { error: string } {
  let pos = 0;
  const ws = () => {
    while (pos < text.length && ' \t\n\r'.includes(text[pos]!)) pos++;
  };
  const fail = (what: string): never => {
    throw new JsonError(`${what} at char ${pos}`);
  };
  const str = (): string => {
    pos++; // the opening quote
    let out = '';
    for (;;) {
      if (pos >= text.length) fail('Unterminated string');
      const c = text[pos]!;
      if (c === '"') {
        pos++;
        return out;
      }
      if (c === '\\') {
        const e = text[pos + 1];
        if (e === 'u') {
          const hex = text.slice(pos + 2, pos + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('Invalid \\uXXXX escape');
          out += String.fromCharCode(Number.parseInt(hex, 16));
          pos += 6;
        } else if (e !== undefined && ESCAPES[e] !== undefined) {
          out += ESCAPES[e];
          pos += 2;
        } else fail('Invalid \\escape');
      } else if (c < ' ') fail('Invalid control character');
      else {
        out += c;
        pos++;
      }
    }
  };
  const value = (): PyValue => {
    ws();
    const start = pos;
    const c = text[pos];
    const raw = () => text.slice(start, pos);
    if (c === '{') {
      pos++;
      const entries = new Map<string, PyValue>();
      ws();
      if (text[pos] === '}') {
        pos++;
        return { kind: 'object', entries, raw: raw() };
      }
      for (;;) {
        ws();
        if (text[pos] !== '"') fail('Expecting property name enclosed in double quotes');
        const key = str();
        ws();
        if (text[pos] !== ':') fail("Expecting ':' delimiter");
        pos++;
        entries.set(key, value());
        ws();
        if (text[pos] === ',') pos++;
        else if (text[pos] === '}') {
          pos++;
          return { kind: 'object', entries, raw: raw() };
        } else fail("Expecting ',' delimiter");
      }
    }
    if (c === '[') {
      pos++;
      const items: PyValue[] = [];
      ws();
      if (text[pos] === ']') {
        pos++;
        return { kind: 'array', items, raw: raw() };
      }
      for (;;) {
        items.push(value());
        ws();
        if (text[pos] === ',') pos++;
        else if (text[pos] === ']') {
          pos++;
          return { kind: 'array', items, raw: raw() };
        } else fail("Expecting ',' delimiter");
      }
    }
    if (c === '"') {
      const v = str();
      return { kind: 'string', value: v, raw: raw() };
    }
    for (const [word, v] of [
      ['true', { kind: 'bool', value: true }],
      ['false', { kind: 'bool', value: false }],
      ['null', { kind: 'null' }],
    ] as const)
      if (text.startsWith(word, pos)) {
        pos += word.length;
        return { ...v, raw: word } as PyValue;
      }
    NUMBER.lastIndex = pos;
    const m = NUMBER.exec(text);
    if (m) {
      pos += m[0].length;
      return { kind: 'number', raw: m[0] };
    }
    return fail('Expecting value');
  };
  try {
    const v = value();
    ws();
    if (pos !== text.length) fail('Extra data');
    return { value: v };
  } catch (e) {
    if (e instanceof JsonError) return { error: e.message };
    throw e;
  }
}

/** Python's `repr(float(text))`: the shortest digits that round-trip, in Python's layout */
function pyFloat(text: string): string {
  const x = Number(text);
  if (x === Number.POSITIVE_INFINITY) return 'inf';
  if (x === Number.NEGATIVE_INFINITY) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, exp] = Math.abs(x).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const e = Number(exp);
  const sign = x < 0 ? '-' : '';
  if (e < -4 || e >= 16) {
    const tail = digits.length > 1 ? `.${digits.slice(1)}` : '';
    const ee = Math.abs(e).toString().padStart(2, '0');
    return `${sign}${digits[0]}${tail}e${e < 0 ? '-' : '+'}${ee}`;
  }
  if (e < 0) return `${sign}0.${'0'.repeat(-e - 1)}${digits}`;
  const whole = digits.slice(0, e + 1).padEnd(e + 1, '0');
  const frac = digits.slice(e + 1);
  return `${sign}${whole}.${frac || '0'}`;
}

/** a JSON number's text as Python reads and writes it back: an int exactly, a float by repr */
function pyNumber(raw: string): string {
  return /[.eE]/.test(raw) ? pyFloat(raw) : BigInt(raw).toString();
}

/** a string as `json.dumps` writes it (ensure_ascii: everything outside printable ASCII escaped) */
export function pyString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i]!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    // UTF-16 code units, so a character past the BMP comes out as its surrogate pair, as Python's does
    else if (c < 0x20 || c > 0x7e) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** `json.dumps(value)` with Python's default separators */
export function pyDumps(v: PyValue): string {
  switch (v.kind) {
    case 'object':
      return `{${[...v.entries].map(([k, x]) => `${pyString(k)}: ${pyDumps(x)}`).join(', ')}}`;
    case 'array':
      return `[${v.items.map(pyDumps).join(', ')}]`;
    case 'string':
      return pyString(v.value);
    case 'number': {
      const n = pyNumber(v.raw);
      // json.dumps writes an overflowing float as JavaScript's names for it
      return n === 'inf' ? 'Infinity' : n === '-inf' ? '-Infinity' : n;
    }
    case 'bool':
      return v.value ? 'true' : 'false';
    case 'null':
      return 'null';
  }
}

/** `str(value)` of a scalar, `json.dumps` of a container: how the Qwen3.5 template writes a parameter */
export function pyStr(v: PyValue): string {
  switch (v.kind) {
    case 'string':
      return v.value;
    case 'number':
      return pyNumber(v.raw);
    case 'bool':
      return v.value ? 'True' : 'False';
    case 'null':
      return 'None';
    default:
      return pyDumps(v);
  }
}

/**
 * A JavaScript value (a tool's schema) as the Python value it stands for. An integral number is an
 * int: the schemas come from JSON where `1.0` and `1` are already one number.
 */
export function fromJs(x: unknown): PyValue {
  if (x === null || x === undefined) return { kind: 'null', raw: 'null' };
  if (typeof x === 'string') return { kind: 'string', value: x, raw: JSON.stringify(x) };
  if (typeof x === 'boolean') return { kind: 'bool', value: x, raw: String(x) };
  if (typeof x === 'number') {
    // JSON has no NaN or Infinity; JSON.stringify writes them as null too
    if (!Number.isFinite(x)) return { kind: 'null', raw: 'null' };
    return { kind: 'number', raw: Number.isSafeInteger(x) ? String(x) : x.toExponential() };
  }
  if (Array.isArray(x)) return { kind: 'array', items: x.map(fromJs), raw: '' };
  const entries = new Map<string, PyValue>();
  for (const [k, v] of Object.entries(x as object)) if (v !== undefined) entries.set(k, fromJs(v));
  return { kind: 'object', entries, raw: '' };
}

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
