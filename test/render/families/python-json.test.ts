import { describe, expect, it } from 'vitest';
import { fromJs, parseJson, pyDumps, pyStr, pyStrip } from '../../../src/render/families/python-json.js';

const dumps = (text: string) => {
  const r = parseJson(text);
  if ('error' in r) throw new Error(r.error);
  return pyDumps(r.value);
};

describe("Python's json as the cookbook's renderers use it", () => {
  it('writes numbers as Python reads and writes them: ints exactly, floats by repr', () => {
    expect(dumps('[30.0, 1e21, 1E16, 1e15, 0.0001, 0.00001, 1.5e-7, -0.0, 2.50, 450.5, 100]')).toBe(
      '[30.0, 1e+21, 1e+16, 1000000000000000.0, 0.0001, 1e-05, 1.5e-07, -0.0, 2.5, 450.5, 100]',
    );
    expect(dumps('123456789012345678901234567890')).toBe('123456789012345678901234567890');
    expect(dumps('-0')).toBe('0');
    expect(dumps('1e999')).toBe('Infinity');
  });

  it('escapes as ensure_ascii does, a character past the BMP as its surrogate pair', () => {
    expect(dumps('"Zoë 東京 😀 \\u0001 \\u007f \\/ \\"q\\" \\\\ \\t"')).toBe(
      '"Zo\\u00eb \\u6771\\u4eac \\ud83d\\ude00 \\u0001 \\u007f / \\"q\\" \\\\ \\t"',
    );
  });

  it('keeps the first place and the last value of a repeated key, as a dict does', () => {
    expect(dumps('{"a": 1, "b": 2, "a": 3}')).toBe('{"a": 3, "b": 2}');
  });

  it('writes a scalar by str() and a container by json.dumps', () => {
    const value = (t: string) => {
      const r = parseJson(t);
      if ('error' in r) throw new Error(r.error);
      return r.value;
    };
    expect(['true', 'null', '"x y"', '1e21', '7', '{"a":[1,false]}'].map((t) => pyStr(value(t)))).toEqual([
      'True',
      'None',
      'x y',
      '1e+21',
      '7',
      '{"a": [1, false]}',
    ]);
  });

  it('keeps the source text of every value, and rejects what is not strict JSON', () => {
    const r = parseJson(' {"args": {"price": 30.0,\n "n": 1e21}} ');
    expect('value' in r && r.value.kind === 'object' && r.value.entries.get('args')!.raw).toBe(
      '{"price": 30.0,\n "n": 1e21}',
    );
    for (const bad of ['NaN', '{"a": Infinity}', "{'a': 1}", '[1,]', '01', '"\n"', '{"a" 1}', '1 2', ''])
      expect(parseJson(bad), bad).toHaveProperty('error');
  });

  it('writes a JavaScript schema as Python writes the dict it came from', () => {
    expect(pyDumps(fromJs({ type: 'number', default: 0.5, maximum: 1e21, enum: ['€'], x: undefined }))).toBe(
      '{"type": "number", "default": 0.5, "maximum": 1e+21, "enum": ["\\u20ac"]}',
    );
  });

  it("strips what Python's str.strip() strips", () => {
    expect(pyStrip('\x1c\u3000 x \x85\n')).toBe('x');
    expect(pyStrip('\ufeffx')).toBe('\ufeffx');
  });
});
