/**
 * The config files under configs/: every one is valid for its command, the train default file is
 * the defaults, the pre-training stages rebuild the shipped base (each stage's file gives the
 * command its checkpoint recorded), and a bad file stops `seal` with exit 2 naming file and key.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  optionsOfFlags,
  PRETRAIN_SETTINGS,
  pretrainCommand,
  resolvePretrain,
} from '../src/learner/embedded/pretrain-config.js';
import { resolveConfig, TRAIN_DEFAULTS, TRAIN_SETTINGS } from '../src/train/config.js';
import { buildDist, ROOT, seal } from './support/cli.js';

const CONFIGS = join(ROOT, 'configs');
const yamls = (sub: string) =>
  readdirSync(join(CONFIGS, sub))
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => join(CONFIGS, sub, f));

describe('configs/train', () => {
  it('every preset is a valid seal train config', () => {
    const files = yamls('train');
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const f of files) expect(() => resolveConfig(f, {}), f).not.toThrow();
  });

  it('default.yaml states every default, and nothing else', () => {
    const file = join(CONFIGS, 'train', 'default.yaml');
    const values = TRAIN_SETTINGS.readFile(file);
    const defaults = Object.fromEntries(Object.entries(TRAIN_DEFAULTS).filter(([, v]) => v !== undefined));
    expect(values).toEqual(defaults);
    expect(resolveConfig(file, {}).config).toEqual(TRAIN_DEFAULTS);
  });

  it('the BFCL preset runs the official step limit on the BFCL suite; flags override it', () => {
    const file = join(CONFIGS, 'train', 'bfcl-method.yaml');
    const { config, overrides } = resolveConfig(file, { rounds: 2 });
    expect(config).toMatchObject({
      suite: 'bfcl',
      maxSteps: 20,
      anchorCoef: 0,
      rounds: 2,
      tasksPerRound: 32,
    });
    expect(overrides.rounds).toBe(2);
  });
});

describe('configs/pretrain', () => {
  const recorded = JSON.parse(
    readFileSync(join(ROOT, 'checkpoints', 'embedded-base', 'config.json'), 'utf8'),
  ) as {
    command: string;
    lineage: { command: string }[];
  };
  const commands = [...recorded.lineage.map((l) => l.command), recorded.command];

  it('the five stages give, stage by stage, the commands the shipped base recorded', () => {
    const files = yamls('pretrain').filter((f) => /\/[1-5]-[^/]+$/.test(f));
    expect(files).toHaveLength(5);
    files.forEach((file, i) => {
      const out = commands[i]!.match(/--out (\S+)$/)![1]!;
      const config = resolvePretrain({ ...optionsOfFlags(PRETRAIN_SETTINGS.readFile(file)), outDir: out });
      expect(pretrainCommand(config, out), file).toBe(commands[i]);
      expect(readFileSync(file, 'utf8'), file).toContain(`--out ${out}`);
    });
  });
});

describe('configs/pretrain: the base with a habit', () => {
  const dir = join(ROOT, 'checkpoints', 'embedded-guesser');
  const recorded = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as {
    command: string;
    lineage: { command: string }[];
    settings: { habit?: string };
  };
  const base = JSON.parse(
    readFileSync(join(ROOT, 'checkpoints', 'embedded-base', 'config.json'), 'utf8'),
  ) as {
    command: string;
    lineage: { command: string }[];
  };

  it("is the shipped base continued by its stage file, with the base's lineage before it", () => {
    const file = join(CONFIGS, 'pretrain', '6-guess-missing-value.yaml');
    const out = 'checkpoints/embedded-guesser';
    const config = resolvePretrain({ ...optionsOfFlags(PRETRAIN_SETTINGS.readFile(file)), outDir: out });
    expect(pretrainCommand(config, out)).toBe(recorded.command);
    expect(recorded.command).toContain('--habit guess-missing-value');
    expect(recorded.settings.habit).toBe('guess-missing-value');
    expect(recorded.lineage.map((l) => l.command)).toEqual([
      ...base.lineage.map((l) => l.command),
      base.command,
    ]);
  });
});

describe('--config through the real seal process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'seal-configs-'));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  beforeAll(async () => {
    await buildDist();
  }, 600_000);

  const expectUsage = (r: Awaited<ReturnType<typeof seal>>, message: RegExp) => {
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/^\s+at /m);
  };

  it('pretrain: an unknown key or a bad value names the file and the key; nothing is written', async () => {
    const out = join(dir, 'never');
    const unknown = file('unknown.yaml', 'steps: 3\nbatchsize: 4\n');
    expectUsage(
      await seal(['pretrain', '--config', unknown, '--out', out]),
      new RegExp(`${unknown}: unknown key\\(s\\) batchsize`),
    );
    const bad = file('bad.yaml', 'steps: 0\n');
    expectUsage(await seal(['pretrain', '--config', bad, '--out', out]), new RegExp(`${bad}: steps: `));
    expectUsage(
      await seal(['pretrain', '--config', join(dir, 'missing.yaml'), '--out', out]),
      /config file not found/,
    );
    expect(readdirSync(dir)).not.toContain('never');
  });

  it('train: a bad value in a preset copy names the file and the key', async () => {
    const bad = file('train-bad.yaml', 'suite: mini\ntemperature: 5\n');
    expectUsage(
      await seal(['train', '--config', bad, '--out', join(dir, 'run')]),
      new RegExp(`${bad}: temperature: `),
    );
  });

  it('pretrain: flags override the file (a two-step run from a stage file)', async () => {
    const out = join(dir, 'tiny');
    const stage = file(
      'tiny.yaml',
      'seed: 3\ntasks: 6\nsteps: 50\nbatchSize: 2\nvocab: 400\ncontext: 768\nlayers: 1\nheads: 2\nwidth: 32\nheldOut: 0\n',
    );
    const r = await seal([
      'pretrain',
      '--config',
      stage,
      '--steps',
      '2',
      '--out',
      out,
      '--quiet',
      '--kernels',
      'wasm',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const written = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')) as {
      command: string;
      stepsDone: number;
    };
    expect(written.stepsDone).toBe(2);
    expect(written.command).toContain('--seed 3 --tasks 6 --steps 2 --batch-size 2');
  }, 120_000);
});
