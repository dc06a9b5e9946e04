import { describe, expect, it } from 'vitest';
import {
  dumps,
  fromJs,
  type PyValue,
  parseJson,
  pyRepr,
  pyStr,
  pyStrip,
  stripChars,
  tagText,
} from '../../../src/render/families/python.js';
import { PyFloat } from '../../../src/render/renderer.js';

/** json.loads(text), failing the test on bad JSON */
function loads(text: string): PyValue {
  const r = parseJson(text);
  if ('error' in r) throw new Error(r.error);
  return r.value;
}

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

describe("Python's way of reading and writing values", () => {
  it.each(PYTHON)('%s', (text, plain, compactSorted, str, unicode) => {
    const v = loads(text);
    expect(dumps(v)).toBe(plain);
    expect(dumps(v, { separators: [',', ':'], sortKeys: true })).toBe(compactSorted);
    expect(pyStr(v)).toBe(str);
    expect(dumps(v, { ensureAscii: false })).toBe(unicode);
  });

  it('indents as json.dumps(indent=...) does', () => {
    expect(dumps(loads('{"a": [1, {}], "b": []}'), { indent: 2 })).toBe(
      '{\n  "a": [\n    1,\n    {}\n  ],\n  "b": []\n}',
    );
  });

  it('writes an overflowing float as json.dumps does, and as str() does', () => {
    expect(dumps(loads('[1e999, -1e999]'))).toBe('[Infinity, -Infinity]');
    expect(pyStr(loads('1e999'))).toBe('inf');
  });

  it('escapes as ensure_ascii does, a character past the BMP as its surrogate pair', () => {
    expect(dumps(loads('"Zoë 東京 😀 \\u0001 \\u007f \\/ \\"q\\" \\\\ \\t"'))).toBe(
      '"Zo\\u00eb \\u6771\\u4eac \\ud83d\\ude00 \\u0001 \\u007f / \\"q\\" \\\\ \\t"',
    );
  });

  it('keeps the first place and the last value of a repeated key, as a dict does', () => {
    expect(dumps(loads('{"a": 1, "b": 2, "a": 3}'))).toBe('{"a": 3, "b": 2}');
  });

  it('writes a value between tags by str() when a scalar and by json.dumps when a container', () => {
    expect(['true', 'null', '"x y"', '1e21', '7', '{"a":[1,false]}'].map((t) => tagText(loads(t)))).toEqual([
      'True',
      'None',
      'x y',
      '1e+21',
      '7',
      '{"a": [1, false]}',
    ]);
  });

  it('rejects what is not strict JSON with the reason, NaN and Infinity included', () => {
    const bad = ['', '{', '[1,]', '{"a" 1}', '01', '1.', '"\\x"', '1 2', '"a\nb"', "{'a': 1}"];
    for (const text of [...bad, 'NaN', '{"a": Infinity}', '-Infinity'])
      expect(parseJson(text), text).toHaveProperty('error');
  });

  it('keeps where the value and each member of an object are, for the text a model wrote', () => {
    const text = ' {"a": 30.0,\n "b": {"c": [1]}, "a": 1e21} ';
    const r = parseJson(text);
    if ('error' in r) throw new Error(r.error);
    expect(text.slice(r.start, r.end)).toBe(text.trim());
    expect(r.members!.map(([k, s]) => [k, text.slice(s.start, s.end)])).toEqual([
      ['a', '30.0'],
      ['b', '{"c": [1]}'],
      ['a', '1e21'],
    ]);
    expect(r.members![1]![1].members!.map(([k]) => k)).toEqual(['c']);
  });

  it('takes a JavaScript value for the Python value it stands for', () => {
    expect(pyStr(fromJs([1, 1.5, true, null, "it's"]))).toBe('[1, 1.5, True, None, "it\'s"]');
    expect(pyRepr(fromJs('a\tb\u00e9\u200b'))).toBe("'a\\tb\u00e9\\u200b'");
    // a schema from JSON.parse: integers within 2^53 are ints, 1e21 is a float; undefined is dropped
    expect(dumps(fromJs({ type: 'number', default: 0.5, maximum: 1e21, enum: ['€'], x: undefined }))).toBe(
      '{"type": "number", "default": 0.5, "maximum": 1e+21, "enum": ["\\u20ac"]}',
    );
    // a chat read by readChatLine: integral floats as PyFloat, big ints as bigint, Maps in order
    const chat = new Map<string, unknown>([
      ['b', new PyFloat(1)],
      ['a', [30, new PyFloat(30), 2.5, 12345678901234567890n]],
    ]);
    expect(dumps(fromJs(chat))).toBe('{"b": 1.0, "a": [30, 30.0, 2.5, 12345678901234567890]}');
    expect(pyStr(fromJs(new PyFloat(-0)))).toBe('-0.0');
  });

  it("strips what Python's str.strip() strips", () => {
    expect(pyStrip('\x1c\u3000 x \x85\n')).toBe('x');
    expect(pyStrip('\ufeffx')).toBe('\ufeffx');
    expect(stripChars('\n\nx\n', '\n')).toBe('x');
    expect(stripChars('\n\nx\n', '\n', 'left')).toBe('x\n');
  });
});
