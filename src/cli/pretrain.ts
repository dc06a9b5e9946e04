/** `seal pretrain`: flag parsing and progress output; the work is in learner/embedded/pretrain.ts. */
import { availableParallelism } from 'node:os';
import type { LrSchedule, Overflow, PretrainOptions } from '../learner/embedded/pretrain.js';
import { DEFAULT_PRETRAIN_MODEL, pretrain } from '../learner/embedded/pretrain.js';
import { UsageError } from '../util/errors.js';

/** Every flag but --out is optional: what is not given takes pretrain()'s default. */
export interface PretrainFlags {
  readonly out: string;
  readonly seed?: string;
  readonly tasks?: string;
  readonly steps?: string;
  readonly batchSize?: string;
  readonly lr?: string;
  readonly schedule?: LrSchedule;
  readonly warmup?: string;
  readonly maxGradNorm?: string;
  readonly cueShare?: string;
  readonly recoveryShare?: string;
  readonly overflow?: Overflow;
  readonly contextWeight?: string;
  readonly vocab?: string;
  readonly context?: string;
  readonly layers?: string;
  readonly heads?: string;
  readonly width?: string;
  readonly untied?: boolean;
  readonly previousToken?: boolean;
  readonly workers?: string;
  readonly saveEvery?: string;
  readonly heldOut?: string;
  readonly copyDrills?: string;
  readonly init?: string;
  readonly quiet?: boolean;
}

function parseNumber(
  flag: string,
  value: string,
  opts: { int?: boolean; min?: number; max?: number } = {},
): number {
  const n = Number(value);
  const bad =
    value.trim() === '' ||
    !Number.isFinite(n) ||
    (opts.int && !Number.isInteger(n)) ||
    (opts.min !== undefined && n < opts.min) ||
    (opts.max !== undefined && n > opts.max);
  if (bad) {
    const range = [
      opts.min !== undefined ? `>= ${opts.min}` : '',
      opts.max !== undefined ? `<= ${opts.max}` : '',
    ].filter((s) => s !== '');
    throw new UsageError(
      `${flag} must be ${opts.int ? 'an integer' : 'a number'}${range.length ? ` ${range.join(' and ')}` : ''}, got "${value}".`,
    );
  }
  return n;
}

/** The options a flag set means. */
export function pretrainOptions(flags: PretrainFlags, log: (line: string) => void): PretrainOptions {
  const int = (flag: string, v: string | undefined, min = 1, max?: number) =>
    v === undefined
      ? undefined
      : parseNumber(flag, v, { int: true, min, ...(max !== undefined ? { max } : {}) });
  const real = (flag: string, v: string | undefined, min: number, max?: number) =>
    v === undefined ? undefined : parseNumber(flag, v, { min, ...(max !== undefined ? { max } : {}) });
  const config = {
    vocabSize: int('--vocab', flags.vocab, 300),
    contextLength: int('--context', flags.context, 16),
    nLayer: int('--layers', flags.layers),
    nHead: int('--heads', flags.heads),
    dModel: int('--width', flags.width),
    ...(flags.untied ? { tiedEmbeddings: false } : {}),
    ...(flags.previousToken ? { previousTokenEmbedding: true } : {}),
  };
  const width = config.dModel ?? DEFAULT_PRETRAIN_MODEL.dModel;
  const heads = config.nHead ?? DEFAULT_PRETRAIN_MODEL.nHead;
  if (width % heads !== 0)
    throw new UsageError(`--width (${width}) must be a multiple of --heads (${heads}).`);
  const given = <T>(o: Record<string, T | undefined>) =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Record<string, T>;
  const cpus = availableParallelism();
  return {
    outDir: flags.out,
    ...given({
      seed: int('--seed', flags.seed, 0),
      tasks: int('--tasks', flags.tasks),
      steps: int('--steps', flags.steps),
      batchSize: int('--batch-size', flags.batchSize),
      lr: real('--lr', flags.lr, 0),
      warmup: int('--warmup', flags.warmup, 0),
      maxGradNorm: real('--max-grad-norm', flags.maxGradNorm, 0),
      cueShare: real('--cue-share', flags.cueShare, 0, 1),
      recoveryShare: real('--recovery-share', flags.recoveryShare, 0, 1),
      contextWeight: real('--context-weight', flags.contextWeight, 0, 1),
      copyDrills: real('--copy-drills', flags.copyDrills, 0, 1),
      saveEvery: int('--save-every', flags.saveEvery),
      heldOut: int('--held-out', flags.heldOut, 0),
    }),
    ...(flags.overflow ? { overflow: flags.overflow } : {}),
    ...(flags.init !== undefined ? { init: flags.init } : {}),
    ...(flags.schedule ? { schedule: flags.schedule } : {}),
    config: given(config),
    workers: int('--workers', flags.workers, 1, cpus) ?? Math.min(2, cpus),
    log,
  };
}

export async function runPretrainCommand(flags: PretrainFlags, print: (s: string) => void): Promise<void> {
  let last = 0;
  const opts = pretrainOptions(flags, (line) => {
    // every step is in training.log.jsonl; the terminal gets a line every few seconds, and every
    // checkpoint's held-out score
    const now = Date.now();
    if (flags.quiet) return;
    if (!line.startsWith('step ') || line.includes('held-out') || now - last > 5000) {
      last = now;
      print(line);
    }
  });
  const r = await pretrain(opts);
  const tail = r.history.slice(-20);
  const loss = tail.length ? tail.reduce((a, h) => a + h.loss, 0) / tail.length : Number.NaN;
  print(
    `${flags.out}: ${r.config.stepsDone} steps (${r.history.length} this run, resumed from ${r.resumedFrom}); ` +
      `mean loss of the last ${tail.length} steps ${loss.toFixed(4)}; model sha256 ${r.config.modelSha256}`,
  );
}
