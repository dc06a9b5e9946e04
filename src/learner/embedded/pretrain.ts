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
import { resolveKernels } from '../../nn/backends.js';
import {
  type CheckpointConfig,
  CONFIG_FILE,
  LOG_FILE,
  loadCheckpoint,
  MODEL_FILE,
  sha256Hex,
  TOKENIZER_FILE,
} from '../../nn/checkpoint.js';
import { Gpt } from '../../nn/model.js';
import { encodeChat, Tokenizer } from '../../nn/tokenizer.js';
import { trainingWindows } from '../../policy/embedded/window.js';
import { UserError } from '../../util/errors.js';
import { writeAtomic } from '../../util/files.js';
import { mixSeed, Rng } from '../../util/rng.js';
import { flagOf } from '../../util/settings.js';
import { buildDemonstrations, type Demonstration, demonstrationText } from './demonstrations.js';
import { copyDrill } from './drills.js';
import { crossEntropy, type HeldOutScore, heldOutScore, type SupervisedSequence } from './losses.js';
import { warmupCosine } from './optim.js';
import { sharedModel } from './parallel.js';
import {
  MODEL_FLAGS,
  modelOf,
  type Overflow,
  type PretrainOptions,
  type PretrainSettings,
  pretrainCommand,
  resolvePretrain,
  settingsOf,
} from './pretrain-config.js';
import { Trainer } from './trainer.js';

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
  /** demonstrations showing the habit's failure (with `--habit` only) */
  readonly habits?: number;
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

interface InitCheckpoint {
  readonly dir: string;
  readonly model: Gpt;
  readonly tokenizer: Tokenizer;
  readonly modelSha256: string;
  /** what it was made with, as far as its config.json says */
  readonly settings: Partial<PretrainSettings>;
  /** how it was made: its own lineage, then its command */
  readonly lineage: readonly LineageStep[];
}

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
  const has = new Map<string, unknown>(Object.entries(loaded.model.config));
  for (const [field, value] of Object.entries(rest)) {
    if (value === undefined || has.get(field) === value) continue;
    const key = Object.entries(MODEL_FLAGS).find(([, f]) => f === field)?.[0] ?? field;
    const what = typeof value === 'number' ? flagOf(key) : `${field} (${flagOf(key)})`;
    throw new PretrainError(
      `--init ${o.init} has ${what} ${String(has.get(field))}, not ${String(value)}; leave the model options out to continue it`,
    );
  }
  return {
    dir: o.init,
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

/**
 * Token sequences of the demonstrations. One that fits the context is one sequence; a longer one
 * is cut by `overflow`: `window` (the default) into the windows the policy itself would see
 * (window.ts), `head` keeps its first tokens, `tail` its last ones. Sequences without an assistant
 * token are skipped. Assistant tokens are targets of weight 1; the rest (prompts, user turns, tool
 * results) weigh `contextWeight`, 0 by default.
 */
export function demonstrationSequences(
  tok: Tokenizer,
  demos: readonly Pick<Demonstration, 'messages'>[],
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
  const run = resolvePretrain(
    o,
    init && { dir: init.dir, settings: init.settings, model: init.model.config },
  );
  const shape = init ? init.model.config : modelOf(run);
  const settings = settingsOf(run, shape, init && { modelSha256: init.modelSha256 });
  const { steps, saveEvery } = run;
  const kernels = resolveKernels(o.kernels ?? 'wasm');
  const log = o.log ?? (() => {});
  const command = o.command ?? pretrainCommand(run, o.outDir);
  mkdirSync(o.outDir, { recursive: true });

  const demos = await buildDemonstrations({
    seed: settings.seed,
    tasks: settings.tasks,
    cueShare: settings.cueShare,
    recoveryShare: settings.recoveryShare,
    ...(settings.habit ? { habit: settings.habit } : {}),
    ...(settings.categories ? { categories: settings.categories } : {}),
  });

  const heldOutDemos = await buildDemonstrations({
    seed: mixSeed(settings.seed, 0x4e1d),
    tasks: run.heldOut,
    cueShare: settings.cueShare,
    recoveryShare: settings.recoveryShare,
    ...(settings.habit ? { habit: settings.habit } : {}),
    ...(settings.categories ? { categories: settings.categories } : {}),
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
    ...(settings.habit ? { habits: demos.filter((d) => d.habit).length } : {}),
    ...stats,
  };
  log(
    `demonstrations ${data.demonstrations} (cues ${data.cues}, recoveries ${data.recoveries}${data.habits !== undefined ? `, ${settings.habit} ${data.habits}` : ''}); sequences ${data.sequences}, truncated ${data.truncated}, skipped ${data.skipped}, mean ${data.meanTokens} tokens`,
  );
  log(`training on ${workers} thread${workers === 1 ? '' : 's'}, ${kernels.label} kernels`);

  const trainer = new Trainer(model, {
    lr: settings.lr,
    maxGradNorm: settings.maxGradNorm,
    workers,
    kernels: kernels.kernels,
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
  const probeRng = new Rng(mixSeed(settings.seed, 0xc0b1), 'mulberry32');
  const copyProbe = Array.from({ length: heldOut.length > 0 ? COPY_PROBE_DRILLS : 0 }, () =>
    copyDrill(probeRng, drillShape),
  );
  const history: StepLog[] = [];
  let config = stepsDone === 0 ? save() : undefined;
  try {
    while (stepsDone < steps) {
      const rng = new Rng(mixSeed(settings.seed, 0xba7c, stepsDone), 'mulberry32');
      // drills draw from a stream of their own, so a run without them sees the batches it always did
      const drillRng =
        settings.copyDrills > 0 ? new Rng(mixSeed(settings.seed, 0xd1c1, stepsDone), 'mulberry32') : null;
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
