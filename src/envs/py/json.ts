/**
 * JSON text -> Python values, the way Python's `json.loads` reads it: integers stay ints
 * (bigint), numbers with a fraction or exponent become floats, objects become insertion-ordered
 * dicts. `JSON.parse` cannot be used for scenario data: it loses `10.0` vs `10` and reorders
 * integer-like keys.
 */
import { ELLIPSIS, type PyDict, type PyValue } from './values.js';

export class PyJsonSyntaxError extends Error {}

export interface PyJsonOptions {
  /** Turn `{"__python_ellipsis__": true}` markers into Python's Ellipsis. */
  readonly ellipsisMarker?: boolean;
  /** Reject NaN, Infinity and -Infinity (which json.loads reads), as strict JSON does. */
  readonly strict?: boolean;
}

export function parsePyJson(text: string, options: PyJsonOptions = {}): PyValue {
  return parseSpanned(text, options).value;
}

/** A parsed value and where its text is in the source, to keep the text that was written. */
export interface Spanned {
  readonly value: PyValue;
  readonly start: number;
  readonly end: number;
  /** An object's members with their spans, in the order written (a repeated key each time). */
  readonly members?: readonly (readonly [string, Spanned])[];
}

/** `parsePyJson` that also says where each value's text is: the whole and, for objects, each member. */
export function parsePySpanned(text: string, options: PyJsonOptions = {}): Spanned {
  return parseSpanned(text, options, new WeakMap());
}

function parseSpanned(text: string, options: PyJsonOptions, members?: MemberSpans): Spanned {
  const p = new Parser(text, options, members);
  p.ws();
  const start = p.i;
  const v = p.value();
  const spanned = p.spanned(v, start);
  p.ws();
  if (p.i !== text.length) p.fail('trailing data');
  return spanned;
}

type MemberSpans = WeakMap<PyDict, [string, Spanned][]>;

const NUMBER_RE = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
const STRING_RE = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

class Parser {
  i = 0;
  constructor(
    readonly s: string,
    readonly options: PyJsonOptions,
    /** where each object's members are, when asked for */
    readonly members?: MemberSpans,
  ) {}

  spanned(value: PyValue, start: number): Spanned {
    const members = value instanceof Map ? this.members?.get(value) : undefined;
    return members ? { value, start, end: this.i, members } : { value, start, end: this.i };
  }

  fail(msg: string): never {
    throw new PyJsonSyntaxError(`invalid JSON at offset ${this.i}: ${msg}`);
  }

  ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.i++;
      else break;
    }
  }

  value(): PyValue {
    const c = this.s[this.i];
    switch (c) {
      case '{':
        return this.object();
      case '[':
        return this.array();
      case '"':
        return this.string();
      case 't':
        return this.word('true', true);
      case 'f':
        return this.word('false', false);
      case 'n':
        return this.word('null', null);
      case 'N':
        return this.nonFinite('NaN', Number.NaN);
      case 'I':
        return this.nonFinite('Infinity', Number.POSITIVE_INFINITY);
      default:
        if (c === '-' && this.s.startsWith('-Infinity', this.i))
          return this.nonFinite('-Infinity', Number.NEGATIVE_INFINITY);
        return this.number();
    }
  }

  word<T extends PyValue>(w: string, v: T): T {
    if (!this.s.startsWith(w, this.i)) this.fail(`unexpected token`);
    this.i += w.length;
    return v;
  }

  nonFinite(w: string, v: number): number {
    if (this.options.strict) this.fail(`${w} is not strict JSON`);
    return this.word(w, v);
  }

  number(): PyValue {
    NUMBER_RE.lastIndex = this.i;
    const m = NUMBER_RE.exec(this.s);
    if (!m || m[0].length === 0) this.fail('unexpected character');
    this.i += m[0].length;
    return m[1] !== undefined || m[2] !== undefined ? Number(m[0]) : BigInt(m[0]);
  }

  string(): string {
    STRING_RE.lastIndex = this.i;
    const m = STRING_RE.exec(this.s);
    if (!m) this.fail('bad string');
    this.i += m[0].length;
    return m[0].includes('\\') ? (JSON.parse(m[0]) as string) : m[0].slice(1, -1);
  }

  array(): PyValue[] {
    this.i++;
    const out: PyValue[] = [];
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      out.push(this.value());
      this.ws();
      const c = this.s[this.i++];
      if (c === ']') return out;
      if (c !== ',') this.fail("expected ',' or ']'");
    }
  }

  object(): PyValue {
    this.i++;
    const out: PyDict = new Map();
    const members: [string, Spanned][] | undefined = this.members && [];
    if (members) this.members!.set(out, members);
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail('expected a key');
      const k = this.string();
      this.ws();
      if (this.s[this.i++] !== ':') this.fail("expected ':'");
      this.ws();
      const start = this.i;
      const v = this.value();
      out.set(k, v);
      members?.push([k, this.spanned(v, start)]);
      this.ws();
      const c = this.s[this.i++];
      if (c === '}') break;
      if (c !== ',') this.fail("expected ',' or '}'");
    }
    if (this.options.ellipsisMarker && out.size === 1 && out.get('__python_ellipsis__') === true)
      return ELLIPSIS;
    return out;
  }
}
