/**
 * Python operators and builtins over the value model, with CPython 3.11's error texts.
 * API code uses these wherever the reference's behaviour on odd argument types is observable
 * (a wrong type in a call is an error string the policy sees, and the golden files pin it).
 *
 * The arithmetic is CPython's to the last bit: ints are exact, an int meeting a float is
 * converted first (OverflowError for huge ints), int / int is correctly rounded at any size, and
 * float powers use glibc's pow (libm.ts) rather than JavaScript's `**`.
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
import { compareCodePoints, floatRepr, repr, strRepr } from './format.js';
import { correctlyRoundedCosSin, floatParts, pow as libmPow, ratioToDouble } from './libm.js';
import { decimalValue, isDecimalChar, UNICODE_SPACE } from './text.js';
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

/** A numeric operand as a double for the equality test in `compare` (huge ints become ±Infinity). */
function toF(x: Num): number {
  return typeof x === 'number' ? x : Number(x);
}

/**
 * A numeric operand as CPython's float arithmetic and `float()` convert it: an int is rounded to
 * the nearest double, and one past the double range raises OverflowError.
 */
function floatOperand(x: Num): number {
  if (typeof x === 'number') return x;
  const f = Number(x);
  if (!Number.isFinite(f)) throw new PyException('OverflowError', 'int too large to convert to float');
  return f;
}

/** `a + b` */
export function add(a: PyValue, b: PyValue): PyValue {
  const n = bothNumbers(a, b);
  if (n) {
    const [x, y] = n;
    return typeof x === 'bigint' && typeof y === 'bigint' ? x + y : floatOperand(x) + floatOperand(y);
  }
  if (typeof a === 'string') {
    if (typeof b === 'string') return a + b;
    throw TypeError_(`can only concatenate str (not "${typeName(b)}") to str`);
  }
  if (Array.isArray(a)) {
    if (Array.isArray(b)) return [...a, ...b];
    throw TypeError_(`can only concatenate list (not "${typeName(b)}") to list`);
  }
  if (a instanceof PyTuple) {
    if (b instanceof PyTuple) return new PyTuple([...a.items, ...b.items]);
    throw TypeError_(`can only concatenate tuple (not "${typeName(b)}") to tuple`);
  }
  throw binaryTypeError('+', a, b);
}

/** `a - b` */
export function sub(a: PyValue, b: PyValue): PyValue {
  const n = bothNumbers(a, b);
  if (!n) throw binaryTypeError('-', a, b);
  const [x, y] = n;
  return typeof x === 'bigint' && typeof y === 'bigint' ? x - y : floatOperand(x) - floatOperand(y);
}

/** `a * b` */
export function mul(a: PyValue, b: PyValue): PyValue {
  const n = bothNumbers(a, b);
  if (n) {
    const [x, y] = n;
    return typeof x === 'bigint' && typeof y === 'bigint' ? x * y : floatOperand(x) * floatOperand(y);
  }
  const sequence = (v: PyValue) => typeof v === 'string' || Array.isArray(v) || v instanceof PyTuple;
  if (sequence(a) || sequence(b)) {
    const [seq, other] = sequence(a) ? [a, b] : [b, a];
    if (typeof other !== 'bigint' && typeof other !== 'boolean')
      throw TypeError_(`can't multiply sequence by non-int of type '${typeName(other)}'`);
    return repeatSequence(seq as string | PyValue[] | PyTuple, asNumber(other) as bigint | boolean);
  }
  throw binaryTypeError('*', a, b);
}

/** `seq * n` for str, list and tuple (n <= 0 gives an empty one) */
function repeatSequence(seq: string | PyValue[] | PyTuple, n: bigint | boolean | number): PyValue {
  const count = BigInt(n);
  if (count > 2n ** 63n - 1n || count < -(2n ** 63n))
    throw new PyException('OverflowError', "cannot fit 'int' into an index-sized integer");
  const times = count > 0n ? Number(count) : 0;
  const length = typeof seq === 'string' ? seq.length : Array.isArray(seq) ? seq.length : seq.items.length;
  // CPython would try to allocate it; past what this process can hold it fails the same way
  if (length * times > 2 ** 28) throw new PyException('MemoryError', '');
  if (typeof seq === 'string') return seq.repeat(times);
  const items = Array.isArray(seq) ? seq : seq.items;
  const out = Array.from({ length: times }, () => items).flat();
  return Array.isArray(seq) ? out : new PyTuple(out);
}

/**
 * CPython's float divmod: the remainder from C fmod (exact), moved to the divisor's sign; the
 * quotient from the exact difference, rounded to the nearest whole number when floor() is off by
 * one ulp. So `1 // 0.1` is 9.0 (not floor(1 / 0.1) = 10), and zeros keep Python's signs.
 */
function floatDivmod(x: number, y: number): [number, number] {
  let m = x % y; // JS `%` on doubles is C fmod
  let div = (x - m) / y;
  if (m !== 0) {
    if (y < 0 !== m < 0) {
      m += y;
      div -= 1;
    }
  } else {
    m = y < 0 ? -0 : 0;
  }
  let q: number;
  if (div !== 0) {
    q = Math.floor(div);
    if (div - q > 0.5) q += 1;
  } else {
    q = x / y < 0 || Object.is(x / y, -0) ? -0 : 0;
  }
  return [q, m];
}

/**
 * `a / b` (true division: always a float). int / int is rounded once from the exact quotient,
 * as CPython does for operands of any size, and raises OverflowError past the double range.
 */
export function truediv(a: PyValue, b: PyValue): number {
  const n = bothNumbers(a, b);
  if (!n) throw binaryTypeError('/', a, b);
  const [x, y] = n;
  if (typeof x === 'bigint' && typeof y === 'bigint') {
    if (y === 0n) throw ZeroDivisionError_('division by zero');
    const q = ratioToDouble(x, y);
    if (!Number.isFinite(q))
      throw new PyException('OverflowError', 'integer division result too large for a float');
    return q;
  }
  const fx = floatOperand(x);
  const fy = floatOperand(y);
  if (fy === 0) throw ZeroDivisionError_('float division by zero');
  return fx / fy;
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
  const fx = floatOperand(x);
  const fy = floatOperand(y);
  if (fy === 0) throw ZeroDivisionError_('float floor division by zero');
  return floatDivmod(fx, fy)[0];
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
  const fx = floatOperand(x);
  const fy = floatOperand(y);
  if (fy === 0) throw ZeroDivisionError_('float modulo');
  return floatDivmod(fx, fy)[1];
}

/**
 * `a ** b`. int ** non-negative int stays an exact int; everything else is CPython's float_pow:
 * the values are C pow's (glibc's algorithm, see libm.ts), and Python adds its own outcomes
 * around it: ZeroDivisionError for 0.0 to a negative power, a complex result for a negative
 * base with a fractional exponent, and OverflowError where finite operands overflow.
 */
export function pow(a: PyValue, b: PyValue): PyValue {
  const n = bothNumbers(a, b);
  if (!n) throw binaryTypeError('** or pow()', a, b);
  const [x, y] = n;
  if (typeof x === 'bigint' && typeof y === 'bigint' && y >= 0n) return x ** y;
  const iv = floatOperand(x);
  const iw = floatOperand(y);
  const finite = Number.isFinite(iv) && Number.isFinite(iw);
  if (iv === 0 && iw < 0 && Number.isFinite(iw)) {
    throw ZeroDivisionError_('0.0 cannot be raised to a negative power');
  }
  if (finite && iv < 0 && !Number.isInteger(iw)) return complexPowOfNegative(iv, iw);
  const r = libmPow(iv, iw);
  if (finite && !Number.isFinite(r))
    throw new PyException('OverflowError', "(34, 'Numerical result out of range')");
  return r;
}

/**
 * CPython's `_Py_c_pow` for a negative real base: |a|**w * (cos(phase) + i sin(phase)) with
 * phase = atan2(0, a) * w = pi * w in doubles; the result only shows through its repr.
 */
function complexPowOfNegative(iv: number, iw: number): PyOpaque {
  const magnitude = libmPow(-iv, iw);
  const phase = Math.PI * iw;
  const [cos, sin] = correctlyRoundedCosSin(phase);
  const re = magnitude * cos;
  const im = magnitude * sin;
  if (!Number.isFinite(re) || !Number.isFinite(im))
    throw new PyException('OverflowError', 'complex exponentiation');
  const imText = complexPart(im);
  if (re === 0 && !Object.is(re, -0)) return new PyOpaque('complex', `${imText}j`);
  return new PyOpaque('complex', `(${complexPart(re)}${imText.startsWith('-') ? '' : '+'}${imText}j)`);
}

/** repr of a float inside a complex repr: no trailing `.0` (`(1+2j)`). */
function complexPart(x: number): string {
  const s = floatRepr(x);
  return s.endsWith('.0') ? s.slice(0, -2) : s;
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
  if (!dictDelete(d, k)) throw KeyError_(repr(key));
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
    if (v === undefined) throw KeyError_(repr(key));
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
  const n = asNumber(v);
  if (n !== undefined) return floatOperand(n);
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
  // Every finite double is man * 2^exp exactly; expand with bigint arithmetic.
  const { man, exp } = floatParts(Math.abs(x));
  if (exp >= 0) return (man << BigInt(exp)).toString();
  // man / 2^-exp = man * 5^-exp / 10^-exp
  const scaled = (man * 5n ** BigInt(-exp)).toString().padStart(-exp + 1, '0');
  const intPart = scaled.slice(0, scaled.length + exp);
  const frac = scaled.slice(scaled.length + exp).replace(/0+$/, '');
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

/** `sum(values)`: left to right from the int 0, each step Python's `+` (Python 3.11: no compensation). */
export function pySum(values: PyValue[]): PyValue {
  let acc: PyValue = 0n;
  for (const v of values) acc = add(acc, v);
  return acc;
}

/** `min(values)`: the first of equal candidates wins, comparisons as Python's `<`. */
export function pyMin(values: PyValue[]): PyValue {
  return extreme(values, 'min', lt);
}

/** `max(values)`: the first of equal candidates wins, comparisons as Python's `>`. */
export function pyMax(values: PyValue[]): PyValue {
  return extreme(values, 'max', gt);
}

function extreme(values: PyValue[], name: string, better: (a: PyValue, b: PyValue) => boolean): PyValue {
  if (values.length === 0) throw ValueError_(`${name}() arg is an empty sequence`);
  let best = values[0]!;
  for (let i = 1; i < values.length; i++) if (better(values[i]!, best)) best = values[i]!;
  return best;
}

/** `str(v)` helper re-exported next to the operators for API code. */
export { repr };
