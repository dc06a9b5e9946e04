import { describe, expect, it } from 'vitest';
import type { BoundArgs } from '../../src/envs/bfcl/apis/api.js';
import { type MathApiInstance, mathApi } from '../../src/envs/bfcl/apis/mathApi.js';
import { PyException } from '../../src/envs/bfcl/py/errors.js';
import { resultToString } from '../../src/envs/bfcl/py/format.js';
import { type PyKey, PyTuple, type PyValue } from '../../src/envs/bfcl/py/values.js';

/** Call a method the way the executor does and return the result string (or the error text). */
function call(name: string, ...args: (PyValue | undefined)[]): string {
  const spec = mathApi.methods[name];
  if (!spec) throw new Error(`no method ${name}`);
  const self: MathApiInstance = mathApi.create();
  const bound: BoundArgs = spec.params.map((_, i) => args[i]);
  try {
    return resultToString(spec.run(self, bound));
  } catch (e) {
    if (e instanceof PyException) return `Error during execution: ${e.message}`;
    throw e;
  }
}

/** Compact tagged form of Python argument values used by the reference table below. */
type Enc =
  | { n: 1 }
  | { b: boolean }
  | { i: string }
  | { f: string }
  | { s: string }
  | { l: Enc[] }
  | { t: Enc[] }
  | { d: [Enc, Enc][] };

function dec(e: Enc): PyValue {
  if ('n' in e) return null;
  if ('b' in e) return e.b;
  if ('i' in e) return BigInt(e.i);
  if ('f' in e) {
    const special: Record<string, number> = { inf: Infinity, '-inf': -Infinity, nan: Number.NaN };
    return special[e.f] ?? Number(e.f);
  }
  if ('s' in e) return e.s;
  if ('l' in e) return e.l.map(dec);
  if ('t' in e) return new PyTuple(e.t.map(dec));
  return new Map(e.d.map(([k, v]) => [dec(k) as PyKey, dec(v)]));
}

describe('MathAPI: golden error cases spelled out', () => {
  it('logarithm prints mpmath reprs at the working precision', () => {
    expect(call('logarithm', 2n, 3n, 20n)).toBe("{'result': mpf('0.63092975357145743709863')}");
    expect(call('logarithm', 2n, 3n, 1n)).toBe("{'result': mpf('0.6328')}");
    // dps 15 gives 53 bits, whose repr uses 17 digits
    expect(call('logarithm', 2n, 3n, 15n)).toBe("{'result': mpf('0.63092975357145742')}");
    expect(call('logarithm', 630.0, 10n, 5n)).toBe("{'result': mpf('2.7993393')}");
    expect(call('logarithm', 36.0, 6.0, 4n)).toBe("{'result': mpf('2.0')}");
  });

  it('logarithm special values and errors come back as dicts', () => {
    expect(call('logarithm', 0n, 10n, 5n)).toBe("{'result': mpf('-inf')}");
    expect(call('logarithm', 10n, 1n, 5n)).toBe('{"error": ""}');
    expect(call('logarithm', -1n, 10n, 5n)).toBe("{'result': mpc(real='0.0', imag='1.3643761')}");
    expect(call('logarithm', 'ten', 10n, 5n)).toBe(`{"error": "cannot create mpf from 'ten'"}`);
    expect(call('logarithm', 'major', 10n, 5n)).toBe(
      `{"error": "'NoneType' object has no attribute 'group'"}`,
    );
    expect(call('logarithm', 2n, 3n, 'x')).toBe(`{"error": "invalid literal for int() with base 10: 'x'"}`);
  });

  it('mpmath quirk: log of a value a hair above 0.25 returns 4x - 1', () => {
    expect(call('logarithm', 0.25 + 2 ** -54, 2n, 5n)).toBe("{'result': mpf('3.2034278e-16')}");
  });

  it('square_root uses Decimal with the ideal exponent for exact roots', () => {
    expect(call('square_root', 2n, 10n)).toBe("{'result': Decimal('1.414213562')}");
    expect(call('square_root', 16n, 3n)).toBe("{'result': Decimal('4')}");
    expect(call('square_root', 2.5, 5n)).toBe("{'result': Decimal('1.5811')}");
    expect(call('square_root', 1e20, 5n)).toBe("{'result': Decimal('1.0000E+10')}");
    expect(call('square_root', -1n, 5n)).toBe(
      '{"error": "Cannot calculate square root of a negative number"}',
    );
    // only TypeError is caught: a zero precision raises ValueError through to the executor
    expect(call('square_root', 2n, 0n)).toBe('Error during execution: valid range for prec is [1, MAX_PREC]');
    expect(call('square_root', 2n, 2.5)).toBe(
      '{"error": "Input must be a number or computation resulted in an invalid operation"}',
    );
  });

  it('plain arithmetic keeps Python types and quirks', () => {
    expect(call('add', '1', '2')).toBe('{"result": "12"}');
    expect(call('multiply', '2', 3n)).toBe('{"error": "Both inputs must be numbers"}');
    expect(call('multiply', true, 3n)).toBe('{"result": 3}');
    expect(call('power', 10n, 20n)).toBe('{"result": 100000000000000000000}');
    expect(call('power', 10.0, 20n)).toBe('{"result": 1e+20}');
    expect(call('round_number', 2.5)).toBe('{"result": 2.0}');
    expect(call('round_number', 2.675, 2n)).toBe('{"result": 2.67}');
    expect(call('mean', [1e16, 1n, -1e16])).toBe('{"result": 0.0}');
    expect(call('mean', new PyTuple([1n, 2n, 3n]))).toBe('{"result": 2.0}');
    expect(call('si_unit_conversion', 3n, 'nm', 'um')).toBe('{"result": 0.0030000000000000005}');
    expect(call('si_unit_conversion', 1n, ['km'], 'm')).toBe(
      "Error during execution: unhashable type: 'list'",
    );
  });

  it('power follows glibc pow, not correctly rounded pow', () => {
    expect(call('power', 10n, -5n)).toBe('{"result": 1e-05}');
    expect(call('power', 457.0, 6.0)).toBe('{"result": 9109555799784050.0}');
    expect(call('power', -8.0, 0.5)).toBe("{'result': (1.7319121124709868e-16+2.8284271247461903j)}");
    expect(call('power', 0n, -1n)).toBe('Error during execution: 0.0 cannot be raised to a negative power');
    expect(call('power', 10.0, 400n)).toBe("Error during execution: (34, 'Numerical result out of range')");
  });

  it('ints past 4300 digits cannot be printed', () => {
    expect(call('power', 10n, 5000n)).toBe(
      'Error during execution: Exceeds the limit (4300 digits) for integer string conversion; ' +
        'use sys.set_int_max_str_digits() to increase the limit',
    );
  });
});

/**
 * Reference results from the Python reference (CPython 3.11.7, mpmath 1.3.0, glibc 2.36 on
 * x86-64 with FMA), picked from a differential fuzz of about 60,000 calls that all agree.
 */
const REFERENCE: [string, Enc[], string][] = [
  ['logarithm', [{ i: '1' }, { s: '-inf' }, { i: '6' }], "{'result': mpc(real='nan', imag='0.0')}"],
  [
    'logarithm',
    [{ s: ' 1e-3 ' }, { f: '-729.1039562199453' }, { i: '55' }],
    "{'result': mpc(real='-0.8539618842306783547198353066308703552614511459716909560962', imag='0.4069895534858174942381726431387018888770802392351095350723')}",
  ],
  [
    'logarithm',
    [{ s: '7+0J' }, { f: '-370.56578964765805' }, { i: '22' }],
    "{'result': mpc(real='0.2565947015997792692063318', imag='-0.1362826381889970565391824')}",
  ],
  [
    'logarithm',
    [{ s: ' 1e-3 ' }, { i: '-235605' }, { i: '25' }],
    "{'result': mpc(real='-0.5245951321803737049601013442', imag='0.1332316850464266204790706256')}",
  ],
  [
    'logarithm',
    [{ i: '-680893' }, { s: '-2' }, { i: '12' }],
    "{'result': mpc(real='1.85306946910987', imag='-3.86641806000307')}",
  ],
  [
    'logarithm',
    [{ f: '-600.665498831633' }, { s: ' -0.5j' }, { i: '16' }],
    "{'result': mpc(real='-3.178442345072766739', imag='2.670562557124587899')}",
  ],
  ['logarithm', [{ s: '-inf' }, { i: '-10' }, { i: '28' }], "{'result': mpc(real='+inf', imag='-inf')}"],
  [
    'logarithm',
    [{ s: '2.5-92.17906050442343j' }, { s: '-inf' }, { i: '15' }],
    "{'result': mpc(real='nan', imag='nan')}",
  ],
  [
    'logarithm',
    [{ s: '(-3+100000j)' }, { i: '-369049' }, { i: '15' }],
    "{'result': mpc(real='0.87557817491136358', imag='-0.092044048375788889')}",
  ],
  [
    'logarithm',
    [{ f: '-598.0197276103023' }, { s: ' 0 + 100000j' }, { i: '44' }],
    "{'result': mpc(real='0.58174425668530904455863850103372479365579776525', imag='0.1935034599878948503138661402907945466431396781')}",
  ],
  [
    'logarithm',
    [{ f: '-372.3204013814698' }, { s: '(1e-30-3j)' }, { i: '16' }],
    "{'result': mpc(real='0.4269362248992043599', imag='3.470034466899008185')}",
  ],
  [
    'logarithm',
    [{ f: '-215.39843778761224' }, { s: '(0-1j)' }, { i: '27' }],
    "{'result': mpc(real='-2.0', imag='3.42023305023082709115263900378')}",
  ],
  [
    'logarithm',
    [{ i: '-884452' }, { f: '-958.1641603326407' }, { i: '16' }],
    "{'result': mpc(real='1.822348953940756078', imag='-0.3763260359498833696')}",
  ],
  [
    'logarithm',
    [{ f: '-0.5' }, { f: '50.28522969178121' }, { i: '15' }],
    "{'result': mpc(real='-0.17692655522938999', imag='0.80189486695247492')}",
  ],
  [
    'logarithm',
    [{ i: '-510708' }, { i: '-585476' }, { i: '16' }],
    "{'result': mpc(real='0.9902571737839446081', imag='0.002304787298138274466')}",
  ],
  [
    'logarithm',
    [{ f: '-371.29819393859265' }, { f: '-283.2202635624834' }, { i: '27' }],
    "{'result': mpc(real='1.03662054748867176819399939677', imag='-0.0203758873878407016041954368558')}",
  ],
  [
    'logarithm',
    [{ i: '-32768' }, { f: '-193.595433204382' }, { i: '15' }],
    "{'result': mpc(real='1.7186821299116957', imag='-0.4287703884611751')}",
  ],
  [
    'logarithm',
    [{ f: '-0.5' }, { f: '-817.5372354130011' }, { i: '3' }],
    "{'result': mpc(real='0.0952148', imag='0.423889')}",
  ],
  [
    'logarithm',
    [{ f: '-inf' }, { f: '1.0000001' }, { i: '58' }],
    "{'result': mpc(real='+inf', imag='31415928.08835150467631990463344981746144815493529078467521102')}",
  ],
  [
    'logarithm',
    [{ f: '-547.3139971305338' }, { i: '2' }, { i: '6' }],
    "{'result': mpc(real='9.09622383', imag='4.53236008')}",
  ],
  [
    'logarithm',
    [{ f: '-44.8912260133324' }, { f: '-344.90297656550706' }, { i: '15' }],
    "{'result': mpc(real='0.72929711544623321', imag='0.14554165567578395')}",
  ],
  [
    'logarithm',
    [{ f: '-inf' }, { f: '-292.339365616873' }, { i: '15' }],
    "{'result': mpc(real='+inf', imag='-inf')}",
  ],
  ['logarithm', [{ s: '2' }, { f: '63.7245923792133' }, { i: '5' }], "{'result': mpf('0.1668396')}"],
  ['logarithm', [{ f: '1.0000001' }, { s: '2' }, { i: '16' }], "{'result': mpf('1.442694969596558365e-7')}"],
  ['logarithm', [{ f: '45.075410425254624' }, { s: 'nan' }, { i: '16' }], "{'result': mpf('nan')}"],
  ['logarithm', [{ s: ' 1e-3 ' }, { f: '74.92272677324058' }, { i: '2' }], "{'result': mpf('-1.5977')}"],
  ['logarithm', [{ i: '2' }, { s: '1/3' }, { i: '15' }], "{'result': mpf('-0.63092975357145742')}"],
  [
    'logarithm',
    [{ f: '1.0000001' }, { f: '97.32472885714037' }, { i: '16' }],
    "{'result': mpf('2.184334534994635653e-8')}",
  ],
  ['logarithm', [{ i: '0' }, { f: '21.712970428469436' }, { i: '29' }], "{'result': mpf('-inf')}"],
  ['logarithm', [{ s: '2' }, { i: '0' }, { i: '16' }], "{'result': mpf('0.0')}"],
  ['square_root', [{ f: '-0.0' }, { i: '1' }], "{'result': Decimal('-0')}"],
  [
    'square_root',
    [{ f: '2.5419340047850983e+62' }, { i: '73' }],
    "{'result': Decimal('15943443808616437872227825734349.64171331587407895253238377182918463499136')}",
  ],
  [
    'square_root',
    [{ f: '2.220446049250313e-16' }, { i: '144' }],
    "{'result': Decimal('1.490116119384765625E-8')}",
  ],
  ['square_root', [{ f: '1.3877787807814457e-17' }, { i: '1' }], "{'result': Decimal('4E-9')}"],
  ['square_root', [{ i: '4398046511104' }, { i: '5' }], "{'result': Decimal('2.0972E+6')}"],
  ['square_root', [{ f: '6.997175207447065e+45' }, { i: '3' }], "{'result': Decimal('8.36E+22')}"],
  ['square_root', [{ i: '1125899906842624' }, { i: '99' }], "{'result': Decimal('33554432')}"],
  [
    'square_root',
    [{ i: '3270443584808013344940494430283457386580' }, { i: '1' }],
    "{'result': Decimal('6E+19')}",
  ],
  [
    'square_root',
    [{ f: '988378.1239135595' }, { i: '53' }],
    "{'result': Decimal('994.17207962885352827073307398423756822241131372461188')}",
  ],
  ['square_root', [{ i: '15241578750190521' }, { i: '2' }], "{'result': Decimal('1.2E+8')}"],
  ['square_root', [{ f: '5.611399739006178' }, { i: '2' }], "{'result': Decimal('2.4')}"],
  ['square_root', [{ f: '2.0653334513292103e-205' }, { i: '3' }], "{'result': Decimal('4.54E-103')}"],
  [
    'logarithm',
    [{ f: '951.8349492410182' }, { f: '996.25' }, { i: '11' }],
    "{'result': mpf('0.99339417805913')}",
  ],
  [
    'logarithm',
    [{ f: '59.978' }, { f: '6.384758203124251' }, { i: '139' }],
    "{'result': mpf('2.208289418562764150363845770570504629415147732123180573167408764680224991105780159262911347261236096350654375032137741144866071171292412741352')}",
  ],
  [
    'logarithm',
    [{ i: '36' }, { i: '78' }, { i: '31' }],
    "{'result': mpf('0.8225289045031307460036764664777072')}",
  ],
  [
    'logarithm',
    [{ i: '240956' }, { f: '741.5776071141709' }, { i: '24' }],
    "{'result': mpf('1.87513731182843007542202068')}",
  ],
  [
    'logarithm',
    [
      { f: '9.538599255583492' },
      { i: '93536104789177786765035829293842113257979682750464' },
      { i: '-100000000000000000000' },
    ],
    "{'result': mpf('0.01563')}",
  ],
  [
    'logarithm',
    [{ f: '1.2953380704489912e-11' }, { f: '2.0' }, { i: '28' }],
    "{'result': mpf('-36.16788036754181981332302922712')}",
  ],
  [
    'logarithm',
    [{ f: '821.9' }, { i: '3' }, { i: '29' }],
    "{'result': mpf('6.1091786450807046147917859656738')}",
  ],
  [
    'logarithm',
    [{ f: '0.25000000000005684' }, { f: '2.2439987783746774e-126' }, { i: '18' }],
    "{'result': mpf('0.00479160279584794741364')}",
  ],
  ['logarithm', [{ i: '12' }, { f: '262.0' }, { i: '7' }], "{'result': mpf('0.4462559074')}"],
  ['logarithm', [{ i: '72' }, { i: '10' }, { i: '21' }], "{'result': mpf('1.85733249643126846023097')}"],
  [
    'logarithm',
    [{ f: '310.0' }, { i: '423480' }, { i: '23' }],
    "{'result': mpf('0.44276447091271301877963244')}",
  ],
  ['logarithm', [{ i: '100' }, { i: '2' }, { i: '19' }], "{'result': mpf('6.643856189774724695834')}"],
  [
    'logarithm',
    [{ f: '1.1920928955078125e-07' }, { i: '70368744177664' }, { i: '22' }],
    "{'result': mpf('-0.5')}",
  ],
  [
    'logarithm',
    [{ f: '2.4959809511325357' }, { i: '3' }, { i: '14' }],
    "{'result': mpf('0.83257927128155984')}",
  ],
  [
    'logarithm',
    [{ f: '7.260114593468794e-103' }, { s: '' }, { i: '25' }],
    '{"error": "cannot create mpf from \'\'"}',
  ],
  [
    'logarithm',
    [{ i: '0' }, { f: '0.001953125' }, { s: '3.5' }],
    '{"error": "invalid literal for int() with base 10: \'3.5\'"}',
  ],
  [
    'logarithm',
    [{ i: '656902' }, { i: '94' }, { s: '3.5' }],
    '{"error": "invalid literal for int() with base 10: \'3.5\'"}',
  ],
  ['logarithm', [{ s: 'e5' }, { i: '874243' }, { i: '8' }], '{"error": "cannot create mpf from \'e5\'"}'],
  [
    'logarithm',
    [{ f: '-38.25615854399044' }, { f: '-29.761222403416976' }, { s: '3.5' }],
    '{"error": "invalid literal for int() with base 10: \'3.5\'"}',
  ],
  ['logarithm', [{ i: '61' }, { i: '1' }, { b: false }], '{"error": ""}'],
  ['logarithm', [{ f: '739.5678987595224' }, { b: true }, { i: '16' }], '{"error": ""}'],
  ['logarithm', [{ i: '593702331222768017838579422321' }, { i: '1' }, { i: '15' }], '{"error": ""}'],
  [
    'logarithm',
    [{ f: '1.7728311436785882' }, { f: '0.5' }, { f: 'nan' }],
    '{"error": "cannot convert float NaN to integer"}',
  ],
  ['logarithm', [{ i: '26' }, { b: true }, { i: '281' }], '{"error": ""}'],
  [
    'square_root',
    [{ f: '744.2254975784763' }, { i: '44' }],
    "{'result': Decimal('27.280496651976046441500025849436448653263451')}",
  ],
  ['square_root', [{ f: '4.0' }, { i: '34' }], "{'result': Decimal('2')}"],
  [
    'square_root',
    [{ i: '79' }, { i: '40' }],
    "{'result': Decimal('8.888194417315588850091441675408727817076')}",
  ],
  [
    'square_root',
    [{ i: '707808' }, { i: '44' }],
    "{'result': Decimal('841.31325913716586331678479225094508588440908')}",
  ],
  [
    'square_root',
    [{ i: '9' }, { f: '2.7' }],
    '{"error": "Input must be a number or computation resulted in an invalid operation"}',
  ],
  ['square_root', [{ i: '1' }, { i: '12' }], "{'result': Decimal('1')}"],
  ['square_root', [{ i: '88' }, { i: '27' }], "{'result': Decimal('9.38083151964685910913126023')}"],
  ['square_root', [{ i: '32768' }, { i: '26' }], "{'result': Decimal('181.01933598375616624661616')}"],
  [
    'square_root',
    [{ f: '997.26' }, { i: '34' }],
    "{'result': Decimal('31.57942368061836544106099732425546')}",
  ],
  [
    'square_root',
    [{ f: '0.9999923706054688' }, { i: '27' }],
    "{'result': Decimal('0.999996185295458389630108609')}",
  ],
  [
    'mean',
    [
      {
        l: [
          { i: '37' },
          { i: '388588' },
          { f: '0.5' },
          { f: '355.4421058639923' },
          { i: '47890485652059026823698344598447161988085597568237568' },
          { i: '1' },
        ],
      },
    ],
    '{"result": 7.981747608676504e+51}',
  ],
  [
    'mean',
    [{ t: [{ f: '5.677971958909734e-73' }, { f: '0.2500000000000142' }, { i: '36' }] }],
    '{"result": 12.083333333333337}',
  ],
  [
    'mean',
    [
      {
        l: [
          {
            i: '10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
          },
          { i: '2' },
          { f: '-729.0917154735419' },
          { i: '279486' },
        ],
      },
    ],
    '{"result": 2.5e+117}',
  ],
  [
    'mean',
    [{ l: [{ s: 'c' }, { s: 'a' }, { s: 'c' }, { s: 'a' }, { s: 'a' }] }],
    '{"error": "All elements in the list must be numbers"}',
  ],
  [
    'standard_deviation',
    [{ l: [{ s: 'zz' }, { s: 'c' }] }],
    '{"error": "All elements in the list must be numbers"}',
  ],
  ['standard_deviation', [{ l: [] }], '{"error": "Cannot calculate standard deviation of an empty list"}'],
  ['standard_deviation', [{ l: [] }], '{"error": "Cannot calculate standard deviation of an empty list"}'],
  [
    'standard_deviation',
    [{ d: [[{ s: 'a' }, { i: '1' }]] }],
    '{"error": "All elements in the list must be numbers"}',
  ],
  ['si_unit_conversion', [{ f: '0.000244140625' }, { s: 'mm' }, { s: 'mm' }], '{"result": 0.000244140625}'],
  ['si_unit_conversion', [{ s: '(1+2j)' }, { s: 'M' }, { s: 'm' }], '{"error": "Value must be a number"}'],
  [
    'si_unit_conversion',
    [{ f: '916.5730476957003' }, { s: 'nm' }, { s: 'ft' }],
    '{"error": "Conversion from \'nm\' to \'ft\' is not supported"}',
  ],
  [
    'si_unit_conversion',
    [{ f: '-99.65263803525322' }, { s: 'm' }, { s: 'nm' }],
    '{"result": -99652638035.2532}',
  ],
  [
    'imperial_si_conversion',
    [{ i: '87' }, { s: 'ft' }, { s: 'lb' }],
    '{"error": "Conversion from \'ft\' to \'lb\' is not supported"}',
  ],
  [
    'imperial_si_conversion',
    [{ s: '0.1' }, { s: 'celsius' }, { s: 'kelvin' }],
    '{"error": "Value must be a number"}',
  ],
  [
    'imperial_si_conversion',
    [{ f: '608.9653840617293' }, { s: 'miles' }, { s: 'lb' }],
    '{"error": "Conversion from \'miles\' to \'lb\' is not supported"}',
  ],
  [
    'imperial_si_conversion',
    [{ f: '0.9999999999999964' }, { s: 'm' }, { i: '5' }],
    '{"error": "Conversion from \'m\' to \'5\' is not supported"}',
  ],
  ['add', [{ f: '1.000000000003638' }, { b: false }], '{"result": 1.000000000003638}'],
  [
    'add',
    [
      { f: '587.814' },
      {
        i: '10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
      },
    ],
    'Error during execution: int too large to convert to float',
  ],
  ['add', [{ i: '353132' }, { i: '78' }], '{"result": 353210}'],
  ['add', [{ i: '51' }, { i: '34' }], '{"result": 85}'],
  ['subtract', [{ i: '50' }, { b: false }], '{"result": 50}'],
  [
    'subtract',
    [{ i: '93536104789177786765035829293842113257979682750464' }, { i: '131072' }],
    '{"result": 93536104789177786765035829293842113257979682619392}',
  ],
  ['subtract', [{ f: '400.0' }, { b: true }], '{"result": 399.0}'],
  ['subtract', [{ f: '745.0' }, { i: '571214' }], '{"result": -570469.0}'],
  ['multiply', [{ i: '56' }, { f: '8.888731574268245' }], '{"result": 497.7689681590217}'],
  ['multiply', [{ f: '2.0' }, { i: '10' }], '{"result": 20.0}'],
  ['multiply', [{ i: '-1' }, { i: '538564' }], '{"result": -538564}'],
  ['multiply', [{ f: '865.71914690174' }, { f: '1.1158741765033187' }], '{"result": 966.0336401321347}'],
  ['divide', [{ b: false }, { f: '-75.28530038477184' }], '{"result": -0.0}'],
  ['divide', [{ i: '772570' }, { f: '647.73' }], '{"result": 1192.7346270822718}'],
  ['divide', [{ f: '-53.55760079114463' }, { f: '-83.86073761839387' }], '{"result": 0.6386492930083338}'],
  ['divide', [{ i: '83' }, { f: '6.645487462768138' }], '{"result": 12.4896782162353}'],
  ['absolute_value', [{ i: '147060' }], '{"result": 147060}'],
  ['absolute_value', [{ i: '10' }], '{"result": 10}'],
  ['absolute_value', [{ f: '0.9999999998835847' }], '{"result": 0.9999999998835847}'],
  ['absolute_value', [{ f: '5.7967646986688605e-266' }], '{"result": 5.7967646986688605e-266}'],
  ['round_number', [{ i: '547577' }], '{"result": 547577}'],
  [
    'round_number',
    [
      {
        i: '10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
      },
      { s: 'x' },
    ],
    '{"error": "First input must be a number, second input must be an integer"}',
  ],
  [
    'round_number',
    [{ b: true }, { s: 'x' }],
    '{"error": "First input must be a number, second input must be an integer"}',
  ],
  ['round_number', [{ i: '10' }, { n: 1 }], '{"result": 10}'],
  ['percentage', [{ i: '90' }, { f: '4.217580181660852' }], '{"result": 2133.9250499929717}'],
  ['percentage', [{ i: '1' }, { i: '21' }], '{"result": 4.761904761904762}'],
  ['percentage', [{ i: '91' }, { f: '-47.4761160437669' }], '{"result": -191.67532558078182}'],
  [
    'percentage',
    [{ i: '6277101735386680763835789423207666416102355444464034512896' }, { i: '-1' }],
    '{"result": -6.277101735386681e+59}',
  ],
  ['min_value', [{ t: [{ f: '3.296648450349946' }, { i: '39' }] }], '{"result": 3.296648450349946}'],
  ['min_value', [{ l: [{ i: '844837' }] }], '{"result": 844837}'],
  ['min_value', [{ t: [] }], '{"error": "Cannot find minimum of an empty list"}'],
  ['min_value', [{ l: [{ f: '-74.50125103372665' }, { i: '-2' }] }], '{"result": -74.50125103372665}'],
  [
    'max_value',
    [{ l: [{ i: '10000000000000000000000000000000000000' }, { n: 1 }] }],
    '{"error": "All elements in the list must be numbers"}',
  ],
  ['max_value', [{ l: [{ s: 'a' }, { s: 'c' }, { s: 'zz' }, { s: 'zz' }] }], '{"result": "zz"}'],
  ['max_value', [{ l: [{ s: 'a' }, { s: 'zz' }, { s: 'zz' }] }], '{"result": "zz"}'],
  [
    'sum_values',
    [{ l: [{ f: '1.000000000007276' }, { f: '-29.741121075864598' }] }],
    '{"result": -28.741121075857322}',
  ],
  [
    'sum_values',
    [{ l: [{ i: '-915747623910444981879342673501' }, { i: '84' }] }],
    '{"result": -915747623910444981879342673417}',
  ],
  ['sum_values', [{ i: '5' }], '{"error": "All elements in the list must be numbers"}'],
  [
    'sum_values',
    [
      {
        l: [
          { f: '0.9999999998835847' },
          { f: '0.5' },
          { f: '0.05141059620862087' },
          {
            i: '10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
          },
          { l: [{ i: '1' }, { i: '2' }] },
          { i: '68' },
        ],
      },
    ],
    'Error during execution: int too large to convert to float',
  ],
  ['power', [{ f: '0.9999999999417923' }, { f: '176.83460970696387' }], '{"result": 0.9999999897068711}'],
  ['power', [{ f: '7.205759403792794e+16' }, { i: '-5' }], '{"result": 5.147557589468029e-85}'],
  ['power', [{ f: '0.9999999403953552' }, { i: '130' }], '{"result": 0.9999922514259686}'],
  ['power', [{ f: '-808.4658285267438' }, { i: '31' }], '{"result": -1.3724979886201876e+90}'],
  [
    'power',
    [{ i: '44' }, { i: '108' }],
    '{"result": 3110921558090285780184089545523297645566791660061544538350194640104177306099327137040031811110729005528873819771019864771105854761722049547511370075818452576227766995995607433216}',
  ],
  [
    'si_unit_conversion',
    [{ f: '-88.85412033688233' }, { l: [{ s: 'km' }] }, { s: 'm' }],
    "Error during execution: unhashable type: 'list'",
  ],
  [
    'si_unit_conversion',
    [{ i: '1361129467683753853853498429727072845824' }, { l: [{ s: 'km' }] }, { s: 'mm' }],
    "Error during execution: unhashable type: 'list'",
  ],
  [
    'standard_deviation',
    [
      {
        l: [
          { f: '-13.705093800027479' },
          {
            i: '100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
          },
          { f: '0.9999999999995453' },
          { f: '1.685153533652901' },
          { f: '-50.426866634551935' },
        ],
      },
    ],
    "Error during execution: (34, 'Numerical result out of range')",
  ],
  [
    'square_root',
    [{ f: '20.0' }, { b: false }],
    'Error during execution: valid range for prec is [1, MAX_PREC]',
  ],
  [
    'square_root',
    [{ f: '0.0' }, { b: false }],
    'Error during execution: valid range for prec is [1, MAX_PREC]',
  ],
  [
    'sum_values',
    [
      {
        l: [
          { i: '2596148429267413814265248164610048' },
          { f: '4503599627370496.0' },
          {
            i: '10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
          },
          { f: '62.22994551786633' },
        ],
      },
    ],
    'Error during execution: int too large to convert to float',
  ],
  [
    'sum_values',
    [
      {
        l: [
          { b: true },
          { i: '458466' },
          {
            i: '10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
          },
          { f: '2199023255552.0' },
        ],
      },
    ],
    'Error during execution: int too large to convert to float',
  ],
  [
    'percentage',
    [
      {
        i: '100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
      },
      { f: '4.547473508864641e-13' },
    ],
    'Error during execution: int too large to convert to float',
  ],
  ['power', [{ i: '7' }, { i: '-24' }], '{"result": 5.219717990086151e-21}'],
  ['power', [{ f: '0.8121603384841396' }, { f: '-489.1107182740999' }], '{"result": 1.567383658732449e+44}'],
  [
    'power',
    [{ f: '5.395233497330704e+133' }, { f: '-0.8753201036715659' }],
    '{"result": 8.743451958588579e-118}',
  ],
  ['power', [{ f: '29.267022192955977' }, { f: '3.896704665326885' }], '{"result": 517659.3775898125}'],
  ['power', [{ i: '6' }, { i: '-18' }], '{"result": 9.846400420048512e-15}'],
  [
    'power',
    [{ f: '1.2074678208825761e+92' }, { f: '-1.8122818608707676' }],
    '{"result": 1.323388015887315e-167}',
  ],
  ['power', [{ i: '13' }, { i: '30' }], '{"result": 2619995643649944960380551432833049}'],
  ['power', [{ f: '27.578370901526014' }, { f: '3.2785975203971383' }], '{"result": 52849.96044132402}'],
  [
    'power',
    [{ i: '7' }, { i: '227' }],
    '{"result": 687472108787547346651410678101574936948350526803328824189757306010970532103782266988073559911093461417589708196261842505327657144442343817158237720085847150340110477295543842671071673633299543}',
  ],
  ['power', [{ f: '677.0' }, { f: '-3.0' }], '{"result": 3.2228047416726536e-09}'],
  ['power', [{ f: '0.1' }, { i: '394' }], '{"result": 0.0}'],
  ['power', [{ f: '10.594134258334243' }, { f: '8.222548848141482' }], '{"result": 268318686.56398377}'],
  ['power', [{ f: '19.372559703820386' }, { f: '4.363230954494172' }], '{"result": 413327.40132823074}'],
  ['power', [{ i: '-20' }, { i: '11' }], '{"result": -204800000000000}'],
  [
    'power',
    [{ f: '-638657.1951535342' }, { f: '10000000000.5' }],
    'Error during execution: complex exponentiation',
  ],
  [
    'power',
    [{ f: '-419220.2538053864' }, { f: '123.456' }],
    'Error during execution: complex exponentiation',
  ],
  ['power', [{ i: '10' }, { i: '-5' }], '{"result": 1e-05}'],
  ['power', [{ f: '1.5' }, { i: '34' }], '{"result": 970739.7373664757}'],
  ['power', [{ f: '457.0' }, { f: '6.0' }], '{"result": 9109555799784050.0}'],
  [
    'logarithm',
    [
      {
        s: '1.000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001',
      },
      { i: '10' },
      { i: '1200' },
    ],
    "{'result': mpf('4.34294481903251827651128918916605082294397005803666566114453783165864649208870774729224949338431748285333840399461805456712615317295905478998374402706107047982772964312108354467558820557152195038808883824403833191848785634868932008639013673334232718293861872383221899875609756341739802793429254014697676757276179959121761516124617086913388596993355515056709298610019713966816212446376789172560395471206651864188526372039022327707104023854273788565280430244611947503232489350394770771356250405810544074371744561973436686704934634077864076775384084175608678919794337997713947616791137838007109041956692701074209866877345325931621552761751426416699972686227870745448740841458903855165709374592443812563666122511503651599729227554759423922416593143402175515860516794844122922840752538446517344015909302073613671093836825670559917499784812660041273470742575934517557716191868217541121896863067522427860785594224284416246807512953078372001565735164938414021935723503815554310119380742418214784704670832512806123667483761687642376055728984818811952443668514657803067509691052479080953064005358616093938722420295179841290447245456001369373852182238080489283654647096803951671975759089994179033018975681645604691e-1102')}",
  ],
];

describe('MathAPI: differential reference table', () => {
  it.each(REFERENCE.map((r, i) => [i, ...r] as const))('#%i %s', (_i, method, args, expected) => {
    expect(call(method, ...args.map(dec))).toBe(expected);
  });
});
