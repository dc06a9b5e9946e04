/**
 * The numeric layer under the API classes: CPython's operators (py/ops), glibc's pow (py/libm),
 * the mpmath and decimal ports, and the int printing limit (py/format). Every expected value was
 * produced by CPython 3.11.7 on glibc 2.36 (x86-64 with FMA) with mpmath 1.3.0, the reference's
 * setup.
 */
import { describe, expect, it } from 'vitest';
import { decFromNumber, decRepr, decSqrt } from '../src/envs/py/decimal.js';
import { PyException } from '../src/envs/py/errors.js';
import { jsonDumps, repr, resultToString } from '../src/envs/py/format.js';
import {
  bitLength,
  correctlyRoundedCosSin,
  floatParts,
  pow as libmPow,
  nearestDouble,
  ratioToDouble,
} from '../src/envs/py/libm.js';
import { dpsToPrec, mpDiv, mpLog, mpRepr } from '../src/envs/py/mpmath.js';
import {
  add,
  floordiv,
  mod,
  mul,
  pow,
  pyMax,
  pyMin,
  pySum,
  sub,
  toFloat,
  truediv,
} from '../src/envs/py/ops.js';
import { dictOf, PyTuple, type PyValue } from '../src/envs/py/values.js';

/** The repr of the result, or `Type: message` for a Python exception (as the executor shows it). */
function py(f: () => PyValue): string {
  try {
    return repr(f());
  } catch (e) {
    if (e instanceof PyException) return `${e.pyType}: ${e.message}`;
    throw e;
  }
}

const BIG = 10n ** 400n;

describe('py/libm', () => {
  it('pow follows glibc, not the correctly rounded value or V8', () => {
    // the nearest double to 457^6 is 9109555799784048, which is what V8's `**` gives
    expect(libmPow(457, 6)).toBe(9109555799784050);
    expect(libmPow(10, -5)).toBe(1e-5);
    expect(libmPow(1.5, 2.5)).toBe(2.7556759606310752);
    expect(libmPow(0.5, 0.3)).toBe(0.8122523963562356);
    expect(libmPow(1.1, 1000)).toBe(2.4699329180060256e41);
    expect(libmPow(2, -1074)).toBe(5e-324);
  });

  it('pow has C99 special values; overflow and underflow are plain values', () => {
    expect(libmPow(Number.NaN, 0)).toBe(1);
    expect(libmPow(1, Number.NaN)).toBe(1);
    expect(libmPow(-8, 1 / 3)).toBeNaN();
    expect(libmPow(-2, 3)).toBe(-8);
    expect(libmPow(-0, -3)).toBe(Number.NEGATIVE_INFINITY);
    expect(Object.is(libmPow(-0, 3), -0)).toBe(true);
    expect(libmPow(0, Number.NEGATIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
    expect(libmPow(-1, Number.POSITIVE_INFINITY)).toBe(1);
    expect(libmPow(Number.NEGATIVE_INFINITY, -3)).toBe(-0);
    expect(libmPow(10, 400)).toBe(Number.POSITIVE_INFINITY);
    expect(libmPow(2, -1080)).toBe(0);
  });

  it('cos and sin are correctly rounded', () => {
    expect(correctlyRoundedCosSin(0)).toEqual([1, 0]);
    expect(correctlyRoundedCosSin(Math.PI / 2)).toEqual([6.123233995736766e-17, 1]);
    expect(correctlyRoundedCosSin(1)).toEqual([0.5403023058681398, 0.8414709848078965]);
    expect(correctlyRoundedCosSin(1e22)).toEqual([0.523214785395139, -0.8522008497671888]);
  });

  it('bit-level helpers', () => {
    expect(bitLength(0n)).toBe(0);
    expect(bitLength(-255n)).toBe(8);
    expect(floatParts(0.75)).toEqual({ man: 3n, exp: -2 });
    expect(floatParts(-5e-324)).toEqual({ man: -1n, exp: -1074 });
    expect(floatParts(-0)).toEqual({ man: 0n, exp: 0 });
    // 1.5 and 0.5 units of the smallest subnormal: ties go to even
    expect(nearestDouble(3n, -1075)).toBe(1e-323);
    expect(nearestDouble(1n, -1075)).toBe(0);
    expect(nearestDouble(-(2n ** 53n + 1n), 0)).toBe(-9007199254740992);
    expect(ratioToDouble(1n, 3n)).toBe(1 / 3);
    expect(ratioToDouble(2n ** 64n + 1n, 3n)).toBe(6.148914691236517e18);
    expect(Object.is(ratioToDouble(0n, -5n), -0)).toBe(true);
  });
});

describe('py/ops arithmetic', () => {
  it('float powers', () => {
    expect(py(() => pow(457.0, 6n))).toBe('9109555799784050.0');
    expect(py(() => pow(10n, -5n))).toBe('1e-05');
    expect(py(() => pow(10.0, -5n))).toBe('1e-05');
    expect(py(() => pow(2n, -1n))).toBe('0.5');
    expect(py(() => pow(-2.0, 3n))).toBe('-8.0');
    expect(py(() => pow(Number.NaN, 0n))).toBe('1.0');
    expect(py(() => pow(1.0, Number.NaN))).toBe('1.0');
    expect(py(() => pow(0.0, Number.NEGATIVE_INFINITY))).toBe('inf');
    expect(py(() => pow(2.0, -1080n))).toBe('0.0');
  });

  it('float power errors and complex results', () => {
    expect(py(() => pow(-8n, 1 / 3))).toBe('(1.0000000000000002+1.7320508075688772j)');
    expect(py(() => pow(-8.0, 0.5))).toBe('(1.7319121124709868e-16+2.8284271247461903j)');
    expect(py(() => pow(0.0, -1n))).toBe('ZeroDivisionError: 0.0 cannot be raised to a negative power');
    expect(py(() => pow(-0, -3n))).toBe('ZeroDivisionError: 0.0 cannot be raised to a negative power');
    expect(py(() => pow(10.0, 400n))).toBe("OverflowError: (34, 'Numerical result out of range')");
    expect(py(() => pow(-1.5, 1e300))).toBe("OverflowError: (34, 'Numerical result out of range')");
    expect(py(() => pow(-1e300, 1.5))).toBe('OverflowError: complex exponentiation');
    expect(py(() => pow(BIG, -1n))).toBe('OverflowError: int too large to convert to float');
  });

  it('int / int is correctly rounded at any size', () => {
    expect(py(() => truediv(2n ** 64n + 1n, 3n))).toBe('6.148914691236517e+18');
    expect(py(() => truediv(2n ** 53n + 1n, 1n))).toBe('9007199254740992.0');
    expect(py(() => truediv(BIG, 10n ** 399n))).toBe('10.0');
    expect(py(() => truediv(1n, BIG))).toBe('0.0');
    expect(py(() => truediv(-1n, BIG))).toBe('-0.0');
    expect(py(() => truediv(0n, -5n))).toBe('-0.0');
    expect(py(() => truediv(3n, 2n ** 1075n))).toBe('1e-323');
    expect(py(() => truediv(2n ** 1074n, 2n ** 2148n))).toBe('5e-324');
    expect(py(() => truediv(2n ** 1024n - 2n ** 971n, 1n))).toBe('1.7976931348623157e+308');
  });

  it('division errors', () => {
    expect(py(() => truediv(BIG, 3n))).toBe('OverflowError: integer division result too large for a float');
    expect(py(() => truediv(2n ** 1024n - 2n ** 970n, 1n))).toBe(
      'OverflowError: integer division result too large for a float',
    );
    expect(py(() => truediv(BIG, 2.0))).toBe('OverflowError: int too large to convert to float');
    expect(py(() => truediv(1n, 0n))).toBe('ZeroDivisionError: division by zero');
    expect(py(() => truediv(1.0, 0n))).toBe('ZeroDivisionError: float division by zero');
  });

  it('an int meeting a float is converted first', () => {
    const tooLarge = 'OverflowError: int too large to convert to float';
    expect(py(() => add(BIG, 0.5))).toBe(tooLarge);
    expect(py(() => sub(0.5, BIG))).toBe(tooLarge);
    expect(py(() => mul(BIG, 0.0))).toBe(tooLarge);
    expect(py(() => floordiv(BIG, 1.5))).toBe(tooLarge);
    expect(py(() => mod(BIG, 1.5))).toBe(tooLarge);
    expect(py(() => toFloat(BIG))).toBe(tooLarge);
    expect(py(() => add(2n ** 53n + 1n, 0.0))).toBe('9007199254740992.0');
  });

  it('sequences', () => {
    expect(py(() => add(new PyTuple([1n]), new PyTuple([2n])))).toBe('(1, 2)');
    expect(py(() => add(new PyTuple([1n]), [2n]))).toBe(
      'TypeError: can only concatenate tuple (not "list") to tuple',
    );
    expect(py(() => add('a', 1n))).toBe('TypeError: can only concatenate str (not "int") to str');
    expect(py(() => add([1n], [2n]))).toBe('[1, 2]');
    expect(py(() => mul('ab', 2n))).toBe("'abab'");
    // repetition works from either side, for str, list and tuple; the count must be an int
    expect(py(() => mul(3n, [1n, 2n]))).toBe('[1, 2, 1, 2, 1, 2]');
    expect(py(() => mul(2n, 'ab'))).toBe("'abab'");
    expect(py(() => mul(2n, new PyTuple([1n])))).toBe('(1, 1)');
    expect(py(() => mul(new PyTuple([1n, 2n]), 2n))).toBe('(1, 2, 1, 2)');
    expect(py(() => mul(true, [0n]))).toBe('[0]');
    expect(py(() => mul([1n], -1n))).toBe('[]');
    expect(py(() => mul([1n], 10n ** 20n))).toBe(
      "OverflowError: cannot fit 'int' into an index-sized integer",
    );
    expect(py(() => mul(2.0, [1n]))).toBe("TypeError: can't multiply sequence by non-int of type 'float'");
    expect(py(() => mul([1n], [1n]))).toBe("TypeError: can't multiply sequence by non-int of type 'list'");
    expect(py(() => mul('a', 'b'))).toBe("TypeError: can't multiply sequence by non-int of type 'str'");
  });

  it('float // and % follow the divmod of CPython (exact remainder, signed zeros)', () => {
    // CPython 3.11.7: 1//0.1, -1//0.1, 0.0//-3, -0.0//3, 5.0%-5, -5.0%5, -0.0%5, 1%0.1, -7.5//2, 7.5//-2, 1e308//1e-308
    expect(py(() => floordiv(1n, 0.1))).toBe('9.0');
    expect(py(() => floordiv(-1n, 0.1))).toBe('-10.0');
    expect(py(() => floordiv(0.0, -3n))).toBe('-0.0');
    expect(py(() => floordiv(-0.0, 3n))).toBe('-0.0');
    expect(py(() => mod(5.0, -5n))).toBe('-0.0');
    expect(py(() => mod(-5.0, 5n))).toBe('0.0');
    expect(py(() => mod(-0.0, 5n))).toBe('0.0');
    expect(py(() => mod(1n, 0.1))).toBe('0.09999999999999995');
    expect(py(() => floordiv(-7.5, 2n))).toBe('-4.0');
    expect(py(() => floordiv(7.5, -2n))).toBe('-4.0');
    expect(py(() => floordiv(1e308, 1e-308))).toBe('inf');
  });

  it('sum, min and max', () => {
    expect(py(() => pySum([1n, 2.5, true]))).toBe('4.5');
    expect(py(() => pySum([]))).toBe('0');
    expect(py(() => pySum([1e16, 1n, -1e16]))).toBe('0.0');
    expect(py(() => pySum([BIG, 1.0]))).toBe('OverflowError: int too large to convert to float');
    expect(py(() => pySum(['a']))).toBe("TypeError: unsupported operand type(s) for +: 'int' and 'str'");
    expect(py(() => pyMin([1n, 1.0]))).toBe('1');
    expect(py(() => pyMax([1.0, 1n]))).toBe('1.0');
    expect(py(() => pyMax([2n, BIG, 3.5]))).toBe(py(() => BIG));
    expect(py(() => pyMin([]))).toBe('ValueError: min() arg is an empty sequence');
    expect(py(() => pyMin([1n, 'a']))).toBe(
      "TypeError: '<' not supported between instances of 'str' and 'int'",
    );
  });
});

describe('py/format: the int string conversion limit', () => {
  const limitError =
    'ValueError: Exceeds the limit (4300 digits) for integer string conversion; ' +
    'use sys.set_int_max_str_digits() to increase the limit';

  it('allows 4300 digits and refuses more, the sign not counted', () => {
    expect(py(() => 10n ** 4300n - 1n)).toHaveLength(4300);
    expect(py(() => -(10n ** 4300n - 1n))).toHaveLength(4301);
    expect(py(() => 10n ** 4300n)).toBe(limitError);
    expect(py(() => -(10n ** 4300n))).toBe(limitError);
  });

  it('applies to json.dumps and to the executor result', () => {
    const d = dictOf({ result: 10n ** 5000n });
    expect(() => jsonDumps(d)).toThrow(PyException);
    expect(py(() => resultToString(d))).toBe(limitError);
    expect(py(() => jsonDumps(new Map([[10n ** 4300n, 1n]])))).toBe(limitError);
  });
});

describe('py/mpmath', () => {
  const logRatio = (value: PyValue, base: PyValue, dps: bigint): string => {
    const prec = dpsToPrec(dps);
    return mpRepr(mpDiv(mpLog(value, prec), mpLog(base, prec), prec), prec).reprText;
  };

  it('mpmath.log(value) / mpmath.log(base) at mp.dps', () => {
    expect(dpsToPrec(20n)).toBe(70);
    expect(logRatio(2n, 3n, 20n)).toBe("mpf('0.63092975357145743709863')");
    expect(logRatio(630.0, 10n, 5n)).toBe("mpf('2.7993393')");
    expect(logRatio(10n ** 30n, 2n, 40n)).toBe("mpf('99.65784284662087043610958288468170527594372')");
    expect(logRatio(0n, 10n, 5n)).toBe("mpf('-inf')");
    expect(logRatio(-1n, 10n, 5n)).toBe("mpc(real='0.0', imag='1.3643761')");
    expect(logRatio('7+0J', -370.56578964765805, 22n)).toBe(
      "mpc(real='0.2565947015997792692063318', imag='-0.1362826381889970565391824')",
    );
  });

  it("keeps mpmath's log quirk just above 1/4 (it returns 4x - 1)", () => {
    expect(logRatio(0.25 + 2 ** -54, 2n, 5n)).toBe("mpf('3.2034278e-16')");
  });
});

describe('py/decimal', () => {
  const sqrt = (v: bigint | number, prec: number) => decRepr(decSqrt(decFromNumber(v), prec));

  it('converts exactly and takes correctly rounded square roots', () => {
    expect(decRepr(decFromNumber(0.1))).toBe(
      "Decimal('0.1000000000000000055511151231257827021181583404541015625')",
    );
    expect(decRepr(decFromNumber(-0))).toBe("Decimal('-0')");
    expect(sqrt(2n, 10)).toBe("Decimal('1.414213562')");
    expect(sqrt(2.25, 5)).toBe("Decimal('1.5')");
    expect(sqrt(1e-7, 3)).toBe("Decimal('0.000316')");
    expect(sqrt(1e20, 5)).toBe("Decimal('1.0000E+10')");
  });
});
