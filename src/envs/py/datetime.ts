/**
 * `datetime.strptime` for the two formats the reference parses, as CPython 3.11's `_strptime`
 * does it: the format's regex (`\d` is any Unicode decimal digit, a space is `\s+`, IGNORECASE)
 * must match from the start and consume the whole string, then the date must exist.
 */
import { TypeError_, ValueError_ } from './errors.js';
import { strRepr } from './format.js';
import { intOfDigits } from './text.js';
import type { PyValue } from './values.js';
import { typeName } from './values.js';

export const DATE_FORMAT = '%Y-%m-%d';
export const DATETIME_FORMAT = '%Y-%m-%d %H:%M:%S';
export type StrptimeFormat = typeof DATE_FORMAT | typeof DATETIME_FORMAT;

/** A naive datetime as comparable fields [year, month, day, hour, minute, second, microsecond]. */
export type DateTimeFields = readonly [number, number, number, number, number, number, number];

export const DATETIME_MIN: DateTimeFields = [1, 1, 1, 0, 0, 0, 0];
export const DATETIME_MAX: DateTimeFields = [9999, 12, 31, 23, 59, 59, 999999];

const D = '\\p{Nd}';
const PY_SPACE =
  '[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const YEAR = `(${D}${D}${D}${D})`;
const MONTH = '(1[0-2]|0[1-9]|[1-9])';
const DAY = `(3[01]|[12]${D}|0[1-9]|[1-9]| [1-9])`;
const HOUR = `(2[0-3]|[0-1]${D}|${D})`;
const MINUTE = `([0-5]${D}|${D})`;
const SECOND = `(6[0-1]|[0-5]${D}|${D})`;

const REGEX: Readonly<Record<StrptimeFormat, RegExp>> = {
  [DATE_FORMAT]: new RegExp(`^${YEAR}-${MONTH}-${DAY}`, 'iu'),
  [DATETIME_FORMAT]: new RegExp(`^${YEAR}-${MONTH}-${DAY}${PY_SPACE}+${HOUR}:${MINUTE}:${SECOND}`, 'iu'),
};

export function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

/** `datetime.strptime(value, fmt)` with CPython 3.11's error texts. */
export function strptime(value: PyValue, fmt: StrptimeFormat): DateTimeFields {
  if (typeof value !== 'string') {
    throw TypeError_(`strptime() argument 1 must be str, not ${value === null ? 'None' : typeName(value)}`);
  }
  const m = REGEX[fmt].exec(value);
  if (!m) throw ValueError_(`time data ${strRepr(value)} does not match format ${strRepr(fmt)}`);
  if (m[0].length !== value.length)
    throw ValueError_(`unconverted data remains: ${value.slice(m[0].length)}`);
  const [year, month, day, hour = 0, minute = 0, second = 0] = m
    .slice(1)
    .map((g) => Number(intOfDigits(g!.trim())));
  // `_strptime` builds a `datetime.date` first, then the datetime constructor checks the time.
  if (year! < 1) throw ValueError_(`year ${year} is out of range`);
  if (day! > daysInMonth(year!, month!)) throw ValueError_('day is out of range for month');
  if (second > 59) throw ValueError_('second must be in 0..59');
  return [year!, month!, day!, hour, minute, second, 0];
}

export function compareDateTimes(x: DateTimeFields, y: DateTimeFields): number {
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}
