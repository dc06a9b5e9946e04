/**
 * The learner contract on a Tinker service: the loop's token-level data become Tinker datums
 * (seal-datums.ts: every normalisation folded in, since Tinker's losses are sums), `forward_backward`
 * with `ppo` at the method's clip (the client splits a batch into chunks within the server's
 * limits), `optim_step` (Adam), and a sampler on the new weights through an ephemeral
 * `save_weights_for_sampler`. The KL to the base model, which Tinker does not compute, comes from a
 * base-model sampling session's prompt logprobs (one prefill per training sequence) folded into the
 * advantages; with klCoef 0 no base session is opened.
 *
 * `save(dir)` writes the training state and the sampler weights on the service and records their
 * `tinker://` paths in `dir/tinker.json`; `TinkerLearner.open(..., resumeFrom)` continues from them
 * on a new model whose first request is `load_weights` (weights and optimiser state).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { TinkerPolicy } from '../../policy/tinker.js';
import type { Renderer, RenderMessage } from '../../render/renderer.js';
import type { SamplingClient, TinkerClient, TrainingClient } from '../../tinker/client.js';
import type { LossSpec, TinkerDatum } from '../../tinker/datums.js';
import { writeJsonAtomic } from '../../util/files.js';
import type {
  AdamParams,
  BilledUsage,
  ChatText,
  CrossEntropyLoss,
  CrossEntropyResult,
  ForwardBackwardResult,
  Learner,
  LearnerUsage,
  OptimStepResult,
  PpoLoss,
  SamplingPolicy,
  SupervisedDatum,
  TrainingDatum,
} from '../learner.js';
import {
  type BaseLogprobs,
  checkTinkerPpoLoss,
  policyDatums,
  supervisedDatums,
  type TinkerForwardBackwardInput,
  type TinkerDatum as TinkerJsonDatum,
} from './seal-datums.js';
import { crossEntropyStats, policyStats } from './stats.js';

/** `tinker.json` in a checkpoint directory */
export interface TinkerCheckpoint {
  readonly format: 'seal-tinker-checkpoint';
  readonly baseModel: string;
  readonly loraRank: number;
  /** the model the paths were saved from */
  readonly modelId: string;
  /** optimiser steps taken */
  readonly version: number;
  /** training state (weights and optimiser): what `load_weights` takes */
  readonly state: string;
  /** sampler weights: what `seal eval --policy tinker --model` takes */
  readonly sampler: string;
}

export const TINKER_CHECKPOINT_FILE = 'tinker.json';

export function readTinkerCheckpoint(dir: string): TinkerCheckpoint {
  const path = join(dir, TINKER_CHECKPOINT_FILE);
  if (!existsSync(path))
    throw new Error(`${dir} holds no ${TINKER_CHECKPOINT_FILE}: it is not a checkpoint of a Tinker run`);
  const v = JSON.parse(readFileSync(path, 'utf8')) as TinkerCheckpoint;
  if (v.format !== 'seal-tinker-checkpoint' || !v.state?.startsWith('tinker://'))
    throw new Error(`${path} is not a seal Tinker checkpoint record`);
  return v;
}

export interface TinkerLearnerOptions {
  readonly client: TinkerClient;
  readonly renderer: Renderer;
  readonly baseModel: string;
  readonly loraRank: number;
  readonly seed?: number;
  /** open a base-model sampling session for the KL term (klCoef > 0) */
  readonly klToBase: boolean;
  /** sampling requests in flight at once per sampler */
  readonly maxInFlight?: number;
  readonly enableThinking?: boolean;
  /**
   * a checkpoint saved with `keep: false` lives this long on the service (a resume needs only the
   * last one); kept ones never expire. Default: the service's own.
   */
  readonly ttlSeconds?: number;
  readonly log?: (line: string) => void;
}

/** a seal-datums datum in the wire client's form */
function wireDatum(d: TinkerJsonDatum): TinkerDatum {
  const f = d.loss_fn_inputs;
  return {
    modelInput: d.model_input.chunks[0].tokens,
    lossFnInputs: {
      target_tokens: f.target_tokens.data,
      ...(f.weights ? { weights: f.weights.data } : {}),
      ...(f.logprobs ? { logprobs: f.logprobs.data } : {}),
      ...(f.advantages ? { advantages: f.advantages.data } : {}),
    },
  };
}

function wireInput(input: TinkerForwardBackwardInput): { data: TinkerDatum[]; loss: LossSpec } {
  return {
    data: input.data.map(wireDatum),
    loss: {
      fn: input.loss_fn,
      ...(input.loss_fn_config ? { config: { ...input.loss_fn_config } } : {}),
    },
  };
}

/** prefills started ahead and not yet taken, at most; the oldest go first */
const MAX_PREFILLS_HELD = 4096;

const sequenceKey = (tokens: readonly number[]) => tokens.join(',');

/** `f` over `xs` with at most `limit` in flight, results in order */
async function mapLimited<T, R>(xs: readonly T[], limit: number, f: (x: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(xs.length);
  let next = 0;
  const worker = async () => {
    while (next < xs.length) {
      const i = next++;
      out[i] = await f(xs[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, xs.length) }, worker));
  return out;
}

export class TinkerLearner implements Learner {
  readonly queuesCalls = true;
  private steps: number;
  private base: SamplingClient | undefined;
  /** prefill tokens spent on the KL term's base logprobs, over the learner's life */
  baseTokens = 0;
  /** settles when the last call made has been sent (taken its seq ids), not when it is done */
  private sent: Promise<void> = Promise.resolve();
  /** the service's max_context_length for the base model, when it says */
  maxContextLength: number | undefined;
  /** the sampler weights the last save wrote, and the version they hold */
  private saved: { readonly path: string; readonly version: number } | undefined;
  /** base-model prefills started ahead of their forwardBackward (`prepare`), by sequence */
  private readonly prefills = new Map<string, Promise<BaseLogprobs[number]>>();

  private constructor(
    private readonly training: TrainingClient,
    private readonly opts: TinkerLearnerOptions,
    version: number,
  ) {
    this.steps = version;
  }

  /** a new LoRA model on the base, or (resumeFrom: a checkpoint dir) one that continues a saved state */
  static async open(opts: TinkerLearnerOptions, resumeFrom?: string): Promise<TinkerLearner> {
    const saved = resumeFrom ? readTinkerCheckpoint(resumeFrom) : undefined;
    if (saved && (saved.baseModel !== opts.baseModel || saved.loraRank !== opts.loraRank))
      throw new Error(
        `${resumeFrom} was saved from ${saved.baseModel} (LoRA rank ${saved.loraRank}), not ${opts.baseModel} (rank ${opts.loraRank})`,
      );
    const training = await opts.client.createTrainingClient({
      baseModel: opts.baseModel,
      loraRank: opts.loraRank,
      ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
      ...(saved ? { loadFrom: { path: saved.state, optimizer: true } } : {}),
    });
    const learner = new TinkerLearner(training, opts, saved?.version ?? 0);
    if (opts.klToBase) learner.base = await opts.client.createSamplingClient({ baseModel: opts.baseModel });
    // the guard against a prompt the service would refuse; a service that does not say has none
    const caps = await opts.client.serverCapabilities().catch(() => undefined);
    const context = caps?.supported_models.find((m) => m.model_name === opts.baseModel)?.max_context_length;
    if (typeof context === 'number' && context > 0) learner.maxContextLength = context;
    return learner;
  }

  get version(): number {
    return this.steps;
  }

  /**
   * Calls go to the service in the order they were made, each right behind the one before, without
   * waiting for its result: `prepare` (the KL prefills, say) may run at once, but `send` (which
   * takes the request's seq ids) runs only after every earlier call's send. Without this a
   * forward_backward whose prefills finish late would take a seq id after the optim_step behind it.
   */
  private inOrder<P, T>(prepare: () => Promise<P>, send: (p: P) => Promise<T>): Promise<T> {
    const before = this.sent;
    let done!: () => void;
    this.sent = new Promise<void>((r) => {
      done = r;
    });
    return (async () => {
      try {
        const p = await prepare();
        await before;
        const pending = send(p);
        done();
        return await pending;
      } finally {
        done();
      }
    })();
  }

  /** `inOrder` for a call with nothing to prepare */
  private sendInOrder<T>(send: () => Promise<T>): Promise<T> {
    return this.inOrder(async () => undefined, send);
  }

  get modelId(): string {
    return this.training.modelId;
  }

  /** the base model's logprob of every token of every datum (one prefill each, or its head start) */
  private async baseLogprobs(data: readonly TrainingDatum[]): Promise<BaseLogprobs> {
    const early = data.map((d) => {
      const key = sequenceKey(d.tokens);
      const p = this.prefills.get(key);
      this.prefills.delete(key);
      return p;
    });
    const fresh = data.filter((_, i) => early[i] === undefined);
    const tokens = data.reduce((s, d) => s + d.tokens.length, 0);
    const ahead = data.length - fresh.length;
    this.opts.log?.(
      `KL to the base: ${tokens} prefill tokens over ${data.length} sequences on ${this.opts.baseModel}${ahead > 0 ? ` (${ahead} started as their group ended)` : ''}`,
    );
    const late = this.prefillAll(fresh);
    // the k-th datum without a head start is the k-th of `fresh`
    let k = 0;
    const freshIndex = early.map((p) => (p ? -1 : k++));
    return Promise.all(early.map((p, i) => p ?? late.then((ls) => ls[freshIndex[i]!]!)));
  }

  private prefillAll(data: readonly TrainingDatum[]): Promise<BaseLogprobs> {
    const base = this.base;
    if (!base)
      return Promise.reject(new Error('the KL term needs the base-model sampling session (klToBase)'));
    this.baseTokens += data.reduce((s, d) => s + d.tokens.length, 0);
    return mapLimited(data, this.opts.maxInFlight ?? 64, (d) => base.computeLogprobs(d.tokens));
  }

  usage(): LearnerUsage {
    return {
      session: this.opts.client.sessionId,
      klPrefillTokens: this.baseTokens,
      requests: this.opts.client.times.snapshot(),
    };
  }

  billed(sessions: readonly string[], from: Date): Promise<BilledUsage> {
    return this.opts.client.billedCost(sessions, from, new Date());
  }

  /** the KL prefills of data a later forwardBackward will get, started now */
  prepare(data: readonly TrainingDatum[]): void {
    if (!this.base || data.length === 0) return;
    const started = this.prefillAll(data);
    data.forEach((d, i) => {
      const p = started.then((ls) => ls[i]!);
      // a failure is the forwardBackward's to report, or nobody's if the data never train
      p.catch(() => undefined);
      this.prefills.set(sequenceKey(d.tokens), p);
    });
    // data that never trained (a sequence the credit rule left without advantage) are forgotten
    for (const key of this.prefills.keys()) {
      if (this.prefills.size <= MAX_PREFILLS_HELD) break;
      this.prefills.delete(key);
    }
  }

  forwardBackward(data: readonly TrainingDatum[], loss: PpoLoss): Promise<ForwardBackwardResult> {
    checkTinkerPpoLoss(loss, this.base !== undefined);
    return this.inOrder(
      async () => (loss.klCoef > 0 ? await this.baseLogprobs(data) : undefined),
      async (base) => {
        const { data: wire, loss: spec } = wireInput(policyDatums(data, loss, base ? { base } : {}));
        const result = await this.training.forwardBackward(wire, spec);
        return policyStats(data, result.logprobs, loss, base);
      },
    );
  }

  forwardBackwardCrossEntropy(
    data: readonly SupervisedDatum[],
    loss: CrossEntropyLoss,
  ): Promise<CrossEntropyResult> {
    return this.sendInOrder(async () => {
      const { data: wire, loss: spec } = wireInput(supervisedDatums(data, loss));
      const result = await this.training.forwardBackward(wire, spec);
      return crossEntropyStats(data, result.logprobs);
    });
  }

  /**
   * The chat in the model's template, each assistant message's tokens the targets: the tokens that
   * rendering the chat up to that message adds to the generation prompt before it. A template that
   * rewrites earlier turns gives no targets for them (nothing is re-tokenised).
   */
  renderSupervised(chat: readonly ChatText[]): SupervisedDatum[] {
    const r = this.opts.renderer;
    const render = (messages: readonly ChatText[], gen: boolean) =>
      r.render({ messages: messages as readonly RenderMessage[], addGenerationPrompt: gen }).tokens;
    const tokens = render(chat, false);
    const weights = new Array<number>(tokens.length).fill(0);
    const prefixOf = (ids: readonly number[]) => ids.every((id, i) => tokens[i] === id);
    chat.forEach((m, i) => {
      if (m.role !== 'assistant') return;
      const before = render(chat.slice(0, i), true);
      const upTo = render(chat.slice(0, i + 1), false);
      if (!prefixOf(before) || !prefixOf(upTo)) return;
      for (let t = Math.max(1, before.length); t < upTo.length; t++) weights[t] = 1;
    });
    return [{ tokens, weights }];
  }

  optimStep(adam: AdamParams): Promise<OptimStepResult> {
    return this.sendInOrder(async () => {
      const pending = this.training.optimStep({
        learningRate: adam.lr,
        ...(adam.beta1 !== undefined ? { beta1: adam.beta1 } : {}),
        ...(adam.beta2 !== undefined ? { beta2: adam.beta2 } : {}),
        ...(adam.eps !== undefined ? { eps: adam.eps } : {}),
        ...(adam.weightDecay !== undefined ? { weightDecay: adam.weightDecay } : {}),
        ...(adam.maxGradNorm !== undefined ? { gradClipNorm: adam.maxGradNorm } : {}),
      });
      // the version counts steps sent: what a save or sampler queued behind this one will hold
      const step = ++this.steps;
      const res = await pending;
      // the services name no gradient norm in a fixed place; 0 when none is reported
      const norm = Object.entries(res.metrics).find(([k]) => /grad.?norm/i.test(k))?.[1];
      return { gradNorm: typeof norm === 'number' ? norm : 0, step };
    });
  }

  /**
   * A sampler on the current weights: the sampler weights the last save wrote when they are
   * current (a sampling session on a saved path costs the trainer nothing), else an ephemeral
   * `save_weights_for_sampler` queued behind the steps before it.
   */
  samplingPolicy(): Promise<SamplingPolicy> {
    return this.sendInOrder(async () => {
      const saved = this.saved;
      const sampler =
        saved && saved.version === this.steps
          ? await this.opts.client.createSamplingClient({ modelPath: saved.path })
          : await this.training.samplingClient();
      return this.policyOn(sampler);
    });
  }

  /**
   * A sampler on a checkpoint's sampler weights, or (null) on the base model: a LoRA before its
   * first step is the base model (its B matrices start at zero), so no export is needed for it.
   */
  async samplingPolicyAt(checkpoint: string | null): Promise<SamplingPolicy> {
    if (checkpoint === null)
      return this.policyOn(
        await this.opts.client.createSamplingClient({ baseModel: this.opts.baseModel }),
        0,
      );
    const saved = readTinkerCheckpoint(checkpoint);
    return this.policyOn(
      await this.opts.client.createSamplingClient({ modelPath: saved.sampler }),
      saved.version,
    );
  }

  private policyOn(sampler: SamplingClient, version = this.steps): SamplingPolicy {
    return new TinkerPolicy(sampler, this.opts.renderer, {
      name: `tinker:${this.opts.baseModel}@${this.training.modelId}/v${version}`,
      ...(this.opts.maxInFlight !== undefined ? { maxInFlight: this.opts.maxInFlight } : {}),
      ...(this.maxContextLength !== undefined ? { maxContextLength: this.maxContextLength } : {}),
      ...(this.opts.enableThinking !== undefined ? { enableThinking: this.opts.enableThinking } : {}),
    });
  }

  /**
   * The training state and the sampler weights, both sent at once behind the steps before them;
   * `keep: false` gives them the learner's `ttlSeconds`, so only kept checkpoints outlive the run.
   */
  save(dir: string, opts: { readonly keep?: boolean } = {}): Promise<void> {
    mkdirSync(dir, { recursive: true });
    // unique per model too, in case a server keeps names in one namespace (a taken name is a 409)
    const model = createHash('sha256').update(this.training.modelId).digest('hex').slice(0, 8);
    const ttl =
      opts.keep === false && this.opts.ttlSeconds !== undefined ? { ttlSeconds: this.opts.ttlSeconds } : {};
    return this.sendInOrder(async () => {
      const version = this.steps;
      const name = `seal-${basename(dir).replace(/[^A-Za-z0-9_-]/g, '-')}-v${version}-${model}`;
      const [state, sampler] = await Promise.all([
        this.training.saveWeights(name, ttl),
        this.training.saveWeightsForSampler(name, ttl),
      ]);
      this.saved = { path: sampler, version };
      this.writeRecord(dir, version, state, sampler);
    });
  }

  private writeRecord(dir: string, version: number, state: string, sampler: string): void {
    const record: TinkerCheckpoint = {
      format: 'seal-tinker-checkpoint',
      baseModel: this.opts.baseModel,
      loraRank: this.opts.loraRank,
      modelId: this.training.modelId,
      version,
      state,
      sampler,
    };
    writeJsonAtomic(join(dir, TINKER_CHECKPOINT_FILE), record);
  }

  async close(): Promise<void> {
    this.opts.client.close();
  }
}
