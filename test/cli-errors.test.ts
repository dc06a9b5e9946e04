// @module-tag bfcl-data
/**
 * Bad input, through a real `seal` process: exit code 2, a message that says what to do, no
 * stack trace, and no input file changed or temporary file left behind.
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bfclPlayer } from './support/bfclPlayer.js';
import { buildDist, ROOT, seal } from './support/cli.js';
import { startFakeModelServer } from './support/fakeModelServer.js';
import { DATA_DIR, sharedData } from './support/golden.js';

type Run = Awaited<ReturnType<typeof seal>>;

/** exit 2, the message, and nothing that looks like a Node stack trace */
function expectUserError(r: Run, message: RegExp): void {
  expect(r.code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(2);
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toMatch(/^\s+at .+[:(]/m);
  expect(r.stderr).not.toMatch(/node:internal|Error: [A-Z]+: /);
}

const dir = mkdtempSync(join(tmpdir(), 'seal-bad-input-'));
const RESULT_LINE = '{"id": "multi_turn_base_0", "result": [[["ls()"]]]}';
const OTHER_LINE = '{"id": "multi_turn_base_1", "result": []}';
const verify = (...args: string[]) => seal(['verify', '--data-dir', DATA_DIR, ...args]);

/** a file with known content, to show afterwards that nothing touched it */
function fixture(name: string, content: string): { path: string; unchanged: () => void } {
  const path = join(dir, name);
  writeFileSync(path, content);
  return { path, unchanged: () => expect(readFileSync(path, 'utf8')).toBe(content) };
}

/** no `.tmp-PID` file anywhere under `folder` */
function noTempFiles(folder: string): void {
  const all = readdirSync(folder, { recursive: true }).map(String);
  expect(all.filter((f) => /\.tmp-\d+$/.test(f))).toEqual([]);
}

beforeAll(async () => {
  await buildDist();
});

describe('seal verify refuses what would lose data or score something else', () => {
  it('--out equal to --results: refused, the input untouched', async () => {
    const f = fixture('same.jsonl', `${RESULT_LINE}\n`);
    expectUserError(await verify('--results', f.path, '--out', f.path), /--out .* is the input file/);
    f.unchanged();
    // the same file under another spelling of its path
    expectUserError(
      await verify('--results', f.path, '--out', join(dir, '.', 'same.jsonl')),
      /is the input file/,
    );
    f.unchanged();
  });

  it('a verdict file given as results (lines without "result"): refused, naming the line', async () => {
    const f = fixture('verdicts.jsonl', '{"id": "multi_turn_base_0", "category": "base", "valid": false}\n');
    expectUserError(await verify('--results', f.path), /verdicts\.jsonl:1: no "result" field/);
    f.unchanged();
  });

  it('a task id given twice: refused, naming the id and both lines', async () => {
    const f = fixture(
      'dup.jsonl',
      `${RESULT_LINE}\n${OTHER_LINE}\n${RESULT_LINE.replace('ls()', 'pwd()')}\n`,
    );
    expectUserError(await verify('--results', f.path), /multi_turn_base_0 appears twice \(lines 1 and 3\)/);
    f.unchanged();
  });

  it('an empty result file, --split ,,, and a split that selects nothing: errors, not 0.00 over 0 tasks', async () => {
    const empty = fixture('empty.jsonl', '\n');
    expectUserError(await verify('--results', empty.path), /has no result lines/);
    const f = fixture('one.jsonl', `${RESULT_LINE}\n`);
    expectUserError(await verify('--results', f.path, '--split', ',,,'), /--split ",,," names no task/);
    expectUserError(
      await verify('--results', f.path, '--split', 'multi_turn_base_5'),
      /--split multi_turn_base_5 selects none of the tasks/,
    );
    // BFCL has no development split: say so, and which suite has one
    expectUserError(
      await verify('--results', f.path, '--split', 'dev'),
      /--split dev: the bfcl suite has no development split \(the mini suite has one\)/,
    );
    f.unchanged();
  });

  it('--split dev on the mini suite scores its 400 development tasks', async () => {
    const r = await seal(['verify', '--suite', 'mini', '--ground-truth', '--split', 'dev', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { categories: Record<string, { n: number; accuracy: number }> };
    expect(Object.values(summary.categories).map((c) => [c.n, c.accuracy])).toEqual([
      [100, 100],
      [100, 100],
      [100, 100],
      [100, 100],
    ]);
  });

  it('--results a folder, a null line: errors naming them', async () => {
    expectUserError(await verify('--results', dir), /is a folder/);
    const f = fixture('null.jsonl', `${RESULT_LINE}\nnull\n`);
    expectUserError(await verify('--results', f.path), /null\.jsonl:2: not a JSON object/);
    f.unchanged();
  });

  it('--out a folder or under a file: refused, nothing left behind', async () => {
    const f = fixture('in.jsonl', `${RESULT_LINE}\n`);
    const outDir = join(dir, 'out-folder');
    mkdirSync(outDir, { recursive: true });
    expectUserError(await verify('--results', f.path, '--out', outDir), /--out .* is a folder/);
    expectUserError(
      await verify('--results', f.path, '--out', join(f.path, 'verdicts.jsonl')),
      /cannot write .*in\.jsonl\/verdicts\.jsonl: a file is in the way of a folder/,
    );
    f.unchanged();
    noTempFiles(dir);
  });
});

describe('seal eval and seal compare', () => {
  const data = sharedData();
  const evalArgs = (url: string, out: string, ...more: string[]) => [
    'eval',
    '--split',
    'multi_turn_base_0',
    '--model',
    'scripted',
    '--base-url',
    url,
    '--format',
    'hermes',
    '--out',
    out,
    '--data-dir',
    DATA_DIR,
    ...more,
  ];

  it('a run folder in use by a live process is refused; a stale lock is taken over', async () => {
    const server = await startFakeModelServer(bfclPlayer(data, { multi_turn_base_0: 'gt' }, 'hermes'));
    try {
      const out = join(dir, 'locked');
      mkdirSync(out, { recursive: true });
      // this test process is alive: its pid holds the lock
      writeFileSync(join(out, '.lock'), `${process.pid}\n`);
      expectUserError(
        await seal(evalArgs(server.url, out)),
        new RegExp(`in use by another seal process \\(pid ${process.pid}\\)`),
      );
      expect(existsSync(join(out, 'results.jsonl'))).toBe(false);
      // a pid no process has: the owner is gone
      writeFileSync(join(out, '.lock'), '2147483646\n');
      const r = await seal(evalArgs(server.url, out));
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(join(out, '.lock'))).toBe(false);
      expect(readFileSync(join(out, 'results.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('two processes into one run folder: one runs, the other is refused, no task twice', async () => {
    const server = await startFakeModelServer(bfclPlayer(data, { multi_turn_base_0: 'gt' }, 'hermes'));
    try {
      const out = join(dir, 'twice');
      const [a, b] = await Promise.all([seal(evalArgs(server.url, out)), seal(evalArgs(server.url, out))]);
      const codes = [a.code, b.code].sort();
      // either both ran one after the other (the second finds the task done), or one was refused
      if (codes[1] === 2) expectUserError(a.code === 2 ? a : b, /in use by another seal process/);
      else expect(codes).toEqual([0, 0]);
      expect(readFileSync(join(out, 'results.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('bad flags: --base-url, --out a file, --split ,,,, timeouts, retries and top-p out of range', async () => {
    const aFile = fixture('not-a-folder', 'x');
    const url = 'http://127.0.0.1:9/v1';
    const out = join(dir, 'never');
    expectUserError(await seal(evalArgs('notaurl', out)), /--base-url must be an http\(s\) URL/);
    expectUserError(await seal(evalArgs(url, aFile.path)), /--out .* is a file/);
    aFile.unchanged();
    expectUserError(
      await seal(evalArgs(url, out).map((a) => (a === 'multi_turn_base_0' ? ',,,' : a))),
      /--split ",,," names no task/,
    );
    expectUserError(
      await seal(evalArgs(url, out, '--timeout', '2147484')),
      /--timeout must be a number >= 0\.001 and <= 2147483/,
    );
    expectUserError(
      await seal(evalArgs(url, out, '--retries', '1e9')),
      /--retries must be an integer >= 0 and <= 100/,
    );
    expectUserError(
      await seal(evalArgs(url, out, '--top-p', '1.5')),
      /--top-p must be a number > 0 and <= 1/,
    );
    expectUserError(await seal(evalArgs(url, out, '--top-p', '0')), /--top-p must be a number > 0/);
    expect(existsSync(out)).toBe(false);
  });

  it('a 401 names the flag that exists (--api-key-env)', async () => {
    const server = await startFakeModelServer(() => ({ status: 401 }));
    try {
      const r = await seal(evalArgs(server.url, join(dir, 'unauthorised')));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('--api-key-env');
      expect(r.stderr).not.toMatch(/--api-key[^-]/);
    } finally {
      await server.close();
    }
  });

  it('a broken checkpoint: missing model.bin or tokenizer.json, config.json = null', async () => {
    const base = join(ROOT, 'checkpoints', readdirSync(join(ROOT, 'checkpoints'))[0]!);
    const broken = (name: string, change: (d: string) => void) => {
      const d = join(dir, name);
      cpSync(base, d, { recursive: true });
      change(d);
      return d;
    };
    const run = (ckpt: string) =>
      seal([
        'eval',
        '--suite',
        'mini',
        '--policy',
        'embedded',
        '--model',
        ckpt,
        '--split',
        'test',
        '--out',
        join(dir, `run-${ckpt.length}`),
      ]);
    expectUserError(
      await run(broken('no-model', (d) => rmSync(join(d, 'model.bin')))),
      /model\.bin is missing: the checkpoint is incomplete/,
    );
    expectUserError(
      await run(broken('no-tok', (d) => rmSync(join(d, 'tokenizer.json')))),
      /tokenizer\.json is missing/,
    );
    expectUserError(
      await run(broken('null-config', (d) => writeFileSync(join(d, 'config.json'), 'null'))),
      /config\.json is not a seal pretrain config/,
    );
  });

  it('seal compare: corrupt summary.json or run.json, "-" for a category without tasks, runs told apart', async () => {
    const summary = (n: number) => ({
      categories: {
        base: { n: 2, accuracy: 50 },
        miss_func: { n: 0, accuracy: 0 },
        miss_param: { n, accuracy: 100 },
        long_context: { n: 0, accuracy: 0 },
      },
      average: 75,
    });
    const a = join(dir, 'x', 'out');
    const b = join(dir, 'y', 'out');
    for (const d of [a, b]) {
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, 'summary.json'), JSON.stringify(summary(1)));
    }
    const r = await seal(['compare', a, b]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('| x/out ');
    expect(r.stdout).toContain('| y/out ');
    expect(r.stdout).not.toContain('0.00 (+0.00) | -');
    const row = r.stdout.split('\n').find((l) => l.startsWith('| x/out'))!;
    expect(row.split('|').map((c) => c.trim())).toEqual([
      '',
      'x/out',
      '75.00',
      '50.00',
      '-',
      '100.00',
      '-',
      '',
    ]);
    const corrupt = join(dir, 'corrupt');
    mkdirSync(corrupt, { recursive: true });
    writeFileSync(join(corrupt, 'summary.json'), '{"categories": ');
    expectUserError(await seal(['compare', a, corrupt]), /summary\.json is not valid JSON/);
    writeFileSync(join(corrupt, 'summary.json'), 'null');
    expectUserError(await seal(['compare', a, corrupt]), /is not an evaluation summary/);
    // a corrupt run.json in a run folder that eval resumes
    const runDir = join(dir, 'corrupt-run');
    mkdirSync(runDir, { recursive: true });
    writeFileSync(join(runDir, 'run.json'), '{');
    expectUserError(await seal(evalArgs('http://127.0.0.1:9/v1', runDir)), /run\.json is not a run record/);
  });
});

describe('other commands', () => {
  it('data pull --dest a file', async () => {
    const f = fixture('dest-file', 'keep me');
    expectUserError(await seal(['data', 'pull', 'bfcl', '--dest', f.path]), /--dest .* is a file/);
    f.unchanged();
  });

  it('pretrain --width 65536 and a model too large to hold', async () => {
    const out = join(dir, 'pretrain-never');
    expectUserError(
      await seal(['pretrain', '--out', out, '--width', '65536']),
      /--width must be an integer >= 1 and <= 4096/,
    );
    expectUserError(
      await seal(['pretrain', '--out', out, '--width', '4096', '--layers', '64']),
      /parameters; the embedded policy holds at most/,
    );
    expect(existsSync(out)).toBe(false);
  });

  it("the option parser's own errors exit 2 like every other usage error", async () => {
    expectUserError(await seal(['verify', '--no-such-flag']), /unknown option '--no-such-flag'/);
    expectUserError(await seal(['verify', '--suite', 'nope']), /argument 'nope' is invalid/);
    expectUserError(await seal(['eval', '--model', 'm']), /required option '--out <dir>' not specified/);
  });
});
