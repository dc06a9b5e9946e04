/**
 * The python format's strict decoding against what BFCL's own default prompting decoder made of
 * 978 raw texts (../shared/bfcl-v3/golden/prompting_decode_cases.jsonl): the same call strings,
 * or an error that ends the turn.
 */
import { describe, expect, it } from 'vitest';
import { decodeExecutePrompting, stripReasoningOfficial } from '../../src/envs/py/prompting.js';
import { readJsonl } from '../support/golden.js';

interface DecodeCase {
  case_id: string;
  kind: string;
  text: string;
  decoded?: string[];
  error?: string;
  error_message?: string;
}

const cases = readJsonl<DecodeCase>('prompting_decode_cases.jsonl');

describe('decodeExecutePrompting agrees with the official decoder', () => {
  it('reads all 978 cases', () => {
    expect(cases.length).toBe(978);
  });

  it('gives the same call strings, or an error, on every case', () => {
    const disagree: string[] = [];
    for (const c of cases) {
      const got = decodeExecutePrompting(c.text);
      if (c.decoded !== undefined) {
        if (!got.ok || JSON.stringify(got.calls) !== JSON.stringify(c.decoded))
          disagree.push(`${c.case_id}: expected ${JSON.stringify(c.decoded)}, got ${JSON.stringify(got)}`);
      } else if (got.ok) {
        disagree.push(`${c.case_id}: expected ${c.error}, got ${JSON.stringify(got.calls)}`);
      }
    }
    expect(disagree).toEqual([]);
  });

  it('raises the same exception type on every error case', () => {
    const differ = cases
      .filter((c) => c.error !== undefined)
      .map((c) => ({ c, got: decodeExecutePrompting(c.text) }))
      .filter(({ c, got }) => got.ok || got.errorType !== c.error)
      .map(({ c, got }) => `${c.case_id}: ${c.error} vs ${JSON.stringify(got)}`);
    expect(differ).toEqual([]);
  });

  it('gives the same message on most errors (CPython has more syntax-error hints)', () => {
    const errors = cases.filter((c) => c.error !== undefined);
    const same = errors.filter((c) => {
      const got = decodeExecutePrompting(c.text);
      return !got.ok && got.message === c.error_message;
    });
    expect(same.length / errors.length).toBeGreaterThan(0.5);
  });
});

describe('the official rules, named', () => {
  const calls = (text: string) => {
    const r = decodeExecutePrompting(text);
    return r.ok ? r.calls : r.errorType;
  };
  it('keeps keyword arguments only', () => {
    expect(calls("[touch('a.csv')]")).toEqual(['touch()']);
    expect(calls("[cp('a', destination='b')]")).toEqual(["cp(destination='b')"]);
  });
  it('does not look for a list inside prose or a ```python fence', () => {
    expect(calls('Sure: [ls()]')).toBe('SyntaxError');
    expect(calls('```python\n[ls()]\n```')).toBe('SyntaxError');
    expect(calls('```\n[ls()]\n```')).toEqual(['ls()']);
  });
  it('reproduces the unary and dict quirks', () => {
    expect(calls('[f(a=+5)]')).toEqual(['f(a=-5)']);
    expect(calls('[f(a=--1)]')).toBe('AttributeError');
    expect(calls("[f(a={'g': {'x': 1}})]")).toEqual(['f(a=g(x=1))']);
    expect(calls('[f(a={})]')).toBe('IndexError');
    expect(calls("[f(a={'k': [1]})]")).toEqual(["f(a={'k': [1]})"]);
    expect(calls('[f(a=x)]')).toEqual(["f(a='x')"]);
    expect(calls('[cd(folder=pwd())]')).toEqual(["cd(folder='pwd()')"]);
    expect(calls('[cd(folder=g(x=1))]')).toEqual(['cd(folder=g(x=1))']);
  });
  it('writes subscripts back as ast.unparse does', () => {
    expect(calls('[f(a=[1,2][0])]')).toEqual(["f(a='[1, 2][0]')"]);
    expect(calls('[f(a=d["k"])]')).toEqual([`f(a="d['k']")`]);
    expect(calls('[f(a=x[i+1])]')).toEqual(["f(a='x[i + 1]')"]);
  });

  it('computes arithmetic on literals only', () => {
    expect(calls('[f(a=2*3.5, b=-1+2)]')).toEqual(['f(a=7.0, b=1)']);
    expect(calls('[f(a=x+1)]')).toBe('NameError');
    expect(calls("[f(a=len('ab')+1)]")).toBe('NotEvaluated');
  });
  it('removes reasoning up to the last </think>', () => {
    expect(stripReasoningOfficial('<think>a [x()] </think>\n[ls()]')).toBe('[ls()]');
    expect(stripReasoningOfficial('[ls()]')).toBe('[ls()]');
  });
});
