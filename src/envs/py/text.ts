/**
 * Python `str` behaviour that differs from JavaScript's: Unicode digits and whitespace as
 * Python classifies them, `splitlines`, whitespace `split`, code-point ordering, `join`.
 */
import { TypeError_, ValueError_ } from './errors.js';
import { strRepr } from './format.js';
import type { PyValue } from './values.js';
import { typeName } from './values.js';

/** Non-ASCII characters for which Python's `str.isspace()` holds. */
export const UNICODE_SPACE = /^[\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/u;
const PY_WHITESPACE_RUN =
  /[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;
const DECIMAL = /^\p{Nd}$/u;

/** Whether `ch` is a Unicode decimal digit (category Nd), what `int()` and `\d` accept. */
export function isDecimalChar(ch: string): boolean {
  return DECIMAL.test(ch);
}

/** The value of a Unicode decimal digit: its offset in its aligned run of ten. */
export function decimalValue(cp: number): number {
  let start = cp;
  while (start > 0 && DECIMAL.test(String.fromCodePoint(start - 1))) start--;
  return (cp - start) % 10;
}

/**
 * Code points with Numeric_Type=Digit that are not decimal (superscripts, circled digits, ...):
 * `str.isdigit()` accepts them but `int()` rejects them.
 */
const NON_DECIMAL_DIGITS: readonly (readonly [number, number])[] = [
  [0xb2, 0xb3],
  [0xb9, 0xb9],
  [0x1369, 0x1371],
  [0x19da, 0x19da],
  [0x2070, 0x2070],
  [0x2074, 0x2079],
  [0x2080, 0x2089],
  [0x2460, 0x2468],
  [0x2474, 0x247c],
  [0x2488, 0x2490],
  [0x24ea, 0x24ea],
  [0x24f5, 0x24fd],
  [0x24ff, 0x24ff],
  [0x2776, 0x277e],
  [0x2780, 0x2788],
  [0x278a, 0x2792],
  [0x10a40, 0x10a43],
  [0x10e60, 0x10e68],
  [0x11052, 0x1105a],
  [0x1f100, 0x1f10a],
];

/** Python `s.isdigit()`. */
export function pyIsDigit(s: string): boolean {
  const chars = [...s];
  return (
    chars.length > 0 &&
    chars.every((ch) => {
      if (DECIMAL.test(ch)) return true;
      const cp = ch.codePointAt(0)!;
      return NON_DECIMAL_DIGITS.some(([lo, hi]) => cp >= lo && cp <= hi);
    })
  );
}

/** Python `int(s)` for a run of (possibly non-ASCII) decimal digits. */
export function intOfDigits(s: string): bigint {
  let ascii = '';
  for (const ch of s) {
    if (!DECIMAL.test(ch)) throw ValueError_(`invalid literal for int() with base 10: ${strRepr(s)}`);
    ascii += String(decimalValue(ch.codePointAt(0)!));
  }
  return BigInt(ascii);
}

/** Python `str.splitlines()`: every Unicode line boundary, no trailing empty piece. */
const LINE_BOUNDARY = /\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/g;
export function splitlines(s: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (const m of s.matchAll(LINE_BOUNDARY)) {
    lines.push(s.slice(start, m.index));
    start = m.index + m[0].length;
  }
  if (start < s.length) lines.push(s.slice(start));
  return lines;
}

/** Python `str.split()` without arguments: runs of `str.isspace()` characters. */
export function splitWhitespace(s: string): string[] {
  return s.split(PY_WHITESPACE_RUN).filter((w) => w !== '');
}

/** Python `sep.join(parts)` with its TypeError for a non-str item. */
export function joinStrings(sep: string, parts: readonly PyValue[]): string {
  parts.forEach((p, i) => {
    if (typeof p !== 'string')
      throw TypeError_(`sequence item ${i}: expected str instance, ${typeName(p)} found`);
  });
  return parts.join(sep);
}
