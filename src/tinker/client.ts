/**
 * The Tinker client, shaped like the SDK's: a `TinkerClient` (the service: session, capabilities,
 * models, sampling sessions), a `TrainingClient` per model (forward_backward, optim_step, saves and
 * loads) and a `SamplingClient` per sampling session (asample). Token ids in, token ids and
 * logprobs out; the client never tokenises.
 *
 * Ordering: every training request of a model takes the next seq_id when it is called (never one
 * skipped), and submissions go out in seq order, each as soon as the one before it was accepted,
 * so a caller that calls `forwardBackward` and then `optimStep` before awaiting either has both
 * queued for the same clock cycle. A batch larger than the server's limits goes as several chunks,
 * each with its own seq_id. A submission that is never accepted breaks the model's sequence (the
 * server would wait for that seq_id forever), so every later call fails with that cause.
 */

import { Semaphore } from '../util/semaphore.js';
import { type BilledCost, billedCost } from './billing.js';
import {
  type ArchiveUrl,
  checkpointArchiveUrl,
  deleteCheckpoint,
  listCheckpoints,
  setCheckpointTtl,
} from './checkpoints.js';
import {
  chunkDatums,
  type LossSpec,
  mergeForwardBackwardOutputs,
  modelInputOf,
  type TinkerDatum,
} from './datums.js';
import { TinkerError } from './errors.js';
import { type FutureOptions, type FutureResult, jsonResult, runFuture } from './futures.js';
import { type HttpAnswer, newIdempotencyKey, parseJsonBody } from './http.js';
import { decodeForwardBackwardOutput, decodeSampleResponse } from './proto.js';
import { RequestTimes } from './request-times.js';
import {
  type AdamOptions,
  adamParams,
  type EncodedRequest,
  encodeForwardBackward,
  forwardBackwardRequest,
  json,
  type SamplingOptions,
  sampleRequest,
  samplingParams,
  wireData,
  zstdEncoded,
} from './requests.js';
import {
  type Checkpoint,
  CreateModelResultSchema,
  CreateSamplingSessionSchema,
  type ForwardBackwardOutput,
  ForwardBackwardOutputSchema,
  GetInfoSchema,
  LoadWeightsResultSchema,
  type LossFnOutput,
  type ModelInfo,
  type ModelInput,
  OptimStepResultSchema,
  parseWire,
  type SampleResponse,
  SampleResponseSchema,
  SaveForSamplerResultSchema,
  SaveWeightsResultSchema,
  type ServerCapabilities,
  type WireDatum,
} from './schemas.js';
import {
  type ClientConfig,
  fetchCapabilities,
  openSession,
  type TinkerClientOptions,
  type TinkerSession,
} from './session.js';

/** per call: an overall deadline other than the client's, and a caller's abort */
export interface CallOptions {
  readonly deadlineMs?: number;
  readonly signal?: AbortSignal;
}

export interface CreateModelOptions {
  readonly baseModel: string;
  /** LoRA rank (SkyRL: 0 is full fine-tuning) */
  readonly loraRank: number;
  readonly seed?: number;
  readonly trainUnembed?: boolean;
  readonly trainMlp?: boolean;
  readonly trainAttn?: boolean;
  readonly userMetadata?: Readonly<Record<string, string>>;
  /** load this `tinker://.../weights/...` state as the new model's first request */
  readonly loadFrom?: { readonly path: string; readonly optimizer?: boolean };
}

export interface ForwardBackwardResult {
  /** the output record's class name (`ArrayRecord`) */
  readonly lossFnOutputType: string;
  /** per datum, the server's outputs (`logprobs`, and `elementwise_loss` on SkyRL) */
  readonly outputs: readonly LossFnOutput[];
  /** per datum, the learner's logprob of each target token */
  readonly logprobs: readonly (readonly number[])[];
  /** merged over chunks by suffix (`loss:sum` adds); empty on SkyRL's JAX backend */
  readonly metrics: Readonly<Record<string, number>>;
  /** the seq_ids the chunks went out with */
  readonly seqIds: readonly number[];
}

export interface OptimStepResult {
  readonly metrics: Readonly<Record<string, number>>;
  readonly seqId: number;
}

export interface SaveOptions extends CallOptions {
  /** the server deletes the checkpoint after this long (storage is billed until then) */
  readonly ttlSeconds?: number;
}

export interface SampleOptions extends SamplingOptions, CallOptions {
  readonly numSamples?: number;
  /** also return the logprob of every prompt token (the first is null) */
  readonly promptLogprobs?: boolean;
  readonly topkPromptLogprobs?: number;
}

export interface SampledSequence {
  readonly tokens: readonly number[];
  /** the sampler's logprob of each sampled token, when the server returns them */
  readonly logprobs: readonly number[] | null;
  readonly stopReason: 'stop' | 'length';
}

export interface SampleResult {
  readonly sequences: readonly SampledSequence[];
  readonly promptLogprobs: readonly (number | null)[] | null;
  readonly topkPromptLogprobs?: readonly ((readonly [number, number])[] | null)[] | null;
  readonly promptCacheHitTokens: number;
}

const CHECKPOINT_NAME = /^[a-zA-Z0-9_-]{1,255}$/;

function checkpointName(name: string): string {
  if (!CHECKPOINT_NAME.test(name)) {
    throw new TinkerError('usage', `a checkpoint name is 1-255 letters, digits, '_' or '-', got '${name}'`);
  }
  return name;
}

function queueObserver(session: TinkerSession): Pick<FutureOptions, 'onQueueState'> {
  const observe = session.options.onQueueState;
  return observe ? { onQueueState: observe } : {};
}

/** The service: one session, its heartbeat, and the models and sampling sessions made in it. */
export class TinkerClient {
  private fwdWire: 'json' | 'proto';

  /** @internal samples in flight, within the server's `sample_max_concurrent_requests` */
  readonly sampleLimiter: Semaphore;
  /** the wall time of every request run to its result, by route */
  readonly times = new RequestTimes();

  private constructor(readonly session: TinkerSession) {
    this.fwdWire = session.options.wire === 'json' ? 'json' : 'proto';
    this.sampleLimiter = new Semaphore(session.config.sampleMaxConcurrentRequests);
  }

  /** client/config, create_session and the heartbeat; options over TINKER_BASE_URL / TINKER_API_KEY */
  static async connect(options: TinkerClientOptions = {}): Promise<TinkerClient> {
    return new TinkerClient(await openSession(options));
  }

  get sessionId(): string {
    return this.session.sessionId;
  }

  get baseUrl(): string {
    return this.session.transport.baseUrl;
  }

  get config(): ClientConfig {
    return this.session.config;
  }

  /** the wire form forward_backward goes out in now (`auto` settles on one at the first refusal) */
  get wire(): 'json' | 'proto' {
    return this.fwdWire;
  }

  serverCapabilities(): Promise<ServerCapabilities> {
    return fetchCapabilities(this.session.transport);
  }

  /** create_model (a LoRA on `baseModel`), then `loadFrom` as its first request when given */
  async createTrainingClient(opts: CreateModelOptions, call: CallOptions = {}): Promise<TrainingClient> {
    if (!Number.isInteger(opts.loraRank) || opts.loraRank < 0) {
      throw new TinkerError('usage', `loraRank must be a whole number >= 0, got ${opts.loraRank}`);
    }
    const body = {
      session_id: this.sessionId,
      model_seq_id: this.session.nextModelSeqId(),
      base_model: opts.baseModel,
      ...(opts.userMetadata ? { user_metadata: opts.userMetadata } : {}),
      lora_config: {
        rank: opts.loraRank,
        ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
        train_unembed: opts.trainUnembed ?? true,
        train_mlp: opts.trainMlp ?? true,
        train_attn: opts.trainAttn ?? true,
      },
      type: 'create_model',
    };
    const result = await this.future(json('create_model', body), 'create_model', 'CreateModel', false, call);
    const created = jsonResult(
      result,
      (v) => parseWire(CreateModelResultSchema, v, 'create_model'),
      'create_model',
    );
    const training = new TrainingClient(this, created.model_id, 1, opts.baseModel);
    if (opts.loadFrom)
      await training.loadWeights(opts.loadFrom.path, { optimizer: opts.loadFrom.optimizer ?? true, ...call });
    return training;
  }

  /**
   * A client for a model that exists already, continuing its seq_ids at `nextSeqId` (the seq_id
   * its next request takes). Two clients on one model collide (409).
   */
  trainingClient(modelId: string, opts: { nextSeqId?: number; baseModel?: string } = {}): TrainingClient {
    return new TrainingClient(this, modelId, opts.nextSeqId ?? 1, opts.baseModel);
  }

  /** a sampling session on a base model or on saved sampler weights (`tinker://.../sampler_weights/...`) */
  async createSamplingClient(
    source: { readonly baseModel: string } | { readonly modelPath: string },
    call: CallOptions = {},
  ): Promise<SamplingClient> {
    const body = {
      session_id: this.sessionId,
      sampling_session_seq_id: this.session.nextSamplingSessionSeqId(),
      ...('baseModel' in source ? { base_model: source.baseModel } : { model_path: source.modelPath }),
    };
    const answer = await this.session.transport.send(
      'POST',
      'create_sampling_session',
      json('create_sampling_session', body),
      {
        what: 'create_sampling_session',
        ...this.deadline(call),
      },
    );
    const parsed = parseWire(
      CreateSamplingSessionSchema,
      parseJsonBody(answer, 'create_sampling_session'),
      'create_sampling_session',
    );
    return new SamplingClient(this, parsed.sampling_session_id);
  }

  // ---- checkpoints on the service (REST routes) -----------------------------------------------

  /** every checkpoint of a training run (`tinker://RUN` or the run id) */
  listCheckpoints(run: string, call: CallOptions = {}): Promise<Checkpoint[]> {
    return listCheckpoints(this.session.transport, run, this.deadline(call));
  }

  /** the checkpoint at `path` expires `ttlSeconds` from now; `null` keeps it until deleted */
  setCheckpointTtl(path: string, ttlSeconds: number | null, call: CallOptions = {}): Promise<void> {
    return setCheckpointTtl(this.session.transport, path, ttlSeconds, this.deadline(call));
  }

  deleteCheckpoint(path: string, call: CallOptions = {}): Promise<void> {
    return deleteCheckpoint(this.session.transport, path, this.deadline(call));
  }

  /** the signed URL the checkpoint's archive (a tar) downloads from, and when it expires */
  checkpointArchiveUrl(path: string, call: CallOptions = {}): Promise<ArchiveUrl> {
    return checkpointArchiveUrl(this.session.transport, path, this.deadline(call));
  }

  /**
   * What the service bills `sessions` (this one's id, and earlier ones of the same run) over the
   * whole UTC hours around [from, to); a key without billing access gets the service's refusal
   */
  billedCost(sessions: readonly string[], from: Date, to: Date, call: CallOptions = {}): Promise<BilledCost> {
    return billedCost(this.session.transport, new Set(sessions), from, to, this.deadline(call));
  }

  /** stops the heartbeat; the server frees the session's resources when it times out */
  close(): void {
    this.session.close();
  }

  // ---- internals shared with the model and sampling clients ----------------------------------

  /** @internal the overall deadline of one call as a signal */
  deadline(call: CallOptions): { signal: AbortSignal } {
    if (this.session.isClosed) throw new TinkerError('closed', 'the Tinker client was closed');
    const timeout = AbortSignal.timeout(call.deadlineMs ?? this.session.options.deadlineMs);
    return { signal: call.signal ? AbortSignal.any([call.signal, timeout]) : timeout };
  }

  /** @internal an async route run to its result; `submit` may be given to sequence the first send */
  async future(
    request: EncodedRequest,
    what: string,
    requestType: string,
    acceptProto: boolean,
    call: CallOptions,
    submit?: (send: () => Promise<HttpAnswer>) => () => Promise<HttpAnswer>,
  ): Promise<FutureResult> {
    const { signal } = this.deadline(call);
    const idempotencyKey = newIdempotencyKey();
    const send = () =>
      this.session.transport.send('POST', request.route, request, {
        what,
        signal,
        idempotencyKey,
        ...(requestType === 'Sample' ? { headers: { 'X-Tinker-Sampling-Backpressure': '1' } } : {}),
      });
    return this.timed(request.route, submit ? submit(send) : send, (timedSubmit) =>
      runFuture(this.session.transport, timedSubmit, what, {
        requestType,
        acceptProto,
        signal,
        pollTimeoutMs: this.session.options.pollTimeoutMs,
        ...queueObserver(this.session),
      }),
    );
  }

  /** @internal `run` with its submission timed: the whole call, and the part after the service took it */
  async timed<T>(
    route: string,
    submit: () => Promise<HttpAnswer>,
    run: (submit: () => Promise<HttpAnswer>) => Promise<T>,
  ): Promise<T> {
    const t0 = performance.now();
    let accepted = t0;
    try {
      return await run(async () => {
        const answer = await submit();
        accepted = performance.now();
        return answer;
      });
    } finally {
      const end = performance.now();
      this.times.add(route, end - t0, end - accepted);
    }
  }

  /** @internal sends a forward_backward body in the current wire form, falling back to JSON under `auto` */
  async sendForwardBackward(
    req: ReturnType<typeof forwardBackwardRequest>,
    forwardOnly: boolean,
    opts: { what: string; signal: AbortSignal; idempotencyKey: string },
  ): Promise<HttpAnswer> {
    const wire = this.fwdWire;
    const plain = encodeForwardBackward(req, wire, forwardOnly);
    // compressed once here, so every retry resends the same bytes
    const encoded = this.session.config.protoCompressFwdbwd ? await zstdEncoded(plain) : plain;
    try {
      return await this.session.transport.send('POST', encoded.route, encoded, opts);
    } catch (e) {
      const refused = e instanceof TinkerError && (e.status === 415 || e.status === 400 || e.status === 422);
      if (!(refused && wire === 'proto' && this.session.options.wire === 'auto')) throw e;
      this.fwdWire = 'json';
      const asJson = encodeForwardBackward(req, 'json', forwardOnly);
      return this.session.transport.send('POST', asJson.route, asJson, {
        ...opts,
        idempotencyKey: newIdempotencyKey(),
      });
    }
  }

  /** @internal whether results that may be protobuf are asked for as protobuf */
  get acceptProto(): boolean {
    return this.session.options.wire !== 'json';
  }
}

/** One model being trained: its seq_ids, its requests. */
export class TrainingClient {
  private seq: number;
  private turn: Promise<void> = Promise.resolve();
  private broken: TinkerError | undefined;

  /** @internal made by `TinkerClient` */
  constructor(
    private readonly client: TinkerClient,
    readonly modelId: string,
    firstSeqId: number,
    readonly baseModel: string | undefined,
  ) {
    if (!Number.isInteger(firstSeqId) || firstSeqId < 1) {
      throw new TinkerError('usage', `seq_ids start at 1, got nextSeqId ${firstSeqId}`);
    }
    this.seq = firstSeqId;
  }

  /** the seq_id the next training request takes */
  get nextSeqId(): number {
    return this.seq;
  }

  async getInfo(call: CallOptions = {}): Promise<ModelInfo> {
    const answer = await this.client.session.transport.send(
      'POST',
      'get_info',
      json('get_info', { model_id: this.modelId, type: 'get_info' }),
      { what: 'get_info', ...this.client.deadline(call) },
    );
    return parseWire(GetInfoSchema, parseJsonBody(answer, 'get_info'), 'get_info');
  }

  /**
   * Computes the loss of `data` and adds its gradient to the model's accumulated gradient (until
   * the next optim_step). Losses are sums over tokens. The request is queued when called.
   */
  forwardBackward(
    data: readonly TinkerDatum[],
    loss: LossSpec,
    call: CallOptions = {},
  ): Promise<ForwardBackwardResult> {
    return this.forwardPass(data, loss, false, call);
  }

  /** the same pass without a gradient (the learner's logprobs of the targets, the loss) */
  forward(
    data: readonly TinkerDatum[],
    loss: LossSpec,
    call: CallOptions = {},
  ): Promise<ForwardBackwardResult> {
    return this.forwardPass(data, loss, true, call);
  }

  /** one Adam step on the accumulated gradient; queued when called, behind any pass before it */
  async optimStep(adam: AdamOptions = {}, call: CallOptions = {}): Promise<OptimStepResult> {
    const seqId = this.takeSeq();
    const body = { model_id: this.modelId, seq_id: seqId, adam_params: adamParams(adam), type: 'optim_step' };
    const result = await this.client.future(
      json('optim_step', body),
      'optim_step',
      'OptimStep',
      false,
      call,
      this.inTurn(seqId),
    );
    const parsed = jsonResult(result, (v) => parseWire(OptimStepResultSchema, v, 'optim_step'), 'optim_step');
    return { metrics: parsed.metrics ?? {}, seqId };
  }

  /** the training state (weights and optimiser) under `name`; answers its `tinker://` path */
  async saveWeights(name: string, opts: SaveOptions = {}): Promise<string> {
    checkpointName(name);
    const seqId = this.takeSeq();
    const body = {
      model_id: this.modelId,
      path: name,
      seq_id: seqId,
      ...(opts.ttlSeconds !== undefined ? { ttl_seconds: opts.ttlSeconds } : {}),
      overwrite: false,
      type: 'save_weights',
    };
    const result = await this.client.future(
      json('save_weights', body),
      'save_weights',
      'SaveWeights',
      false,
      opts,
      this.inTurn(seqId),
    );
    return jsonResult(result, (v) => parseWire(SaveWeightsResultSchema, v, 'save_weights'), 'save_weights')
      .path;
  }

  /** sampler weights written under `name` (expensive on SkyRL: use `samplingClient` in a loop) */
  async saveWeightsForSampler(name: string, opts: SaveOptions = {}): Promise<string> {
    checkpointName(name);
    const seqId = this.takeSeq();
    const body = {
      model_id: this.modelId,
      path: name,
      seq_id: seqId,
      ...(opts.ttlSeconds !== undefined ? { ttl_seconds: opts.ttlSeconds } : {}),
      type: 'save_weights_for_sampler',
    };
    const result = await this.client.future(
      json('save_weights_for_sampler', body),
      'save_weights_for_sampler',
      'SaveWeightsForSampler',
      false,
      opts,
      this.inTurn(seqId),
    );
    const parsed = jsonResult(
      result,
      (v) => parseWire(SaveForSamplerResultSchema, v, 'save_weights_for_sampler'),
      'save_weights_for_sampler',
    );
    if (!parsed.path)
      throw new TinkerError('bad_response', 'save_weights_for_sampler: the answer names no path');
    return parsed.path;
  }

  /** a sampler on the current weights, synced without writing a checkpoint (ephemeral save) */
  async samplingClient(call: CallOptions = {}): Promise<SamplingClient> {
    const seqId = this.takeSeq();
    const body = {
      model_id: this.modelId,
      seq_id: seqId,
      sampling_session_seq_id: this.client.session.nextSamplingSessionSeqId(),
      type: 'save_weights_for_sampler',
    };
    const result = await this.client.future(
      json('save_weights_for_sampler', body),
      'save_weights_for_sampler (ephemeral)',
      'SaveWeightsForSampler',
      false,
      call,
      this.inTurn(seqId),
    );
    const parsed = jsonResult(
      result,
      (v) => parseWire(SaveForSamplerResultSchema, v, 'save_weights_for_sampler'),
      'save_weights_for_sampler',
    );
    if (!parsed.sampling_session_id) {
      throw new TinkerError(
        'bad_response',
        'save_weights_for_sampler (ephemeral): the answer names no sampling_session_id',
      );
    }
    return new SamplingClient(this.client, parsed.sampling_session_id);
  }

  /** a saved training state as this model's first request (the servers refuse it later) */
  async loadWeights(path: string, opts: CallOptions & { optimizer?: boolean } = {}): Promise<void> {
    if (this.seq !== 1) {
      throw new TinkerError(
        'usage',
        `load_weights must be a model's first request; model ${this.modelId} has sent ${this.seq - 1}`,
      );
    }
    if (!path.startsWith('tinker://'))
      throw new TinkerError('usage', `load_weights takes a tinker:// path, got '${path}'`);
    const seqId = this.takeSeq();
    const body = {
      model_id: this.modelId,
      seq_id: seqId,
      path,
      optimizer: opts.optimizer ?? true,
      type: 'load_weights',
    };
    const result = await this.client.future(
      json('load_weights', body),
      'load_weights',
      'LoadWeights',
      false,
      opts,
      this.inTurn(seqId),
    );
    jsonResult(result, (v) => parseWire(LoadWeightsResultSchema, v, 'load_weights'), 'load_weights');
  }

  // ---- sequencing ----------------------------------------------------------------------------

  private takeSeq(): number {
    if (this.broken) {
      throw new TinkerError(
        this.broken.kind,
        `model ${this.modelId} cannot take more requests: ${this.broken.message}`,
        {},
        { cause: this.broken },
      );
    }
    return this.seq++;
  }

  /**
   * Wraps a request's send so that its first send waits for the one before it to be accepted; a
   * refused send breaks the sequence for every request after it.
   */
  private inTurn(seqId: number): (send: () => Promise<HttpAnswer>) => () => Promise<HttpAnswer> {
    const before = this.turn;
    let done!: () => void;
    this.turn = new Promise<void>((r) => {
      done = r;
    });
    return (send) => {
      let first = true;
      return async () => {
        if (!first) return send();
        first = false;
        try {
          await before;
          if (this.broken) {
            throw new TinkerError(
              this.broken.kind,
              `seq_id ${seqId} of model ${this.modelId} was not sent: an earlier request was not accepted (${this.broken.message})`,
              {},
              { cause: this.broken },
            );
          }
          try {
            return await send();
          } catch (e) {
            this.broken ??=
              e instanceof TinkerError
                ? e
                : new TinkerError('http', `seq_id ${seqId}: ${(e as Error)?.message ?? String(e)}`);
            throw e;
          }
        } finally {
          done();
        }
      };
    };
  }

  private async forwardPass(
    data: readonly TinkerDatum[],
    loss: LossSpec,
    forwardOnly: boolean,
    call: CallOptions,
  ): Promise<ForwardBackwardResult> {
    if (data.length === 0) throw new TinkerError('usage', 'forward_backward needs at least one datum');
    const wire = wireData(data, loss);
    const cfg = this.client.config;
    const chunks = chunkDatums(wire, { maxDatums: cfg.maxChunkDatums, maxBytes: cfg.maxChunkBytes });
    const seqIds = chunks.map(() => this.takeSeq());
    const what = forwardOnly ? 'forward' : 'forward_backward';
    const results = await Promise.all(
      chunks.map((chunk, i) => this.runChunk(chunk, seqIds[i]!, loss, forwardOnly, what, call)),
    );
    const merged = mergeForwardBackwardOutputs(results);
    if (merged.loss_fn_outputs.length !== data.length) {
      throw new TinkerError(
        'bad_response',
        `${what}: ${merged.loss_fn_outputs.length} outputs for ${data.length} datums`,
      );
    }
    return {
      lossFnOutputType: merged.loss_fn_output_type,
      outputs: merged.loss_fn_outputs,
      logprobs: merged.loss_fn_outputs.map((o) => o.logprobs?.data ?? []),
      metrics: merged.metrics,
      seqIds,
    };
  }

  private async runChunk(
    chunk: WireDatum[],
    seqId: number,
    loss: LossSpec,
    forwardOnly: boolean,
    what: string,
    call: CallOptions,
  ): Promise<ForwardBackwardOutput> {
    const req = forwardBackwardRequest(this.modelId, seqId, chunk, loss);
    const { signal } = this.client.deadline(call);
    const idempotencyKey = newIdempotencyKey();
    const send = () =>
      this.client.sendForwardBackward(req, forwardOnly, {
        what: `${what} (seq_id ${seqId})`,
        signal,
        idempotencyKey,
      });
    const submit = this.inTurn(seqId)(send);
    const result = await this.client.timed(forwardOnly ? 'forward' : 'forward_backward', submit, (timed) =>
      runFuture(this.client.session.transport, timed, `${what} (seq_id ${seqId})`, {
        requestType: forwardOnly ? 'Forward' : 'ForwardBackward',
        acceptProto: this.client.acceptProto,
        signal,
        pollTimeoutMs: this.client.session.options.pollTimeoutMs,
        ...queueObserver(this.client.session),
      }),
    );
    if (result.kind === 'proto') return decodeForwardBackwardOutput(result.bytes);
    return parseWire(ForwardBackwardOutputSchema, result.value, what);
  }
}

/** One sampling session: its own seq_ids from 0, asample. */
export class SamplingClient {
  private seq = 0;

  /** @internal made by `TinkerClient` or `TrainingClient` */
  constructor(
    private readonly client: TinkerClient,
    readonly samplingSessionId: string,
  ) {}

  /** `numSamples` completions of `prompt` (token ids) */
  async sample(prompt: readonly number[] | ModelInput, opts: SampleOptions): Promise<SampleResult> {
    if (!Number.isInteger(opts.maxTokens) || opts.maxTokens < 1) {
      throw new TinkerError('usage', `maxTokens must be a whole number >= 1, got ${opts.maxTokens}`);
    }
    const body = sampleRequest({
      prompt: modelInputOf(prompt),
      numSamples: opts.numSamples ?? 1,
      params: samplingParams(opts),
      samplingSessionId: this.samplingSessionId,
      seqId: this.seq++,
      promptLogprobs: opts.promptLogprobs ?? false,
      topkPromptLogprobs: opts.topkPromptLogprobs ?? 0,
    });
    const result = await this.client.sampleLimiter.run(() =>
      this.client.future(json('asample', body), 'asample', 'Sample', this.client.acceptProto, opts),
    );
    const res: SampleResponse =
      result.kind === 'proto'
        ? decodeSampleResponse(result.bytes)
        : parseWire(SampleResponseSchema, result.value, 'asample');
    return {
      sequences: res.sequences.map((s) => ({
        tokens: s.tokens,
        logprobs: s.logprobs ?? null,
        stopReason: s.stop_reason,
      })),
      promptLogprobs: res.prompt_logprobs ?? null,
      ...(res.topk_prompt_logprobs ? { topkPromptLogprobs: res.topk_prompt_logprobs } : {}),
      promptCacheHitTokens: res.prompt_cache_hit_tokens ?? 0,
    };
  }

  /** the model's logprob of each token given the ones before it (the first is null) */
  async computeLogprobs(tokens: readonly number[], call: CallOptions = {}): Promise<(number | null)[]> {
    const res = await this.sample(tokens, { ...call, maxTokens: 1, promptLogprobs: true });
    if (!res.promptLogprobs)
      throw new TinkerError('bad_response', 'asample: prompt logprobs were asked for and not returned');
    return [...res.promptLogprobs];
  }
}
