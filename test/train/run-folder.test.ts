/**
 * The run folder of `seal train` as a transaction, tried as a user would damage it: each case
 * makes the damage, runs the real command, and checks the exit code, the message (no stack trace)
 * and that every file of the folder is byte for byte what it was (a refusal changes nothing).
 */
import { spawn } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDist, ROOT, run, seal } from '../support/cli.js';
import { fileHashes, tinyTrainFlags } from '../support/tiny-run.js';

/** the smallest run that still has every kind of file: 2 rounds, a validation, no full evaluations */
const TINY = tinyTrainFlags({ validateEvery: 1, kernels: 'wasm' });

type Run = { code: number; stdout: string; stderr: string };

/** the unprivileged user a root test process runs a permission case as */
const NOBODY = 65534;

/** `seal` as another user (the test process must be root to switch) */
async function sealAs(uid: number, args: readonly string[], env: Record<string, string>): Promise<Run> {
  try {
    const r = await run('node', [join(ROOT, 'bin', 'seal.js'), ...args], {
      uid,
      gid: uid,
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/**
 * whether `uid` can run this repository's `seal` (a clone under a folder only root may enter
 * cannot be run as another user: then the case it is needed for says so and is left out)
 */
async function canRunAs(uid: number): Promise<boolean> {
  try {
    await run('node', ['-e', `require('fs').accessSync(${JSON.stringify(join(ROOT, 'bin', 'seal.js'))})`], {
      uid,
      gid: uid,
    });
    return true;
  } catch {
    return false;
  }
}

function expectUserError(r: Run, message: RegExp): void {
  expect(r.code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(2);
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toMatch(/^\s+at .+[:(]/m);
  expect(r.stderr).not.toMatch(/TypeError|node:internal/);
}

const root = mkdtempSync(join(tmpdir(), 'seal-runfolder-'));
let done = ''; // a finished run
let half = ''; // a run killed after round 1 of 2
let n = 0;
/** a fresh copy of `src` to damage */
function copy(src: string): string {
  const d = join(root, `case-${++n}`, 'run');
  cpSync(src, d, { recursive: true });
  return d;
}

/** `seal train --resume dir` after `damage`: exit 2 matching `message`, the folder unchanged */
async function refused(src: string, damage: (dir: string) => void, message: RegExp): Promise<string> {
  const dir = copy(src);
  damage(dir);
  const before = fileHashes(dir);
  const r = await seal(['train', '--resume', dir]);
  expectUserError(r, message);
  expect(fileHashes(dir)).toEqual(before);
  return r.stderr;
}

const editJson = (path: string, edit: (v: Record<string, unknown>) => unknown) =>
  writeFileSync(path, JSON.stringify(edit(JSON.parse(readFileSync(path, 'utf8')))));

describe('seal train: the run folder', { timeout: 600_000 }, () => {
  beforeAll(async () => {
    await buildDist();
    done = join(root, 'done', 'run');
    const r = await seal(['train', '--out', done, ...TINY]);
    expect(r.code, r.stderr).toBe(0);
    // killed once round 1 is committed and its line appended
    half = join(root, 'half', 'run');
    mkdirSync(join(root, 'half'));
    const child = spawn('node', [join(ROOT, 'bin', 'seal.js'), 'train', '--out', half, ...TINY], {
      stdio: 'ignore',
    });
    const exited = new Promise((res) => child.on('exit', res));
    const rounds = join(half, 'rounds.jsonl');
    while (!existsSync(rounds) || readFileSync(rounds, 'utf8').split('\n').length < 2) {
      if (child.exitCode !== null) throw new Error('the run ended before it could be killed');
      await new Promise((res) => setTimeout(res, 10));
    }
    child.kill('SIGKILL');
    await exited;
    expect(JSON.parse(readFileSync(join(half, 'state.json'), 'utf8')).round).toBe(1);
    // what the kill left of a round in flight is a resume's to redo; the cases start from a clean cut
    rmSync(join(half, 'rollouts', 'round-0002.jsonl'), { force: true });
    rmSync(join(half, 'checkpoints', 'round-0002'), { recursive: true, force: true });
    rmSync(join(half, 'validation', 'round-0002'), { recursive: true, force: true });
    rmSync(join(half, '.lock'), { force: true });
  }, 900_000);

  it('--resume of a finished run changes nothing, not even the report', async () => {
    const dir = copy(done);
    const before = fileHashes(dir);
    const r = await seal(['train', '--resume', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('is complete (2 rounds); nothing to do');
    expect(fileHashes(dir)).toEqual(before);
  });

  it('each round records the code it ran on', () => {
    const manifest = JSON.parse(readFileSync(join(done, 'run.json'), 'utf8'));
    expect(manifest.code.sources).toMatch(/^[0-9a-f]{24}$/);
    const rounds = readFileSync(join(done, 'rounds.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    for (const r of rounds)
      expect(r.code).toMatchObject({ version: manifest.code.version, sources: manifest.code.sources });
  });

  it('--out a file, a path under a file, a folder it cannot write, /proc: exit 2 before any work', async () => {
    const file = join(root, 'a-file');
    writeFileSync(file, 'keep me');
    expectUserError(await seal(['train', '--out', file, ...TINY]), /--out .*a-file is a file; give a folder/);
    expectUserError(
      await seal(['train', '--out', join(file, 'run'), ...TINY]),
      /a-file is a file, not a folder; give a path under a folder/,
    );
    expect(readFileSync(file, 'utf8')).toBe('keep me');
    if (process.platform === 'linux') {
      const t0 = Date.now();
      expectUserError(await seal(['train', '--out', '/proc/x/run', ...TINY]), /on the proc file system/);
      expect(Date.now() - t0).toBeLessThan(60_000);
    }
    // a folder it cannot write: root writes anywhere, so as root the seal process runs as nobody
    const open = mkdtempSync(join(tmpdir(), 'seal-perm-'));
    chmodSync(open, 0o755);
    const ro = join(open, 'read-only');
    mkdirSync(ro, { mode: 0o555 });
    const args = ['train', '--out', join(ro, 'run'), ...TINY];
    const asRoot = process.getuid?.() === 0;
    if (asRoot && !(await canRunAs(NOBODY)))
      console.warn(
        `run-folder test: the unwritable-folder case was skipped: as root it runs seal as nobody, who cannot read ${ROOT} (a folder on its path is closed to others)`,
      );
    else {
      expectUserError(
        asRoot ? await sealAs(NOBODY, args, { HOME: open }) : await seal(args),
        /cannot write in .*read-only \(permission denied\)/,
      );
      expect(readdirSync(ro)).toEqual([]);
    }
    rmSync(open, { recursive: true, force: true });
    // a run folder given as --out of a new run
    const before = fileHashes(done);
    expectUserError(
      await seal(['train', '--out', done, ...TINY]),
      /already holds a seal train run; continue it with seal train --resume/,
    );
    expect(fileHashes(done)).toEqual(before);
  });

  it('a folder in use by a live process is refused; a lock left by a dead one is taken over', async () => {
    // this test's own process stands for a live seal train writing the folder
    await refused(
      half,
      (d) => writeFileSync(join(d, '.lock'), `${process.pid}\n`),
      new RegExp(`in use by another seal process \\(pid ${process.pid}\\)`),
    );
    const dir = copy(half);
    writeFileSync(join(dir, '.lock'), '2147483646\n'); // no such process
    const r = await seal(['train', '--resume', dir, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(dir, '.lock'))).toBe(false);
    const lines = readFileSync(join(dir, 'rounds.jsonl'), 'utf8').trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).round)).toEqual([1, 2]);
  });

  it('the rounds.jsonl line torn by a kill in its append: resume writes it whole, the next after it', async () => {
    const dir = copy(half);
    const p = join(dir, 'rounds.jsonl');
    const line = readFileSync(p, 'utf8').trimEnd();
    writeFileSync(p, line.slice(0, line.length >> 1));
    const r = await seal(['train', '--resume', dir, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    // every line whole (a line appended behind the torn one would not parse)
    const lines = readFileSync(p, 'utf8').trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).round)).toEqual([1, 2]);
  });

  it('state.json deleted: refused, naming the recorded rounds, instead of starting over', async () => {
    const msg = await refused(
      done,
      (d) => rmSync(join(d, 'state.json')),
      /state\.json is missing, but rounds\.jsonl records round\(s\) 1-2/,
    );
    expect(msg).toContain('nothing was changed');
    expect(msg).toMatch(/seal train --out NEW_FOLDER/);
  });

  it('a middle line of rounds.jsonl lost, a round twice, a line past the state: refused', async () => {
    const drop = (d: string, keep: (i: number) => boolean) => {
      const p = join(d, 'rounds.jsonl');
      const ls = readFileSync(p, 'utf8').trim().split('\n');
      writeFileSync(p, `${ls.filter((_, i) => keep(i)).join('\n')}\n`);
    };
    await refused(done, (d) => drop(d, (i) => i !== 0), /rounds\.jsonl lacks round\(s\) 1/);
    await refused(
      half,
      (d) => {
        const p = join(d, 'rounds.jsonl');
        writeFileSync(p, readFileSync(p, 'utf8').repeat(2));
      },
      /records round\(s\) 1 more than once/,
    );
    await refused(
      half,
      (d) => writeFileSync(join(d, 'rounds.jsonl'), readFileSync(join(done, 'rounds.jsonl'))),
      /records round\(s\) 2, which state\.json \(round 1\) does not/,
    );
    await refused(
      done,
      (d) => {
        const p = join(d, 'rounds.jsonl');
        writeFileSync(p, readFileSync(p, 'utf8').replace(/^\{"round":1,/, '{"round":1 ,,'));
      },
      /line 1 of rounds\.jsonl is damaged/,
    );
  });

  it('run.json with an invalid config, or without its base and code: refused, no stack trace', async () => {
    await refused(
      half,
      (d) =>
        editJson(join(d, 'run.json'), (m) => ({ ...m, config: { ...(m.config as object), rounds: 'x' } })),
      /run\.json \(config\): rounds: .*number.*recorded config is not one seal train accepts/,
    );
    await refused(
      half,
      (d) => editJson(join(d, 'run.json'), ({ base: _b, code: _c, ...m }) => m),
      /run\.json is damaged \(code: .*base: /,
    );
    await refused(
      half,
      (d) => writeFileSync(join(d, 'run.json'), '{"format": "seal-train-run"'),
      /run\.json is not valid JSON/,
    );
    await refused(
      half,
      (d) =>
        editJson(join(d, 'run.json'), (m) => ({
          ...m,
          config: { ...(m.config as object), wMin: 3, wMax: 2 },
        })),
      /wMin \(3\) must not exceed wMax \(2\)/,
    );
  });

  it('a missing or foreign checkpoint, missing rollouts, a broken state: refused with the right advice', async () => {
    const msg = await refused(
      half,
      (d) => rmSync(join(d, 'checkpoints', 'round-0001'), { recursive: true }),
      /checkpoints\/round-0001 \(the weights and optimiser state after round 1, which the run continues from\) is missing/,
    );
    expect(msg).not.toMatch(/seal pretrain/);
    await refused(
      half,
      (d) => rmSync(join(d, 'checkpoints', 'round-0001', 'optimizer.bin')),
      /checkpoints\/round-0001 .* is missing in part/,
    );
    await refused(
      half,
      (d) => writeFileSync(join(d, 'checkpoints', 'round-0001', 'model.bin'), 'x'),
      /checkpoints\/round-0001 is damaged/,
    );
    await refused(
      half,
      (d) => rmSync(join(d, 'rollouts', 'round-0001.jsonl')),
      /the rollouts of round\(s\) 1 are missing/,
    );
    await refused(
      half,
      (d) => {
        const p = join(d, 'rollouts', 'round-0001.jsonl');
        writeFileSync(p, readFileSync(p, 'utf8').split('\n').slice(1).join('\n'));
      },
      /rollouts\/round-0001\.jsonl holds 3 readable rollouts of round 1 in 3 lines; the round had 4/,
    );
    await refused(
      half,
      (d) => cpSync(join(done, 'rollouts', 'round-0002.jsonl'), join(d, 'rollouts', 'round-0007.jsonl')),
      /rollouts\/round-0007\.jsonl is extra/,
    );
    await refused(half, (d) => writeFileSync(join(d, 'state.json'), '{'), /state\.json is not valid JSON/);
    await refused(
      half,
      (d) => editJson(join(d, 'state.json'), (s) => ({ ...s, round: 2 })),
      /names checkpoint checkpoints\/round-0001, not checkpoints\/round-0002/,
    );
    await refused(
      done,
      (d) => rmSync(join(d, 'validation', 'round-0001', 'summary.json')),
      /validation\/round-0001\/summary\.json .* is missing/,
    );
    await refused(
      done,
      (d) =>
        editJson(join(d, 'state.json'), (s) => ({
          ...s,
          lastRound: { ...(s.lastRound as object), round: 1 },
        })),
      /holds the record of round 1, not of round 2/,
    );
  });

  it('--resume after the code changed warns, and run.json and the new rounds say so', async () => {
    const dir = copy(half);
    // the run as if it had been started by other code
    editJson(join(dir, 'run.json'), (m) => ({
      ...m,
      code: { ...(m.code as object), sources: 'f'.repeat(24), git: '0'.repeat(40) },
    }));
    const r = await seal(['train', '--resume', dir, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /warning: the code changed since this run last ran \(.*commit 000000000000.*sources ffffffffffff.*\): rounds after 1 run on the new code/,
    );
    const m = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'));
    expect(m.codeChanges).toHaveLength(1);
    expect(m.codeChanges[0]).toMatchObject({ afterRound: 1 });
    const now = m.codeChanges[0].code.sources;
    expect(now).not.toBe('f'.repeat(24));
    const rounds = readFileSync(join(dir, 'rounds.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rounds.at(-1).code.sources).toBe(now);
  });

  it('Ctrl-C says how to continue, and the resumed run finishes', async () => {
    const dir = join(root, 'interrupted', 'run');
    const child = spawn('node', [join(ROOT, 'bin', 'seal.js'), 'train', '--out', dir, ...TINY], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (b) => {
      stderr += b;
    });
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    while (!existsSync(join(dir, 'run.json'))) {
      if (child.exitCode !== null) throw new Error(`the run ended before it could be interrupted: ${stderr}`);
      await new Promise((res) => setTimeout(res, 10));
    }
    await new Promise((res) => setTimeout(res, 500));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain(`continue with: seal train --resume ${dir}`);
    expect(existsSync(join(dir, '.lock'))).toBe(false);
    const r = await seal(['train', '--resume', dir, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(join(dir, 'finished.json')).isFile()).toBe(true);
  });
});

describe('seal compare: only runs of one suite and split', () => {
  it('refuses a mini run against a BFCL run, and different splits, naming each', async () => {
    const summary = {
      categories: {
        base: { n: 1, accuracy: 100 },
        miss_func: { n: 1, accuracy: 0 },
        miss_param: { n: 1, accuracy: 0 },
        long_context: { n: 1, accuracy: 0 },
      },
      average: 25,
    };
    const evalRun = (name: string, suite: string, split: string) => {
      const d = join(root, 'compare', name);
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, 'summary.json'), JSON.stringify(summary));
      writeFileSync(join(d, 'run.json'), JSON.stringify({ suite, split, model: 'm', format: 'compact' }));
      return d;
    };
    const mini = evalRun('mini', 'mini', 'test');
    const bfcl = evalRun('bfcl', 'bfcl', 'test');
    const train = evalRun('mini-train', 'mini', 'train');
    expectUserError(
      await seal(['compare', mini, bfcl]),
      /different suites.*mini \(suite mini\), .*bfcl \(suite bfcl\)/,
    );
    expectUserError(
      await seal(['compare', mini, train]),
      /different splits.*mini \(split test\), .*mini-train \(split train\)/,
    );
    // a training run is compared by its final evaluation: the suite is its run.json's
    expectUserError(await seal(['compare', done, bfcl]), /different suites.*done\/run \(suite mini\)/);
    const ok = await seal(['compare', mini, evalRun('mini2', 'mini', 'test')]);
    expect(ok.code, ok.stderr).toBe(0);
  });
});
