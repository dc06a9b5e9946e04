/**
 * `seal pretrain`: the embedded policy's base checkpoint, made by the project's own code. Builds
 * demonstrations from fresh training tasks (see demonstrations.ts), trains the tokenizer on their
 * text, initialises the model and runs supervised training (assistant tokens weigh 1, the text
 * the policy reads `contextWeight`).
 *
 * Output directory:
 * - `model.bin`: the serialized weights (sha256-checked on load);
 * - `tokenizer.json`;
 * - `config.json`: every setting needed to rebuild (seed, tasks, shares, model config, steps,
 *   batch size, learning rate), the command, the steps done and the model file's sha256;
 * - `optimizer.bin`: Adam's moments, for an exact resume (not needed to use the checkpoint);
 * - `training.log.jsonl`: one line per step; a checkpoint's line also scores the model on held-out
 *   demonstrations (teacher-forced loss and greedy token accuracy on the assistant's tokens).
 *
 * Resume: when `outDir` already holds a checkpoint made with the same settings, training continues
 * from its step count (batches are drawn from (seed, step), so a resumed run sees the same batches).
 * Different settings are an error.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mixSeed, Rng } from '../../envs/mini/index.js';
import {
  type CheckpointConfig,
  CONFIG_FILE,
  LOG_FILE,
  loadCheckpoint,
  MODEL_FILE,
  sha256Hex,
  TOKENIZER_FILE,
} from '../../policy/embedded/checkpoint.js';
import { Gpt, type GptConfig } from '../../policy/embedded/model.js';
import { encodeChat, Tokenizer } from '../../policy/embedded/tokenizer.js';
import { trainingWindows } from '../../policy/embedded/window.js';
import { UserError } from '../../util/errors.js';
import { writeAtomic } from '../../util/files.js';
import { buildDemonstrations, type Demonstration, demonstrationText } from './demonstrations.js';
import { copyDrill } from './drills.js';
import { crossEntropy, type HeldOutScore, heldOutScore, type SupervisedSequence } from './losses.js';
import { warmupCosine } from './optim.js';
import { sharedModel } from './parallel.js';
import { Trainer } from './trainer.js';

export const DEFAULT_PRETRAIN_MODEL: GptConfig = {
  vocabSize: 1024,
  contextLength: 1024,
  nLayer: 4,
  nHead: 4,
  dModel: 128,
  tiedEmbeddings: true,
};

export type Overflow = 'window' | 'head' | 'tail';
export type LrSchedule = 'cosine' | 'constant';

export interface PretrainOptions {
  readonly seed?: number;
  /** number of generated training tasks (one demonstration each) */
  readonly tasks?: number;
  readonly cueShare?: number;
  readonly recoveryShare?: number;
  readonly config?: Partial<GptConfig>;
  readonly steps?: number;
  readonly batchSize?: number;
  /** peak learning rate */
  readonly lr?: number;
  /** `cosine` (the default): linear warm-up, then cosine decay to a tenth at the last step */
  readonly schedule?: LrSchedule;
  /** warm-up steps of the cosine schedule; default 50 */
  readonly warmup?: number;
  readonly maxGradNorm?: number;
  /**
   * A demonstration longer than the context: `window` (the default) cuts it into the windows the
   * policy sees when acting (oldest messages after the system prompt dropped, see window.ts),
   * `head` keeps its first tokens, `tail` its last ones.
   */
  readonly overflow?: Overflow;
  /**
   * loss weight of the tokens the policy does not write (system prompt, user turns, tool results)
   * next to 1 for its own: a model trained from scratch learns to read names and values faster
   * when it also models the text it reads; default 0.1
   */
  readonly contextWeight?: number;
  /** share of batch sequences that are copy drills (drills.ts) instead of demonstrations; default 0 */
  readonly copyDrills?: number;
  /**
   * a checkpoint directory to start from instead of fresh weights: its tokenizer and model
   * (continued pretraining with new settings, e.g. a new schedule or copy drills); the model
   * config comes from it, and model options that differ are an error
   */
  readonly init?: string;
  readonly outDir: string;
  /** checkpoint every this many steps (and at the end); default 50 */
  readonly saveEvery?: number;
  /**
   * demonstrations of other generated tasks the model is scored on at each checkpoint (not
   * trained on; not a setting, so it can change on resume); default 32, 0 for none
   */
  readonly heldOut?: number;
  /** the command line that rebuilds this checkpoint, recorded in config.json */
  readonly command?: string;
  readonly log?: (line: string) => void;
  /**
   * Threads computing each batch's gradient (see parallel.ts); default 1, in process. Not a
   * setting: a checkpoint resumes with any count. Different counts differ by float rounding only.
   */
  readonly workers?: number;
}

/** What must match for a resume, and what rebuilds the checkpoint. */
export interface PretrainSettings {
  readonly seed: number;
  readonly tasks: number;
  readonly cueShare: number;
  readonly recoveryShare: number;
  readonly model: GptConfig;
  readonly batchSize: number;
  readonly lr: number;
  readonly schedule: LrSchedule;
  readonly warmup: number;
  readonly maxGradNorm: number;
  readonly overflow: Overflow;
  readonly contextWeight: number;
  readonly copyDrills: number;
  /** the checkpoint this run started from (its model's sha256), when not from fresh weights */
  readonly init?: { readonly modelSha256: string };
}

export interface PretrainConfigFile extends CheckpointConfig {
  readonly format: 'seal-embedded-pretrain';
  readonly version: 1;
  readonly settings: PretrainSettings;
  readonly steps: number;
  readonly stepsDone: number;
  readonly command: string;
  readonly data: DataStats;
  readonly modelSha256: string;
  /**
   * With `--init`: the commands that made the checkpoint it started from, oldest first, each with
   * the sha256 of the model it wrote, so the whole chain can be rebuilt (absent for a fresh run)
   */
  readonly lineage?: readonly LineageStep[];
}

export interface LineageStep {
  readonly command: string;
  readonly modelSha256: string;
}

export interface DataStats {
  readonly demonstrations: number;
  readonly cues: number;
  readonly recoveries: number;
  /** sequences used for training (those with at least one assistant target within the context) */
  readonly sequences: number;
  /** demonstrations longer than the context (cut by the overflow rule) */
  readonly truncated: number;
  /** sequences left without a target token after cutting */
  readonly skipped: number;
  readonly meanTokens: number;
  readonly maxTokens: number;
  readonly targetTokens: number;
}

/** drills in the copy probe (fixed by the seed; scored where the held-out demonstrations are) */
const COPY_PROBE_DRILLS = 16;

export interface StepLog {
  readonly step: number;
  readonly loss: number;
  readonly tokens: number;
  readonly gradNorm: number;
  readonly lr: number;
  readonly ms: number;
  /** at checkpoints: the fit on held-out demonstrations after this step */
  readonly heldOut?: HeldOutScore;
  /**
   * at checkpoints: greedy accuracy on fixed copy drills (random runs repeated), the probe for the
   * induction heads that copying argument values needs; chance is 1/vocab
   */
  readonly copyProbe?: HeldOutScore;
}

export interface PretrainResult {
  readonly model: Gpt;
  readonly tokenizer: Tokenizer;
  readonly config: PretrainConfigFile;
  /** the steps run by this call (not those of a resumed checkpoint) */
  readonly history: readonly StepLog[];
  readonly resumedFrom: number;
}

export { CONFIG_FILE, LOG_FILE, MODEL_FILE, TOKENIZER_FILE };
/** Adam's moments, for an exact resume; not needed to use the checkpoint */
export const OPTIMIZER_FILE = 'optimizer.bin';

/** Settings that cannot work, or that conflict with the checkpoint already in the directory. */
export class PretrainError extends UserError {}

/** What an option left out means (also what `seal pretrain --help` shows). */
export const PRETRAIN_DEFAULTS = {
  seed: 1,
  tasks: 400,
  steps: 1000,
  saveEvery: 50,
  heldOut: 32,
  cueShare: 0.35,
  recoveryShare: 0.3,
  batchSize: 8,
  lr: 3e-3,
  schedule: 'cosine',
  warmup: 50,
  maxGradNorm: 1,
  overflow: 'window',
  contextWeight: 0.1,
  copyDrills: 0,
} as const satisfies Omit<PretrainSettings, 'model' | 'init'> & {
  steps: number;
  saveEvery: number;
  heldOut: number;
};

/**
 * The settings of a run: what the options give; for the rest, with `--init`, what that checkpoint
 * was made with (continuing it on other data by accident would be easy to miss), else the defaults.
 */
function settingsOf(o: PretrainOptions, init?: InitCheckpoint): PretrainSettings {
  const d = PRETRAIN_DEFAULTS;
  const from = init?.settings ?? {};
  const pick = <K extends keyof typeof d & keyof PretrainSettings>(k: K): PretrainSettings[K] =>
    (o[k] ?? from[k] ?? d[k]) as PretrainSettings[K];
  return {
    seed: pick('seed'),
    tasks: pick('tasks'),
    cueShare: pick('cueShare'),
    recoveryShare: pick('recoveryShare'),
    model: init ? init.model.config : { ...DEFAULT_PRETRAIN_MODEL, ...o.config },
    batchSize: pick('batchSize'),
    lr: pick('lr'),
    schedule: pick('schedule'),
    warmup: pick('warmup'),
    maxGradNorm: pick('maxGradNorm'),
    overflow: pick('overflow'),
    contextWeight: pick('contextWeight'),
    copyDrills: pick('copyDrills'),
    ...(init ? { init: { modelSha256: init.modelSha256 } } : {}),
  };
}

interface InitCheckpoint {
  readonly model: Gpt;
  readonly tokenizer: Tokenizer;
  readonly modelSha256: string;
  /** what it was made with, as far as its config.json says */
  readonly settings: Partial<PretrainSettings>;
  /** how it was made: its own lineage, then its command */
  readonly lineage: readonly LineageStep[];
}

const MODEL_FLAGS: Record<keyof GptConfig, string> = {
  vocabSize: '--vocab',
  contextLength: '--context',
  nLayer: '--layers',
  nHead: '--heads',
  dModel: '--width',
  tiedEmbeddings: 'tied embeddings (--untied)',
  previousTokenEmbedding: 'the previous-token map (--previous-token)',
};

/** The `--init` checkpoint, checked against the model options given with it. */
function loadInit(o: PretrainOptions): InitCheckpoint | undefined {
  if (o.init === undefined) return undefined;
  let loaded: ReturnType<typeof loadCheckpoint>;
  try {
    loaded = loadCheckpoint(o.init);
  } catch (e) {
    throw new PretrainError(`--init ${o.init}: ${(e as Error).message}`);
  }
  const { previousTokenEmbedding: addPrevious, ...rest } = o.config ?? {};
  // the one change of shape a continuation may make: the added map starts at zero, so the model
  // it starts from computes what the checkpoint did
  const grow = addPrevious === true && loaded.model.config.previousTokenEmbedding !== true;
  const model = loaded.model.config;
  for (const [key, value] of Object.entries(rest)) {
    if (value !== undefined && model[key as keyof GptConfig] !== value)
      throw new PretrainError(
        `--init ${o.init} has ${MODEL_FLAGS[key as keyof GptConfig]} ${String(model[key as keyof GptConfig])}, not ${String(value)}; leave the model options out to continue it`,
      );
  }
  return {
    model: grow ? loaded.model.withPreviousTokenEmbedding() : loaded.model,
    tokenizer: loaded.tokenizer,
    modelSha256: loaded.config.modelSha256,
    settings: loaded.config.settings as Partial<PretrainSettings>,
    lineage: [
      ...((loaded.config as Partial<PretrainConfigFile>).lineage ?? []),
      { command: loaded.config.command, modelSha256: loaded.config.modelSha256 },
    ],
  };
}

/** Settings as comparable text: keys sorted, and fields older checkpoints lack at their defaults. */
function settingsKey(s: PretrainSettings): string {
  const filled: Record<string, unknown> = {
    ...s,
    copyDrills: (s as Partial<PretrainSettings>).copyDrills ?? 0,
  };
  // a replacer that rebuilds every object with sorted keys (an array replacer would also drop the
  // nested objects' keys, so model settings would not be compared)
  return JSON.stringify(filled, (_, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** The command line for these settings (what `seal pretrain` would be given). */
export function pretrainCommand(
  s: PretrainSettings,
  steps: number,
  outDir: string,
  initDir?: string,
): string {
  const m = s.model;
  return [
    'seal pretrain',
    `--seed ${s.seed}`,
    `--tasks ${s.tasks}`,
    `--steps ${steps}`,
    `--batch-size ${s.batchSize}`,
    `--lr ${s.lr}`,
    ...(s.schedule === 'cosine' ? [`--warmup ${s.warmup}`] : ['--schedule constant']),
    `--max-grad-norm ${s.maxGradNorm}`,
    `--cue-share ${s.cueShare}`,
    `--recovery-share ${s.recoveryShare}`,
    ...(s.overflow === 'window' ? [] : [`--overflow ${s.overflow}`]),
    `--context-weight ${s.contextWeight}`,
    ...(s.copyDrills > 0 ? [`--copy-drills ${s.copyDrills}`] : []),
    ...(initDir !== undefined
      ? [`--init ${initDir}`]
      : [
          `--vocab ${m.vocabSize}`,
          `--context ${m.contextLength}`,
          `--layers ${m.nLayer}`,
          `--heads ${m.nHead}`,
          `--width ${m.dModel}`,
          ...(m.tiedEmbeddings ? [] : ['--untied']),
        ]),
    ...(m.previousTokenEmbedding ? ['--previous-token'] : []),
    `--out ${outDir}`,
  ].join(' ');
}

/**
 * Token sequences of the demonstrations. One that fits the context is one sequence; a longer one
 * is cut by `overflow`: `window` (the default) into the windows the policy itself would see
 * (window.ts), `head` keeps its first tokens, `tail` its last ones. Sequences without an assistant
 * token are skipped. Assistant tokens are targets of weight 1; the rest (prompts, user turns, tool
 * results) weigh `contextWeight`, 0 by default.
 */
export function demonstrationSequences(
  tok: Tokenizer,
  demos: readonly Demonstration[],
  contextLength: number,
  overflow: Overflow = 'window',
  contextWeight = 0,
): { sequences: SupervisedSequence[]; stats: Omit<DataStats, 'demonstrations' | 'cues' | 'recoveries'> } {
  const sequences: SupervisedSequence[] = [];
  let truncated = 0;
  let skipped = 0;
  let total = 0;
  let max = 0;
  let targets = 0;
  const add = (tokens: readonly number[], mask: readonly number[]) => {
    const n = mask.reduce((a, b, i) => a + (i > 0 ? b : 0), 0);
    if (n === 0) {
      skipped++;
      return;
    }
    targets += n;
    sequences.push({
      tokens,
      lossMask: contextWeight > 0 ? mask.map((m) => (m > 0 ? m : contextWeight)) : mask,
    });
  };
  for (const d of demos) {
    const parts = d.messages.map((m) => encodeChat(tok, [m]));
    const length = parts.reduce((a, p) => a + p.ids.length, 0);
    total += length;
    max = Math.max(max, length);
    if (length <= contextLength) {
      add(
        parts.flatMap((p) => p.ids),
        parts.flatMap((p) => p.assistantMask),
      );
      continue;
    }
    truncated++;
    if (overflow === 'window') {
      const sized = d.messages.map((m, i) => ({ role: m.role, tokens: parts[i]!.ids.length }));
      const head = d.messages[0]?.role === 'system' ? [0] : [];
      for (const w of trainingWindows(sized, contextLength)) {
        const kept = [...head, ...Array.from({ length: w.end - w.start }, (_, k) => w.start + k)];
        add(
          kept.flatMap((i) => parts[i]!.ids),
          kept.flatMap((i) => (i >= w.from ? parts[i]!.assistantMask : parts[i]!.ids.map(() => 0))),
        );
      }
      continue;
    }
    const ids = parts.flatMap((p) => p.ids);
    const mask = parts.flatMap((p) => p.assistantMask);
    const from = overflow === 'head' ? 0 : ids.length - contextLength;
    add(ids.slice(from, from + contextLength), mask.slice(from, from + contextLength));
  }
  return {
    sequences,
    stats: {
      sequences: sequences.length,
      truncated,
      skipped,
      meanTokens: demos.length > 0 ? Math.round(total / demos.length) : 0,
      maxTokens: max,
      targetTokens: targets,
    },
  };
}

/** Load a checkpoint directory; corrupt or mismatched files fail with a clear error. */
export function loadPretrained(dir: string): {
  model: Gpt;
  tokenizer: Tokenizer;
  config: PretrainConfigFile;
} {
  return loadCheckpoint<PretrainConfigFile>(dir);
}

/**
 * A run killed between checkpoints logged steps its checkpoint does not hold; the resumed run
 * logs them again, so the old lines go.
 */
function dropLogAfter(path: string, stepsDone: number): void {
  if (!existsSync(path)) return;
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  const kept = lines.filter((l) => {
    try {
      return (JSON.parse(l) as StepLog).step <= stepsDone;
    } catch {
      return false; // a line torn by the kill
    }
  });
  if (kept.length !== lines.length) writeAtomic(path, kept.map((l) => `${l}\n`).join(''));
}

export async function pretrain(o: PretrainOptions): Promise<PretrainResult> {
  const init = loadInit(o);
  const lineage = init?.lineage;
  const settings = settingsOf(o, init);
  const steps = o.steps ?? PRETRAIN_DEFAULTS.steps;
  const saveEvery = Math.max(1, o.saveEvery ?? PRETRAIN_DEFAULTS.saveEvery);
  const log = o.log ?? (() => {});
  const command = o.command ?? pretrainCommand(settings, steps, o.outDir, o.init);
  mkdirSync(o.outDir, { recursive: true });

  const demos = await buildDemonstrations({
    seed: settings.seed,
    tasks: settings.tasks,
    cueShare: settings.cueShare,
    recoveryShare: settings.recoveryShare,
  });

  const heldOutDemos = await buildDemonstrations({
    seed: mixSeed(settings.seed, 0x4e1d),
    tasks: Math.max(0, o.heldOut ?? PRETRAIN_DEFAULTS.heldOut),
    cueShare: settings.cueShare,
    recoveryShare: settings.recoveryShare,
  });

  let model: Gpt;
  let tokenizer: Tokenizer;
  let stepsDone = 0;
  let optimizerState: Uint8Array | undefined;
  const configPath = join(o.outDir, CONFIG_FILE);
  if (existsSync(configPath) && existsSync(join(o.outDir, MODEL_FILE))) {
    const prev = loadPretrained(o.outDir);
    if (settingsKey(prev.config.settings) !== settingsKey(settings))
      throw new PretrainError(
        `${o.outDir} holds a checkpoint made with different settings (${JSON.stringify(prev.config.settings)}); use another directory`,
      );
    model = prev.model;
    tokenizer = prev.tokenizer;
    stepsDone = prev.config.stepsDone;
    optimizerState = existsSync(join(o.outDir, OPTIMIZER_FILE))
      ? new Uint8Array(readFileSync(join(o.outDir, OPTIMIZER_FILE)))
      : undefined;
    log(
      `resuming from step ${stepsDone}${optimizerState ? '' : ' (no optimizer state saved: Adam restarts)'}`,
    );
    dropLogAfter(join(o.outDir, LOG_FILE), stepsDone);
  } else if (init) {
    tokenizer = init.tokenizer;
    model = init.model;
    log(`starting from ${o.init} (model sha256 ${init.modelSha256})`);
  } else {
    tokenizer = Tokenizer.train(demos.map(demonstrationText), settings.model.vocabSize);
    model = Gpt.init(settings.model, mixSeed(settings.seed, 0x1417));
  }
  const resumedFrom = stepsDone;
  const workers = o.workers ?? 1;
  // in shared memory, the workers compute with the weights Adam updates here, without copies
  if (workers > 1) model = sharedModel(model);

  const { sequences, stats } = demonstrationSequences(
    tokenizer,
    demos,
    settings.model.contextLength,
    settings.overflow,
    settings.contextWeight,
  );
  if (sequences.length === 0)
    throw new PretrainError(
      `no demonstration has an assistant token within the context of ${settings.model.contextLength} tokens; raise --context`,
    );
  const heldOut = demonstrationSequences(
    tokenizer,
    heldOutDemos,
    settings.model.contextLength,
    settings.overflow,
  ).sequences;
  const data: DataStats = {
    demonstrations: demos.length,
    cues: demos.filter((d) => d.cues).length,
    recoveries: demos.filter((d) => d.recovery).length,
    ...stats,
  };
  log(
    `demonstrations ${data.demonstrations} (cues ${data.cues}, recoveries ${data.recoveries}); sequences ${data.sequences}, truncated ${data.truncated}, skipped ${data.skipped}, mean ${data.meanTokens} tokens`,
  );

  const trainer = new Trainer(model, {
    lr: settings.lr,
    maxGradNorm: settings.maxGradNorm,
    workers,
  });
  if (optimizerState) {
    try {
      trainer.optimizer.restore(optimizerState);
    } catch (e) {
      throw new PretrainError(
        `${join(o.outDir, OPTIMIZER_FILE)}: ${(e as Error).message}; delete it to resume with fresh Adam moments`,
      );
    }
  }
  const save = () => {
    const bytes = model.serialize({ seed: settings.seed, stepsDone, command });
    writeAtomic(join(o.outDir, MODEL_FILE), bytes);
    const tokenizerText = JSON.stringify(tokenizer.toJSON());
    writeAtomic(join(o.outDir, TOKENIZER_FILE), tokenizerText);
    writeAtomic(join(o.outDir, OPTIMIZER_FILE), trainer.optimizer.serialize());
    const config: PretrainConfigFile = {
      format: 'seal-embedded-pretrain',
      version: 1,
      settings,
      steps,
      stepsDone,
      command,
      data,
      modelSha256: sha256Hex(bytes),
      tokenizerSha256: sha256Hex(tokenizerText),
      ...(lineage ? { lineage } : {}),
    };
    writeAtomic(configPath, `${JSON.stringify(config, null, 2)}\n`);
    return config;
  };

  const drillShape = {
    firstId: 256 + tokenizer.specials.length,
    vocabSize: tokenizer.vocabSize,
    contextLength: settings.model.contextLength,
  };
  const probeRng = new Rng(mixSeed(settings.seed, 0xc0b1));
  const copyProbe = Array.from({ length: heldOut.length > 0 ? COPY_PROBE_DRILLS : 0 }, () =>
    copyDrill(probeRng, drillShape),
  );
  const history: StepLog[] = [];
  let config = stepsDone === 0 ? save() : undefined;
  try {
    while (stepsDone < steps) {
      const rng = new Rng(mixSeed(settings.seed, 0xba7c, stepsDone));
      // drills draw from a stream of their own, so a run without them sees the batches it always did
      const drillRng = settings.copyDrills > 0 ? new Rng(mixSeed(settings.seed, 0xd1c1, stepsDone)) : null;
      const batch = Array.from({ length: Math.min(settings.batchSize, sequences.length) }, () =>
        drillRng?.chance(settings.copyDrills)
          ? copyDrill(drillRng, drillShape)
          : sequences[rng.int(0, sequences.length - 1)]!,
      );
      const lr =
        settings.schedule === 'cosine'
          ? warmupCosine(settings.lr, stepsDone, steps, settings.warmup)
          : settings.lr;
      trainer.optimizer.lr = lr;
      const t0 = performance.now();
      const r = await trainer.step(batch, crossEntropy);
      stepsDone++;
      const ms = Math.round(performance.now() - t0);
      const checkpoint = stepsDone % saveEvery === 0 || stepsDone === steps;
      const score = checkpoint && heldOut.length > 0 ? heldOutScore(model, heldOut) : undefined;
      const copy = checkpoint && copyProbe.length > 0 ? heldOutScore(model, copyProbe) : undefined;
      const entry: StepLog = {
        step: stepsDone,
        loss: r.loss,
        tokens: r.tokens,
        gradNorm: r.gradNorm,
        lr,
        ms,
        ...(score ? { heldOut: score } : {}),
        ...(copy ? { copyProbe: copy } : {}),
      };
      history.push(entry);
      appendFileSync(join(o.outDir, LOG_FILE), `${JSON.stringify(entry)}\n`);
      log(
        `step ${stepsDone}/${steps} loss ${r.loss.toFixed(4)} tokens ${r.tokens} grad ${r.gradNorm.toFixed(3)}${
          score
            ? ` | held-out loss ${score.loss.toFixed(4)}, ${(100 * score.accuracy).toFixed(1)}% of assistant tokens`
            : ''
        }${copy ? `, ${(100 * copy.accuracy).toFixed(1)}% of copy-drill repeats` : ''}`,
      );
      if (checkpoint) config = save();
    }
  } finally {
    await trainer.close();
  }
  config ??= save();
  return { model, tokenizer, config, history, resumedFrom };
}
