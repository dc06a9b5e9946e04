/**
 * Python operators and builtins over the value model, with CPython 3.11's error texts.
 * API code uses these wherever the reference's behaviour on odd argument types is observable
 * (a wrong type in a call is an error string the policy sees, and the golden files pin it).
 */
import {
  AttributeError_,
  IndexError_,
  KeyError_,
  PyException,
  TypeError_,
  ValueError_,
  ZeroDivisionError_,
} from './errors.js';
import { repr, strRepr } from './format.js';
import { compareCodePoints, decimalValue, isDecimalChar, UNICODE_SPACE } from './text.js';
import type { PyDict, PyKey, PyList, PyValue } from './values.js';
import {
  dictDelete,
  dictGet,
  dictSet,
  findKey,
  isHashableScalar,
  PyOpaque,
  PySet,
  PyTuple,
  pyEquals,
  typeName,
} from './values.js';

type Num = bigint | number;

/** The numeric value of an int/float/bool, or undefined for anything else. */
export function asNumber(v: PyValue): Num | undefined {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1n : 0n;
  return undefined;
}

/** `isinstance(v, (int, float))` — bools pass, as in Python. */
export function isNumber(v: PyValue): v is bigint | number | boolean {
  return asNumber(v) !== undefined;
}

function binaryTypeError(op: string, a: PyValue, b: PyValue): PyException {
  return TypeError_(`unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`);
}

function bothNumbers(a: PyValue, b: PyValue): [Num, Num] | undefined {
  const x = asNumber(a);
  const y = asNumber(b);
  return x === undefined || y === undefined ? undefined : [x, y];
}

function toF(x: Num): number {
  return typeof x === 'number' ? x : Number(x);
}

/** `a + b` */
export function add(a: PyValue, b: PyValue): PyValue {
  const n = bothNumbers(a, b);
  if (n) {
    const [x, y] = n;
    return typeof x === 'bigint' && typeof y === 'bigint' ? x + y : toF(x) + toF(y);
  }
  if (typeof a === 'string') {
    if (typeof b === 'string') return a + b;
    throw TypeError_(`can only concatenate str (not "${typeName(b)}") to str`);
  }
  if (Array.isArray(a)) {
    if (Array.isArray(b)) return [...a, ...b];
    throw TypeError_(`can only concatenate list (not "${typeName(b)}") to list`);
  }
  throw binaryTypeError('+', a, b);
}

/** `a - b` */
export function sub(a: PyValue, b: PyValue): PyValue {
  const n = bothNumbers(a, b);
  if (!n) throw binaryTypeError('-', a, b);
  const [x, y] = n;
  return typeof x === 'bigint' && typeof y === 'bigint' ? x - y : toF(x) - toF(y);
}

/** `a * b` */
export function mul(a: PyValue, b: PyValue): PyValue {
  const n = bothNumbers(a, b);
  if (n) {
    const [x, y] = n;
    return typeof x === 'bigint' && typeof y === 'bigint' ? x * y : toF(x) * toF(y);
  }
  const count = (v: PyValue) =>
    typeof v === 'bigint' || typeof v === 'boolean' ? Number(asNumber(v)) : undefined;
  if (typeof a === 'string' && count(b) !== undefined) return a.repeat(Math.max(0, count(b)!));
  if (typeof b === 'string' && count(a) !== undefined) return b.repeat(Math.max(0, count(a)!));
  if (Array.isArray(a) && count(b) !== undefined)
    return Array.from({ length: Math.max(0, count(b)!) }, () => a).flat();
  if (typeof a === 'string' || typeof b === 'string' || Array.isArray(a) || Array.isArray(b)) {
    const seq = typeof a === 'string' || Array.isArray(a) ? a : b;
    const other = seq === a ? b : a;
    throw TypeError_(`can't multiply sequence by non-int of type '${typeName(other)}'`);
  }
  throw binaryTypeError('*', a, b);
}

/** `a / b` (true division: always a float) */
export function truediv(a: PyValue, b: PyValue): number {
  const n = bothNumbers(a, b);
  if (!n) throw binaryTypeError('/', a, b);
  const [x, y] = n;
  if (toF(y) === 0) {
    throw ZeroDivisionError_(
      typeof x === 'bigint' && typeof y === 'bigint' ? 'division by zero' : 'float division by zero',
    );
  }
  return intTrueDiv(x, y);
}

function intTrueDiv(x: Num, y: Num): number {
  if (typeof x === 'bigint' && typeof y === 'bigint') {
    // Python rounds int/int correctly even past 2**53; exact for every value the data uses.
    const MAX = 2n ** 53n;
    if (x < MAX && x > -MAX && y < MAX && y > -MAX) return Number(x) / Number(y);
  }
  return toF(x) / toF(y);
}

/** `a // b` */
export function floordiv(a: PyValue, b: PyValue): PyValue {
  const n = bothNumbers(a, b);
  if (!n) throw binaryTypeError('//', a, b);
  const [x, y] = n;
  if (typeof x === 'bigint' && typeof y === 'bigint') {
    if (y === 0n) throw ZeroDivisionError_('integer division or modulo by zero');
    const q = x / y;
    return x % y !== 0n && x < 0n !== y < 0n ? q - 1n : q;
  }
  if (toF(y) === 0) throw ZeroDivisionError_('float floor division by zero');
  return Math.floor(toF(x) / toF(y));
}

/** `a % b` (result has the sign of b) */
export function mod(a: PyValue, b: PyValue): PyValue {
  const n = bothNumbers(a, b);
  if (!n) throw binaryTypeError('%', a, b);
  const [x, y] = n;
  if (typeof x === 'bigint' && typeof y === 'bigint') {
    if (y === 0n) throw ZeroDivisionError_('integer division or modulo by zero');
    const r = x % y;
    return r !== 0n && r < 0n !== y < 0n ? r + y : r;
  }
  const fy = toF(y);
  if (fy === 0) throw ZeroDivisionError_('float modulo');
  const r = toF(x) % fy;
  return r !== 0 && r < 0 !== fy < 0 ? r + fy : r;
}

/** `a ** b` */
export function pow(a: PyValue, b: PyValue): PyValue {
  const n = bothNumbers(a, b);
  if (!n) throw binaryTypeError('** or pow()', a, b);
  const [x, y] = n;
  if (typeof x === 'bigint' && typeof y === 'bigint') {
    if (y >= 0n) return x ** y;
    if (x === 0n) throw ZeroDivisionError_('0.0 cannot be raised to a negative power');
    return Number(x) ** Number(y);
  }
  const fx = toF(x);
  const fy = toF(y);
  if (fx === 0 && fy < 0) throw ZeroDivisionError_('0.0 cannot be raised to a negative power');
  const r = fx ** fy;
  if (Number.isNaN(r) && fx < 0) throw ValueError_('math domain error');
  if (!Number.isFinite(r) && Number.isFinite(fx) && Number.isFinite(fy))
    throw new PyException('OverflowError', "(34, 'Numerical result out of range')");
  return r;
}

/** `-a` */
export function neg(a: PyValue): PyValue {
  const x = asNumber(a);
  if (x === undefined) throw TypeError_(`bad operand type for unary -: '${typeName(a)}'`);
  return typeof x === 'bigint' ? -x : -x;
}

/** `abs(a)` */
export function pyAbs(a: PyValue): PyValue {
  const x = asNumber(a);
  if (x === undefined) throw TypeError_(`bad operand type for abs(): '${typeName(a)}'`);
  if (typeof x === 'bigint') return x < 0n ? -x : x;
  return Math.abs(x);
}

type CmpOp = '<' | '<=' | '>' | '>=';

/** Python ordering comparison with its TypeError for unorderable types. */
export function compare(op: CmpOp, a: PyValue, b: PyValue): boolean {
  const n = bothNumbers(a, b);
  if (n)
    return cmpResult(
      op,
      n[0] < n[1] ? -1 : n[0] > n[1] ? 1 : n[0] === n[1] || toF(n[0]) === toF(n[1]) ? 0 : Number.NaN,
    );
  if (typeof a === 'string' && typeof b === 'string') return cmpResult(op, compareCodePoints(a, b));
  if ((Array.isArray(a) && Array.isArray(b)) || (a instanceof PyTuple && b instanceof PyTuple)) {
    const xs = Array.isArray(a) ? a : (a as PyTuple).items;
    const ys = Array.isArray(b) ? b : (b as PyTuple).items;
    for (let i = 0; i < Math.min(xs.length, ys.length); i++) {
      if (!pyEquals(xs[i]!, ys[i]!)) return compare(op, xs[i]!, ys[i]!);
    }
    return cmpResult(op, xs.length - ys.length);
  }
  throw TypeError_(`'${op}' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
}

function cmpResult(op: CmpOp, c: number): boolean {
  if (Number.isNaN(c)) return false;
  switch (op) {
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    case '>=':
      return c >= 0;
  }
}

export const lt = (a: PyValue, b: PyValue) => compare('<', a, b);
export const le = (a: PyValue, b: PyValue) => compare('<=', a, b);
export const gt = (a: PyValue, b: PyValue) => compare('>', a, b);
export const ge = (a: PyValue, b: PyValue) => compare('>=', a, b);

/** Python truthiness. */
export function truthy(v: PyValue): boolean {
  if (v === null) return false;
  switch (typeof v) {
    case 'boolean':
      return v;
    case 'bigint':
      return v !== 0n;
    case 'number':
      return v !== 0;
    case 'string':
      return v.length > 0;
  }
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Map) return v.size > 0;
  if (v instanceof PyTuple) return v.items.length > 0;
  if (v instanceof PySet) return v.size > 0;
  return true;
}

/** `item in container` */
export function contains(container: PyValue, item: PyValue): boolean {
  if (typeof container === 'string') {
    if (typeof item !== 'string')
      throw TypeError_(`'in <string>' requires string as left operand, not ${typeName(item)}`);
    return container.includes(item);
  }
  if (Array.isArray(container)) return container.some((x) => pyEquals(x, item));
  if (container instanceof PyTuple) return container.items.some((x) => pyEquals(x, item));
  if (container instanceof Map) {
    requireHashable(item);
    return findKey(container, item as PyKey) !== undefined;
  }
  if (container instanceof PySet) {
    requireHashable(item);
    return container.has(item);
  }
  throw TypeError_(`argument of type '${typeName(container)}' is not iterable`);
}

/** The value as a dict key, or Python's `unhashable type` TypeError (tuples are checked inside). */
export function requireHashable(v: PyValue): PyKey {
  if (v instanceof PyTuple) {
    for (const item of v.items) requireHashable(item);
    return v;
  }
  if (isHashableScalar(v) || v instanceof PyOpaque) return v as PyKey;
  throw TypeError_(`unhashable type: '${typeName(v)}'`);
}

/** `container[key] = value` */
export function setItem(container: PyValue, key: PyValue, value: PyValue): void {
  if (container instanceof Map) {
    dictSet(container, requireHashable(key), value);
    return;
  }
  if (Array.isArray(container)) {
    const i = asNumber(key);
    if (i === undefined || typeof i === 'number') {
      throw TypeError_(`list indices must be integers or slices, not ${typeName(key)}`);
    }
    const idx = Number(i) < 0 ? container.length + Number(i) : Number(i);
    if (idx < 0 || idx >= container.length) throw IndexError_('list assignment index out of range');
    container[idx] = value;
    return;
  }
  throw TypeError_(`'${typeName(container)}' object does not support item assignment`);
}

/** `del d[key]` for dicts */
export function delItem(d: PyValue, key: PyValue): void {
  if (!(d instanceof Map)) throw TypeError_(`'${typeName(d)}' object does not support item deletion`);
  const k = requireHashable(key);
  if (!dictDelete(d, k)) throw KeyError_(key);
}

/** `d.get(key, fallback)` */
export function dictGetOr(d: PyValue, key: PyValue, fallback: PyValue): PyValue {
  if (!(d instanceof Map)) throw AttributeError_(d, 'get');
  const v = dictGet(d, requireHashable(key));
  return v === undefined ? fallback : v;
}

/** `d.values()` as a list */
export function dictValues(d: PyValue): PyValue[] {
  if (!(d instanceof Map)) throw AttributeError_(d, 'values');
  return [...d.values()];
}

/** `d.copy()` (shallow) */
export function dictCopy(d: PyValue): PyDict {
  if (!(d instanceof Map)) throw AttributeError_(d, 'copy');
  return new Map(d);
}

/** The list behind a list-method call such as `x.append(...)`, or Python's AttributeError. */
export function listFor(v: PyValue, method: string): PyList {
  if (!Array.isArray(v)) throw AttributeError_(v, method);
  return v;
}

/** `list.remove(item)` */
export function listRemove(list: PyValue, item: PyValue): void {
  const items = listFor(list, 'remove');
  const i = items.findIndex((x) => pyEquals(x, item));
  if (i < 0) throw ValueError_('list.remove(x): x not in list');
  items.splice(i, 1);
}

/** `len(v)` as a JS number (wrap with BigInt when the result is a Python int in output). */
export function len(v: PyValue): number {
  if (typeof v === 'string') return [...v].length;
  if (Array.isArray(v)) return v.length;
  if (v instanceof Map) return v.size;
  if (v instanceof PyTuple) return v.items.length;
  if (v instanceof PySet) return v.size;
  throw TypeError_(`object of type '${typeName(v)}' has no len()`);
}

/** `list(v)` / iteration: the items Python would iterate over. */
export function iterate(v: PyValue): PyValue[] {
  if (typeof v === 'string') return [...v];
  if (Array.isArray(v)) return v;
  if (v instanceof PyTuple) return [...v.items];
  if (v instanceof Map) return [...v.keys()];
  if (v instanceof PySet) return [...v.items];
  throw TypeError_(`'${typeName(v)}' object is not iterable`);
}

/** `container[key]` for dicts and lists (negative list indices count from the end). */
export function getItem(container: PyValue, key: PyValue): PyValue {
  if (container instanceof Map) {
    requireHashable(key);
    const v = dictGet(container as PyDict, key as PyKey);
    if (v === undefined) throw KeyError_(key);
    return v;
  }
  if (Array.isArray(container) || container instanceof PyTuple || typeof container === 'string') {
    const items =
      typeof container === 'string' ? [...container] : Array.isArray(container) ? container : container.items;
    const kind = typeof container === 'string' ? 'string' : Array.isArray(container) ? 'list' : 'tuple';
    const i = asNumber(key);
    if (i === undefined || typeof i === 'number')
      throw TypeError_(`${kind} indices must be integers or slices, not ${typeName(key)}`);
    const idx = Number(i) < 0 ? items.length + Number(i) : Number(i);
    if (idx < 0 || idx >= items.length) throw IndexError_(`${kind} index out of range`);
    return items[idx]!;
  }
  throw TypeError_(`'${typeName(container)}' object is not subscriptable`);
}

/** The string behind a str-method call such as `x.rstrip()`, or Python's AttributeError. */
export function strFor(v: PyValue, method: string): string {
  if (typeof v !== 'string') throw AttributeError_(v, method);
  return v;
}

/**
 * Python `float(x)`: an int beyond the double range raises OverflowError; strings follow
 * CPython's parser (non-ASCII decimal digits and spaces accepted, `_` only between digits).
 */
export function toFloat(v: PyValue): number {
  if (typeof v === 'bigint' && !Number.isFinite(Number(v))) {
    throw new PyException('OverflowError', 'int too large to convert to float');
  }
  const n = asNumber(v);
  if (n !== undefined) return toF(n);
  if (typeof v !== 'string') {
    throw TypeError_(`float() argument must be a string or a real number, not '${typeName(v)}'`);
  }
  // _PyUnicode_TransformDecimalAndSpaceToASCII, then strip ASCII whitespace only.
  let ascii = '';
  for (const ch of v) {
    const cp = ch.codePointAt(0)!;
    if (cp < 127) ascii += ch;
    else if (UNICODE_SPACE.test(ch)) ascii += ' ';
    else if (isDecimalChar(ch)) ascii += String(decimalValue(cp));
    else throw ValueError_(`could not convert string to float: ${strRepr(v)}`);
  }
  const t = ascii.replace(/^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g, '');
  if (FLOAT_TEXT.test(t)) return Number(t.replace(/_/g, ''));
  const special = /^([+-]?)(inf|infinity|nan)$/i.exec(t);
  if (special) {
    if (special[2]!.toLowerCase() === 'nan') return Number.NaN;
    return special[1] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  throw ValueError_(`could not convert string to float: ${strRepr(v)}`);
}

const DIGITPART = '[0-9](?:_?[0-9])*';
const FLOAT_TEXT = new RegExp(
  `^[+-]?(?:${DIGITPART}(?:\\.(?:${DIGITPART})?)?|\\.${DIGITPART})(?:[eE][+-]?${DIGITPART})?$`,
);

/** Python `int(x)` (truncates floats; parses base-10 strings). */
export function toInt(v: PyValue): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'boolean') return v ? 1n : 0n;
  if (typeof v === 'number') {
    if (Number.isNaN(v)) throw ValueError_('cannot convert float NaN to integer');
    if (!Number.isFinite(v))
      throw new PyException('OverflowError', 'cannot convert float infinity to integer');
    return BigInt(Math.trunc(v));
  }
  if (typeof v === 'string') {
    const t = v.trim().replace(/_/g, '');
    if (/^[+-]?\d+$/.test(t)) return BigInt(t);
    throw ValueError_(`invalid literal for int() with base 10: ${strRepr(v)}`);
  }
  throw TypeError_(
    `int() argument must be a string, a bytes-like object or a real number, not '${typeName(v)}'`,
  );
}

/**
 * The exact decimal expansion of a double as [digits, pointPosition]-free string, e.g.
 * 2.675 -> "2.67499999999999982236431605997495353221893310546875".
 */
function exactDecimal(x: number): string {
  // Every finite double is m * 2^e exactly; expand with bigint arithmetic.
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, Math.abs(x));
  const bits = buf.getBigUint64(0);
  const expBits = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  let e: number;
  if (expBits === 0) e = -1074;
  else {
    mant |= 1n << 52n;
    e = expBits - 1075;
  }
  if (e >= 0) return (mant << BigInt(e)).toString();
  // mant / 2^-e = mant * 5^-e / 10^-e
  const scaled = (mant * 5n ** BigInt(-e)).toString().padStart(-e + 1, '0');
  const intPart = scaled.slice(0, scaled.length + e);
  const frac = scaled.slice(scaled.length + e).replace(/0+$/, '');
  return frac ? `${intPart}.${frac}` : intPart;
}

/**
 * Round |x| to `nd` decimals with round-half-even on the exact binary value, as CPython's
 * `round(x, nd)` and `'%.Nf' % x` do. Returns the decimal text (no sign handling of -0).
 */
export function formatFixed(x: number, nd: number): string {
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : x < 0 ? '-inf' : 'nan';
  const neg = x < 0 || Object.is(x, -0);
  const exact = exactDecimal(x);
  const [ip, fp = ''] = exact.split('.') as [string, string?];
  const keep = fp.padEnd(nd, '0').slice(0, nd);
  const rest = fp.slice(nd);
  let digits = BigInt(ip + keep);
  if (rest.length > 0) {
    const first = rest.charCodeAt(0) - 48;
    const tail = rest.slice(1).replace(/0+$/, '');
    if (first > 5 || (first === 5 && tail.length > 0) || (first === 5 && digits % 2n === 1n)) digits += 1n;
  }
  let s = digits.toString().padStart(nd + 1, '0');
  if (nd > 0) s = `${s.slice(0, s.length - nd)}.${s.slice(s.length - nd)}`;
  return (neg ? '-' : '') + s;
}

/** Python `round(x)` (-> int) and `round(x, n)` (-> same type as x). */
export function pyRound(x: PyValue, ndigits?: PyValue): PyValue {
  const n = asNumber(x);
  if (n === undefined) throw TypeError_(`type ${typeName(x)} doesn't define __round__ method`);
  if (ndigits === undefined || ndigits === null) {
    if (typeof n === 'bigint') return n;
    if (!Number.isFinite(n))
      throw Number.isNaN(n)
        ? ValueError_('cannot convert float NaN to integer')
        : new PyException('OverflowError', 'cannot convert float infinity to integer');
    return BigInt(formatFixed(n, 0));
  }
  const nd = asNumber(ndigits);
  if (nd === undefined || typeof nd === 'number')
    throw TypeError_(`'${typeName(ndigits)}' object cannot be interpreted as an integer`);
  if (typeof n === 'bigint') {
    if (nd >= 0n) return n;
    const p = 10n ** -nd;
    const q = n / p;
    const r = n - q * p;
    const twice = 2n * (r < 0n ? -r : r);
    let res = q;
    if (twice > p || (twice === p && q % 2n !== 0n)) res += n < 0n ? -1n : 1n;
    return res * p;
  }
  if (!Number.isFinite(n)) return n;
  const d = Number(nd);
  if (d >= 0) return Number(formatFixed(n, Math.min(d, 330)));
  const p = 10 ** -d;
  return Number(formatFixed(n / p, 0)) * p;
}

/** `sum(values)` with Python's int/float promotion. */
export function pySum(values: PyValue[]): PyValue {
  let acc: PyValue = 0n;
  for (const v of values) {
    if (typeof v === 'string')
      throw TypeError_(`unsupported operand type(s) for +: '${typeName(acc)}' and 'str'`);
    acc = add(acc, v);
  }
  return acc;
}

/** `str(v)` helper re-exported next to the operators for API code. */
export { repr };
