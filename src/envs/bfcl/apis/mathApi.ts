/**
 * MathAPI (`math_api.py` in the reference): stateless arithmetic helpers.
 *
 * Most methods are plain Python arithmetic that only catches TypeError, so the results depend on
 * Python's numeric tower (`add('1', '2')` is `'12'`, ints are unbounded, int/float mixes raise
 * OverflowError for huge ints, float powers are glibc's): all of that is `py/ops`. Two methods
 * leave the float world, and their results only show through repr (json.dumps rejects them, so
 * the executor falls back to the dict's Python repr):
 *
 * - `logarithm` runs mpmath at `mp.dps = precision` (`py/mpmath`); the result is an `mpf`, or an
 *   `mpc` for a negative argument, e.g. `{'result': mpf('2.7993393')}`.
 * - `square_root` uses the `decimal` module with context precision `precision` (`py/decimal`);
 *   the result is a `Decimal`, e.g. `{'result': Decimal('1.414213562')}`.
 */
import { decFromNumber, decimalPrecision, decRepr, decSqrt, MAX_DECIMAL_DIGITS } from '../../py/decimal.js';
import { PyException } from '../../py/errors.js';
import { str } from '../../py/format.js';
import { dpsToPrec, MAX_WORKING_BITS, mpDiv, mpLog, mpRepr } from '../../py/mpmath.js';
import {
  add,
  contains,
  isNumber,
  iterate,
  len,
  lt,
  mul,
  pow,
  pyAbs,
  pyMax,
  pyMin,
  pyRound,
  pySum,
  sub,
  truediv,
  truthy,
} from '../../py/ops.js';
import type { PyDict, PyValue } from '../../py/values.js';
import { dictGet, dictOf, PyOpaque, pyEquals } from '../../py/values.js';
import type { ApiClass, BfclApi, BoundArgs, ScenarioContext } from './api.js';
import { opt, req } from './api.js';

/** Run `body`; a Python TypeError becomes the reference's fixed `{"error": ...}` dict. */
function catchTypeError(message: string, body: () => PyValue): PyValue {
  try {
    return body();
  } catch (e) {
    if (e instanceof PyException && e.pyType === 'TypeError') return dictOf({ error: message });
    throw e;
  }
}

/**
 * The `{"result": v}` dict. An int result past 4300 digits (`power(10, 5000)`) is returned as
 * is; it turns into CPython's ValueError when the executor prints it (py/format).
 */
function result(v: PyValue): PyDict {
  return dictOf({ result: v });
}

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
      return result(mpRepr(mpDiv(mpLog(value, prec), mpLog(base, prec), prec), prec));
    } catch (e) {
      if (e instanceof PyException) return dictOf({ error: e.message });
      throw e;
    }
  }

  mean(numbers: PyValue): PyValue {
    if (!truthy(numbers)) return dictOf({ error: 'Cannot calculate mean of an empty list' });
    return catchTypeError('All elements in the list must be numbers', () =>
      result(truediv(pySum(iterate(numbers)), BigInt(len(numbers)))),
    );
  }

  standardDeviation(numbers: PyValue): PyValue {
    if (!truthy(numbers)) return dictOf({ error: 'Cannot calculate standard deviation of an empty list' });
    return catchTypeError('All elements in the list must be numbers', () => {
      const n = BigInt(len(numbers));
      const mean = truediv(pySum(iterate(numbers)), n);
      const squares = iterate(numbers).map((x) => pow(sub(x, mean), 2n));
      const variance = truediv(pySum(squares), n);
      return result(Math.sqrt(variance as number));
    });
  }

  siUnitConversion(value: PyValue, unitIn: PyValue, unitOut: PyValue): PyValue {
    if (!isNumber(value)) return dictOf({ error: 'Value must be a number' });
    // Dict membership: an unhashable unit raises TypeError (outside the try in the reference).
    if (!contains(SI_TO_METERS, unitIn) || !contains(SI_TO_METERS, unitOut)) {
      return dictOf({ error: `Conversion from '${str(unitIn)}' to '${str(unitOut)}' is not supported` });
    }
    try {
      const toMeters = dictGet(SI_TO_METERS, unitIn as string)!;
      // from_meters[u] = 1 / to_meters[u] is always a float.
      const fromMeters = truediv(1n, dictGet(SI_TO_METERS, unitOut as string)!);
      return result(mul(mul(value, toMeters), fromMeters));
    } catch (e) {
      if (e instanceof PyException && e.pyType === 'OverflowError') {
        return dictOf({ error: 'Conversion resulted in a value too large to represent' });
      }
      throw e;
    }
  }

  imperialSiConversion(value: PyValue, unitIn: PyValue, unitOut: PyValue): PyValue {
    if (!isNumber(value)) return dictOf({ error: 'Value must be a number' });
    if (pyEquals(unitIn, unitOut)) return result(value);
    const key = `${str(unitIn)}_to_${str(unitOut)}`;
    const factor = dictGet(IMPERIAL_FACTORS, key);
    if (factor === undefined) {
      return dictOf({ error: `Conversion from '${str(unitIn)}' to '${str(unitOut)}' is not supported` });
    }
    try {
      if (unitIn === 'celsius' && unitOut === 'fahrenheit') return result(add(mul(value, factor), 32n));
      if (unitIn === 'fahrenheit' && unitOut === 'celsius') return result(mul(sub(value, 32n), factor));
      return result(mul(value, factor));
    } catch (e) {
      if (e instanceof PyException && e.pyType === 'OverflowError') {
        return dictOf({ error: 'Conversion resulted in a value too large to represent' });
      }
      throw e;
    }
  }

  add(a: PyValue, b: PyValue): PyValue {
    return catchTypeError('Both inputs must be numbers', () => result(add(a, b)));
  }

  subtract(a: PyValue, b: PyValue): PyValue {
    return catchTypeError('Both inputs must be numbers', () => result(sub(a, b)));
  }

  multiply(a: PyValue, b: PyValue): PyValue {
    // The isinstance check comes first, so `multiply('2', 3)` is an error, not '222'.
    if (!isNumber(a) || !isNumber(b)) return dictOf({ error: 'Both inputs must be numbers' });
    return catchTypeError('Both inputs must be numbers', () => result(mul(a, b)));
  }

  divide(a: PyValue, b: PyValue): PyValue {
    return catchTypeError('Both inputs must be numbers', () => {
      if (pyEquals(b, 0n)) return dictOf({ error: 'Cannot divide by zero' });
      return result(truediv(a, b));
    });
  }

  power(base: PyValue, exponent: PyValue): PyValue {
    return catchTypeError('Both inputs must be numbers', () => result(pow(base, exponent)));
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
      return result(mul(truediv(part, whole), 100n));
    });
  }

  minValue(numbers: PyValue): PyValue {
    if (!truthy(numbers)) return dictOf({ error: 'Cannot find minimum of an empty list' });
    return catchTypeError('All elements in the list must be numbers', () => result(pyMin(iterate(numbers))));
  }

  maxValue(numbers: PyValue): PyValue {
    if (!truthy(numbers)) return dictOf({ error: 'Cannot find maximum of an empty list' });
    return catchTypeError('All elements in the list must be numbers', () => result(pyMax(iterate(numbers))));
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
