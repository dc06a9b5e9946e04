/**
 * A real `seal train` process killed with SIGKILL in the middle of a run, then resumed, ends with
 * the same record and the same weights as an uninterrupted run with the same seed. Also: a bad
 * config file, and a run folder that is not one, are exit-2 errors that name the problem.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { nativeOps } from '../../src/nn/native-ops.js';
import { buildDist, ROOT, seal } from '../support/cli.js';
import { timeless, timelessLines, tinyTrainFlags } from '../support/tiny-run.js';

const TINY = tinyTrainFlags({
  rounds: 3,
  samplerWorkers: 2,
  lr: 0.001,
  revisit: 0.5,
  lossAgg: 'rollout-mean',
  passes: 2,
});

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

function snapshot(dir: string) {
  const rollouts = readdirSync(join(dir, 'rollouts')).sort();
  return {
    rounds: timelessLines(join(dir, 'rounds.jsonl')),
    rollouts: rollouts.map((f) => timelessLines(join(dir, 'rollouts', f))),
    state: timeless(readFileSync(join(dir, 'state.json'), 'utf8')),
    model: sha(join(dir, 'checkpoints', 'round-0003', 'model.bin')),
    optimizer: sha(join(dir, 'checkpoints', 'round-0003', 'optimizer.bin')),
    validation: readFileSync(join(dir, 'validation', 'round-0003', 'summary.json'), 'utf8'),
  };
}

describe('seal train: kill -9 and resume', { timeout: 600_000 }, () => {
  beforeAll(buildDist, 600_000); // tsc takes minutes on a loaded two-core machine

  it('continues from the last completed round and ends where an uninterrupted run ends', async () => {
    const root = mkdtempSync(join(tmpdir(), 'seal-resume-'));
    // the same folder name in both: the sampler's name carries it
    const plain = join(root, 'plain', 'run');
    const killed = join(root, 'killed', 'run');
    mkdirSync(join(root, 'killed'));
    const a = await seal(['train', '--out', plain, ...TINY]);
    expect(a.stderr).toContain('run folder');
    expect(a.code).toBe(0);
    // --kernels auto: the record names the native kernels when they load (CI installs them)
    const code = JSON.parse(readFileSync(join(plain, 'run.json'), 'utf8')).code;
    const native = nativeOps();
    if (typeof native === 'string') expect(code.trainingKernels).toBeUndefined();
    else expect(code.trainingKernels).toBe(`native (onnxruntime-node ${native.version})`);

    const child = spawn('node', [join(ROOT, 'bin', 'seal.js'), 'train', '--out', killed, ...TINY], {
      stdio: 'ignore',
    });
    const exited = new Promise((r) => child.on('exit', r));
    // kill as soon as round 1 is committed: round 2 is then under way
    const statePath = join(killed, 'state.json');
    while (!existsSync(statePath) || JSON.parse(readFileSync(statePath, 'utf8')).round < 1) {
      if (child.exitCode !== null) throw new Error('the run ended before it could be killed');
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGKILL');
    await exited;
    const mid = JSON.parse(readFileSync(statePath, 'utf8')).round as number;
    expect(mid).toBeLessThan(3);
    expect(existsSync(join(killed, 'finished.json'))).toBe(false);
    const b = await seal(['train', '--resume', killed, '--quiet']);
    expect(b.code).toBe(0);
    expect(b.stderr).toContain(`resuming ${killed} after round ${mid}`);
    expect(snapshot(killed)).toEqual(snapshot(plain));
    for (const dir of [plain, killed])
      expect(JSON.parse(readFileSync(join(dir, 'finished.json'), 'utf8'))).toMatchObject({ rounds: 3 });
  });

  it('a bad config file is an exit-2 error naming the key; --resume of a non-run names the folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seal-badcfg-'));
    const cfg = join(dir, 'c.yaml');
    writeFileSync(cfg, 'rounds: 2\ngroup_size: 4\n');
    const r = await seal(['train', '--config', cfg, '--out', join(dir, 'out')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown key\(s\) group_size/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(dir, 'out'))).toBe(false);
    const bad = await seal(['train', '--rounds', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--rounds: "x" is not a number/);
    const notRun = await seal(['train', '--resume', dir]);
    expect(notRun.code).toBe(2);
    expect(notRun.stderr).toContain(`${dir} is not a seal train run folder`);
  });
});
