/**
 * A mistyped flag, command or config key, through a real `seal` process: the error, a "did you
 * mean", one line naming the help, exit 2; never the whole help, which would scroll the error off a
 * terminal. No BFCL data needed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CATEGORIES } from '../src/envs/bfcl/data/tasks.js';
import { RUN_FORMAT } from '../src/train/record.js';
import { buildDist, ROOT, seal } from './support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'seal-usage-'));

// built first: a rebuild that bin/seal.js starts itself would add its own line to the errors below
beforeAll(async () => {
  await buildDist();
});

it('a misspelled flag: the error, the suggestion and a pointer to --help, in three lines', async () => {
  const r = await seal(['train', '--round', '2']);
  expect(r.code).toBe(2);
  expect(r.stderr.trim().split('\n')).toEqual([
    "error: unknown option '--round'",
    '(Did you mean --rounds?)',
    '(seal train --help lists every flag)',
  ]);
  expect(r.stdout).toBe('');
});

it('a misspelled command, and one of a command group', async () => {
  const top = await seal(['trian']);
  expect(top.code).toBe(2);
  expect(top.stderr).toMatch(
    /unknown command 'trian'\n\(Did you mean train\?\)\n\(seal --help lists the commands/,
  );
  const sub = await seal(['checkpoints', 'lst']);
  expect(sub.code).toBe(2);
  expect(sub.stderr).toMatch(/\(Did you mean list\?\)\n\(seal checkpoints --help lists its commands\)/);
  for (const r of [top, sub]) expect(r.stderr).not.toMatch(/Usage:|Options:/);
});

it('a misspelled config key: the suggestion, the file and key named, nothing written', async () => {
  const cfg = join(dir, 'typo.yaml');
  writeFileSync(cfg, 'rounds: 2\nrond: 3\ngroup_size: 4\n');
  const out = join(dir, 'run');
  const r = await seal(['train', '--config', cfg, '--out', out]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(
    `${cfg}: unknown key(s) rond (did you mean rounds?), group_size (did you mean groupSize?)`,
  );
  // every unknown key had a suggestion: no list of all fifty keys
  expect(r.stderr).not.toContain('the keys are');
  expect(r.stderr).toContain('--help');
  expect(r.stderr.trim().split('\n').length).toBeLessThanOrEqual(2);
  expect(existsSync(out)).toBe(false);

  writeFileSync(cfg, 'zzzq: 1\n');
  const none = await seal(['train', '--config', cfg, '--out', out]);
  expect(none.code).toBe(2);
  // nothing close: no guess, the keys listed instead
  expect(none.stderr).toMatch(/unknown key\(s\) zzzq; the keys are: method, seed, suite, /);
  // one key guessed, one not: the guess, and the keys listed for the other
  writeFileSync(cfg, 'rond: 3\nzzzq: 1\n');
  const mixed = await seal(['train', '--config', cfg, '--out', out]);
  expect(mixed.code).toBe(2);
  expect(mixed.stderr).toMatch(
    /unknown key\(s\) rond \(did you mean rounds\?\), zzzq; the keys are: method, seed, suite, /,
  );
  expect(existsSync(out)).toBe(false);
});

it("a misspelled flag of a command in a group, and of seal eval: the suggestion and that command's help", async () => {
  const leaf = await seal(['checkpoints', 'list', 'x', '--jsn']);
  expect(leaf.code).toBe(2);
  expect(leaf.stderr.trim().split('\n')).toEqual([
    "error: unknown option '--jsn'",
    '(Did you mean --json?)',
    '(seal checkpoints list --help lists every flag)',
  ]);
  const ev = await seal(['eval', '--splt', 'test', '--out', join(dir, 'never')]);
  expect(ev.code).toBe(2);
  expect(ev.stderr).toContain('(Did you mean --split?)\n(seal eval --help lists every flag)');
});

it('--version and -V: the package version, and in a checkout the commit; exit 0', async () => {
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string })
    .version;
  // a scratch copy without .git (the mutation check's) names no commit
  const commit = existsSync(join(ROOT, '.git'))
    ? execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT }).toString().trim().slice(0, 12)
    : undefined;
  for (const flag of ['--version', '-V']) {
    const r = await seal([flag]);
    expect(r.code, r.stderr).toBe(0);
    const line = r.stdout.trim();
    expect(line.split('\n')).toHaveLength(1);
    if (commit)
      expect(line).toMatch(new RegExp(`^seal ${version.replaceAll('.', '\\.')} \\(commit ${commit}[,)]`));
    else expect(line).toBe(`seal ${version}`);
  }
});

describe('seal compare of train runs', () => {
  /** a train run folder as `seal train` leaves it, reduced to what compare reads */
  function trainRun(path: string, config: Record<string, unknown>, accuracy?: number): string {
    mkdirSync(path, { recursive: true });
    writeFileSync(
      join(path, 'run.json'),
      JSON.stringify({ format: RUN_FORMAT, version: 1, suite: 'mini', config: { suite: 'mini', ...config } }),
    );
    if (accuracy === undefined) return path;
    const evaluation = join(path, 'eval-final');
    mkdirSync(evaluation);
    const categories = Object.fromEntries(CATEGORIES.map((c) => [c, { n: 2, accuracy }]));
    writeFileSync(join(evaluation, 'summary.json'), JSON.stringify({ categories, average: accuracy }));
    return path;
  }

  it('names each run by its folder, not by eval-final', async () => {
    const a = trainRun(join(dir, 'a', 'seal-s1'), { evalFinal: true }, 50);
    const b = trainRun(join(dir, 'b', 'vanilla-s1'), { evalFinal: true }, 25);
    const r = await seal(['compare', a, b]);
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout.split('\n').filter((l) => l.startsWith('| '));
    expect(rows.map((l) => l.split('|')[1]!.trim())).toEqual(['run', 'seal-s1', 'vanilla-s1']);
    expect(r.stdout).toContain('Differences in points against seal-s1.');
    expect(r.stdout).not.toContain('eval-final');
  });

  it('a run without its final evaluation, and a folder that is not there, each said as such', async () => {
    const done = trainRun(join(dir, 'c', 'done'), { evalFinal: true }, 50);
    const skipped = trainRun(join(dir, 'c', 'no-final'), { evalFinal: false });
    mkdirSync(join(skipped, 'checkpoints', 'round-0002'), { recursive: true });
    const r = await seal(['compare', done, skipped]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${skipped} is a seal train run made with --eval-final false`);
    expect(r.stderr).toContain(
      `seal eval --suite mini --policy embedded --model ${join(skipped, 'checkpoints', 'round-0002')}`,
    );

    const unfinished = trainRun(join(dir, 'c', 'killed'), { evalFinal: true });
    const k = await seal(['compare', done, unfinished]);
    expect(k.code).toBe(2);
    expect(k.stderr).toContain(`seal train --resume ${unfinished}`);

    const missing = join(dir, 'c', 'typo');
    const m = await seal(['compare', done, missing]);
    expect(m.code).toBe(2);
    expect(m.stderr).toContain(`${missing} does not exist`);
    expect(m.stderr).not.toContain('summary.json');
  });
});
