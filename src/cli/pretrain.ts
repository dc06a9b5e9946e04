/** `seal pretrain`: flag parsing and progress output; the work is in learner/embedded/pretrain.ts. */
import { availableParallelism } from 'node:os';
import { type Command, Option } from 'commander';
import type { LrSchedule, Overflow, PretrainOptions } from '../learner/embedded/pretrain.js';
import {
  DEFAULT_PRETRAIN_MODEL,
  PRETRAIN_DEFAULTS as PD,
  DEFAULT_PRETRAIN_MODEL as PM,
  pretrain,
} from '../learner/embedded/pretrain.js';
import { UsageError } from '../util/errors.js';
import { parseNumberFlag } from './flags.js';

/** `seal pretrain` */
export function registerPretrain(program: Command): void {
  program
    .command('pretrain')
    .description(
      "Build the embedded policy's base checkpoint: supervised training on generated mini-suite demonstrations (resumable)",
    )
    .requiredOption('--out <dir>', 'checkpoint directory; rerunning into it resumes')
    .option('--steps <n>', `optimiser steps in total (default ${PD.steps})`)
    .option(
      '--seed <n>',
      `seed of the demonstrations, the initial weights and the batches (default ${PD.seed})`,
    )
    .option('--tasks <n>', `generated training tasks, one demonstration each (default ${PD.tasks})`)
    .option('--batch-size <n>', `sequences per step (default ${PD.batchSize})`)
    .option('--lr <x>', `peak Adam learning rate (default ${PD.lr})`)
    .addOption(
      new Option(
        '--schedule <kind>',
        `learning rate: warm-up then cosine decay to a tenth, or constant (default ${PD.schedule})`,
      ).choices(['cosine', 'constant']),
    )
    .option('--warmup <n>', `warm-up steps of the cosine schedule (default ${PD.warmup})`)
    .option('--max-grad-norm <x>', `gradient clipping (default ${PD.maxGradNorm})`)
    .option(
      '--cue-share <x>',
      `share of demonstrations shown through the training interface (default ${PD.cueShare})`,
    )
    .option('--recovery-share <x>', `share with a failed call and its repair (default ${PD.recoveryShare})`)
    .addOption(
      new Option(
        '--overflow <rule>',
        `demonstrations longer than the context (default ${PD.overflow})`,
      ).choices(['window', 'head', 'tail']),
    )
    .option(
      '--context-weight <x>',
      `loss weight of prompt, user and tool-result tokens next to 1 for assistant tokens (default ${PD.contextWeight})`,
    )
    .option('--vocab <n>', `tokenizer vocabulary size (default ${PM.vocabSize})`)
    .option('--context <n>', `context length in tokens (default ${PM.contextLength})`)
    .option('--layers <n>', `transformer layers (default ${PM.nLayer})`)
    .option('--heads <n>', `attention heads (default ${PM.nHead})`)
    .option('--width <n>', `model width (default ${PM.dModel})`)
    .option('--untied', 'separate input and output embeddings')
    .option(
      '--previous-token',
      "add the previous token's embedding, through a learned map, to each position (copying from the context becomes easy to learn; with --init, added at zero)",
    )
    .option('--workers <n>', 'gradient worker threads (default: 2, or 1 on a one-core machine)')
    .option(
      '--copy-drills <x>',
      `share of batch sequences that are copy drills (random tokens, then the same again) instead of demonstrations (default ${PD.copyDrills})`,
    )
    .option(
      '--init <dir>',
      'start from this checkpoint (its tokenizer, model config and weights) instead of fresh weights',
    )
    .option('--save-every <n>', `checkpoint every n steps (default ${PD.saveEvery})`)
    .option(
      '--held-out <n>',
      `demonstrations of unseen tasks scored at every checkpoint (loss, token accuracy); 0 for none (default ${PD.heldOut})`,
    )
    .option('--quiet', 'no progress lines (training.log.jsonl has every step)')
    .action((flags: PretrainFlags) => runPretrainCommand(flags, (s) => console.log(s)));
}

/** the largest embedded model `seal pretrain` builds (parameters) */
export const MAX_EMBEDDED_PARAMS = 100_000_000;

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

/** The options a flag set means. */
export function pretrainOptions(flags: PretrainFlags, log: (line: string) => void): PretrainOptions {
  const int = (flag: string, v: string | undefined, min = 1, max?: number) =>
    v === undefined
      ? undefined
      : parseNumberFlag(flag, v, { int: true, min, ...(max !== undefined ? { max } : {}) });
  const real = (flag: string, v: string | undefined, min: number, max?: number) =>
    v === undefined ? undefined : parseNumberFlag(flag, v, { min, ...(max !== undefined ? { max } : {}) });
  const config = {
    vocabSize: int('--vocab', flags.vocab, 300, 65_536),
    contextLength: int('--context', flags.context, 16, 16_384),
    nLayer: int('--layers', flags.layers, 1, 64),
    nHead: int('--heads', flags.heads, 1, 64),
    dModel: int('--width', flags.width, 1, 4096),
    ...(flags.untied ? { tiedEmbeddings: false } : {}),
    ...(flags.previousToken ? { previousTokenEmbedding: true } : {}),
  };
  const width = config.dModel ?? DEFAULT_PRETRAIN_MODEL.dModel;
  const heads = config.nHead ?? DEFAULT_PRETRAIN_MODEL.nHead;
  if (width % heads !== 0)
    throw new UsageError(`--width (${width}) must be a multiple of --heads (${heads}).`);
  const vocab = config.vocabSize ?? DEFAULT_PRETRAIN_MODEL.vocabSize;
  const context = config.contextLength ?? DEFAULT_PRETRAIN_MODEL.contextLength;
  const layers = config.nLayer ?? DEFAULT_PRETRAIN_MODEL.nLayer;
  // weights, gradients and two Adam moments, 4 bytes each, live in one WebAssembly memory of at
  // most 4 GiB next to the activations: past this the allocation fails deep inside training
  const params = (vocab + context) * width + layers * 12 * width * width;
  if (params > MAX_EMBEDDED_PARAMS)
    throw new UsageError(
      `a model of --width ${width}, --layers ${layers}, --vocab ${vocab} and --context ${context} has about ` +
        `${(params / 1e6).toFixed(0)}M parameters; the embedded policy holds at most ${MAX_EMBEDDED_PARAMS / 1e6}M. Use a smaller --width or fewer --layers.`,
    );
  const given = <T>(o: Record<string, T | undefined>) =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Record<string, T>;
  const cpus = availableParallelism();
  return {
    outDir: flags.out,
    ...given({
      seed: int('--seed', flags.seed, 0, 2 ** 32 - 1),
      tasks: int('--tasks', flags.tasks, 1, 10_000_000),
      steps: int('--steps', flags.steps, 1, 1_000_000_000),
      batchSize: int('--batch-size', flags.batchSize, 1, 65_536),
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
