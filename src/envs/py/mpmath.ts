/**
 * The part of mpmath 1.3.0 that `mpmath.log(value) / mpmath.log(base)` runs through at
 * `mp.dps = n`, reproduced digit for digit: argument conversion (`ctx.convert`, strings and
 * complex literals included), `mpf_log` / the complex log for negative arguments, division, and
 * `repr` with mpmath's own decimal printing (`to_str`), quirks included.
 *
 * Values are binary floating point on bigints, following mpmath's `libmpf` conventions: a value
 * is (-1)^neg * man * 2^exp with an odd mantissa, plus zero / ±inf / nan (mpmath has no -0).
 * Transcendental results are correctly rounded at mpmath's working precision, except where
 * mpmath itself rounds twice or truncates; those places are reproduced and marked.
 */
import { PyException, TypeError_, ZeroDivisionError_ } from './errors.js';
import { repr } from './format.js';
import { bitLength, floatParts, ln2Fixed, lnFixed, piFixed, trailingZeros } from './libm.js';
import { pyRound, toFloat, toInt } from './ops.js';
import type { PyValue } from './values.js';
import { PyOpaque } from './values.js';

export type Mpf =
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
export interface Mpc {
  readonly re: Mpf;
  readonly im: Mpf;
}

const ZERO: Mpf = { kind: 'zero' };
const NAN: Mpf = { kind: 'nan' };
const INF: Mpf = { kind: 'inf', neg: false };
const NINF: Mpf = { kind: 'inf', neg: true };

/** What an mpmath computation here yields. */
export type MpNumber = Mpf | Mpc;

/** Precisions beyond this many bits would take minutes with the series used here. */
export const MAX_WORKING_BITS = 1 << 18;

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
  const { man, exp } = floatParts(x);
  return makeMpf(false, man, exp, 0);
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
function mpLn(x: MpNumber, prec: number): MpNumber {
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

/** `mpmath.log(x)` at `prec` bits: the argument converted as mpmath does, then `ln`. */
export function mpLog(x: PyValue, prec: number): MpNumber {
  return mpLn(mpConvert(x, prec), prec);
}

/** `x / y` with mpmath's mpf/mpc dispatch (`mpc_div_mpf`, `mpc_mpf_div`, `mpc_div`). */
export function mpDiv(x: MpNumber, y: MpNumber, prec: number): MpNumber {
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
export function dpsToPrec(n: PyValue): number {
  const d = toInt(n);
  const scaled = toFloat(d + 1n) * LOG2_10;
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

/** `repr(x)` of an mpf or mpc computed at `prec` bits. */
export function mpRepr(x: MpNumber, prec: number): PyOpaque {
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
function mpConvert(x: PyValue, prec: number): MpNumber {
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
