// @module-tag bfcl-data
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TaskEnvironment } from '../src/envs/bfcl/executor.js';
import { sharedData } from './support/golden.js';

// Hostile call strings must never throw out of the executor, hang, or run anything:
// every input yields a result string (a tool result or an `Error during execution: ...`).
describe('executor fuzz', () => {
  const data = sharedData();
  const tasks = [
    'multi_turn_base_0',
    'multi_turn_base_100',
    'multi_turn_long_context_150',
    'multi_turn_base_199',
  ].map((id) => data.byId.get(id)!);
  const envs = tasks.map(
    (t) =>
      new TaskEnvironment({
        taskId: t.id,
        involvedClasses: t.involvedClasses,
        initialConfig: t.initialConfig,
        longContext: t.category === 'long_context',
        ...(t.category === 'long_context' ? { constants: data.longContextConstants() } : {}),
      }),
  );
  const methodNames = [...data.docs.keys()];

  const hostile = [
    "__import__('os').system('echo pwned')",
    "exec('import os')",
    'eval("1+1")',
    'open("/etc/passwd").read()',
    "cd(folder=__import__('os').getcwd())",
    'ls(a=(lambda: 1)())',
    '[x for x in range(10**9)]',
    '1' + '0'.repeat(5000),
    '('.repeat(10_000),
    '['.repeat(300) + ']'.repeat(300),
    '-'.repeat(50_000) + '1',
    "cd(folder='",
    'cd(folder="""',
    "'\\x",
    "'\\N{DASH}'",
    'touch(file_name="\u0000\ud800\udfff\u202e")',
    `echo(content='${'é😀'.repeat(1000)}')`,
    'mean(numbers=[1e308, 1e308])',
    'power(base=10, exponent=400)',
    'add(a=1e999, b=-1e999)',
    'sort()()',
    'ls.__class__',
    'ls()[0]',
    'ls() if True else 1',
    'f(*args)',
    'f(**{})',
    'kill()',
    'os.system("x")',
    `cat(file_name=${'['.repeat(150)}${']'.repeat(150)})`,
    'mkdir(dir_name={1: {2: {3: [4, (5,)]}}})',
    'divide(a=1, b=0)',
  ];

  it('survives a list of known-hostile inputs', () => {
    for (const env of envs) {
      for (const s of hostile) {
        const r = env.execute(s);
        expect(typeof r).toBe('string');
      }
      expect(env.execute("__import__('os').system('echo pwned')")).toMatch(/^Error during execution: /);
    }
  });

  const literal: fc.Arbitrary<string> = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.string({ unit: 'binary' }).map((s) => `'${s.replace(/[\\']/g, '\\$&')}'`),
      fc.string().map((s) => JSON.stringify(s)),
      fc.integer().map(String),
      fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
      fc.double().map((d) => (Number.isFinite(d) ? String(d) : '1e999')),
      fc.constantFrom('True', 'False', 'None', 'true', 'null', '...', 'x', '__import__', 'ls'),
      fc.array(tie('value'), { maxLength: 4 }).map((xs) => `[${xs.join(', ')}]`),
      fc.array(tie('value'), { maxLength: 3 }).map((xs) => `(${xs.join(', ')}${xs.length === 1 ? ',' : ''})`),
      fc
        .array(fc.tuple(tie('value'), tie('value')), { maxLength: 3 })
        .map((kv) => `{${kv.map(([k, v]) => `${k}: ${v}`).join(', ')}}`),
    ),
  })).value;

  const callString = fc
    .tuple(
      fc.oneof(fc.constantFrom(...methodNames), fc.string({ maxLength: 12 })),
      fc.array(
        fc.oneof(
          literal,
          fc
            .tuple(fc.constantFrom('a', 'folder', 'file_name', 'content', 'x', 'numbers'), literal)
            .map(([k, v]) => `${k}=${v}`),
        ),
        { maxLength: 5 },
      ),
    )
    .map(([name, args]) => `${name}(${args.join(', ')})`);

  const mangled = fc
    .tuple(callString, fc.nat(), fc.string({ unit: 'binary', maxLength: 8 }))
    .map(([s, at, junk]) => s.slice(0, at % (s.length + 1)) + junk + s.slice(at % (s.length + 1)));

  it('never throws and always answers, on thousands of random and mangled calls', () => {
    // A hang would trip the test timeout; no wall-clock assertions here.
    fc.assert(
      fc.property(
        fc.oneof(callString, mangled, fc.string({ unit: 'binary', maxLength: 200 })),
        fc.nat(envs.length - 1),
        (s, i) => {
          const r = envs[i]!.execute(s);
          expect(typeof r).toBe('string');
        },
      ),
      { numRuns: 4000, seed: 20261129 },
    );
  });
});
