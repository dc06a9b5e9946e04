/**
 * Every command's flags come from one declaration (util/settings.ts): the flags of eval, verify,
 * report and data pull are their schemas' keys; the settings several commands share (suite, data
 * directory, sampling, interface modes) are one fragment each, in one wording; numbers go through
 * one parser; a required key is a required flag and a list key a variadic one.
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerCheckpoints } from '../src/cli/checkpoints.js';
import { registerData } from '../src/cli/data.js';
import { registerEval } from '../src/cli/eval.js';
import { registerExperiment } from '../src/cli/experiment.js';
import { addSettingOptions } from '../src/cli/flags.js';
import { registerReport } from '../src/cli/report.js';
import { registerTrain } from '../src/cli/train.js';
import { registerVerify } from '../src/cli/verify.js';
import { EVAL_SETTINGS } from '../src/eval/config.js';
import { TRAIN_SETTINGS } from '../src/train/config.js';
import { EXPERIMENT_SETTINGS } from '../src/train/experiment.js';
import { UsageError } from '../src/util/errors.js';
import { SAMPLING_SHAPE, TEMPERATURE_MAX } from '../src/util/fragments.js';
import { flagOf, Settings } from '../src/util/settings.js';

function program(): Command {
  const p = new Command().exitOverride();
  for (const register of [
    registerEval,
    registerVerify,
    registerReport,
    registerData,
    registerTrain,
    registerExperiment,
    registerCheckpoints,
  ])
    register(p);
  return p;
}
const find = (p: Command, path: string[]): Command =>
  path.reduce((c, name) => c.commands.find((x) => x.name() === name)!, p);
const flagsOf = (c: Command) => c.options.map((o) => o.long!).sort();

describe('flags declared once', () => {
  it('eval, verify, report and data pull have exactly their schemas keys as flags', () => {
    const p = program();
    expect(flagsOf(find(p, ['eval']))).toEqual(EVAL_SETTINGS.keys.map(flagOf).sort());
    // the 19 flags it had when written by hand, the four of --policy tinker (tokenizer, baseModel, renderer, thinking)
    // and --force (start the folder over), τ²'s seven, and --categories with the five the agentic categories read
    expect(EVAL_SETTINGS.keys).toHaveLength(37);
    for (const [path, keys] of [
      [
        ['verify'],
        ['suite', 'results', 'groundTruth', 'split', 'json', 'out', 'diagnose', 'dataDir', 'tau2Data'],
      ],
      [['report'], ['out', 'rollouts', 'episodes', 'maxChars']],
      [
        ['experiment'],
        [
          ...EXPERIMENT_SETTINGS.keys,
          ...TRAIN_SETTINGS.keys.filter((k) => k !== 'method' && k !== 'seed'),
          'config',
          'dataDir',
          'quiet',
        ],
      ],
      [
        ['data', 'pull'],
        ['dest', 'baseUrl'],
      ],
      [
        ['checkpoints', 'list'],
        ['baseUrl', 'retries', 'json'],
      ],
      [
        ['checkpoints', 'ttl'],
        ['baseUrl', 'retries', 'seconds', 'clear'],
      ],
      [
        ['checkpoints', 'delete'],
        ['baseUrl', 'retries', 'yes'],
      ],
      [
        ['checkpoints', 'download'],
        ['baseUrl', 'retries', 'out', 'baseModelDir', 'baseModel', 'raw'],
      ],
      [
        ['checkpoints', 'convert'],
        ['out', 'baseModelDir', 'baseModel'],
      ],
    ] as const)
      expect(flagsOf(find(p, [...path]))).toEqual(keys.map(flagOf).sort());
  });

  it('--data-dir and --suite read the same in every command that has them', () => {
    const p = program();
    const help = (name: string, flag: string) =>
      find(p, [name]).options.find((o) => o.long === flag)?.description;
    const dataDir = ['eval', 'verify', 'train', 'experiment'].map((c) => help(c, '--data-dir'));
    expect(new Set(dataDir).size).toBe(1);
    expect(dataDir[0]).toMatch(/SEAL_BFCL_DATA, else the cache `seal data pull bfcl` fills/);
    // the default differs (train: mini), and seal eval also plays τ²; the wording does not differ
    for (const c of ['eval', 'verify', 'train'])
      expect(help(c, '--suite')).toMatch(
        /^task suite: bfcl \(the BFCL multi-turn data\),? (or )?mini \(built in, synthetic\)/,
      );
  });

  it("experiment's lists: each item checked, named by its place, the defaults all five methods and seeds 1-3", () => {
    expect(EXPERIMENT_SETTINGS.defaults).toEqual({
      methods: ['seal', 'vanilla', 'no-env', 'no-reweight', 'no-closed-loop'],
      seeds: [1, 2, 3],
      out: 'runs/experiment',
    });
    expect(EXPERIMENT_SETTINGS.ofFlags({ methods: ' vanilla, seal ', seeds: '6,7' })).toMatchObject({
      methods: ['vanilla', 'seal'],
      seeds: [6, 7],
    });
    expect(() => EXPERIMENT_SETTINGS.ofFlags({ methods: 'seal,fancy' })).toThrow(
      /^--methods: methods item 2: unknown method "fancy"; choose from seal, vanilla/,
    );
    expect(() => EXPERIMENT_SETTINGS.ofFlags({ seeds: '1,-2' })).toThrow(
      /--seeds: seeds item 2: a seed is an integer >= 0/,
    );
    expect(() => EXPERIMENT_SETTINGS.ofFlags({ seeds: ' , ' })).toThrow(
      /--seeds: seeds: give a comma-separated list/,
    );
  });

  it('the temperature is in [0, 2] for a policy and in [0.05, 2] for training rollouts', () => {
    expect(EVAL_SETTINGS.range('temperature')).toEqual({ min: 0, max: TEMPERATURE_MAX });
    expect(TRAIN_SETTINGS.range('temperature')).toEqual({ min: 0.05, max: TEMPERATURE_MAX });
    expect(() => EVAL_SETTINGS.flagValue('temperature', '2.5')).toThrow(
      /--temperature must be a number >= 0 and <= 2, got "2.5"/,
    );
    expect(EVAL_SETTINGS.flagValue('temperature', '0')).toBe(0);
  });

  it('a required key is a required flag, a list key a variadic one, and gt() an exclusive bound', () => {
    const s = new Settings(
      z.object({ out: z.string().min(1).meta({ placeholder: 'dir' }), ...SAMPLING_SHAPE }).strict(),
      'flag',
    );
    expect(s.required('out')).toBe(true);
    expect(s.required('stop')).toBe(false);
    expect(s.defaults).toEqual({ temperature: 0 });
    expect(s.range('topP')).toEqual({ min: 0, minExclusive: true, max: 1 });
    const cmd = new Command('x').exitOverride().configureOutput({ writeErr: () => {} });
    addSettingOptions(cmd, s);
    cmd.action(() => {});
    expect(() => cmd.parse([], { from: 'user' })).toThrow(/required option '--out <dir>' not specified/);
    cmd.parse(['--out', 'o', '--stop', 'a', 'b', '--top-p', '0.5'], { from: 'user' });
    expect(s.ofFlags(cmd.opts())).toEqual({ out: 'o', stop: ['a', 'b'], topP: 0.5, temperature: 0 });
    expect(() => s.ofFlags({ out: 'o', topP: '0' })).toThrow(UsageError);
    expect(() => s.ofFlags({ out: 'o', maxTokens: '1.5' })).toThrow(/--max-tokens must be an integer >= 1/);
  });
});
