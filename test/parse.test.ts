// @module-tag bfcl-data
import { describe, expect, it } from 'vitest';
import { decodeStep } from '../src/envs/bfcl/calls/decode.js';
import { instanceNameFor, TaskEnvironment } from '../src/envs/bfcl/executor.js';
import { decodePythonCallList, structuredCallToString } from '../src/envs/py/calls.js';
import { floatRepr, jsonDumps, repr } from '../src/envs/py/format.js';
import { parsePyJson } from '../src/envs/py/json.js';
import { formatFixed, pyRound } from '../src/envs/py/ops.js';
import { PySyntaxError, parsePythonExpression } from '../src/envs/py/parse.js';
import { PyTuple } from '../src/envs/py/values.js';
import { sharedData } from './support/golden.js';

const syntaxError = (src: string) => {
  try {
    parsePythonExpression(src);
  } catch (e) {
    if (e instanceof PySyntaxError) return e.message;
    throw e;
  }
  return 'parsed';
};

describe('Python call-string parser', () => {
  it('reads every literal form the answer files use', () => {
    const e = parsePythonExpression(
      `f('a\\'b', "c", 1, -2.5, True, None, [1, (2,)], {'k': {3: 'v'}}, x=1e-06)`,
    );
    expect(e.kind).toBe('call');
    if (e.kind !== 'call') return;
    expect(e.args.map((a) => (a.kind === 'literal' ? a.value : a.kind))).toEqual([
      "a'b",
      'c',
      1n,
      -2.5,
      true,
      null,
      'list',
      'dict',
    ]);
    expect(e.kwargs[0]).toEqual({ name: 'x', value: { kind: 'literal', value: 1e-6 } });
  });

  it('gives CPython 3.11 syntax error texts', () => {
    expect(syntaxError('')).toBe('invalid syntax (<string>, line 0)');
    expect(syntaxError('ls(a=True, a=False)')).toBe('keyword argument repeated: a (<string>, line 1)');
    expect(syntaxError('ls(a=True)\nls()')).toBe('invalid syntax (<string>, line 2)');
    expect(syntaxError("cd(folder='x'")).toBe("'(' was never closed (<string>, line 1)");
    expect(syntaxError("cd(folder='x)")).toBe(
      'unterminated string literal (detected at line 1) (<string>, line 1)',
    );
    expect(syntaxError('f(a=1, 2)')).toBe('positional argument follows keyword argument (<string>, line 1)');
    expect(syntaxError('f(a))')).toBe("unmatched ')' (<string>, line 1)");
  });

  it('marks computation as unsupported instead of running it', () => {
    for (const src of [
      'f(2**10)',
      'f(1/3)',
      "f(__import__('os'))",
      'f(x.y)',
      'f([i for i in y])',
      'f(a[0])',
      'f(lambda: 1)',
    ]) {
      const e = parsePythonExpression(src);
      expect(e.kind, src).toBe('call');
      if (e.kind === 'call') expect(['unsupported', 'call', 'attribute', 'name']).toContain(e.args[0]!.kind);
    }
  });
});

describe('executor refuses code, keeps the reference errors', () => {
  const data = sharedData();
  const task = data.byId.get('multi_turn_base_0')!;
  const env = new TaskEnvironment({
    taskId: task.id,
    involvedClasses: task.involvedClasses,
    initialConfig: task.initialConfig,
    longContext: false,
  });

  it('returns error results for code instead of evaluating it', () => {
    expect(env.execute("cd(folder=__import__('os').getcwd())")).toMatch(
      /^Error during execution: .*not supported/,
    );
    expect(env.execute('cd(folder=pwd())')).toMatch(
      /^Error during execution: a nested call is not supported/,
    );
    expect(env.execute("len('abc')")).toMatch(/builtin 'len' is not supported/);
    expect(env.execute('frobnicate(x=1)')).toBe("Error during execution: name 'frobnicate' is not defined");
    expect(env.execute('ls(a=null)')).toBe("Error during execution: name 'null' is not defined");
    expect(env.execute('exit()')).toBe('Error during execution: Function call exit is not allowed.');
  });

  it('runs calls whatever characters the policy name carries', () => {
    for (const modelName of ['embedded:base@58efd7322591', '7b-instruct', 'Qwen/Qwen2.5-7B', 'a b+c']) {
      const named = new TaskEnvironment({
        taskId: task.id,
        involvedClasses: task.involvedClasses,
        initialConfig: task.initialConfig,
        longContext: false,
        modelName,
      });
      expect(named.execute('pwd()'), modelName).not.toMatch(/^Error during execution/);
      expect(named.execute("cd(folder='nowhere')"), modelName).not.toMatch(/^Error during execution/);
    }
    expect(instanceNameFor('Qwen/Qwen2.5-7B', 'multi_turn_base_0', 'GorillaFileSystem')).toBe(
      'Qwen_Qwen2_5_7B_multi_turn_base_0_GorillaFileSystem_instance',
    );
  });

  it('binds arguments with CPython TypeError texts', () => {
    expect(env.execute("cd('a', 'b')")).toBe(
      'Error during execution: GorillaFileSystem.cd() takes 2 positional arguments but 3 were given',
    );
    expect(env.execute("ls(True, 'x')")).toBe(
      'Error during execution: GorillaFileSystem.ls() takes from 1 to 2 positional arguments but 3 were given',
    );
    expect(env.execute('pwd(1)')).toBe(
      'Error during execution: GorillaFileSystem.pwd() takes 1 positional argument but 2 were given',
    );
  });
});

describe('model output decoding', () => {
  it('decodes prompting-style call lists, fenced or not', () => {
    expect(decodePythonCallList("```python\n[cd(folder='a'), ls(a=True)]\n```")).toEqual([
      "cd(folder='a')",
      'ls(a=True)',
    ]);
    expect(decodePythonCallList('mean(numbers=[1, 2.0])')).toEqual(['mean(numbers=[1, 2.0])']);
  });
  it('turns structured calls into reference call strings', () => {
    expect(structuredCallToString('cd', '{"folder": "a"}')).toBe("cd(folder='a')");
    expect(structuredCallToString('f', '{"a": 1, "b": 2.0, "c": true, "d": null, "e": ["x"]}')).toBe(
      "f(a=1,b=2.0,c=True,d=None,e=['x'])",
    );
    expect(decodeStep([{ name: 'ls', arguments: '{}' }])).toEqual(['ls()']);
    expect(decodeStep('not a call at all (')).toEqual([]);
  });
});

describe('Python value formatting', () => {
  it('prints floats like repr()', () => {
    expect([5, 0.1, 1e16, 1e-5, 123456789012345.6, -0, 1e22, 2.5e-5].map(floatRepr)).toEqual([
      '5.0',
      '0.1',
      '1e+16',
      '1e-05',
      '123456789012345.6',
      '-0.0',
      '1e+22',
      '2.5e-05',
    ]);
  });
  it('prints containers like repr() and json.dumps()', () => {
    const v = parsePyJson('{"a": [1, 2.0, "it\'s", null, true], "b": "caf\\u00e9"}');
    expect(repr(v)).toBe(`{'a': [1, 2.0, "it's", None, True], 'b': 'café'}`);
    expect(jsonDumps(v)).toBe('{"a": [1, 2.0, "it\'s", null, true], "b": "caf\\u00e9"}');
    expect(repr(new PyTuple([1n]))).toBe('(1,)');
  });
  it("rounds like Python's round() and %-formatting", () => {
    expect(pyRound(2.5)).toBe(2n);
    expect(pyRound(2.675, 2n)).toBe(2.67);
    expect(pyRound(0.125, 2n)).toBe(0.12);
    expect(formatFixed(1.005, 2)).toBe('1.00');
    expect(formatFixed(2.5, 0)).toBe('2');
  });
});

describe('float repr agrees with the exponent-based formatting on both sides of every boundary', () => {
  it('matches a slow reference implementation on many doubles', () => {
    const slow = (x: number) => {
      const [mant, e] = Math.abs(x).toExponential().split('e') as [string, string];
      const exp = Number(e);
      const digits = mant.replace('.', '');
      const sign = x < 0 ? '-' : '';
      if (exp >= -4 && exp < 16) {
        if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
        if (digits.length <= exp + 1) return `${sign}${digits}${'0'.repeat(exp + 1 - digits.length)}.0`;
        return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
      }
      const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
      return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
    };
    const xs = [
      1e-4,
      9.999999999999999e-5,
      1e16,
      9999999999999998,
      0.5,
      123.456,
      -2.5e-3,
      1 / 3,
      2 ** 53,
      1e15 + 0.3,
    ];
    let seed = 7;
    for (let i = 0; i < 5000; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      xs.push((seed / 2 ** 31 - 0.5) * 10 ** ((seed % 40) - 20));
    }
    for (const x of xs) expect(floatRepr(x), String(x)).toBe(slow(x));
  });
});
