/**
 * The embedded GPT behind the `Learner` contract: the PPO-clip + k3 KL loss (losses.ts) on the
 * training core (trainer.ts: this thread or the data-parallel gradient workers, Adam with
 * global-norm clipping), and a sampler on the new weights: the weights are written as a checkpoint directory (the format
 * `seal eval --model DIR` reads) and sampler threads load it.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadCheckpoint, MODEL_FILE, sha256Hex, TOKENIZER_FILE } from '../../nn/checkpoint.js';
import type { Gpt, Kernels } from '../../nn/model.js';
import type { Tokenizer } from '../../nn/tokenizer.js';
import {
  EmbeddedPolicy,
  embeddedPromptLength,
  embeddedRequestPromptIds,
} from '../../policy/embedded/policy.js';
import { DerivedSeedPolicy, EmbeddedPolicyPool } from '../../policy/embedded/pool.js';
import type { CompletionRequest } from '../../policy/policy.js';
import { writeAtomic, writeJsonAtomic } from '../../util/files.js';
import type {
  AdamParams,
  ChatText,
  CrossEntropyLoss,
  CrossEntropyResult,
  ForwardBackwardResult,
  Learner,
  OptimStepResult,
  PpoLoss,
  SamplingPolicy,
  SupervisedDatum,
  TrainingDatum,
} from '../learner.js';
import { crossEntropyLoss, type GrpoSequence, grpoLoss, tokenLogprob } from './losses.js';
import { sharedModel } from './parallel.js';
import { demonstrationSequences } from './pretrain.js';
import { Trainer } from './trainer.js';

export const OPTIMIZER_FILE = 'optimizer.bin';

export interface EmbeddedLearnerOptions {
  /** gradient worker threads (1: this thread) */
  readonly gradientWorkers: number;
  /** the float32 kernels of training, default wasm (sampling always runs wasm) */
  readonly kernels?: Kernels;
  /** sampler threads of `samplingPolicy` (1: this thread) */
  readonly samplerWorkers: number;
  /** where `samplingPolicy` writes the current weights for the sampler threads */
  readonly samplerDir: string;
  /** names the sampler in records, e.g. `embedded:run@<version>` */
  readonly name: string;
}

const toSequence = (d: TrainingDatum): GrpoSequence => ({
  tokens: d.tokens,
  lossMask: d.weights,
  oldLogprobs: d.samplingLogprobs,
  advantage: d.advantages,
});

export class EmbeddedLearner implements Learner {
  private readonly trainer: Trainer;
  private sampler: SamplingPolicy | undefined;
  private samplerVersion = -1;

  private constructor(
    readonly model: Gpt,
    reference: Gpt,
    readonly tokenizer: Tokenizer,
    private readonly baseConfig: Record<string, unknown>,
    /** the base's tokenizer file, copied byte for byte so its sha256 stays the base's */
    private readonly tokenizerText: string,
    private readonly opts: EmbeddedLearnerOptions,
  ) {
    // the learning rate and the clip come with each optimStep
    this.trainer = new Trainer(
      model,
      { lr: 0, workers: opts.gradientWorkers, kernels: opts.kernels ?? 'wasm' },
      reference,
    );
  }

  /**
   * The learner on the checkpoint in `base` (also the frozen KL reference); with `resumeDir`, the
   * weights and Adam state that `save(resumeDir)` wrote replace the base's.
   */
  static open(base: string, opts: EmbeddedLearnerOptions, resumeDir?: string): EmbeddedLearner {
    const { model, tokenizer, config } = loadCheckpoint(base);
    const trained = opts.gradientWorkers > 1 ? sharedModel(model) : model.clone();
    const tokenizerText = readFileSync(join(base, TOKENIZER_FILE), 'utf8');
    const baseConfig = config as unknown as Record<string, unknown>;
    const learner = new EmbeddedLearner(trained, model, tokenizer, baseConfig, tokenizerText, opts);
    if (resumeDir) {
      const saved = loadCheckpoint(resumeDir).model;
      trained.params.set(saved.params);
      learner.trainer.optimizer.restore(new Uint8Array(readFileSync(join(resumeDir, OPTIMIZER_FILE))));
    }
    return learner;
  }

  get version(): number {
    return this.trainer.optimizer.steps;
  }

  forwardBackward(data: readonly TrainingDatum[], loss: PpoLoss): Promise<ForwardBackwardResult> {
    const { clipEps, klCoef, temperature } = loss;
    return this.trainer.forwardBackward(data.map(toSequence), grpoLoss({ clipEps, klCoef, temperature }));
  }

  async logprobs(
    sequences: readonly { readonly tokens: readonly number[]; readonly from: number }[],
    temperature: number,
  ): Promise<number[][]> {
    const V = this.model.config.vocabSize;
    return sequences.map((s) => {
      if (s.from < 1 || s.from > s.tokens.length)
        throw new RangeError(`logprobs: from ${s.from} of ${s.tokens.length}`);
      const rows = Array.from({ length: s.tokens.length - s.from }, (_, j) => s.from - 1 + j);
      if (rows.length === 0) return [];
      const { logits } = this.model.forward(s.tokens, { rows, backward: false });
      const tempered = temperature === 1 ? logits : logits.map((z) => z / temperature);
      return rows.map((row, j) => tokenLogprob(tempered, V, j, s.tokens[row + 1]!));
    });
  }

  forwardBackwardCrossEntropy(
    data: readonly SupervisedDatum[],
    loss: CrossEntropyLoss,
  ): Promise<CrossEntropyResult> {
    const batch = data.map((d) => ({ tokens: d.tokens, lossMask: d.weights }));
    return this.trainer.forwardBackward(batch, crossEntropyLoss(loss.coef));
  }

  renderSupervised(chat: readonly ChatText[]): SupervisedDatum[] {
    const { sequences } = demonstrationSequences(
      this.tokenizer,
      [{ messages: chat }],
      this.model.config.contextLength,
    );
    return sequences.map((s) => ({
      tokens: s.tokens,
      weights: s.lossMask ?? s.tokens.map((_, i) => (i > 0 ? 1 : 0)),
    }));
  }

  async optimStep(adam: AdamParams): Promise<OptimStepResult> {
    const gradNorm = this.trainer.optimStep({ lr: adam.lr, maxGradNorm: adam.maxGradNorm ?? 1 });
    return { gradNorm, step: this.version };
  }

  async samplingPolicy(): Promise<SamplingPolicy> {
    // the weights have not moved since the last sampler (validation, then the next round): keep it
    if (this.sampler && this.samplerVersion === this.version) return this.sampler;
    this.samplerVersion = this.version;
    const name = `${this.opts.name}@${this.version}`;
    if (this.opts.samplerWorkers <= 1) {
      await this.sampler?.close();
      const inner = new DerivedSeedPolicy(new EmbeddedPolicy(this.model, this.tokenizer, { name }));
      this.sampler = {
        name,
        complete: (r, s) => inner.complete(r, s),
        ...(inner.promptLength ? { promptLength: inner.promptLength } : {}),
        ...(inner.promptTokenIds ? { promptTokenIds: inner.promptTokenIds } : {}),
        close: async () => {},
      };
      return this.sampler;
    }
    const dir = this.opts.samplerDir;
    this.writeCheckpoint(dir);
    const pool = this.sampler;
    if (pool instanceof EmbeddedPolicyPool) {
      // the threads load the new weights in place of the old
      try {
        await pool.reload(dir, name);
      } catch (e) {
        // the pool closed itself; the next call starts a new one
        this.sampler = undefined;
        throw e;
      }
      return pool;
    }
    // the threads' tokenizer and context are this thread's: the prompt length is measured here
    const promptLength = (r: CompletionRequest) =>
      embeddedPromptLength(this.tokenizer, this.model.config.contextLength, r);
    const promptTokenIds = (r: CompletionRequest) =>
      embeddedRequestPromptIds(this.tokenizer, this.model.config.contextLength, r);
    this.sampler = await EmbeddedPolicyPool.start(dir, {
      name,
      workers: this.opts.samplerWorkers,
      promptLength,
      promptTokenIds,
    });
    return this.sampler;
  }

  /** the current weights as a checkpoint directory that `loadCheckpoint` and `seal eval` read */
  writeCheckpoint(dir: string): void {
    mkdirSync(dir, { recursive: true });
    const bytes = this.model.serialize({ step: this.version });
    const tokenizerText = this.tokenizerText;
    writeAtomic(join(dir, TOKENIZER_FILE), tokenizerText);
    writeAtomic(join(dir, MODEL_FILE), bytes);
    writeJsonAtomic(join(dir, 'config.json'), {
      ...this.baseConfig,
      modelSha256: sha256Hex(bytes),
      tokenizerSha256: sha256Hex(tokenizerText),
      trainedSteps: this.version,
    });
  }

  async save(dir: string): Promise<void> {
    this.writeCheckpoint(dir);
    writeAtomic(join(dir, OPTIMIZER_FILE), this.trainer.optimizer.serialize({ exact: true }));
  }

  static hasState(dir: string): boolean {
    return existsSync(join(dir, OPTIMIZER_FILE)) && existsSync(join(dir, MODEL_FILE));
  }

  async close(): Promise<void> {
    await this.sampler?.close();
    this.sampler = undefined;
    await this.trainer.close();
  }
}
