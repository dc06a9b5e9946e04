import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDist, ROOT, seal } from '../support/cli.js';

const TINY = ['--width', '32', '--layers', '1', '--heads', '2', '--vocab', '400', '--context', '768'];

describe('seal pretrain and seal eval --policy embedded (real processes, compiled code)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'seal-embedded-cli-'));
  const ckpt = join(dir, 'ckpt');
  beforeAll(async () => {
    await buildDist();
  });

  it('pretrains a tiny checkpoint on two gradient workers, resumes it, and evaluates it', async () => {
    const base = ['pretrain', '--out', ckpt, '--tasks', '6', '--batch-size', '4', '--workers', '2', ...TINY];
    const first = await seal([...base, '--steps', '2']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/2 steps \(2 this run, resumed from 0\)/);
    const again = await seal([...base, '--steps', '3']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/3 steps \(1 this run, resumed from 2\)/);
    const config = JSON.parse(readFileSync(join(ckpt, 'config.json'), 'utf8'));
    expect(config.command).toContain('seal pretrain --seed 1 --tasks 6');
    expect(config.stepsDone).toBe(3);

    const out = join(dir, 'eval');
    const ids = 'mini_base_0,mini_miss_param_0';
    const r = await seal([
      'eval',
      '--suite',
      'mini',
      '--policy',
      'embedded',
      '--model',
      ckpt,
      '--split',
      ids,
      '--max-tokens',
      '12',
      '--out',
      out,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\| Average \| Base \| Miss Func \| Miss Param \| Long Context \|/);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(summary.categories.base.n).toBe(1);
    expect(summary.categories.miss_param.n).toBe(1);
    const verified = await seal([
      'verify',
      '--suite',
      'mini',
      '--split',
      ids,
      '--results',
      join(out, 'bfcl_result.jsonl'),
      '--json',
    ]);
    expect(Object.keys(JSON.parse(verified.stdout))).toEqual(Object.keys(summary));
    const runConfig = JSON.parse(readFileSync(join(out, 'run.json'), 'utf8'));
    expect(runConfig.format).toBe('compact');
    expect(runConfig.model).toMatch(/^embedded:ckpt@[0-9a-f]{12}$/);
  });

  it('evaluates the shipped base checkpoint by default, and its config rebuilds it', async () => {
    const out = join(dir, 'base');
    const r = await seal([
      'eval',
      '--suite',
      'mini',
      '--policy',
      'embedded',
      '--split',
      'mini_base_3',
      '--out',
      out,
    ]);
    expect(r.code).toBe(0);
    const runConfig = JSON.parse(readFileSync(join(out, 'run.json'), 'utf8'));
    expect(runConfig.model).toMatch(/^embedded:embedded-base@[0-9a-f]{12}$/);
    const config = JSON.parse(
      readFileSync(join(ROOT, 'checkpoints', 'embedded-base', 'config.json'), 'utf8'),
    );
    expect(config.command).toMatch(/^seal pretrain --seed \d+ --tasks \d+ --steps \d+ /);
    expect(config.stepsDone).toBe(config.steps);
    // made in stages: each command continues (--init) what the one before it wrote (--out)
    const chain: string[] = [
      ...(config.lineage ?? []).map((l: { command: string }) => l.command),
      config.command,
    ];
    const flag = (cmd: string, name: string) => cmd.match(new RegExp(`--${name} (\\S+)`))?.[1];
    for (let i = 1; i < chain.length; i++) expect(flag(chain[i]!, 'init')).toBe(flag(chain[i - 1]!, 'out'));
    expect(flag(chain[0]!, 'init')).toBeUndefined();
    // the last stage wrote it (into checkpoints/embedded-base, or a run folder copied there)
    expect(flag(config.command, 'out')).toMatch(/^(checkpoints\/embedded-base|runs\/[\w.-]+)$/);
    // the policy's calls reach the tools (its name, with '@' and a digest, once broke every one)
    const results = readFileSync(join(out, 'results.jsonl'), 'utf8');
    expect(results).toContain('"calls"');
    expect(results).not.toMatch(/operator '@'|invalid decimal literal/);
  });

  it('refuses bad flags and damaged checkpoints with a message saying what to do', async () => {
    const bad = await seal(['pretrain', '--out', join(dir, 'x'), '--width', '30', '--heads', '4']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--width \(30\) must be a multiple of --heads \(4\)/);
    const steps = await seal(['pretrain', '--out', join(dir, 'x'), '--steps', 'many']);
    expect(steps.stderr).toMatch(/--steps must be an integer >= 1 and <= 1000000000, got "many"/);

    const native = await seal([
      'eval',
      '--suite',
      'mini',
      '--policy',
      'embedded',
      '--model',
      ckpt,
      '--format',
      'native',
      '--out',
      join(dir, 'n'),
    ]);
    expect(native.code).toBe(2);
    expect(native.stderr).toMatch(/use --format compact/);

    const missing = await seal([
      'eval',
      '--suite',
      'mini',
      '--policy',
      'embedded',
      '--model',
      join(dir, 'nowhere'),
      '--out',
      join(dir, 'm'),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/is not an embedded-policy checkpoint/);

    const bytes = readFileSync(join(ckpt, 'model.bin'));
    const mid = bytes.length >> 1;
    bytes[mid] = bytes[mid]! ^ 0xff;
    writeFileSync(join(ckpt, 'model.bin'), bytes);
    const corrupt = await seal([
      'eval',
      '--suite',
      'mini',
      '--policy',
      'embedded',
      '--model',
      ckpt,
      '--out',
      join(dir, 'c'),
    ]);
    expect(corrupt.code).toBe(2);
    expect(corrupt.stderr).toMatch(/model\.bin: cannot load embedded model weights: checksum mismatch/);
    expect(corrupt.stderr).toMatch(/Rebuild it with the command in config\.json: seal pretrain/);
  });
});
