import { describe, expect, it } from 'vitest';
import { calculate } from '../../../src/envs/tau2/calculate.js';

const err = (expr: string) => {
  try {
    return `ok ${calculate(expr)}`;
  } catch (e) {
    return (e as Error).message;
  }
};

describe('tau2 calculate: Python arithmetic without eval', () => {
  it('gives str(round(float(x), 2)) of the value', () => {
    expect(calculate('2 + 2')).toBe('4.0');
    expect(calculate('10 / 4')).toBe('2.5');
    expect(calculate('1/3')).toBe('0.33');
    expect(calculate('(100 - 15) * 0.9')).toBe('76.5');
    expect(calculate('0.1 + 0.2')).toBe('0.3');
    // 2.675 is 2.67499999... in binary: Python's round gives 2.67
    expect(calculate('2.675')).toBe('2.67');
    expect(calculate('-2 ** 2')).toBe('-4.0');
    expect(calculate('2 ** -1')).toBe('0.5');
    expect(calculate('7 // 2 + .5 + 1.')).toBe('4.5');
    expect(calculate(' -(-3)')).toBe('3.0');
    expect(calculate('-0.0')).toBe('-0.0');
    expect(calculate('1e3'.replace('e', '0'))).toBe('103.0');
    expect(calculate('123456789 * 987654321')).toBe('1.2193263111263526e+17');
  });

  it('fails as Python does', () => {
    expect(err('2 + x')).toBe('Invalid characters in expression');
    expect(err('1e5')).toBe('Invalid characters in expression');
    expect(err('1/0')).toBe('division by zero');
    expect(err('1.0/0')).toBe('float division by zero');
    expect(err('1 // 0')).toBe('integer division or modulo by zero');
    expect(err('1 +')).toBe('invalid syntax (<string>, line 1)');
    expect(err('')).toBe('invalid syntax (<string>, line 0)');
    expect(err('(1 + 2')).toBe("'(' was never closed (<string>, line 1)");
    expect(err('1 + 2)')).toBe("unmatched ')' (<string>, line 1)");
    expect(err('(1 2)')).toBe('invalid syntax. Perhaps you forgot a comma? (<string>, line 1)');
    expect(err('1 2')).toBe('invalid syntax (<string>, line 1)');
    expect(err('012 + 1')).toBe(
      'leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers (<string>, line 1)',
    );
    expect(err('()')).toBe("float() argument must be a string or a real number, not 'tuple'");
    expect(err('2 (3)')).toBe("'int' object is not callable");
    expect(err('(1)(1/0)')).toBe('division by zero');
    expect(err('2 ** 99999999')).toBe('int too large to convert to float');
    expect(err('0 ** -1')).toBe('0.0 cannot be raised to a negative power');
    expect(calculate('00 + 1.50')).toBe('1.5');
  });
});
