/**
 * Settings declared once (util/settings.ts): what `seal pretrain` and `seal train` derive from
 * their schemas. The rebuild command matters most: the model file's header carries it, so a
 * checkpoint is rebuilt bit for bit only from the same words.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PRETRAIN_MODEL,
  modelKeysOf,
  modelOf,
  PRETRAIN_SETTINGS,
  type PretrainConfig,
  pretrainCommand,
  resolvePretrain,
} from '../../src/learner/embedded/pretrain-config.js';
import { TRAIN_SETTINGS } from '../../src/train/config.js';
import { ROOT } from '../support/cli.js';

const resolved = (values: Record<string, unknown>): PretrainConfig =>
  PRETRAIN_SETTINGS.resolve([{ source: 'test', values }]).config;

describe('seal pretrain settings', () => {
  it("write the shipped checkpoint's own command from its recorded settings", () => {
    const shipped = JSON.parse(
      readFileSync(join(ROOT, 'checkpoints', 'embedded-base', 'config.json'), 'utf8'),
    );
    const { model, init: _, ...settings } = shipped.settings;
    const init = /--init (\S+)/.exec(shipped.command)?.[1];
    const out = /--out (\S+)/.exec(shipped.command)?.[1];
    const config = resolved({ ...settings, ...modelKeysOf(model), steps: shipped.steps, init });
    expect(pretrainCommand(config, out!)).toBe(shipped.command);
  });

  it('write what applies: the shape only without --init, the warm-up only with the cosine schedule', () => {
    const fresh = pretrainCommand(resolved({ untied: true, schedule: 'constant', copyDrills: 0.25 }), 'out');
    expect(fresh).toBe(
      'seal pretrain --seed 1 --tasks 400 --steps 1000 --batch-size 8 --lr 0.003 --schedule constant ' +
        '--max-grad-norm 1 --cue-share 0.35 --recovery-share 0.3 --context-weight 0.1 --copy-drills 0.25 ' +
        '--vocab 1024 --context 1024 --layers 4 --heads 4 --width 128 --untied --out out',
    );
    const continued = pretrainCommand(resolved({ init: 'base', untied: true, previousToken: true }), 'out');
    expect(continued).toContain('--warmup 50');
    expect(continued).toMatch(/--init base --previous-token --out out$/);
    expect(continued).not.toMatch(/--width|--untied|--held-out|--workers|--save-every/);
  });

  it('map the model flags onto a model config and back', () => {
    expect(DEFAULT_PRETRAIN_MODEL).toEqual({
      vocabSize: 1024,
      contextLength: 1024,
      nLayer: 4,
      nHead: 4,
      dModel: 128,
      tiedEmbeddings: true,
    });
    const grown = modelOf(resolved({ width: 64, untied: true, previousToken: true }));
    expect(Object.keys(grown).at(-1)).toBe('previousTokenEmbedding');
    expect(grown).toMatchObject({ dModel: 64, tiedEmbeddings: false, previousTokenEmbedding: true });
    expect(modelKeysOf(grown)).toMatchObject({ width: 64, untied: true, previousToken: true });
  });

  it('take what is not given from the --init checkpoint, then the defaults', () => {
    const init = {
      dir: 'ckpt',
      settings: { seed: 7, lr: 0.01, tasks: 12 },
      model: { ...DEFAULT_PRETRAIN_MODEL, dModel: 32, nHead: 2 },
    };
    const config = resolvePretrain({ outDir: 'out', init: 'ckpt', lr: 0.002, copyDrills: 0.5 }, init);
    expect(config).toMatchObject({ seed: 7, tasks: 12, lr: 0.002, copyDrills: 0.5, width: 32, heads: 2 });
    expect(config.batchSize).toBe(8);
    expect(() => resolvePretrain({ outDir: 'out', config: { dModel: 30, nHead: 4 } })).toThrow(
      /--width \(30\) must be a multiple of --heads \(4\)/,
    );
    expect(() => resolvePretrain({ outDir: 'out', lr: -1 })).toThrow(/--lr: lr: Too small/);
  });

  it('read flags in the words of each command: at once with the range, or as the schema checks them', () => {
    expect(PRETRAIN_SETTINGS.fromFlags({ steps: '12', untied: true, schedule: 'constant' })).toEqual({
      steps: 12,
      untied: true,
      schedule: 'constant',
    });
    expect(() => PRETRAIN_SETTINGS.fromFlags({ warmup: '-1' })).toThrow(
      /--warmup must be an integer >= 0, got "-1"/,
    );
    expect(() => PRETRAIN_SETTINGS.fromFlags({ cueShare: '2' })).toThrow(
      /--cue-share must be a number >= 0 and <= 1, got "2"/,
    );
    expect(() => TRAIN_SETTINGS.fromFlags({ rounds: 'x' })).toThrow(/--rounds: "x" is not a number/);
    expect(() => TRAIN_SETTINGS.fromFlags({ budget: 'yes' })).toThrow(
      /--budget: give true or false, not "yes"/,
    );
    expect(TRAIN_SETTINGS.fromFlags({ rounds: '1000000' })).toEqual({ rounds: 1_000_000 });
    expect(PRETRAIN_SETTINGS.placeholder('init')).toBe('dir');
    expect(PRETRAIN_SETTINGS.kind('previousToken')).toBe('switch');
  });
});
