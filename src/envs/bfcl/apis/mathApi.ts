/**
 * MathAPI (`math_api.py` in the reference): stateless arithmetic helpers.
 *
 * Most methods are plain Python arithmetic that only catches TypeError, so the results depend on
 * Python's numeric tower (`add('1', '2')` is `'12'`, ints are unbounded, int/float mixes raise
 * OverflowError for huge ints). Two methods leave the float world:
 *
 * - `logarithm` runs mpmath at `mp.dps = precision`. The result is an `mpf` (or `mpc` for a
 *   negative argument), which json.dumps rejects, so the response is the dict's Python repr,
 *   e.g. `{'result': mpf('2.7993393')}`. The digits are reproduced with a small binary
 *   floating-point emulation on bigints (`Mpf` below): correctly rounded log, pi and division at
 *   mpmath's working precision, and mpmath's own decimal printing (`to_str`), quirks included.
 * - `square_root` uses the `decimal` module with context precision `precision`; the result is a
 *   `Decimal`, printed through repr as well. `Dec` below is a correctly rounded decimal square root
 *   with Python's ideal-exponent rule for exact results.
 *
 * Both results are returned as `PyOpaque` values carrying their repr.
 */
import { PyException, TypeError_, ValueError_, ZeroDivisionError_ } from '../py/errors.js';
import { floatRepr, repr, str } from '../py/format.js';
import {
  add,
  contains,
  gt,
  iterate,
  len,
  lt,
  mul,
  pow,
  pyAbs,
  pyRound,
  sub,
  toInt,
  truediv,
  truthy,
} from '../py/ops.js';
import type { PyDict, PyValue } from '../py/values.js';
import { dictGet, dictOf, PyOpaque, PyTuple, pyEquals } from '../py/values.js';
import type { ApiClass, BfclApi, BoundArgs, ScenarioContext } from './api.js';
import { opt, req } from './api.js';

const OverflowError_ = (msg: string) => new PyException('OverflowError', msg);

/** Run `body`; a Python TypeError becomes the reference's fixed `{"error": ...}` dict. */
function catchTypeError(message: string, body: () => PyValue): PyValue {
  try {
    return body();
  } catch (e) {
    if (e instanceof PyException && e.pyType === 'TypeError') return dictOf({ error: message });
    throw e;
  }
}

/** CPython 3.11's default `sys.get_int_max_str_digits()`. */
const INT_MAX_STR_DIGITS = 4300;

/**
 * The `{"result": v}` dict. An int result with more than 4300 digits cannot be printed: the
 * executor's json.dumps and its str() fallback both raise ValueError, so the call reads as this
 * error (`power(10, 5000)`).
 */
function result(v: PyValue): PyDict {
  if (typeof v === 'bigint' && (v < 0n ? -v : v).toString().length > INT_MAX_STR_DIGITS) {
    throw ValueError_(
      `Exceeds the limit (${INT_MAX_STR_DIGITS} digits) for integer string conversion; ` +
        'use sys.set_int_max_str_digits() to increase the limit',
    );
  }
  return dictOf({ result: v });
}

// =============================================================================================
// Python arithmetic details the shared `ops` leave out.

const TWO_53 = 2n ** 53n;

function absBig(v: bigint): bigint {
  return v < 0n ? -v : v;
}

/** `float(int)`: correctly rounded, OverflowError past the double range. */
function intToFloat(v: bigint): number {
  const f = Number(v);
  if (!Number.isFinite(f)) throw OverflowError_('int too large to convert to float');
  return f;
}

/** An int operand meeting a float is converted first, which raises for huge ints. */
function guardMixed(a: PyValue, b: PyValue): void {
  if (typeof a === 'number' && typeof b === 'bigint') intToFloat(b);
  if (typeof b === 'number' && typeof a === 'bigint') intToFloat(a);
}

function pyAdd(a: PyValue, b: PyValue): PyValue {
  guardMixed(a, b);
  // Tuples concatenate like lists (`add(a=(1,), b=(2,))`).
  if (a instanceof PyTuple && b instanceof PyTuple) return new PyTuple([...a.items, ...b.items]);
  return add(a, b);
}

function pySub(a: PyValue, b: PyValue): PyValue {
  guardMixed(a, b);
  return sub(a, b);
}

function pyMul(a: PyValue, b: PyValue): PyValue {
  guardMixed(a, b);
  return mul(a, b);
}

const intLike = (v: PyValue): bigint | undefined =>
  typeof v === 'bigint' ? v : typeof v === 'boolean' ? (v ? 1n : 0n) : undefined;

/**
 * `a / b`. int/int is correctly rounded in CPython even for operands past 2**53 (the shared
 * helper divides the rounded doubles), and raises OverflowError when the quotient is too large.
 */
function pyTrueDiv(a: PyValue, b: PyValue): PyValue {
  const x = intLike(a);
  const y = intLike(b);
  if (x === undefined || y === undefined || y === 0n) {
    guardMixed(a, b);
    return truediv(a, b);
  }
  if (absBig(x) < TWO_53 && absBig(y) < TWO_53) return Number(x) / Number(y);
  const negative = x < 0n !== y < 0n;
  const n = absBig(x);
  const d = absBig(y);
  if (n === 0n) return negative ? -0 : 0;
  // Quotient with 55+ significant bits plus a sticky bit, rounded once by Number().
  const shift = bitLength(d) - bitLength(n) + 56;
  const num = shift >= 0 ? n << BigInt(shift) : n;
  const den = shift >= 0 ? d : d << BigInt(-shift);
  const q = num / den;
  const sticky = num % den === 0n ? 0n : 1n;
  const r = scaledToDouble((q << 1n) | sticky, -(shift + 1));
  if (!Number.isFinite(r)) throw OverflowError_('integer division result too large for a float');
  return negative ? -r : r;
}

/** repr of a float inside a complex repr: no trailing `.0` (`(1+2j)`). */
function complexPart(x: number): string {
  const s = floatRepr(x);
  return s.endsWith('.0') ? s.slice(0, -2) : s;
}

/**
 * `base ** exponent`, following CPython's int/float pow: ints stay exact for a non-negative
 * int exponent; everything else is float_pow, whose special cases (inf, nan, zero, negative
 * bases) are spelled out here, with glibc's own pow algorithm (V8's `**` differs from it:
 * it gives `10 ** -5 == 9.999999999999999e-06`). A negative base with a fractional exponent
 * goes to complex pow (`(-8) ** (1/3)` is `(1.0000000000000002+1.7320508075688772j)`).
 */
function pyPow(a: PyValue, b: PyValue): PyValue {
  guardMixed(a, b);
  const isNum = (v: PyValue) => typeof v === 'bigint' || typeof v === 'boolean' || typeof v === 'number';
  const floatCase =
    isNum(a) && isNum(b) && (typeof a === 'number' || typeof b === 'number' || (intLike(b) ?? 0n) < 0n);
  if (!floatCase) return pow(a, b);
  // int operands are converted to float first (OverflowError for huge ints).
  const iv = typeof a === 'number' ? a : intToFloat(intLike(a)!);
  const iw = typeof b === 'number' ? b : intToFloat(intLike(b)!);
  const wIsOdd = Math.abs(iw) % 2 === 1;
  if (iw === 0) return 1;
  if (Number.isNaN(iv)) return iv;
  if (Number.isNaN(iw)) return iv === 1 ? 1 : iw;
  if (!Number.isFinite(iw)) {
    const m = Math.abs(iv);
    if (m === 1) return 1;
    return iw > 0 === m > 1 ? Math.abs(iw) : 0;
  }
  if (!Number.isFinite(iv)) {
    if (iw > 0) return wIsOdd ? iv : Math.abs(iv);
    return wIsOdd ? (iv < 0 ? -0 : 0) : 0;
  }
  if (iv === 0) {
    if (iw < 0) throw ZeroDivisionError_('0.0 cannot be raised to a negative power');
    return wIsOdd ? iv : 0;
  }
  let base = iv;
  let negate = false;
  if (iv < 0) {
    if (iw !== Math.floor(iw)) return complexPowOfNegative(iv, iw);
    base = -iv;
    negate = wIsOdd;
  }
  if (base === 1) return negate ? -1 : 1;
  const r = glibcPow(base, iw);
  if (!Number.isFinite(r)) throw OverflowError_("(34, 'Numerical result out of range')");
  return negate ? -r : r;
}

/**
 * CPython's `_Py_c_pow` for a negative real base: |a|**w * (cos(phase) + i sin(phase)) with
 * phase = atan2(0, a) * w = pi * w in doubles; the result only shows through its repr.
 */
function complexPowOfNegative(iv: number, iw: number): PyOpaque {
  const magnitude = glibcPow(-iv, iw);
  const phase = Math.PI * iw;
  const [cos, sin] = correctlyRoundedCosSin(phase);
  const re = magnitude * cos;
  const im = magnitude * sin;
  if (!Number.isFinite(re) || !Number.isFinite(im)) throw OverflowError_('complex exponentiation');
  const imText = complexPart(im);
  if (re === 0 && !Object.is(re, -0)) return new PyOpaque('complex', `${imText}j`);
  return new PyOpaque('complex', `(${complexPart(re)}${imText.startsWith('-') ? '' : '+'}${imText}j)`);
}

/** `sum(numbers)`: naive left-to-right, starting from the int 0 (Python 3.11). */
function pySum(items: PyValue[]): PyValue {
  let acc: PyValue = 0n;
  for (const v of items) acc = pyAdd(acc, v);
  return acc;
}

/** `min(iterable)` / `max(iterable)`: the first element wins ties, comparisons as Python's. */
function pyMinMax(items: PyValue[], which: 'min' | 'max'): PyValue {
  let best = items[0] as PyValue;
  for (const v of items.slice(1)) if (which === 'min' ? lt(v, best) : gt(v, best)) best = v;
  return best;
}

// =============================================================================================
// Binary floating point on bigints, following mpmath's `libmpf` conventions: a value is
// (-1)^neg * man * 2^exp with an odd mantissa, plus zero / ±inf / nan (mpmath has no -0).

type Mpf =
  | { readonly kind: 'zero' }
  | { readonly kind: 'inf'; readonly neg: boolean }
  | { readonly kind: 'nan' }
  | { readonly kind: 'num'; readonly neg: boolean; readonly man: bigint; readonly exp: number };

type NumMpf = Extract<Mpf, { kind: 'num' }>;

/** mpmath's rounding modes in use: to nearest (ties to even) and toward zero. */
type Rounding = 'n' | 'd';
/**
 * mpmath's `round_fast` is round-down (toward zero), and it is the default of the low-level
 * helpers: every internal step that mpmath calls without a rounding argument (the sums in
 * complex division and log_hypot, atan2's inner quotient, atan and pi) truncates.
 */
const ROUND_FAST: Rounding = 'd';

/** An mpmath `mpc` (only ever produced by a log of a negative or complex argument). */
interface Mpc {
  readonly re: Mpf;
  readonly im: Mpf;
}

const ZERO: Mpf = { kind: 'zero' };
const NAN: Mpf = { kind: 'nan' };
const INF: Mpf = { kind: 'inf', neg: false };
const NINF: Mpf = { kind: 'inf', neg: true };

/** Precisions beyond this many bits would take minutes with the series used here. */
const MAX_WORKING_BITS = 1 << 18;

function bitLength(n: bigint): number {
  const m = n < 0n ? -n : n;
  if (m === 0n) return 0;
  const hex = m.toString(16);
  return (hex.length - 1) * 4 + (32 - Math.clz32(Number.parseInt(hex[0]!, 16)));
}

function trailingZeros(n: bigint): number {
  return bitLength(n & -n) - 1;
}

/**
 * `normalize`: the value man * 2^exp rounded to `prec` bits, half to even (the context
 * rounding) or toward zero; prec 0 keeps it exact.
 */
function makeMpf(neg: boolean, man: bigint, exp: number, prec: number, rnd: Rounding = 'n'): Mpf {
  if (man === 0n) return ZERO;
  let m = man;
  let e = exp;
  let sign = neg;
  if (m < 0n) {
    m = -m;
    sign = !sign;
  }
  const bl = bitLength(m);
  if (prec > 0 && bl > prec) {
    const shift = BigInt(bl - prec);
    let q = m >> shift;
    const r = m - (q << shift);
    const half = 1n << (shift - 1n);
    if (rnd === 'n' && (r > half || (r === half && (q & 1n) === 1n))) q += 1n;
    m = q;
    e += bl - prec;
  }
  const tz = trailingZeros(m);
  if (tz > 0) {
    m >>= BigInt(tz);
    e += tz;
  }
  return { kind: 'num', neg: sign, man: m, exp: e };
}

function mpfEquals(a: Mpf, b: Mpf): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'num' && b.kind === 'num') return a.neg === b.neg && a.man === b.man && a.exp === b.exp;
  if (a.kind === 'inf' && b.kind === 'inf') return a.neg === b.neg;
  return true;
}

function mpfFromInt(v: bigint): Mpf {
  return makeMpf(false, v, 0, 0);
}

/** Exact conversion of a double (mpmath `from_float`; -0.0 becomes the unsigned zero). */
function mpfFromFloat(x: number): Mpf {
  if (Number.isNaN(x)) return NAN;
  if (!Number.isFinite(x)) return x > 0 ? INF : NINF;
  if (x === 0) return ZERO;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const frac = bits & ((1n << 52n) - 1n);
  const man = biased === 0 ? frac : frac | (1n << 52n);
  const exp = biased === 0 ? -1074 : biased - 1075;
  return makeMpf(x < 0, man, exp, 0);
}

function mpfNeg(x: Mpf): Mpf {
  if (x.kind === 'num') return { ...x, neg: !x.neg };
  if (x.kind === 'inf') return x.neg ? INF : NINF;
  return x;
}

/** `mpf_shift`: multiply by 2^n (exact). */
function mpfShift(x: Mpf, n: number): Mpf {
  return x.kind === 'num' ? { ...x, exp: x.exp + n } : x;
}

/** `mpf_pos`: round to `prec`. */
function mpfRound(x: Mpf, prec: number, rnd: Rounding = 'n'): Mpf {
  return x.kind === 'num' ? makeMpf(x.neg, x.man, x.exp, prec, rnd) : x;
}

function mpfMul(a: Mpf, b: Mpf, prec = 0): Mpf {
  if (a.kind === 'nan' || b.kind === 'nan') return NAN;
  if (a.kind === 'inf' || b.kind === 'inf') {
    if (a.kind === 'zero' || b.kind === 'zero') return NAN;
    const negA = a.kind === 'num' || a.kind === 'inf' ? a.neg : false;
    const negB = b.kind === 'num' || b.kind === 'inf' ? b.neg : false;
    return negA !== negB ? NINF : INF;
  }
  if (a.kind === 'zero' || b.kind === 'zero') return ZERO;
  return makeMpf(a.neg !== b.neg, a.man * b.man, a.exp + b.exp, prec);
}

/** `mpf_add`: exact sum rounded once (mpmath's perturbation trick gives the same result). */
function mpfAdd(a: Mpf, b: Mpf, prec = 0, rnd: Rounding = 'n'): Mpf {
  if (a.kind === 'num' && b.kind === 'num') {
    const e = Math.min(a.exp, b.exp);
    const va = (a.neg ? -a.man : a.man) << BigInt(a.exp - e);
    const vb = (b.neg ? -b.man : b.man) << BigInt(b.exp - e);
    return makeMpf(false, va + vb, e, prec, rnd);
  }
  if (a.kind === 'inf' || a.kind === 'nan') {
    return mpfEquals(a, b) || b.kind === 'num' || b.kind === 'zero' ? a : NAN;
  }
  if (a.kind === 'zero') return b.kind === 'num' ? mpfRound(b, prec, rnd) : b;
  if (b.kind !== 'zero') return b;
  return mpfRound(a, prec, rnd);
}

function mpfSub(a: Mpf, b: Mpf, prec = 0, rnd: Rounding = 'n'): Mpf {
  return mpfAdd(a, mpfNeg(b), prec, rnd);
}

/** `mpf_div`: correctly rounded; division by zero raises a ZeroDivisionError with no message. */
function mpfDiv(a: Mpf, b: Mpf, prec: number, rnd: Rounding = 'n'): Mpf {
  if (a.kind !== 'num' || b.kind !== 'num') {
    if (a.kind === 'zero') {
      if (b.kind === 'zero') throw ZeroDivisionError_('');
      return b.kind === 'nan' ? NAN : ZERO;
    }
    if (b.kind === 'zero') throw ZeroDivisionError_('');
    const aSpecial = a.kind !== 'num';
    const bSpecial = b.kind !== 'num';
    if (aSpecial && bSpecial) return NAN;
    if (a.kind === 'nan' || b.kind === 'nan') return NAN;
    if (!bSpecial && a.kind === 'inf' && b.kind === 'num') return a.neg !== b.neg ? NINF : INF;
    return ZERO;
  }
  const neg = a.neg !== b.neg;
  if (b.man === 1n) return makeMpf(neg, a.man, a.exp - b.exp, prec, rnd);
  const extra = Math.max(5, prec - bitLength(a.man) + bitLength(b.man) + 5);
  const num = a.man << BigInt(extra);
  const q = num / b.man;
  if (num % b.man === 0n) return makeMpf(neg, q, a.exp - b.exp - extra, prec, rnd);
  // Sticky bit below the rounding position, as mpmath does.
  return makeMpf(neg, (q << 1n) | 1n, a.exp - b.exp - extra - 1, prec, rnd);
}

// ---- fixed-point series (value * 2^G as a bigint, error of a few units) ----------------------

/**
 * atanh(num/den) for 0 <= num/den <= 1/3. Each term is the previous one times num²/den²: with
 * the small numerator and denominator of a double's reduced mantissa this stays linear per term,
 * which keeps precision=20000 in the same time range as mpmath's own AGM code.
 */
function atanhFixed(num: bigint, den: bigint, G: number): bigint {
  const n2 = num * num;
  const d2 = den * den;
  let term = (num << BigInt(G)) / den;
  let sum = term;
  for (let k = 3n; term !== 0n; k += 2n) {
    term = (term * n2) / d2;
    sum += term / k;
  }
  return sum;
}

/** atan(1/n) for an integer n >= 2 (Machin terms). */
function atanInvFixed(n: bigint, G: number): bigint {
  let term = (1n << BigInt(G)) / n;
  let sum = term;
  const n2 = n * n;
  for (let k = 3n, sign = -1n; term !== 0n; k += 2n, sign = -sign) {
    term /= n2;
    sum += (sign * term) / k;
  }
  return sum;
}

function piFixed(F: number): bigint {
  const G = F + 32;
  return (16n * atanInvFixed(5n, G) - 4n * atanInvFixed(239n, G)) >> 32n;
}

function ln2Fixed(F: number): bigint {
  const G = F + 32;
  return (2n * atanhFixed(1n, 3n, G)) >> 32n;
}

/** ln(man * 2^exp) for man > 0. */
function lnFixed(man: bigint, exp: number, F: number): bigint {
  // Write x = (P/Q) * 2^k with P/Q in [1/sqrt2, sqrt2); then ln x = 2 atanh((P-Q)/(P+Q)) + k ln 2.
  const bl = bitLength(man);
  let p = man;
  const q = 1n << BigInt(bl);
  let k = exp + bl;
  if (2n * man * man < q * q) {
    p = man * 2n;
    k -= 1;
  }
  const G = F + 32 + bitLength(BigInt(Math.abs(k))) + bitLength(BigInt(F));
  const num = p - q;
  const den = p + q;
  const s = num < 0n ? -atanhFixed(-num, den, G) : atanhFixed(num, den, G);
  const v = 2n * s + BigInt(k) * 2n * atanhFixed(1n, 3n, G);
  return v >> BigInt(G - F);
}

/** atan(x) for x = man * 2^exp > 0, by Euler's series (ratio x²/(1+x²) <= 1/2 after reduction). */
function atanFixed(man: bigint, exp: number, F: number): bigint {
  const G = F + 32 + bitLength(BigInt(F));
  const g = BigInt(G);
  const one = 1n << g;
  const shift = G + exp;
  const x = shift >= 0 ? man << BigInt(shift) : man >> BigInt(-shift);
  const euler = (t: bigint): bigint => {
    const t2 = (t * t) >> g;
    const d = one + t2;
    const y = (t2 << g) / d;
    let term = (t << g) / d;
    let sum = term;
    for (let n = 0n; term !== 0n; n++) {
      term = (((term * y) >> g) * (2n * n + 2n)) / (2n * n + 3n);
      sum += term;
    }
    return sum;
  };
  // For x > 1: atan(x) = pi/2 - atan(1/x).
  const a = x > one ? (piFixed(G) >> 1n) - euler((one * one) / x) : euler(x);
  return a >> BigInt(G - F);
}

// ---- correctly rounded double results (what glibc's pow, cos and sin return) ----------------

/** The double nearest to man * 2^exp (half to even), subnormals included; Infinity past the range. */
function scaledToDouble(man: bigint, exp: number): number {
  if (man === 0n) return 0;
  const top = exp + bitLength(man);
  if (top > 1025) return Number.POSITIVE_INFINITY;
  const grid = Math.max(top - 53, -1074);
  let r: bigint;
  if (exp >= grid) {
    r = man << BigInt(exp - grid);
  } else {
    const sh = BigInt(grid - exp);
    r = man >> sh;
    const rem = man - (r << sh);
    const half = 1n << (sh - 1n);
    if (rem > half || (rem === half && (r & 1n) === 1n)) r += 1n;
  }
  return Number(r) * 2 ** grid;
}

/** Signed fixed-point value v * 2^-F to the nearest double. */
function fixedToDouble(v: bigint, F: number): number {
  return v < 0n ? -scaledToDouble(-v, -F) : scaledToDouble(v, -F);
}

/** exp(r) * 2^F for a fixed-point |r| < 1 (r given at F bits). */
function expFixedSmall(r: bigint, F: number): bigint {
  const one = 1n << BigInt(F);
  let sum = one;
  let term = one;
  for (let i = 1n; term !== 0n; i++) {
    term = (term * r) / (i << BigInt(F));
    sum += term;
  }
  return sum;
}

// ---- glibc's pow (the ARM optimized-routines algorithm, FMA build) ---------------------------
//
// CPython's float ** float is C pow(). glibc (2.28 and later, also musl) computes it with a
// table-driven log and exp in double-double arithmetic: not correctly rounded (up to 0.52 ULP),
// so `457.0 ** 6` is 9109555799784050.0 and not the nearest-even 9109555799784048.0. On x86-64
// with FMA, glibc runs the build compiled with -mfma, where GCC fuses every `a*b + c`; `fma`
// below is exact (bigint), plain JS arithmetic gives the other IEEE double operations. The two
// 128-entry tables are regenerated from their documented definitions (checked bit for bit
// against glibc 2.36's rodata).

const U64 = (1n << 64n) - 1n;

function asDouble(bits: bigint): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, bits & U64);
  return view.getFloat64(0);
}

function asBits(x: number): bigint {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  return view.getBigUint64(0);
}

/** A C99 hex float literal such as `-0x1.62e42fefa3800p-1` (JS has none). */
function hexFloat(text: string): number {
  const m = /^(-?)0x([0-9a-f])\.([0-9a-f]*)p([+-]?\d+)$/i.exec(text)!;
  const digits = m[3]!;
  const man = BigInt(`0x${m[2]}${digits}`);
  const v = scaledToDouble(man, Number(m[4]) - 4 * digits.length);
  return m[1] === '-' ? -v : v;
}

function mpfToDouble(x: Mpf): number {
  if (x.kind === 'zero') return 0;
  if (x.kind === 'nan') return Number.NaN;
  if (x.kind === 'inf') return x.neg ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  const v = scaledToDouble(x.man, x.exp);
  return x.neg ? -v : v;
}

/** fma(a, b, c): a*b + c with a single rounding. */
function fma(a: number, b: number, c: number): number {
  return mpfToDouble(mpfAdd(mpfMul(mpfFromFloat(a), mpfFromFloat(b)), mpfFromFloat(c)));
}

const POW_OFF = 0x3fe6955500000000n;
const LN2_HI = hexFloat('0x1.62e42fefa3800p-1');
const LN2_LO = hexFloat('0x1.ef35793c76730p-45');
/** log1p polynomial, already scaled the way the evaluation expects. */
const LOG_POLY = [
  '-0x1.0000000000000p-1',
  '-0x1.5555555555560p-1',
  '0x1.0000000000006p-1',
  '0x1.999999959554ep-1',
  '-0x1.555555529a47ap-1',
  '-0x1.2495b9b4845e9p+0',
  '0x1.0002b8b263fc3p+0',
].map(hexFloat) as [number, number, number, number, number, number, number];
const INV_LN2_N = hexFloat('0x1.71547652b82fep+7');
const NEG_LN2_HI_N = hexFloat('-0x1.62e42fefa0000p-8');
const NEG_LN2_LO_N = hexFloat('-0x1.cf79abc9e3b3ap-47');
const [EXP_C2, EXP_C3, EXP_C4, EXP_C5] = [
  '0x1.ffffffffffdbdp-2',
  '0x1.555555555543cp-3',
  '0x1.55555cf172b91p-5',
  '0x1.1111167a4d017p-7',
].map(hexFloat) as [number, number, number, number];
const EXP_SHIFT = hexFloat('0x1.8p52');

interface PowTables {
  /** invc, logc, logctail per subinterval of [0x1.69555p-1, 0x1.69555p0). */
  readonly log: readonly (readonly [number, number, number])[];
  /** tail bits, scale bits - (k << 45), interleaved as in glibc's __exp_data.tab. */
  readonly exp: readonly bigint[];
}

/** Build the two tables from their definitions (about 10 ms, once at module load). */
function buildPowTables(): PowTables {
  const F = 160;
  const log: [number, number, number][] = [];
  for (let i = 0n; i < 128n; i++) {
    // c sits near the centre of the subinterval and 1/c = j/N (or j/2N) has few bits.
    const lo = mpfFromFloat(asDouble(POW_OFF + (i << 45n))) as NumMpf;
    const hi = mpfFromFloat(asDouble(POW_OFF + ((i + 1n) << 45n))) as NumMpf;
    const center = mpfShift(mpfAdd(lo, hi), -1) as NumMpf;
    const below1 = center.exp + bitLength(center.man) <= 0;
    const scale = below1 ? 7 : 8;
    // j = round(2^scale / center)
    const e = center.exp;
    const num = e < 0 ? 1n << BigInt(scale - e) : 1n << BigInt(scale);
    const den = e < 0 ? center.man : center.man << BigInt(e);
    const j = (2n * num + den) / (2n * den);
    const invc = Number(j) / 2 ** scale;
    const lnC = -lnFixed(j, -scale, F);
    const shift = BigInt(F - 43);
    const logc43 = (2n * lnC + (1n << shift)) >> (shift + 1n);
    const logc = Number(logc43) / 2 ** 43;
    log.push([invc, logc, fixedToDouble(lnC - (logc43 << shift), F)]);
  }
  const exp: bigint[] = [];
  const ln2 = ln2Fixed(F);
  for (let k = 0n; k < 128n; k++) {
    // 2^(k/N) ~= H * (1 + T)
    const v = expFixedSmall((k * ln2) / 128n, F);
    const h = fixedToDouble(v, F);
    const exact = makeMpf(false, v, -F, 0);
    const t = mpfToDouble(mpfDiv(mpfSub(exact, mpfFromFloat(h)), mpfFromFloat(h), 53));
    exp.push(t === 0 ? 0n : asBits(t), (asBits(h) - (k << 45n)) & U64);
  }
  return { log, exp };
}

const POW_TABLES: PowTables = buildPowTables();

/** `log_inline`: log(x) as hi + tail, x given by its bits (subnormals pre-normalised). */
function powLog(ix: bigint): [number, number] {
  const T = POW_TABLES.log;
  const A = LOG_POLY;
  const tmp = (ix - POW_OFF) & U64;
  const i = Number((tmp >> 45n) % 128n);
  const k = Number(BigInt.asIntN(64, tmp) >> 52n);
  const z = asDouble((ix - (tmp & (0xfffn << 52n))) & U64);
  const kd = k;
  const [invc, logc, logctail] = T[i]!;
  const r = fma(z, invc, -1);
  const t1 = fma(kd, LN2_HI, logc);
  const t2 = t1 + r;
  const lo1 = fma(kd, LN2_LO, logctail);
  const lo2 = t1 - t2 + r;
  const ar = A[0] * r;
  const ar2 = r * ar;
  const ar3 = r * ar2;
  const hi = t2 + ar2;
  const lo3 = fma(ar, r, -ar2);
  const lo4 = t2 - hi + ar2;
  const q = fma(ar2, fma(ar2, fma(r, A[6], A[5]), fma(r, A[4], A[3])), fma(r, A[2], A[1]));
  const lo = fma(ar3, q, lo1 + lo2 + lo3 + lo4);
  const y = hi + lo;
  return [y, hi - y + lo];
}

/** `specialcase` of exp_inline: results near overflow or in the subnormal range. */
function powExpSpecial(tmp: number, sbits0: bigint, ki: bigint): number {
  if ((ki & 0x80000000n) === 0n) {
    const scale = asDouble(sbits0 - (1009n << 52n));
    return 2 ** 1009 * fma(scale, tmp, scale);
  }
  const sbits = (sbits0 + (1022n << 52n)) & U64;
  const scale = asDouble(sbits);
  let y = fma(scale, tmp, scale);
  if (Math.abs(y) < 1) {
    const one = y < 0 ? -1 : 1;
    let lo = fma(scale, tmp, scale - y);
    const hi = one + y;
    lo = one - hi + y + lo;
    y = hi + lo - one;
    if (y === 0) y = asDouble(sbits & 0x8000000000000000n);
  }
  return 2 ** -1022 * y;
}

/** `exp_inline(x, xtail)` for a positive result. */
function powExp(x: number, xtail: number): number {
  const T = POW_TABLES.exp;
  let abstop = Number(asBits(x) >> 52n) & 0x7ff;
  if ((abstop - 0x3c9) >>> 0 >= 0x408 - 0x3c9) {
    if ((abstop - 0x3c9) >>> 0 >= 0x80000000) return 1 + x;
    if (abstop >= 0x409) return x < 0 ? 0 : Number.POSITIVE_INFINITY;
    abstop = 0;
  }
  let kd = fma(INV_LN2_N, x, EXP_SHIFT);
  const ki = asBits(kd);
  kd -= EXP_SHIFT;
  let r = fma(kd, NEG_LN2_LO_N, fma(kd, NEG_LN2_HI_N, x));
  r += xtail;
  const idx = Number(2n * (ki % 128n));
  const top = (ki << 45n) & U64;
  const tail = asDouble(T[idx]!);
  const sbits = (T[idx + 1]! + top) & U64;
  const r2 = r * r;
  const tmp = fma(r2 * r2, fma(r, EXP_C5, EXP_C4), fma(r2, fma(r, EXP_C3, EXP_C2), tail + r));
  if (abstop === 0) return powExpSpecial(tmp, sbits, ki);
  const scale = asDouble(sbits);
  return fma(scale, tmp, scale);
}

/** glibc `pow(x, y)` for a finite x > 0, x != 1, and a finite y != 0 (what float_pow passes on). */
function glibcPow(x: number, y: number): number {
  let ix = asBits(x);
  const topx = Number(ix >> 52n);
  const topy = Number(asBits(y) >> 52n) & 0x7ff;
  if ((topy - 0x3be) >>> 0 >= 0x43e - 0x3be) {
    // |y| < 2^-65: x^y ~ 1 + y log x; |y| >= 2^63: certain overflow or underflow.
    if (topy < 0x3be) return x > 1 ? 1 + y : 1 - y;
    return x > 1 === y > 0 ? Number.POSITIVE_INFINITY : 0;
  }
  if (topx === 0) {
    // Subnormal x: normalise so the exponent becomes negative.
    ix = asBits(x * 2 ** 52) & 0x7fffffffffffffffn;
    ix = (ix - (52n << 52n)) & U64;
  }
  const [hi, lo] = powLog(ix);
  const ehi = y * hi;
  const elo = fma(y, lo, fma(y, hi, -ehi));
  return powExp(ehi, elo);
}

/** [cos(x), sin(x)] * 2^F for a double x, after reduction modulo pi/2. */
function cosSinFixed(x: number, F: number): [bigint, bigint] {
  const xm = mpfFromFloat(Math.abs(x)) as NumMpf;
  const G = F + Math.max(0, xm.exp + bitLength(xm.man)) + 16;
  const g = BigInt(G);
  const halfPi = piFixed(G) >> 1n;
  const sh = xm.exp + G;
  const X = sh >= 0 ? xm.man << BigInt(sh) : xm.man >> BigInt(-sh);
  const q = (2n * X + halfPi) / (2n * halfPi);
  const r = X - q * halfPi;
  const r2 = (r * r) >> g;
  let c = 1n << g;
  let s = r;
  let termC = c;
  let termS = r;
  for (let i = 1n; termC !== 0n || termS !== 0n; i++) {
    termC = -(termC * r2) / (((2n * i - 1n) * (2n * i)) << g);
    termS = -(termS * r2) / ((2n * i * (2n * i + 1n)) << g);
    c += termC;
    s += termS;
  }
  const quadrant = Number(q % 4n);
  let [cos, sin] = [
    [c, s],
    [-s, c],
    [-c, -s],
    [s, -c],
  ][quadrant]! as [bigint, bigint];
  if (x < 0) sin = -sin;
  const down = BigInt(G - F);
  cos >>= down;
  sin >>= down;
  return [cos, sin];
}

/**
 * Correctly rounded [cos(x), sin(x)], standing in for glibc's cos/sin in complex pow. glibc's
 * are not correctly rounded either (below 0.55 ULP), so about 1 in 200 complex results differs
 * from the reference in the last digit; porting glibc's s_sin.c would close that gap.
 */
function correctlyRoundedCosSin(x: number): [number, number] {
  if (x === 0) return [1, x];
  const settle = (pick: 0 | 1): number => {
    for (let F = 96; ; F *= 2) {
      const v = cosSinFixed(x, F)[pick];
      const lo = fixedToDouble(v - 8n, F);
      if (lo === fixedToDouble(v + 8n, F) || F > 8192) return lo;
    }
  };
  return [settle(0), settle(1)];
}

/**
 * Round a quantity known through fixed-point approximations (error under 4 units) to `prec`
 * bits, raising the working precision until the rounding is certain (the quantities here are
 * transcendental, so this terminates).
 */
function roundApprox(approx: (F: number) => bigint, prec: number, startF: number, rnd: Rounding = 'n'): Mpf {
  for (let F = startF; ; F *= 2) {
    const v = approx(F);
    const lo = makeMpf(false, v - 4n, -F, prec, rnd);
    const hi = makeMpf(false, v + 4n, -F, prec, rnd);
    if (mpfEquals(lo, hi)) return lo;
    if (F > 8 * MAX_WORKING_BITS) throw new Error('mpf rounding did not settle');
  }
}

/** floor(c * 2^F) for a positive constant c given by its fixed-point approximation. */
function floorFixed(approx: (F: number) => bigint, F: number): bigint {
  for (let extra = 24; ; extra *= 2) {
    const v = approx(F + extra);
    const lo = (v - 4n) >> BigInt(extra);
    const hi = (v + 4n) >> BigInt(extra);
    if (lo === hi) return lo;
  }
}

/**
 * `mpf_pi(prec)`: mpmath rounds floor(pi * 2^(prec+20)) to prec bits, which is a double
 * rounding; reproduce it rather than the correctly rounded value.
 */
function mpfPi(prec: number, rnd: Rounding = 'n'): Mpf {
  const wp = prec + 20;
  return makeMpf(false, floorFixed(piFixed, wp), -wp, prec, rnd);
}

/** `mpf_log`; undefined for a negative argument (mpmath then switches to the complex log). */
function mpfLog(x: Mpf, prec: number): Mpf | undefined {
  if (x.kind === 'zero') return NINF;
  if (x.kind === 'nan') return NAN;
  if (x.kind === 'inf') return x.neg ? undefined : INF;
  if (x.neg) return undefined;
  if (x.man === 1n) {
    if (x.exp === 0) return ZERO;
    // Powers of two: exp * floor(ln2 * 2^wp), rounded (mpmath's shortcut, another double rounding).
    const wp = prec + 20;
    return makeMpf(x.exp < 0, BigInt(Math.abs(x.exp)) * floorFixed(ln2Fixed, wp), -wp, prec);
  }
  const bc = bitLength(x.man);
  const mag = x.exp + bc;
  const absMag = Math.abs(mag);
  let deficit = 0;
  if (absMag <= 1) {
    // mpmath measures the distance from 1 as t = x - 1 (for mag -1 it computes 4x - 1, a quirk)
    // and, when more than prec+20 bits cancel, returns t itself as the logarithm.
    const tsign = absMag === 0;
    const tman = tsign ? (1n << BigInt(bc)) - x.man : x.man - (1n << BigInt(bc - 1));
    const cancellation = bc - bitLength(tman);
    if (cancellation > prec + 20) return makeMpf(tsign, tman, absMag - bc, prec);
    deficit = Math.max(0, cancellation);
  }
  return roundApprox((F) => lnFixed(x.man, x.exp, F), prec, prec + 40 + deficit);
}

function mpfAbs(x: Mpf): Mpf {
  if (x.kind === 'num' || x.kind === 'inf') return x.neg ? mpfNeg(x) : x;
  return x;
}

/** `mpf_atan` with mpmath's two shortcuts for huge and tiny arguments. */
function mpfAtan(x: Mpf, prec: number, rnd: Rounding): Mpf {
  const halfPi = (neg: boolean) => {
    const h = mpfShift(mpfPi(prec, rnd), -1);
    return neg ? mpfNeg(h) : h;
  };
  if (x.kind === 'zero') return ZERO;
  if (x.kind === 'nan') return NAN;
  if (x.kind === 'inf') return halfPi(x.neg);
  const mag = x.exp + bitLength(x.man);
  if (mag > prec + 20) return halfPi(x.neg);
  if (-mag > prec + 20) {
    // mpf_perturb: atan(x) is a hair closer to zero than x.
    if (rnd === 'n') return mpfRound(x, prec, rnd);
    return mpfAdd(x, makeMpf(!x.neg, 1n, mag - prec - 1, 0), prec, rnd);
  }
  const r = roundApprox((F) => atanFixed(x.man, x.exp, F), prec, prec + 40 + Math.max(0, -mag), rnd);
  return x.neg ? mpfNeg(r) : r;
}

/** `mpf_atan2(y, x)` with mpmath's special-value table. */
function mpfAtan2(y: Mpf, x: Mpf, prec: number): Mpf {
  if (y.kind !== 'num') {
    if (y.kind === 'zero' && x.kind !== 'nan') {
      const xNonNegative = x.kind === 'zero' || ((x.kind === 'num' || x.kind === 'inf') && !x.neg);
      return xNonNegative ? ZERO : mpfPi(prec);
    }
    if (y.kind === 'inf') {
      if (x.kind === 'inf') return NAN;
      const halfPi = mpfShift(mpfPi(prec), -1);
      return y.neg ? mpfNeg(halfPi) : halfPi;
    }
    return NAN;
  }
  if (y.neg) return mpfNeg(mpfAtan2(mpfNeg(y), x, prec));
  if (x.kind !== 'num') {
    if (x.kind === 'nan') return NAN;
    if (x.kind === 'inf') return x.neg ? mpfPi(prec) : ZERO;
    return mpfShift(mpfPi(prec), -1);
  }
  const tquo = mpfAtan(mpfDiv(y, x, prec + 4, ROUND_FAST), prec + 4, ROUND_FAST);
  return x.neg ? mpfAdd(mpfPi(prec + 4, ROUND_FAST), tquo, prec) : mpfRound(tquo, prec);
}

/** `mpf_log_hypot(a, b)`: log(sqrt(a² + b²)). */
function mpfLogHypot(a0: Mpf, b0: Mpf, prec: number): Mpf {
  let a = a0;
  let b = b0;
  if (b.kind !== 'num') [a, b] = [b, a];
  if (a.kind !== 'num') {
    if (b.kind !== 'num') {
      if (a.kind === 'zero' && b.kind === 'zero') return NINF;
      if (a.kind === 'nan' || b.kind === 'nan') return NAN;
      return INF;
    }
    if (a.kind === 'zero') return mpfLog(mpfAbs(b), prec)!;
    return a.kind === 'nan' ? NAN : INF;
  }
  const a2 = mpfMul(a, a) as NumMpf;
  const b2 = mpfMul(b, b) as NumMpf;
  const extra = 20;
  let h2 = mpfAdd(a2, b2, prec + extra, ROUND_FAST);
  const cancelled = mpfAdd(h2, makeMpf(true, 1n, 0, 0), 10, ROUND_FAST);
  const magCancelled = cancelled.kind === 'num' ? cancelled.exp + bitLength(cancelled.man) : 0;
  if (cancelled.kind === 'zero' || magCancelled < -extra / 2) {
    h2 = mpfAdd(a2, b2, Math.max(0, prec + extra - Math.min(a2.exp, b2.exp)), ROUND_FAST);
  }
  return mpfShift(mpfLog(h2, prec)!, -1);
}

/** `ln(x)` as mpmath's wrapper does it: real when possible, else the complex log. */
function mpLn(x: Mpf | Mpc, prec: number): Mpf | Mpc {
  if ('kind' in x) {
    const real = mpfLog(x, prec);
    if (real !== undefined) return real;
    return mpcLog({ re: x, im: ZERO }, prec);
  }
  return mpcLog(x, prec);
}

function mpcLog(z: Mpc, prec: number): Mpc {
  return { re: mpfLogHypot(z.re, z.im, prec), im: mpfAtan2(z.im, z.re, prec) };
}

/** `x / y` with mpmath's mpf/mpc dispatch (`mpc_div_mpf`, `mpc_mpf_div`, `mpc_div`). */
function mpDiv(x: Mpf | Mpc, y: Mpf | Mpc, prec: number): Mpf | Mpc {
  if ('kind' in x && 'kind' in y) return mpfDiv(x, y, prec);
  if (!('kind' in x) && 'kind' in y) return { re: mpfDiv(x.re, y, prec), im: mpfDiv(x.im, y, prec) };
  if ('kind' in x && !('kind' in y)) {
    const m = mpfAdd(mpfMul(y.re, y.re), mpfMul(y.im, y.im), prec + 10, ROUND_FAST);
    return { re: mpfDiv(mpfMul(y.re, x), m, prec), im: mpfDiv(mpfNeg(mpfMul(y.im, x)), m, prec) };
  }
  const { re: a, im: b } = x as Mpc;
  const { re: c, im: d } = y as Mpc;
  const wp = prec + 10;
  const mag = mpfAdd(mpfMul(c, c), mpfMul(d, d), wp, ROUND_FAST);
  const t = mpfAdd(mpfMul(a, c), mpfMul(b, d), wp, ROUND_FAST);
  const u = mpfSub(mpfMul(b, c), mpfMul(a, d), wp, ROUND_FAST);
  return { re: mpfDiv(t, mag, prec), im: mpfDiv(u, mag, prec) };
}

// ---- precision bookkeeping and printing (mpmath's libmpf helpers) ----------------------------

const LOG2_10 = 3.3219280948873626; // the literal mpmath uses; also Python's math.log(10, 2)

/** `dps_to_prec(n)` as run by `mp.dps = n`: int(n) first, so '7' and 7.9 both work. */
function dpsToPrec(n: PyValue): number {
  const d = toInt(n);
  const scaled = intToFloat(d + 1n) * LOG2_10;
  const bits = pyRound(scaled) as bigint;
  return bits < 1n ? 1 : Number(bits);
}

function precToDps(n: number): number {
  const d = Number(pyRound(n / LOG2_10) as bigint) - 1;
  return Math.max(1, d);
}

/** `repr_dps`: digits used by `repr(mpf)`. */
function reprDps(prec: number): number {
  const dps = precToDps(prec);
  return dps === 15 ? 17 : dps + 3;
}

/** `to_digits_exp`: digits truncated through a binary fixed-point detour (not correctly rounded). */
function toDigitsExp(x: NumMpf, dps: number): { digits: string; exponent: number } {
  const bc = bitLength(x.man);
  const bitprec = Math.trunc(dps * LOG2_10) + 10;
  let man = x.man;
  let exp = x.exp;
  let exponent = 0;
  if (Math.abs(exp + bc) > 3500) {
    // mpmath first scales by 10^b, b = int(exp * log10(2)), with its own (rounded) power of ten;
    // scaling with an exact power is the same up to the last bit. Only reachable for results
    // beyond 2^±3500, which a logarithm of a call argument never produces in practice.
    const b = Math.trunc(exp * Math.log10(2));
    const abs = makeMpf(false, man, exp, 0);
    const power = mpfFromInt(10n ** BigInt(Math.abs(b)));
    const scaled = (b >= 0 ? mpfDiv(abs, power, bitprec) : mpfMul(abs, power, bitprec)) as NumMpf;
    man = scaled.man;
    exp = scaled.exp;
    exponent = b;
  }
  const mbc = bitLength(man);
  const fixprec = Math.max(bitprec - exp - mbc, 0);
  const fixdps = Math.trunc(fixprec / LOG2_10 + 0.5);
  const offset = exp + fixprec;
  const sf = offset >= 0 ? man << BigInt(offset) : man >> BigInt(-offset);
  const sd = (sf * 10n ** BigInt(fixdps)) >> BigInt(fixprec);
  const digits = sd.toString();
  return { digits, exponent: exponent + digits.length - fixdps - 1 };
}

/** mpmath `to_str(x, dps)` with its defaults (strip zeros, fixed notation near unit magnitude). */
function mpfToStr(x: Mpf, dps: number): string {
  if (x.kind === 'zero') return '0.0';
  if (x.kind === 'inf') return x.neg ? '-inf' : '+inf';
  if (x.kind === 'nan') return 'nan';
  const minFixed = Math.min(-Math.floor(dps / 3), -5);
  const maxFixed = dps;
  const sign = x.neg ? '-' : '';
  let { digits, exponent } = toDigitsExp(x, dps + 3);
  // Round the truncated digits half-up at dps (which undoes some "...99999" tails).
  if (digits.length > dps && '56789'.includes(digits[dps]!)) {
    digits = digits.slice(0, dps);
    let i = dps - 1;
    while (i >= 0 && digits[i] === '9') i--;
    if (i >= 0) {
      digits = digits.slice(0, i) + String(Number(digits[i]) + 1) + '0'.repeat(dps - i - 1);
    } else {
      digits = '1' + '0'.repeat(dps - 1);
      exponent += 1;
    }
  } else {
    digits = digits.slice(0, dps);
  }
  let split = 1;
  if (minFixed < exponent && exponent < maxFixed) {
    if (exponent < 0) {
      digits = '0'.repeat(-exponent) + digits;
    } else {
      split = exponent + 1;
      if (split > dps) digits += '0'.repeat(split - dps);
    }
    exponent = 0;
  }
  let text = `${digits.slice(0, split)}.${digits.slice(split)}`.replace(/0+$/, '');
  if (text.endsWith('.')) text += '0';
  if (exponent === 0) return sign + text;
  return exponent > 0 ? `${sign}${text}e+${exponent}` : `${sign}${text}e${exponent}`;
}

function mpRepr(x: Mpf | Mpc, prec: number): PyOpaque {
  const dps = reprDps(prec);
  if ('kind' in x) return new PyOpaque('mpf', `mpf('${mpfToStr(x, dps)}')`);
  return new PyOpaque('mpc', `mpc(real='${mpfToStr(x.re, dps)}', imag='${mpfToStr(x.im, dps)}')`);
}

// ---- mpmath's conversion of the arguments (`ctx.convert`) -----------------------------------

/** Raised inside `from_str` where mpmath's convert swallows a ValueError and tries other routes. */
class NotAFloatLiteral extends Error {}

/** Python `int(s)` for base 10 (whitespace, sign, single underscores between digits). */
function parsePyInt(s: string): bigint {
  const t = s.trim();
  if (!/^[+-]?\d+(_\d+)*$/.test(t)) throw new NotAFloatLiteral();
  return BigInt(t.replace(/_/g, ''));
}

const DIGITS = String.raw`\d(?:_?\d)*`;
const FLOAT_LITERAL = new RegExp(
  String.raw`^[+-]?(?:(?:${DIGITS}(?:\.(?:${DIGITS})?)?|\.${DIGITS})(?:e[+-]?${DIGITS})?|inf|infinity|nan)$`,
);

/** `from_str(x, prec)`: a decimal literal (or p/q) rounded to `prec` bits. */
function mpfFromStr(text: string, prec: number): Mpf {
  const x = text.toLowerCase().trim();
  if (x === 'inf' || x === '+inf') return INF;
  if (x === '-inf') return NINF;
  if (x === 'nan') return NAN;
  if (x.includes('/')) {
    const parts = x.split('/');
    if (parts.length !== 2) throw new NotAFloatLiteral(); // "too many values to unpack"
    const p = parsePyInt(parts[0]!.replace(/l+$/, ''));
    const q = parsePyInt(parts[1]!.replace(/l+$/, ''));
    return mpfDiv(mpfFromInt(p), mpfFromInt(q), prec);
  }
  // str_to_man_exp: validated with float(), then split by hand.
  const s = x.replace(/l+$/, '');
  if (!FLOAT_LITERAL.test(s.trim())) throw new NotAFloatLiteral();
  const eParts = s.split('e');
  let mantissa = eParts[0]!;
  let exp = eParts.length === 1 ? 0n : parsePyInt(eParts[1]!);
  const dot = mantissa.split('.');
  if (dot.length === 2) {
    const frac = dot[1]!.replace(/0+$/, '');
    exp -= BigInt(frac.length);
    mantissa = dot[0]! + frac;
  }
  const man = parsePyInt(mantissa);
  if (exp >= 0n) return makeMpf(false, man * 10n ** exp, 0, prec);
  return mpfDiv(mpfFromInt(man), mpfFromInt(10n ** -exp), prec);
}

const COMPLEX_LITERAL =
  /^\(?(?<re>[+-]?\d*(\.\d*)?(e[+-]?\d+)?)??(?<im>[+-]?\d*(\.\d*)?(e[+-]?\d+)?j)?\)?(?:$|(?=\n$))/;

/** `mpmath.mpmathify(x)` for the values a call can carry. */
function mpConvert(x: PyValue, prec: number): Mpf | Mpc {
  if (typeof x === 'bigint') return mpfFromInt(x);
  if (typeof x === 'boolean') return mpfFromInt(x ? 1n : 0n);
  if (typeof x === 'number') return mpfFromFloat(x);
  if (typeof x === 'string') {
    try {
      return mpfFromStr(x, prec);
    } catch (e) {
      if (!(e instanceof NotAFloatLiteral)) throw e;
    }
    if (x.toLowerCase().includes('j')) {
      // `_convert_fallback`: complex literals; a failed match dereferences None.
      const m = COMPLEX_LITERAL.exec(x.toLowerCase().replace(/ /g, ''));
      if (m === null) throw new PyException('AttributeError', "'NoneType' object has no attribute 'group'");
      const reText = m.groups?.re;
      const re = reText ? mpConvert(reText, prec) : ZERO;
      const im = mpConvert(m.groups!.im!.replace(/j+$/, ''), prec);
      return { re: re as Mpf, im: im as Mpf };
    }
  }
  throw TypeError_(`cannot create mpf from ${repr(x)}`);
}

// =============================================================================================
// Python's decimal module, for `Decimal(number).sqrt()` under a context precision.

type Dec =
  | { readonly kind: 'num'; readonly neg: boolean; readonly coeff: bigint; readonly exp: number }
  | { readonly kind: 'inf'; readonly neg: boolean }
  | { readonly kind: 'nan' };

const MAX_DECIMAL_DIGITS = 200_000;

/** `Decimal(int | float | bool)`: exact. */
function decFromNumber(v: bigint | number | boolean): Dec {
  if (typeof v === 'boolean') return { kind: 'num', neg: false, coeff: v ? 1n : 0n, exp: 0 };
  if (typeof v === 'bigint') return { kind: 'num', neg: v < 0n, coeff: absBig(v), exp: 0 };
  if (Number.isNaN(v)) return { kind: 'nan' };
  if (!Number.isFinite(v)) return { kind: 'inf', neg: v < 0 };
  const neg = v < 0 || Object.is(v, -0);
  const m = mpfFromFloat(Math.abs(v));
  if (m.kind !== 'num') return { kind: 'num', neg, coeff: 0n, exp: 0 };
  // man * 2^exp = man * 5^-exp * 10^exp for negative exp (Decimal.from_float).
  if (m.exp >= 0) return { kind: 'num', neg, coeff: m.man << BigInt(m.exp), exp: 0 };
  return { kind: 'num', neg, coeff: m.man * 5n ** BigInt(-m.exp), exp: m.exp };
}

function isqrt(n: bigint): bigint {
  if (n < 2n) return n;
  let x = 1n << BigInt((bitLength(n) + 1) >> 1);
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

const digitCount = (n: bigint): number => n.toString().length;

/** Round coeff * 10^exp to `prec` digits, half to even (context rounding for an exact value). */
function decRoundHalfEven(coeff: bigint, exp: number, prec: number): Dec {
  const d = digitCount(coeff);
  if (d <= prec) return { kind: 'num', neg: false, coeff, exp };
  const drop = d - prec;
  const p = 10n ** BigInt(drop);
  let q = coeff / p;
  const r2 = 2n * (coeff % p);
  if (r2 > p || (r2 === p && (q & 1n) === 1n)) q += 1n;
  let e = exp + drop;
  if (digitCount(q) > prec) {
    q /= 10n;
    e += 1;
  }
  return { kind: 'num', neg: false, coeff: q, exp: e };
}

/**
 * `Decimal.sqrt()`: correctly rounded (half even) to `prec` digits. An exact root keeps the
 * ideal exponent floor(exp/2) when it fits, so sqrt(16) is `4` and sqrt(2.25) is `1.5`.
 */
function decSqrt(x: Dec, prec: number): Dec {
  if (x.kind !== 'num') return x; // NaN stays NaN; +Infinity stays (negatives are refused earlier)
  const ideal = Math.floor(x.exp / 2);
  if (x.coeff === 0n) return { kind: 'num', neg: x.neg, coeff: 0n, exp: ideal };
  const c = x.coeff * 10n ** BigInt(x.exp - 2 * ideal);
  const root = isqrt(c);
  if (root * root === c) return decRoundHalfEven(root, ideal, prec);
  // Irrational root: take at least prec+2 digits of floor(sqrt(c) * 10^s); the discarded part is
  // never exactly a half, so "round up when the dropped digits are >= 5000..." is exact.
  let s = prec + 2 - Math.floor(digitCount(c) / 2);
  let m: bigint;
  for (;;) {
    m = s >= 0 ? isqrt(c * 10n ** BigInt(2 * s)) : isqrt(c / 10n ** BigInt(-2 * s));
    if (digitCount(m) >= prec + 2) break;
    s += 1;
  }
  const drop = digitCount(m) - prec;
  const p = 10n ** BigInt(drop);
  let q = m / p;
  if (2n * (m % p) >= p) q += 1n;
  let e = ideal - s + drop;
  if (digitCount(q) > prec) {
    q /= 10n;
    e += 1;
  }
  return { kind: 'num', neg: false, coeff: q, exp: e };
}

/** `repr(Decimal)`: the to-sci-string form inside `Decimal('...')`. */
function decRepr(x: Dec): string {
  let body: string;
  if (x.kind === 'nan') body = 'NaN';
  else if (x.kind === 'inf') body = `${x.neg ? '-' : ''}Infinity`;
  else {
    const digits = x.coeff.toString();
    const leftDigits = x.exp + digits.length;
    const dotPlace = x.exp <= 0 && leftDigits > -6 ? leftDigits : 1;
    let intPart: string;
    let fracPart: string;
    if (dotPlace <= 0) {
      intPart = '0';
      fracPart = `.${'0'.repeat(-dotPlace)}${digits}`;
    } else if (dotPlace >= digits.length) {
      intPart = digits + '0'.repeat(dotPlace - digits.length);
      fracPart = '';
    } else {
      intPart = digits.slice(0, dotPlace);
      fracPart = `.${digits.slice(dotPlace)}`;
    }
    const e = leftDigits - dotPlace;
    const expPart = e === 0 ? '' : `E${e > 0 ? '+' : '-'}${Math.abs(e)}`;
    body = `${x.neg ? '-' : ''}${intPart}${fracPart}${expPart}`;
  }
  return `Decimal('${body}')`;
}

/** `getcontext().prec = precision`, with the C decimal module's errors. */
function decimalPrecision(p: PyValue): number {
  const n = typeof p === 'boolean' ? (p ? 1n : 0n) : p;
  if (typeof n !== 'bigint') throw TypeError_('an integer is required');
  if (n >= 2n ** 63n || n < -(2n ** 63n))
    throw OverflowError_('Python int too large to convert to C ssize_t');
  if (n < 1n || n > 999_999_999_999_999_999n) throw ValueError_('valid range for prec is [1, MAX_PREC]');
  return Number(n);
}

// =============================================================================================

/** `to_meters`: note km and m are Python ints, so `si_unit_conversion(2, 'km', ...)` stays int until the last step. */
const SI_TO_METERS: PyDict = dictOf({ km: 1000n, m: 1n, cm: 0.01, mm: 0.001, um: 1e-6, nm: 1e-9 });

const IMPERIAL_FACTORS: PyDict = dictOf({
  cm_to_in: 0.393701,
  in_to_cm: 2.54,
  m_to_ft: 3.28084,
  ft_to_m: 0.3048,
  m_to_yd: 1.09361,
  yd_to_m: 0.9144,
  km_to_miles: 0.621371,
  miles_to_km: 1.60934,
  kg_to_lb: 2.20462,
  lb_to_kg: 0.453592,
  celsius_to_fahrenheit: 1.8,
  fahrenheit_to_celsius: 5 / 9,
});

/** `isinstance(v, (int, float))`: bools pass. */
const isIntOrFloat = (v: PyValue): boolean =>
  typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean';

export class MathApiInstance implements BfclApi {
  readonly className = 'MathAPI' as const;

  loadScenario(_config: PyDict, _ctx: ScenarioContext): void {
    // Stateless in the reference: never given a scenario.
  }

  publicState(): ReadonlyMap<string, PyValue> {
    return new Map();
  }

  logarithm(value: PyValue, base: PyValue, precision: PyValue): PyValue {
    // Every exception becomes {"error": str(e)}; mpmath's ZeroDivisionError has an empty text.
    try {
      const prec = dpsToPrec(precision);
      if (prec > MAX_WORKING_BITS) {
        throw new PyException('MemoryError', `precision ${prec} bits is beyond this port's limit`);
      }
      const lnValue = mpLn(mpConvert(value, prec), prec);
      const lnBase = mpLn(mpConvert(base, prec), prec);
      return result(mpRepr(mpDiv(lnValue, lnBase, prec), prec));
    } catch (e) {
      if (e instanceof PyException) return dictOf({ error: e.message });
      throw e;
    }
  }

  mean(numbers: PyValue): PyValue {
    if (!truthy(numbers)) return dictOf({ error: 'Cannot calculate mean of an empty list' });
    return catchTypeError('All elements in the list must be numbers', () =>
      result(pyTrueDiv(pySum(iterate(numbers)), BigInt(len(numbers)))),
    );
  }

  standardDeviation(numbers: PyValue): PyValue {
    if (!truthy(numbers)) return dictOf({ error: 'Cannot calculate standard deviation of an empty list' });
    return catchTypeError('All elements in the list must be numbers', () => {
      const n = BigInt(len(numbers));
      const mean = pyTrueDiv(pySum(iterate(numbers)), n);
      const squares = iterate(numbers).map((x) => pyPow(pySub(x, mean), 2n));
      const variance = pyTrueDiv(pySum(squares), n);
      return result(Math.sqrt(variance as number));
    });
  }

  siUnitConversion(value: PyValue, unitIn: PyValue, unitOut: PyValue): PyValue {
    if (!isIntOrFloat(value)) return dictOf({ error: 'Value must be a number' });
    // Dict membership: an unhashable unit raises TypeError (outside the try in the reference).
    if (!contains(SI_TO_METERS, unitIn) || !contains(SI_TO_METERS, unitOut)) {
      return dictOf({ error: `Conversion from '${str(unitIn)}' to '${str(unitOut)}' is not supported` });
    }
    try {
      const toMeters = dictGet(SI_TO_METERS, unitIn as string)!;
      // from_meters[u] = 1 / to_meters[u] is always a float.
      const fromMeters = pyTrueDiv(1n, dictGet(SI_TO_METERS, unitOut as string)!);
      return result(pyMul(pyMul(value, toMeters), fromMeters));
    } catch (e) {
      if (e instanceof PyException && e.pyType === 'OverflowError') {
        return dictOf({ error: 'Conversion resulted in a value too large to represent' });
      }
      throw e;
    }
  }

  imperialSiConversion(value: PyValue, unitIn: PyValue, unitOut: PyValue): PyValue {
    if (!isIntOrFloat(value)) return dictOf({ error: 'Value must be a number' });
    if (pyEquals(unitIn, unitOut)) return result(value);
    const key = `${str(unitIn)}_to_${str(unitOut)}`;
    const factor = dictGet(IMPERIAL_FACTORS, key);
    if (factor === undefined) {
      return dictOf({ error: `Conversion from '${str(unitIn)}' to '${str(unitOut)}' is not supported` });
    }
    try {
      if (unitIn === 'celsius' && unitOut === 'fahrenheit') return result(pyAdd(pyMul(value, factor), 32n));
      if (unitIn === 'fahrenheit' && unitOut === 'celsius') return result(pyMul(pySub(value, 32n), factor));
      return result(pyMul(value, factor));
    } catch (e) {
      if (e instanceof PyException && e.pyType === 'OverflowError') {
        return dictOf({ error: 'Conversion resulted in a value too large to represent' });
      }
      throw e;
    }
  }

  add(a: PyValue, b: PyValue): PyValue {
    return catchTypeError('Both inputs must be numbers', () => result(pyAdd(a, b)));
  }

  subtract(a: PyValue, b: PyValue): PyValue {
    return catchTypeError('Both inputs must be numbers', () => result(pySub(a, b)));
  }

  multiply(a: PyValue, b: PyValue): PyValue {
    // The isinstance check comes first, so `multiply('2', 3)` is an error, not '222'.
    if (!isIntOrFloat(a) || !isIntOrFloat(b)) return dictOf({ error: 'Both inputs must be numbers' });
    return catchTypeError('Both inputs must be numbers', () => result(pyMul(a, b)));
  }

  divide(a: PyValue, b: PyValue): PyValue {
    return catchTypeError('Both inputs must be numbers', () => {
      if (pyEquals(b, 0n)) return dictOf({ error: 'Cannot divide by zero' });
      return result(pyTrueDiv(a, b));
    });
  }

  power(base: PyValue, exponent: PyValue): PyValue {
    return catchTypeError('Both inputs must be numbers', () => result(pyPow(base, exponent)));
  }

  squareRoot(number: PyValue, precision: PyValue): PyValue {
    const invalid = 'Input must be a number or computation resulted in an invalid operation';
    // Only TypeError (and InvalidOperation, unreachable here) is caught; a bad precision value
    // raises ValueError/OverflowError through to the executor.
    return catchTypeError(invalid, () => {
      if (lt(number, 0n)) return dictOf({ error: 'Cannot calculate square root of a negative number' });
      const prec = decimalPrecision(precision);
      if (prec > MAX_DECIMAL_DIGITS) {
        throw new PyException('MemoryError', `precision ${prec} is beyond this port's limit`);
      }
      const d = decFromNumber(number as bigint | number | boolean);
      return result(new PyOpaque('Decimal', decRepr(decSqrt(d, prec))));
    });
  }

  absoluteValue(number: PyValue): PyValue {
    return catchTypeError('Input must be a number', () => result(pyAbs(number)));
  }

  roundNumber(number: PyValue, decimalPlaces: PyValue): PyValue {
    return catchTypeError('First input must be a number, second input must be an integer', () =>
      result(pyRound(number, decimalPlaces)),
    );
  }

  percentage(part: PyValue, whole: PyValue): PyValue {
    return catchTypeError('Both inputs must be numbers', () => {
      if (pyEquals(whole, 0n)) return dictOf({ error: 'Whole value cannot be zero' });
      return result(pyMul(pyTrueDiv(part, whole), 100n));
    });
  }

  minValue(numbers: PyValue): PyValue {
    if (!truthy(numbers)) return dictOf({ error: 'Cannot find minimum of an empty list' });
    return catchTypeError('All elements in the list must be numbers', () =>
      result(pyMinMax(iterate(numbers), 'min')),
    );
  }

  maxValue(numbers: PyValue): PyValue {
    if (!truthy(numbers)) return dictOf({ error: 'Cannot find maximum of an empty list' });
    return catchTypeError('All elements in the list must be numbers', () =>
      result(pyMinMax(iterate(numbers), 'max')),
    );
  }

  sumValues(numbers: PyValue): PyValue {
    if (!truthy(numbers)) return dictOf({ error: 'Cannot calculate sum of an empty list' });
    return catchTypeError('All elements in the list must be numbers', () => result(pySum(iterate(numbers))));
  }
}

const a = (args: BoundArgs, i: number): PyValue => args[i] as PyValue;

export const mathApi: ApiClass<MathApiInstance> = {
  className: 'MathAPI',
  stateless: true,
  create: () => new MathApiInstance(),
  methods: {
    logarithm: {
      params: [req('value'), req('base'), req('precision')],
      run: (self, args) => self.logarithm(a(args, 0), a(args, 1), a(args, 2)),
    },
    mean: { params: [req('numbers')], run: (self, args) => self.mean(a(args, 0)) },
    standard_deviation: { params: [req('numbers')], run: (self, args) => self.standardDeviation(a(args, 0)) },
    si_unit_conversion: {
      params: [req('value'), req('unit_in'), req('unit_out')],
      run: (self, args) => self.siUnitConversion(a(args, 0), a(args, 1), a(args, 2)),
    },
    imperial_si_conversion: {
      params: [req('value'), req('unit_in'), req('unit_out')],
      run: (self, args) => self.imperialSiConversion(a(args, 0), a(args, 1), a(args, 2)),
    },
    add: { params: [req('a'), req('b')], run: (self, args) => self.add(a(args, 0), a(args, 1)) },
    subtract: { params: [req('a'), req('b')], run: (self, args) => self.subtract(a(args, 0), a(args, 1)) },
    multiply: { params: [req('a'), req('b')], run: (self, args) => self.multiply(a(args, 0), a(args, 1)) },
    divide: { params: [req('a'), req('b')], run: (self, args) => self.divide(a(args, 0), a(args, 1)) },
    power: {
      params: [req('base'), req('exponent')],
      run: (self, args) => self.power(a(args, 0), a(args, 1)),
    },
    square_root: {
      params: [req('number'), req('precision')],
      run: (self, args) => self.squareRoot(a(args, 0), a(args, 1)),
    },
    absolute_value: { params: [req('number')], run: (self, args) => self.absoluteValue(a(args, 0)) },
    round_number: {
      params: [req('number'), opt('decimal_places')],
      run: (self, args) => self.roundNumber(a(args, 0), args[1] === undefined ? 0n : args[1]),
    },
    percentage: {
      params: [req('part'), req('whole')],
      run: (self, args) => self.percentage(a(args, 0), a(args, 1)),
    },
    min_value: { params: [req('numbers')], run: (self, args) => self.minValue(a(args, 0)) },
    max_value: { params: [req('numbers')], run: (self, args) => self.maxValue(a(args, 0)) },
    sum_values: { params: [req('numbers')], run: (self, args) => self.sumValues(a(args, 0)) },
  },
};
