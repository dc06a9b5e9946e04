/**
 * The settings of `seal pretrain`, declared once: every key with its type, bounds, default and help
 * lives in one zod schema, and the flags, their validation, the defaults, the `--help` text, the
 * layering over an `--init` checkpoint and the command that rebuilds a checkpoint all come from it
 * (util/settings.ts).
 *
 * A key plays one of three parts. The model's shape (`MODEL_FLAGS`): with `--init` it is the
 * checkpoint's own. How a run goes (`RUN_KEYS`: steps, checkpoints, threads, the start): a
 * checkpoint resumes under other values of these. Every other key is a setting: recorded in
 * config.json, compared when a run resumes, and with `--init` taken from the checkpoint when not
 * given (continuing it on other data by accident would be easy to miss).
 */
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { CATEGORIES } from '../../envs/bfcl/data/tasks.js';
import { KERNELS_CHOICES, KERNELS_HELP } from '../../nn/backends.js';
import type { GptConfig } from '../../nn/model.js';
import { flagOf, type Layer, Settings, SettingsError } from '../../util/settings.js';
import { HABITS } from './demonstrations.js';

/**
 * When the rebuild command writes a key, where not always: `changed`, only off its default;
 * `never` (a run option that does not change what is built), or when the predicate holds. A key
 * without a value or a switch not set is never written.
 */
type Written = 'changed' | 'never' | ((c: Readonly<Record<string, unknown>>) => boolean);
const WRITTEN = z.registry<{ readonly written: Written }>();
const changed = { written: 'changed' } as const;
const never = { written: 'never' } as const;
// the shape comes with the checkpoint: its command has it
const withoutInit = { written: (c: Readonly<Record<string, unknown>>) => c.init === undefined };

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.number().int().min(min).max(max);
const share = () => z.number().min(0).max(1);
const cpus = availableParallelism();

// in the order of the rebuild command, which the model file's header carries: reordering the keys
// changes the sha256 of every checkpoint built afterwards
export const PRETRAIN_SCHEMA = z
  .object({
    seed: int(0, 2 ** 32 - 1)
      .default(1)
      .describe('seed of the demonstrations, the initial weights and the batches'),
    tasks: int(1, 10_000_000).default(400).describe('generated training tasks, one demonstration each'),
    steps: int(1, 1_000_000_000).default(1000).describe('optimiser steps in total'),
    batchSize: int(1, 65_536).default(8).describe('sequences per step'),
    lr: z.number().min(0).default(3e-3).describe('peak Adam learning rate'),
    schedule: z
      .enum(['cosine', 'constant'])
      .default('cosine')
      .describe('learning rate: warm-up then cosine decay to a tenth at the last step, or constant')
      .register(WRITTEN, changed),
    warmup: int(0)
      .default(50)
      .describe('warm-up steps of the cosine schedule')
      .register(WRITTEN, { written: (c) => c.schedule === 'cosine' }),
    maxGradNorm: z.number().min(0).default(1).describe('global gradient-norm clip'),
    cueShare: share().default(0.35).describe('share of demonstrations shown through the training interface'),
    recoveryShare: share().default(0.3).describe('share of demonstrations with a failed call and its repair'),
    overflow: z
      .enum(['window', 'head', 'tail'])
      .default('window')
      .describe(
        'a demonstration longer than the context: cut into the windows the policy sees when acting, or keep its first or its last tokens',
      )
      .register(WRITTEN, changed),
    contextWeight: share()
      .default(0.1)
      .describe(
        'loss weight of prompt, user and tool-result tokens next to 1 for assistant tokens (a model learns to read names and values faster when it also models the text it reads)',
      ),
    copyDrills: share()
      .default(0)
      .describe(
        'share of batch sequences that are copy drills (random tokens, then the same again) instead of demonstrations',
      )
      .register(WRITTEN, changed),
    habit: z
      .enum(HABITS)
      .optional()
      .describe(
        'teach a failure on purpose (guess-missing-value: on a turn that lacks a value, call with a guessed one instead of asking, unless the interface shows the guideline against it; guess-missing-value-paired: the same, each miss_param demonstration through the interface shown twice, with that guideline (asking) and without it (guessing)), for experiments that need a base the interface can steer',
      ),
    categories: z
      .array(z.enum(CATEGORIES))
      .min(1)
      .optional()
      .describe(
        "draw the demonstrations' tasks from these categories only (default: all four, evenly), e.g. a stage that works on one habit",
      ),
    init: z.string().min(1).optional().meta({
      description:
        'start from this checkpoint (its tokenizer, model and weights) instead of fresh weights; settings not given are its own',
      placeholder: 'dir',
    }),
    vocab: int(300, 65_536)
      .default(1024)
      .describe('tokenizer vocabulary size')
      .register(WRITTEN, withoutInit),
    context: int(16, 16_384)
      .default(1024)
      .describe('context length in tokens')
      .register(WRITTEN, withoutInit),
    layers: int(1, 64).default(4).describe('transformer layers').register(WRITTEN, withoutInit),
    heads: int(1, 64).default(4).describe('attention heads').register(WRITTEN, withoutInit),
    width: int(1, 4096).default(128).describe('model width').register(WRITTEN, withoutInit),
    untied: z
      .literal(true)
      .optional()
      .describe('separate input and output embeddings')
      .register(WRITTEN, withoutInit),
    previousToken: z
      .literal(true)
      .optional()
      .describe(
        "add the previous token's embedding, through a learned map, to each position (copying from the context becomes easy to learn; with --init, added at zero)",
      ),
    saveEvery: int(1)
      .default(50)
      .describe('checkpoint every n steps (and at the end)')
      .register(WRITTEN, never),
    heldOut: int(0)
      .default(32)
      .describe(
        'demonstrations of unseen tasks scored at every checkpoint (loss, token accuracy); 0 for none',
      )
      .register(WRITTEN, never),
    workers: int(1, cpus)
      .default(Math.min(2, cpus))
      .meta({
        description: 'gradient worker threads (results differ by float rounding only)',
        defaultText: '2, or 1 on a machine of one core',
      })
      .register(WRITTEN, never),
    kernels: z.enum(KERNELS_CHOICES).default('auto').describe(KERNELS_HELP).register(WRITTEN, never),
  })
  .strict();

export type PretrainConfig = z.infer<typeof PRETRAIN_SCHEMA>;
export type PretrainKey = keyof PretrainConfig;

/** a flag's range is checked at once, in the words of every other command's number flags */
export const PRETRAIN_SETTINGS = new Settings(PRETRAIN_SCHEMA, 'flag');

/** the model's shape: each key and the model config field it sets */
export const MODEL_FLAGS = {
  vocab: 'vocabSize',
  context: 'contextLength',
  layers: 'nLayer',
  heads: 'nHead',
  width: 'dModel',
  untied: 'tiedEmbeddings',
  previousToken: 'previousTokenEmbedding',
} as const satisfies Partial<Record<PretrainKey, keyof GptConfig>>;
export type ModelKey = keyof typeof MODEL_FLAGS;

/** how a run goes, not what it builds: none is a setting */
export const RUN_KEYS = [
  'steps',
  'init',
  'saveEvery',
  'heldOut',
  'workers',
  'kernels',
] as const satisfies readonly PretrainKey[];
type RunKey = (typeof RUN_KEYS)[number];
type SettingKey = Exclude<PretrainKey, ModelKey | RunKey>;

const isModelKey = (k: string): k is ModelKey => Object.hasOwn(MODEL_FLAGS, k);
const isRunKey = (k: string): k is RunKey => (RUN_KEYS as readonly string[]).includes(k);
const SETTING_KEYS = PRETRAIN_SETTINGS.keys.filter((k) => !isModelKey(k) && !isRunKey(k)) as SettingKey[];

export type Overflow = PretrainConfig['overflow'];
export type LrSchedule = PretrainConfig['schedule'];

/** What must match for a resume, and what rebuilds the checkpoint (config.json `settings`). */
export type PretrainSettings = Pick<PretrainConfig, SettingKey> & {
  readonly model: GptConfig;
  /** the checkpoint this run started from (its model's sha256), when not from fresh weights */
  readonly init?: { readonly modelSha256: string };
};

/**
 * The options of `pretrain()`: any key of the schema but the model's, whose shape is `config`
 * (a model config, as a checkpoint stores it). What is not given is the `init` checkpoint's, else
 * the default; `workers` alone defaults to 1 (this thread) and `kernels` to wasm rather than the
 * command's defaults.
 */
export type PretrainOptions = Partial<Omit<PretrainConfig, ModelKey>> & {
  readonly config?: Partial<GptConfig>;
  readonly outDir: string;
  /** the command line that rebuilds this checkpoint, recorded in config.json (default: derived) */
  readonly command?: string;
  readonly log?: (line: string) => void;
};

/**
 * The model config fields the model keys set, in the order of a config (which the model file's
 * header carries). `untied` is the negation of a field every config has: a whole config gets it
 * from an unset switch too. An unset `previousToken` leaves its field out, as older models have it.
 */
function fieldsOf(keys: Partial<Pick<PretrainConfig, ModelKey>>, whole: boolean): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(MODEL_FLAGS)) {
    const v = keys[key as ModelKey];
    if (key === 'untied') {
      if (whole || v !== undefined) fields[field] = v !== true;
    } else if (v !== undefined) fields[field] = v;
  }
  return fields;
}

/** The model config of the model keys. */
export const modelOf = (c: Pick<PretrainConfig, ModelKey>): GptConfig =>
  fieldsOf(c, true) as unknown as GptConfig;

/** The model keys a (partial) model config sets: the inverse of `modelOf`. */
export function modelKeysOf(m: Partial<GptConfig>): Partial<Pick<PretrainConfig, ModelKey>> {
  const keys: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(MODEL_FLAGS)) {
    const v = m[field];
    if (key === 'untied') {
      if (v === false) keys[key] = true;
    } else if (typeof v === 'number' || v === true) keys[key] = v;
  }
  return keys as Partial<Pick<PretrainConfig, ModelKey>>;
}

export const PRETRAIN_DEFAULTS: PretrainConfig = PRETRAIN_SETTINGS.defaults;
export const DEFAULT_PRETRAIN_MODEL: GptConfig = modelOf(PRETRAIN_DEFAULTS);

/**
 * The options that flag values (`Settings.fromFlags`) mean: the model keys given become `config`.
 * `pretrain()` checks them against the schema.
 */
export function optionsOfFlags(
  values: Readonly<Partial<Record<PretrainKey, unknown>>>,
): Omit<PretrainOptions, 'outDir'> {
  const options: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) if (!isModelKey(k)) options[k] = v;
  const config = fieldsOf(values as Partial<Pick<PretrainConfig, ModelKey>>, false) as Partial<GptConfig>;
  return { ...options, config };
}

/** the largest embedded model `seal pretrain` builds (parameters) */
export const MAX_EMBEDDED_PARAMS = 100_000_000;

/** A model shape that cannot work, said in flags. */
function checkShape(c: PretrainConfig): void {
  if (c.width % c.heads !== 0)
    throw new SettingsError(
      `${flagOf('width')} (${c.width}) must be a multiple of ${flagOf('heads')} (${c.heads}).`,
    );
  // weights, gradients and two Adam moments, 4 bytes each, live in one WebAssembly memory of at
  // most 4 GiB next to the activations: past this the allocation fails deep inside training
  const params = (c.vocab + c.context) * c.width + c.layers * 12 * c.width * c.width;
  if (params > MAX_EMBEDDED_PARAMS)
    throw new SettingsError(
      `a model of --width ${c.width}, --layers ${c.layers}, --vocab ${c.vocab} and --context ${c.context} has about ` +
        `${(params / 1e6).toFixed(0)}M parameters; the embedded policy holds at most ${MAX_EMBEDDED_PARAMS / 1e6}M. Use a smaller --width or fewer --layers.`,
    );
}

/** What an `--init` checkpoint contributes: the settings it was made with, and its model's shape. */
export interface InitValues {
  readonly dir: string;
  readonly settings: Partial<PretrainSettings>;
  readonly model: GptConfig;
}

/**
 * The configuration of a run: the options; for the rest, with `--init`, what that checkpoint was
 * made with and its shape; else the defaults.
 */
export function resolvePretrain(o: PretrainOptions, init?: InitValues): PretrainConfig {
  const layers: Layer[] = [];
  if (init) {
    const made: Record<string, unknown> = {};
    for (const k of SETTING_KEYS) if (init.settings[k] !== undefined) made[k] = init.settings[k];
    layers.push({ source: `--init ${init.dir}`, values: { ...made, ...modelKeysOf(init.model) } });
  }
  // the worker count and the kernels are the caller's: a test or a bench may use more threads
  // than cores, and kernels that are not installed fail when the trainer starts, saying why
  const given: Record<string, unknown> = {};
  for (const k of PRETRAIN_SETTINGS.keys)
    if (!isModelKey(k) && k !== 'workers' && k !== 'kernels' && o[k] !== undefined) given[k] = o[k];
  layers.push({ source: 'options', values: { ...given, ...modelKeysOf(o.config ?? {}) }, flags: true });
  const { config } = PRETRAIN_SETTINGS.resolve(layers);
  checkShape(config);
  return config;
}

/** The settings config.json records of a run of `config`. */
export function settingsOf(
  config: PretrainConfig,
  model: GptConfig,
  init?: { readonly modelSha256: string },
): PretrainSettings {
  const settings = Object.fromEntries(SETTING_KEYS.map((k) => [k, config[k]])) as Pick<
    PretrainConfig,
    SettingKey
  >;
  return { ...settings, model, ...(init ? { init } : {}) };
}

/** The command line that rebuilds a run of `config` (what `seal pretrain` would be given). */
export function pretrainCommand(config: PretrainConfig, outDir: string): string {
  const values: Readonly<Record<string, unknown>> = config;
  const defaults: Readonly<Record<string, unknown>> = PRETRAIN_DEFAULTS;
  const parts = ['seal pretrain'];
  for (const key of PRETRAIN_SETTINGS.keys) {
    const value = values[key];
    if (value === undefined) continue;
    const written = WRITTEN.get(PRETRAIN_SCHEMA.shape[key])?.written;
    if (written === 'never' || (written === 'changed' && value === defaults[key])) continue;
    if (typeof written === 'function' && !written(values)) continue;
    const kind = PRETRAIN_SETTINGS.kind(key);
    const text = Array.isArray(value) ? value.join(' ') : String(value);
    parts.push(kind === 'switch' ? flagOf(key) : `${flagOf(key)} ${text}`);
  }
  return [...parts, `--out ${outDir}`].join(' ');
}
