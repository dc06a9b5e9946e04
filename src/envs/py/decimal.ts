/**
 * The piece of Python's `decimal` module that `Decimal(number).sqrt()` needs under a context
 * precision: exact conversion of an int or float, the correctly rounded square root with the
 * ideal-exponent rule for exact results, and `repr`.
 */
import { PyException, TypeError_, ValueError_ } from './errors.js';
import { bitLength, floatParts } from './libm.js';
import type { PyValue } from './values.js';

/** A decimal value (the context's flags and signals play no part here). */
export type Dec =
  | { readonly kind: 'num'; readonly neg: boolean; readonly coeff: bigint; readonly exp: number }
  | { readonly kind: 'inf'; readonly neg: boolean }
  | { readonly kind: 'nan' };

/** Precisions beyond this many digits would take minutes with the square root used here. */
export const MAX_DECIMAL_DIGITS = 200_000;

/** `Decimal(int | float | bool)`: exact. */
export function decFromNumber(v: bigint | number | boolean): Dec {
  if (typeof v === 'boolean') return { kind: 'num', neg: false, coeff: v ? 1n : 0n, exp: 0 };
  if (typeof v === 'bigint') return { kind: 'num', neg: v < 0n, coeff: v < 0n ? -v : v, exp: 0 };
  if (Number.isNaN(v)) return { kind: 'nan' };
  if (!Number.isFinite(v)) return { kind: 'inf', neg: v < 0 };
  const neg = v < 0 || Object.is(v, -0);
  const { man, exp } = floatParts(Math.abs(v));
  // man * 2^exp = man * 5^-exp * 10^exp for negative exp (Decimal.from_float); man is odd.
  if (exp >= 0) return { kind: 'num', neg, coeff: man << BigInt(exp), exp: 0 };
  return { kind: 'num', neg, coeff: man * 5n ** BigInt(-exp), exp };
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
export function decSqrt(x: Dec, prec: number): Dec {
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
export function decRepr(x: Dec): string {
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
export function decimalPrecision(p: PyValue): number {
  const n = typeof p === 'boolean' ? (p ? 1n : 0n) : p;
  if (typeof n !== 'bigint') throw TypeError_('an integer is required');
  if (n >= 2n ** 63n || n < -(2n ** 63n))
    throw new PyException('OverflowError', 'Python int too large to convert to C ssize_t');
  if (n < 1n || n > 999_999_999_999_999_999n) throw ValueError_('valid range for prec is [1, MAX_PREC]');
  return Number(n);
}
