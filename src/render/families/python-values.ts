/**
 * Python's way of writing values, for the families whose cookbook renderer writes tool schemas and
 * call arguments with Python (`json.dumps`, `str()`, `repr()`): Kimi K2's JSON tool declaration,
 * Kimi K2.5's TypeScript one, Nemotron 3's XML declaration and call parameters.
 *
 * Why a value type of its own and not JS values: a JSON number keeps whether it was an int or a
 * float (Python writes `30.0` for the float and `30` for the int, `1e+21` for the float 1e21), and
 * an object keeps its key order (a JS object moves integer-like keys first). Where seal only has
 * JS values (a tool's schema), a whole number is taken for an int.
 */

export type PyValue =
  | { readonly t: 'str'; readonly v: string }
  | { readonly t: 'int'; readonly v: bigint }
  | { readonly t: 'float'; readonly v: number }
  | { readonly t: 'bool'; readonly v: boolean }
  | { readonly t: 'null' }
  | { readonly t: 'list'; readonly items: readonly PyValue[] }
  | { readonly t: 'dict'; readonly entries: readonly (readonly [string, PyValue])[] };

/** a parsed JSON value and where its text is in the source (to keep the text a model wrote) */
export interface Spanned {
  readonly value: PyValue;
  readonly start: number;
  readonly end: number;
  /** an object's members with their spans, in the order written */
  readonly members?: readonly (readonly [string, Spanned])[];
}

class JsonError extends Error {}

/**
 * Parses JSON text as Python's json.loads reads it, less NaN/Infinity (which no JSON consumer of
 * seal accepts): duplicate keys keep their first place and their last value. Returns undefined
 * for text that is not one JSON value.
 */
export function parseJson(text: string): Spanned | undefined {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const fail = (): never => {
    throw new JsonError(`bad JSON at ${i}`);
  };
  const str = (): string => {
    if (text[i] !== '"') fail();
    i++;
    let out = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) return fail();
      if (c === '"') {
        i++;
        return out;
      }
      if (c === '\\') {
        const e = text[i + 1];
        const simple: Record<string, string> = {
          '"': '"',
          '\\': '\\',
          '/': '/',
          b: '\b',
          f: '\f',
          n: '\n',
          r: '\r',
          t: '\t',
        };
        if (e !== undefined && e in simple) {
          out += simple[e];
          i += 2;
        } else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          out += String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
        } else fail();
      } else if (c < ' ') fail();
      else {
        out += c;
        i++;
      }
    }
  };
  const value = (): Spanned => {
    ws();
    const start = i;
    const c = text[i];
    if (c === '{') {
      i++;
      const members: [string, Spanned][] = [];
      ws();
      if (text[i] === '}') i++;
      else
        for (;;) {
          ws();
          const key = str();
          ws();
          if (text[i] !== ':') fail();
          i++;
          members.push([key, value()]);
          ws();
          if (text[i] === ',') i++;
          else if (text[i] === '}') {
            i++;
            break;
          } else fail();
        }
      const order = new Map<string, PyValue>();
      for (const [k, v] of members) order.set(k, v.value);
      return { value: { t: 'dict', entries: [...order] }, start, end: i, members };
    }
    if (c === '[') {
      i++;
      const items: PyValue[] = [];
      ws();
      if (text[i] === ']') i++;
      else
        for (;;) {
          items.push(value().value);
          ws();
          if (text[i] === ',') i++;
          else if (text[i] === ']') {
            i++;
            break;
          } else fail();
        }
      return { value: { t: 'list', items }, start, end: i };
    }
    if (c === '"') return { value: { t: 'str', v: str() }, start, end: i };
    for (const [word, v] of [
      ['true', { t: 'bool', v: true }],
      ['false', { t: 'bool', v: false }],
      ['null', { t: 'null' }],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return { value: v, start, end: i };
      }
    }
    const m = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) fail();
    i += m![0].length;
    const v: PyValue =
      m![1] === undefined && m![2] === undefined
        ? { t: 'int', v: BigInt(m![0]) }
        : { t: 'float', v: Number(m![0]) };
    return { value: v, start, end: i };
  };
  try {
    const v = value();
    ws();
    return i === text.length ? v : undefined;
  } catch (e) {
    if (e instanceof JsonError) return undefined;
    throw e;
  }
}

/** a JS value (a tool schema) as Python would hold it after json.loads; whole numbers are ints */
export function fromJs(v: unknown): PyValue {
  if (typeof v === 'string') return { t: 'str', v };
  if (typeof v === 'boolean') return { t: 'bool', v };
  if (typeof v === 'number') return Number.isInteger(v) ? { t: 'int', v: BigInt(v) } : { t: 'float', v };
  if (typeof v === 'bigint') return { t: 'int', v };
  if (v === null || v === undefined) return { t: 'null' };
  if (Array.isArray(v)) return { t: 'list', items: v.map(fromJs) };
  return { t: 'dict', entries: Object.entries(v as object).map(([k, x]) => [k, fromJs(x)] as const) };
}

/** Python's repr() of a float: the shortest digits that read back, fixed between 1e-4 and 1e16 */
export function floatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mant, e] = Math.abs(x).toExponential().split('e') as [string, string];
  const digits = mant.replace('.', '');
  const exp = Number(e);
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return `${sign}${digits}${'0'.repeat(exp + 1 - digits.length)}.0`;
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

const JSON_SHORT: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

function jsonString(s: string, ensureAscii: boolean): string {
  // ensure_ascii escapes everything outside printable ASCII, one \uXXXX per UTF-16 unit as Python does
  const re = ensureAscii ? /["\\]|[^ -~]/g : /["\\\u0000-\u001f]/g;
  return `"${s.replace(re, (c) => JSON_SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}

/** Python's sort order of str keys: by code point, not by UTF-16 unit */
function codePointCompare(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let k = 0; k < Math.min(x.length, y.length); k++) if (x[k] !== y[k]) return x[k]! - y[k]!;
  return x.length - y.length;
}

export interface DumpsOptions {
  /** json.dumps's separators; Python's default is `, ` and `: ` */
  readonly compact?: boolean;
  readonly sortKeys?: boolean;
  /** Python's default is true */
  readonly ensureAscii?: boolean;
}

/** Python's json.dumps */
export function dumps(v: PyValue, o: DumpsOptions = {}): string {
  const [item, key] = o.compact ? [',', ':'] : [', ', ': '];
  const ascii = o.ensureAscii ?? true;
  const go = (x: PyValue): string => {
    switch (x.t) {
      case 'str':
        return jsonString(x.v, ascii);
      case 'int':
        return x.v.toString();
      case 'float':
        if (Number.isNaN(x.v)) return 'NaN';
        if (!Number.isFinite(x.v)) return x.v > 0 ? 'Infinity' : '-Infinity';
        return floatRepr(x.v);
      case 'bool':
        return x.v ? 'true' : 'false';
      case 'null':
        return 'null';
      case 'list':
        return `[${x.items.map(go).join(item)}]`;
      case 'dict': {
        const entries = o.sortKeys ? [...x.entries].sort(([a], [b]) => codePointCompare(a, b)) : x.entries;
        return `{${entries.map(([k, y]) => jsonString(k, ascii) + key + go(y)).join(item)}}`;
      }
    }
  };
  return go(v);
}

function strRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = '';
  for (const c of s) {
    const cp = c.codePointAt(0)!;
    if (c === '\\' || c === quote) out += `\\${c}`;
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\t') out += '\\t';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp > 0x7f && /[\p{C}\p{Z}]/u.test(c) && c !== ' ') {
      // what str.isprintable() rejects: Python escapes it by its width
      if (cp < 0x100) out += `\\x${cp.toString(16).padStart(2, '0')}`;
      else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
      else out += `\\U${cp.toString(16).padStart(8, '0')}`;
    } else out += c;
  }
  return quote + out + quote;
}

/** Python's repr() */
export function pyRepr(v: PyValue): string {
  switch (v.t) {
    case 'str':
      return strRepr(v.v);
    case 'list':
      return `[${v.items.map(pyRepr).join(', ')}]`;
    case 'dict':
      return `{${v.entries.map(([k, x]) => `${strRepr(k)}: ${pyRepr(x)}`).join(', ')}}`;
    default:
      return pyStr(v);
  }
}

/** Python's str() */
export function pyStr(v: PyValue): string {
  switch (v.t) {
    case 'str':
      return v.v;
    case 'int':
      return v.v.toString();
    case 'float':
      return floatRepr(v.v);
    case 'bool':
      return v.v ? 'True' : 'False';
    case 'null':
      return 'None';
    default:
      return pyRepr(v);
  }
}
