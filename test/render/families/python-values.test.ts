import { describe, expect, it } from 'vitest';
import { dumps, fromJs, parseJson, pyRepr, pyStr } from '../../../src/render/families/python-values.js';

// [JSON text, json.dumps(v), json.dumps(v, separators=(",", ":"), sort_keys=True), str(v),
//  json.dumps(v, ensure_ascii=False)] for v = json.loads(text), as CPython 3.11 wrote them
const PYTHON: readonly (readonly [string, string, string, string, string])[] = [
  ['30.0', '30.0', '30.0', '30.0', '30.0'],
  ['1e21', '1e+21', '1e+21', '1e+21', '1e+21'],
  ['0.5', '0.5', '0.5', '0.5', '0.5'],
  ['1e-05', '1e-05', '1e-05', '1e-05', '1e-05'],
  ['0.0001', '0.0001', '0.0001', '0.0001', '0.0001'],
  ['1e16', '1e+16', '1e+16', '1e+16', '1e+16'],
  ['1e15', '1000000000000000.0', '1000000000000000.0', '1000000000000000.0', '1000000000000000.0'],
  [
    '123456789012345678.0',
    '1.2345678901234568e+17',
    '1.2345678901234568e+17',
    '1.2345678901234568e+17',
    '1.2345678901234568e+17',
  ],
  ['-0.0', '-0.0', '-0.0', '-0.0', '-0.0'],
  ['0', '0', '0', '0', '0'],
  ['-0', '0', '0', '0', '0'],
  ['1.5e-7', '1.5e-07', '1.5e-07', '1.5e-07', '1.5e-07'],
  ['2.5E+3', '2500.0', '2500.0', '2500.0', '2500.0'],
  [
    '12345678901234567890',
    '12345678901234567890',
    '12345678901234567890',
    '12345678901234567890',
    '12345678901234567890',
  ],
  ['3.141592653589793', '3.141592653589793', '3.141592653589793', '3.141592653589793', '3.141592653589793'],
  ['1e308', '1e+308', '1e+308', '1e+308', '1e+308'],
  ['5e-324', '5e-324', '5e-324', '5e-324', '5e-324'],
  ['0.1', '0.1', '0.1', '0.1', '0.1'],
  ['100.0', '100.0', '100.0', '100.0', '100.0'],
  ['9007199254740993', '9007199254740993', '9007199254740993', '9007199254740993', '9007199254740993'],
  [
    '[1, 2.0, "é\\u0001\\u007f😀"]',
    '[1, 2.0, "\\u00e9\\u0001\\u007f\\ud83d\\ude00"]',
    '[1,2.0,"\\u00e9\\u0001\\u007f\\ud83d\\ude00"]',
    "[1, 2.0, 'é\\x01\\x7f😀']",
    '[1, 2.0, "é\\u0001😀"]',
  ],
  [
    '{"b": 1, "a": {"2": true, "1": null}}',
    '{"b": 1, "a": {"2": true, "1": null}}',
    '{"a":{"1":null,"2":true},"b":1}',
    "{'b': 1, 'a': {'2': True, '1': None}}",
    '{"b": 1, "a": {"2": true, "1": null}}',
  ],
];

describe("Python's way of writing values", () => {
  it.each(PYTHON)('%s', (text, plain, compactSorted, str, unicode) => {
    const v = parseJson(text)!.value;
    expect(dumps(v)).toBe(plain);
    expect(dumps(v, { compact: true, sortKeys: true })).toBe(compactSorted);
    expect(pyStr(v)).toBe(str);
    expect(dumps(v, { ensureAscii: false })).toBe(unicode);
  });

  it('rejects what is not one JSON value, without throwing', () => {
    for (const bad of ['', '{', '[1,]', '{"a" 1}', '01', '1.', 'NaN', '"\\x"', '1 2', '"a\nb"'])
      expect(parseJson(bad)).toBeUndefined();
  });

  it('keeps where each member of an object is, for the text a model wrote', () => {
    const text = '{"a": 30.0, "b": {"c": [1]}}';
    const members = parseJson(text)!.members!;
    expect(members.map(([k, s]) => [k, text.slice(s.start, s.end)])).toEqual([
      ['a', '30.0'],
      ['b', '{"c": [1]}'],
    ]);
  });

  it('takes whole JS numbers for ints, and reprs strings as Python quotes them', () => {
    expect(pyStr(fromJs([1, 1.5, true, null, "it's"]))).toBe('[1, 1.5, True, None, "it\'s"]');
    expect(pyRepr(fromJs('a\tb\u00e9\u200b'))).toBe("'a\\tb\u00e9\\u200b'");
  });
});
