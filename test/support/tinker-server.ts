/**
 * A Tinker-protocol server for tests: real HTTP on 127.0.0.1 (an ephemeral port), the routes and
 * answer forms of the hosted service (`flavour: 'hosted'`: 200 try_again with queue_state, 200
 * `{error, category}` failures, the full client config) or of SkyRL's server (`'skyrl'`: long polls
 * ending in 408, 400 `{detail}` failures, `future_id`, the stub config, `elementwise_loss` outputs
 * and no metrics), with both wire forms (JSON, and protobuf forward_backward bodies and results when
 * `Accept` asks for them). A body sent with `Content-Encoding: zstd` is decompressed before
 * anything reads it, on any route and whatever the config says: both services take zstd
 * forward_backward bodies without being asked (the hosted one in a middleware in front of its
 * routes). `compressFwdbwd` makes client/config ask for them. Any other content encoding gets a 415.
 *
 * Training requests are run strictly in seq_id order per model: a later seq_id waits for the gap
 * before it to fill; the same seq_id with the same body is the same request (its future, or a new
 * one for the stored result after a 410); with another body it is a 409.
 *
 * Out of the service: a run's checkpoints through the REST routes (`training_runs/...`: list,
 * TTL, delete), the archive route's signed URL served here (a tar of a PEFT adapter made from the
 * checkpoint's weights state, `archive` options for its form), and the OpenAI-compatible
 * `/oai/api/v1/chat/completions` and `/completions` for a base model or saved sampler weights.
 *
 * Behind it sits a pluggable `TinkerTestModel` (tokens in, logprobs and samples out, at a weights
 * version). The losses are Tinker's: sums over tokens of cross_entropy, importance_sampling, ppo,
 * cispo and (hosted only) dro. `fault` injects failures per request: any status and body, a dropped
 * connection before or after the request took effect, a hang, a delay, an expired future (410), a
 * request that fails on the server.
 *
 *   const server = await startTinkerServer({ flavour: 'skyrl', fault: (c) => (c.route === 'asample' && c.attempt === 0 ? { status: 429 } : undefined) });
 *   const client = await TinkerClient.connect({ baseUrl: server.url });
 *   ...
 *   await server.close();
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  decodeForwardBackwardRequest,
  encodeForwardBackwardOutput,
  encodeSampleResponse,
  PROTO_CONTENT_TYPE,
} from '../../src/tinker/proto.js';
import type {
  ForwardBackwardOutput,
  ForwardBackwardRequestJson,
  LossFnOutput,
  SampleResponse,
  WireDatum,
} from '../../src/tinker/schemas.js';
import type { TinkerClientOptions } from '../../src/tinker/session.js';
import { zstdDecompress } from '../../src/tinker/zstd.js';
import { tarOf, testAdapterFiles } from './adapter-files.js';

export type Flavour = 'hosted' | 'skyrl';

/** the weights a forward pass or a sampler runs on */
export interface WeightsState {
  readonly baseModel: string;
  /** optimiser steps taken (0: the base model) */
  readonly step: number;
  /** the learning rates of the steps taken, in order */
  readonly lrs: readonly number[];
}

export interface TestSampleParams {
  readonly maxTokens: number;
  readonly temperature: number;
  readonly seed?: number;
  readonly stop?: readonly (string | number)[];
}

export interface TestCompletion {
  readonly tokens: number[];
  readonly logprobs: number[];
  readonly stopReason: 'stop' | 'length';
}

/** What the server computes with; a test or a later helper supplies its own. */
export interface TinkerTestModel {
  /** the logprob of each target token, targets[i] following input[0..i] */
  logprobs(input: readonly number[], targets: readonly number[], weights: WeightsState): number[];
  /** completion `index` of `numSamples` for one asample request */
  sample(
    prompt: readonly number[],
    params: TestSampleParams,
    weights: WeightsState,
    index: number,
  ): TestCompletion;
}

/**
 * A short name of a weights state, different for every trained state: `base` for the base model
 * (step 0), else the step and a hash of the learning rates taken. A test model may write it into
 * its samples, so a test reads from the outputs alone which weights answered.
 */
export function weightsTag(w: WeightsState): string {
  if (w.step === 0) return 'base';
  const lrs = createHash('sha256').update(w.lrs.join(',')).digest('hex').slice(0, 6);
  return `step${w.step}-${lrs}`;
}

/** a number of a weights state for seeding samples: 0 for the base model, so base samples stay put */
function weightsSeed(w: WeightsState): number {
  return w.step === 0
    ? 0
    : Number.parseInt(createHash('sha256').update(weightsTag(w)).digest('hex').slice(0, 6), 16);
}

/**
 * A deterministic toy: the logprob of a token depends on the token before it, itself and the step;
 * samples are a fixed function of the prompt, seed, index and weights (`weightsSeed`: a trained
 * state samples other tokens than the base model and than another trained state) over a
 * vocabulary of `vocab` ids, and stop at a numeric stop token.
 */
export function toyModel(vocab = 1000): TinkerTestModel {
  const lp = (prev: number, tok: number, step: number) =>
    -(0.05 + ((prev * 31 + tok * 17) % 97) / 40) * (1 + 0.01 * step);
  return {
    logprobs(input, targets, w) {
      return targets.map((t, i) => lp(input[i] ?? 0, t, w.step));
    },
    sample(prompt, params, w, index) {
      const stops = new Set((params.stop ?? []).filter((s): s is number => typeof s === 'number'));
      let prev = prompt[prompt.length - 1] ?? 0;
      let h =
        (prompt.reduce((a, t) => (a * 131 + t) % 1_000_003, 7) +
          (params.seed ?? 0) * 17 +
          index * 101 +
          weightsSeed(w)) %
        1_000_003;
      const tokens: number[] = [];
      const logprobs: number[] = [];
      for (let k = 0; k < params.maxTokens; k++) {
        h = (h * 1103 + 12345) % 1_000_003;
        const tok = h % vocab;
        tokens.push(tok);
        logprobs.push(lp(prev, tok, w.step));
        prev = tok;
        if (stops.has(tok)) return { tokens, logprobs, stopReason: 'stop' };
      }
      return { tokens, logprobs, stopReason: 'length' };
    },
  };
}

export interface FaultContext {
  readonly route: string;
  readonly method: string;
  /** the parsed body (a protobuf forward_backward body decoded to the JSON form) */
  readonly body: unknown;
  /** how many requests this route had before this one */
  readonly attempt: number;
  readonly seqId?: number;
  /** retrieve_future: the future's route and how many polls it had before this one */
  readonly future?: { readonly requestId: string; readonly route: string; readonly polls: number };
  readonly headers: IncomingMessage['headers'];
}

export type Fault =
  /** answer this instead of handling the request */
  | { readonly status: number; readonly body?: unknown; readonly headers?: Readonly<Record<string, string>> }
  /** close the connection without an answer: before handling, or after the request took effect */
  | { readonly drop: 'before' | 'after' }
  /** never answer */
  | { readonly hang: true }
  /** answer normally after a wait */
  | { readonly delayMs: number }
  /** retrieve_future: forget the future and answer 410 */
  | { readonly expire: true }
  /** a submission: accept it, and let its future fail with this message */
  | { readonly fail: string; readonly category?: 'user' | 'server' | 'unknown' };

export interface TinkerServerOptions {
  readonly flavour?: Flavour;
  readonly model?: TinkerTestModel;
  /** the base models served (default ['Qwen/Qwen3-8B']) */
  readonly baseModels?: readonly string[];
  /** require this X-API-Key (default: none checked) */
  readonly apiKey?: string;
  /** SkyRL's long poll before a 408 (default 150 ms) */
  readonly longPollMs?: number;
  /** how long the hosted flavour holds a poll before try_again (default 10 ms) */
  readonly holdMs?: number;
  /** polls a done future answers "not yet" to first (default 0) */
  readonly pendingPolls?: number;
  /** wire forms accepted on forward_backward (default both); a refused one gets 415 */
  readonly fwdbwdForms?: { readonly json?: boolean; readonly proto?: boolean };
  /** client config overrides (hosted flavour) */
  readonly clientConfig?: Readonly<Record<string, unknown>>;
  /** client/config sets `proto_compress_fwdbwd` (hosted flavour; SkyRL's config does not carry it) */
  readonly compressFwdbwd?: boolean;
  readonly fault?: (ctx: FaultContext) => Fault | undefined;
  /**
   * A training clock, as the hosted service runs training in lock-step cycles: training requests
   * whose turn has come run only at the ticks of a clock of this period, every one queued by then
   * in seq order; a request sent after awaiting the one before it waits for the next tick. The
   * server counts the ticks and notes in `Model.ran` the tick each request ran at.
   */
  readonly clockMs?: number;
  /**
   * Holds a training request back from running (its turn come) until a request arrives that
   * `until` accepts, or `timeoutMs` passed: e.g. until the next three seq ids have arrived, which a
   * client sending them back to back does at once and one awaiting this request's result cannot.
   * The event order (`RequestRecord.order`, `Model.ran`'s `order`) then shows which it was.
   */
  readonly holdRun?: (request: {
    readonly route: string;
    readonly seqId: number;
    readonly body: unknown;
  }) => { readonly until: (arrived: RequestRecord) => boolean; readonly timeoutMs: number } | undefined;
  /** sampling requests complete this long after they arrive (default: at once) */
  readonly sampleDelayMs?: number;
  /** the max_context_length the capabilities state (default 32768) */
  readonly maxContextLength?: number;
  /**
   * JWT auth, as a service with `pjwt_auth_enabled`: client/config says so, `auth/token` sells the
   * key (`apiKey`) for a token that lives `ttlSeconds`, and every other route takes only a token it
   * sold that has not expired or been revoked (`revokeTokens`)
   */
  readonly jwt?: { readonly ttlSeconds: number };
  /**
   * The billing usage route: rows per session and usage type (prefill, sample, training) for the
   * tokens this server ran, priced at `usdPerMillion` (hosted flavour); 'forbidden': a 403, as for
   * a key without billing view access. Default: no such route (404).
   */
  readonly billing?: { readonly usdPerMillion: number } | 'forbidden';
  /**
   * The archive route: a 302 to a signed URL this server serves (default), the 200 JSON form
   * `{url, expires}`, or the archive itself; the tar gzipped or not; `files` changes what it holds
   * (a broken adapter)
   */
  readonly archive?: {
    readonly form?: 'redirect' | 'json' | 'bytes';
    readonly gzip?: boolean;
    readonly files?: (files: { path: string; data: Buffer }[]) => { path: string; data: Buffer }[];
    /** the archive's bytes instead of a tar of the files (a hostile or broken archive) */
    readonly bytes?: (files: { path: string; data: Buffer }[]) => Uint8Array;
    /**
     * the 302's Location: the signed URL in full (default), or relative to the archive route's own
     * URL (the signed URL then lives under that route, and only there)
     */
    readonly location?: 'absolute' | 'relative';
    /**
     * what the signed URL answers: the archive (default); a 302 (relative or absolute Location) to a
     * second signed URL that answers it; a 302 to itself, forever; or a 200 HTML page, as a proxy's
     * login page would
     */
    readonly signed?: 'archive' | 'relative-redirect' | 'absolute-redirect' | 'loop' | 'html';
  };
}

/** a saved checkpoint: the weights it holds and what the checkpoint routes tell of it */
export interface TestCheckpoint {
  step: number;
  lrs: number[];
  readonly kind: 'weights' | 'sampler_weights';
  readonly baseModel: string;
  readonly rank: number;
  /** ISO time of the save */
  readonly time: string;
  ttlSeconds?: number;
  /** ISO time it expires (none: never) */
  expiresAt?: string;
}

interface Future {
  readonly route: string;
  state: 'pending' | 'done' | 'failed';
  result?: unknown;
  /** forward_backward and sample results may go as protobuf */
  proto?: 'fwdbwd' | 'sample';
  error?: { message: string; category: string };
  polls: number;
}

interface Model {
  readonly id: string;
  readonly baseModel: string;
  readonly rank: number;
  step: number;
  lrs: number[];
  expected: number;
  readonly waiting: Map<number, () => void>;
  readonly seen: Map<number, { hash: string; requestId: string }>;
  /** the training requests in the order they ran, with the clock tick each ran at (clock mode) */
  readonly ran: { seqId: number; route: string; tick?: number; at: number; order: number }[];
  /** every forward_backward and forward pass in the order they ran: the loss and the datums as received */
  readonly passes: {
    readonly route: 'forward_backward' | 'forward';
    readonly seqId: number;
    readonly input: ForwardBackwardRequestJson['forward_backward_input'];
  }[];
  /** per optimiser step, the accumulated loss and datum count it applied */
  readonly steps: { lossSum: number; datums: number; lr: number }[];
  accum: { lossSum: number; datums: number };
}

export interface RequestRecord {
  readonly route: string;
  readonly method: string;
  readonly contentType: string;
  readonly accept: string;
  readonly seqId?: number;
  readonly apiKey?: string;
  readonly idempotencyKey?: string;
  /** X-Tinker-Request-Type of a retrieve_future poll */
  readonly requestType?: string;
  /** refused before it was read (415) */
  readonly refused?: boolean;
  /** sha256 of the body's bytes, to tell a resend of the same body */
  readonly bodySha?: string;
  /** the body's `Content-Encoding`, when it had one */
  readonly contentEncoding?: string;
  /** the body's size as it came over the wire, and decompressed */
  readonly wireBytes?: number;
  readonly bodyBytes?: number;
  /** when it arrived (performance.now() of this process) */
  readonly at?: number;
  /**
   * its place among the server's events (arrivals and training runs, `Model.ran`'s `order`), one
   * counter: what arrived before a request ran, whatever the scheduler did to either side
   */
  readonly order: number;
  /**
   * forward_backward and forward: the body as the server read it (a protobuf body decoded to the
   * JSON form), so a test can recompute the loss from what reached the socket
   */
  readonly fwdbwd?: ForwardBackwardRequestJson;
}

/** one asample request the server ran: what it named, and the weights that answered */
export interface SampleRecord {
  /** the sampling session, a sampler path or a base model, as the request named it */
  readonly samplingSessionId?: string;
  readonly modelPath?: string;
  readonly baseModel?: string;
  /** a prompt-logprobs request (a prefill, as computeLogprobs sends) rather than a rollout's sample */
  readonly promptLogprobs: boolean;
  /** the prompt's tokens, and the completion's cap the request set */
  readonly prompt: readonly number[];
  readonly maxTokens: number;
  readonly weights: WeightsState;
}

export interface TinkerTestServer {
  readonly url: string;
  readonly flavour: Flavour;
  /** every request, in arrival order */
  readonly requests: RequestRecord[];
  readonly models: ReadonlyMap<string, Model>;
  readonly sessions: ReadonlyMap<string, { heartbeats: number }>;
  /** the weights each sampling session was opened on */
  readonly samplers: ReadonlyMap<string, WeightsState>;
  /** every asample request run, in arrival order, with the weights it ran on */
  readonly samples: readonly SampleRecord[];
  readonly checkpoints: ReadonlyMap<string, TestCheckpoint>;
  /** every body sent to the OpenAI-compatible routes (`/oai/api/v1/...`), in order */
  readonly oaiRequests: readonly Record<string, unknown>[];
  /** the signed archive URLs handed out, in order */
  readonly signedUrls: readonly string[];
  /** clock ticks so far (clock mode; 0 otherwise) */
  readonly ticks: number;
  /** JWT mode: the tokens sold so far, in order */
  readonly tokens: readonly string[];
  /** JWT mode: every token sold so far stops being accepted (the next request gets a 401) */
  revokeTokens(): void;
  close(): Promise<void>;
}

const TRAINING_ROUTES = new Set([
  'forward_backward',
  'forward',
  'optim_step',
  'save_weights',
  'save_weights_for_sampler',
  'load_weights',
]);

/** a route's answer: JSON (or protobuf), with headers, or raw bytes */
interface Answer {
  readonly status: number;
  readonly body: unknown;
  readonly proto?: Uint8Array;
  readonly headers?: Readonly<Record<string, string>>;
  readonly bytes?: { readonly contentType: string; readonly data: Uint8Array };
}

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

/** the float32 rounding a protobuf body has, so JSON and protobuf forms of one request hash alike */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    typeof v === 'number' && !Number.isInteger(v) ? Math.fround(v) : v,
  );
}

export async function startTinkerServer(opts: TinkerServerOptions = {}): Promise<TinkerTestServer> {
  const flavour = opts.flavour ?? 'hosted';
  const model = opts.model ?? toyModel();
  const baseModels = opts.baseModels ?? ['Qwen/Qwen3-8B'];
  const longPollMs = opts.longPollMs ?? 150;
  const holdMs = opts.holdMs ?? 10;
  const forms = { json: opts.fwdbwdForms?.json ?? true, proto: opts.fwdbwdForms?.proto ?? true };

  const requests: RequestRecord[] = [];
  const routeCounts = new Map<string, number>();
  const sessions = new Map<string, { heartbeats: number; models: number }>();
  const models = new Map<string, Model>();
  const futures = new Map<string, Future>();
  const futureWaiters = new Map<string, (() => void)[]>();
  const samplers = new Map<string, WeightsState>();
  const samples: SampleRecord[] = [];
  const checkpoints = new Map<string, TestCheckpoint>();
  const oaiRequests: Record<string, unknown>[] = [];
  const signedUrls: string[] = [];
  /** signed URL token -> the checkpoint it downloads and until when */
  const signed = new Map<string, { path: string; expires: number; at: string; hop?: boolean }>();
  let baseUrl = '';
  const saved = (m: Model, kind: TestCheckpoint['kind'], ttl: unknown): TestCheckpoint => ({
    step: m.step,
    lrs: [...m.lrs],
    kind,
    baseModel: m.baseModel,
    rank: m.rank,
    time: new Date().toISOString(),
    ...(typeof ttl === 'number'
      ? { ttlSeconds: ttl, expiresAt: new Date(Date.now() + ttl * 1000).toISOString() }
      : {}),
  });
  /** what each training future came to, kept after the future expires so a resubmission gets it */
  const storedOutcomes = new Map<
    string,
    | { kind: 'done'; result: unknown; proto?: 'fwdbwd' | 'sample' }
    | { kind: 'failed'; message: string; category: string }
  >();
  let counter = 0;
  const newId = (prefix: string) => `${prefix}_${(++counter).toString(16).padStart(8, '0')}`;

  const settle = (id: string) => {
    for (const w of futureWaiters.get(id) ?? []) w();
    futureWaiters.delete(id);
  };
  const complete = (id: string, result: unknown, proto?: 'fwdbwd' | 'sample') => {
    const f = futures.get(id);
    if (!f) return;
    f.state = 'done';
    f.result = result;
    if (proto) f.proto = proto;
    settle(id);
  };
  const failFuture = (id: string, message: string, category = 'user') => {
    const f = futures.get(id);
    if (!f) return;
    f.state = 'failed';
    f.error = { message, category };
    settle(id);
  };
  const newFuture = (route: string): string => {
    const id = flavour === 'skyrl' ? String(++counter) : newId('req');
    futures.set(id, { route, state: 'pending', polls: 0 });
    return id;
  };
  const futureAnswer = (requestId: string, extra: Record<string, unknown> = {}) =>
    flavour === 'skyrl'
      ? { future_id: requestId, status: 'pending', request_id: requestId, ...extra }
      : { request_id: requestId, ...extra };

  const weightsOf = (m: Model): WeightsState => ({ baseModel: m.baseModel, step: m.step, lrs: [...m.lrs] });

  // ---- losses ----------------------------------------------------------------------------------

  function runPass(m: Model, req: ForwardBackwardRequestJson, backward: boolean): ForwardBackwardOutput {
    const { loss_fn: fn, loss_fn_config: cfg } = req.forward_backward_input;
    const allowed =
      flavour === 'skyrl'
        ? ['cross_entropy', 'importance_sampling', 'ppo', 'cispo']
        : ['cross_entropy', 'importance_sampling', 'ppo', 'cispo', 'dro'];
    if (!allowed.includes(fn)) throw new HttpFailure(400, `unsupported loss_fn '${fn}'`);
    const lo = cfg?.clip_low_threshold ?? (fn === 'cispo' ? 0 : 0.8);
    const hi = cfg?.clip_high_threshold ?? (fn === 'cispo' ? 4 : 1.2);
    let total = 0;
    let clipped = 0;
    let counted = 0;
    const outputs: LossFnOutput[] = req.forward_backward_input.data.map((d: WireDatum) => {
      const input = d.model_input.chunks.flatMap((c) => (c.type === 'encoded_text' ? c.tokens : []));
      const inputs = d.loss_fn_inputs;
      const targets = inputs.target_tokens?.data ?? [];
      if (targets.length !== input.length)
        throw new HttpFailure(
          400,
          `target_tokens has ${targets.length} entries for ${input.length} input tokens`,
        );
      const lps = model.logprobs(input, targets, weightsOf(m));
      const w = inputs.weights?.data ?? targets.map(() => 1);
      const q = inputs.logprobs?.data ?? targets.map(() => 0);
      const a = inputs.advantages?.data ?? targets.map(() => 0);
      const elementwise = lps.map((lp, i) => {
        const ratio = Math.exp(lp - q[i]!);
        let l: number;
        if (fn === 'cross_entropy') l = -w[i]! * lp;
        else if (fn === 'importance_sampling') l = -ratio * a[i]!;
        else if (fn === 'ppo') {
          const c = Math.min(Math.max(ratio, lo), hi);
          if (c !== ratio) clipped++;
          counted++;
          l = -Math.min(ratio * a[i]!, c * a[i]!);
        } else if (fn === 'cispo') l = -Math.min(Math.max(ratio, lo), hi) * lp * a[i]!;
        else l = -(lp * a[i]! - 0.5 * (cfg?.beta ?? 0.1) * (lp - q[i]!) ** 2);
        // SkyRL reads weights as a loss mask for every loss
        return flavour === 'skyrl' && fn !== 'cross_entropy' ? l * w[i]! : l;
      });
      total += elementwise.reduce((s, x) => s + x, 0);
      const out: LossFnOutput = {
        logprobs: { data: lps.map(Math.fround), dtype: 'float32', shape: [lps.length] },
      };
      if (flavour === 'skyrl')
        out.elementwise_loss = { data: elementwise.map(Math.fround), dtype: 'float32', shape: [lps.length] };
      return out;
    });
    if (backward) {
      m.accum.lossSum += total;
      m.accum.datums += outputs.length;
    }
    const metrics: Record<string, number> =
      flavour === 'skyrl'
        ? {}
        : {
            'loss:sum': total,
            ...(fn === 'ppo' && counted > 0 ? { 'clip_frac:mean': clipped / counted } : {}),
          };
    return {
      loss_fn_output_type: flavour === 'skyrl' ? 'ArrayRecord' : 'tinker.types:ArrayRecord',
      loss_fn_outputs: outputs,
      metrics,
    };
  }

  // ---- training requests, in seq order ---------------------------------------------------------

  /** what one training request does when its turn comes; throws HttpFailure to fail its future */
  function execute(
    m: Model,
    route: string,
    body: Record<string, unknown>,
    fwd?: ForwardBackwardRequestJson,
  ): { result: unknown; proto?: 'fwdbwd' } {
    switch (route) {
      case 'forward_backward':
      case 'forward':
        m.passes.push({ route, seqId: fwd!.seq_id, input: fwd!.forward_backward_input });
        bill(
          m.id.split(':train:')[0]!,
          'training',
          fwd!.forward_backward_input.data.reduce(
            (n, d) => n + d.model_input.chunks.reduce((k, c) => k + ('tokens' in c ? c.tokens.length : 0), 0),
            0,
          ),
        );
        return { result: runPass(m, fwd!, route === 'forward_backward'), proto: 'fwdbwd' };
      case 'optim_step': {
        const lr = Number((body.adam_params as { learning_rate?: number })?.learning_rate ?? 1e-4);
        m.steps.push({ ...m.accum, lr });
        m.accum = { lossSum: 0, datums: 0 };
        m.step++;
        m.lrs.push(lr);
        return { result: flavour === 'skyrl' ? { metrics: null } : { metrics: { 'step:max': m.step } } };
      }
      case 'save_weights': {
        const path = `tinker://${m.id}/weights/${String(body.path)}`;
        if (checkpoints.has(path)) throw new HttpFailure(409, `checkpoint ${body.path} exists`);
        checkpoints.set(path, saved(m, 'weights', body.ttl_seconds));
        return { result: { path, type: 'save_weights' } };
      }
      case 'save_weights_for_sampler': {
        if (body.sampling_session_seq_id !== undefined) {
          const id =
            flavour === 'skyrl'
              ? newId('sampling')
              : `${m.id}:sample:${String(body.sampling_session_seq_id)}`;
          samplers.set(id, weightsOf(m));
          return { result: { sampling_session_id: id } };
        }
        const path = `tinker://${m.id}/sampler_weights/${String(body.path)}`;
        checkpoints.set(path, saved(m, 'sampler_weights', body.ttl_seconds));
        return { result: { path } };
      }
      case 'load_weights': {
        const ck = checkpoints.get(String(body.path));
        if (ck?.kind !== 'weights') throw new HttpFailure(400, `no training state at ${String(body.path)}`);
        m.step = ck.step;
        m.lrs = [...ck.lrs];
        return { result: { path: body.path, model_id: m.id } };
      }
      default:
        throw new HttpFailure(404, `no route ${route}`);
    }
  }

  let ticks = 0;
  /** arrivals and training runs, counted together */
  let events = 0;
  /** training requests held back from running, and what releases each */
  const held = new Set<{ readonly until: (r: RequestRecord) => boolean; readonly release: () => void }>();
  const tokens: string[] = [];
  const liveTokens = new Map<string, number>();
  function drain(m: Model, onTick = false): void {
    // with a clock, queued requests run only when it ticks
    if (opts.clockMs !== undefined && !onTick) return;
    for (;;) {
      const run = m.waiting.get(m.expected);
      if (!run) return;
      m.waiting.delete(m.expected);
      m.expected++;
      run();
      if (opts.clockMs !== undefined) {
        const last = m.ran.at(-1);
        if (last) last.tick = ticks;
      }
    }
  }
  const clock =
    opts.clockMs !== undefined
      ? setInterval(() => {
          ticks++;
          for (const m of models.values()) drain(m, true);
        }, opts.clockMs)
      : undefined;

  /** a training submission: the request id of its future (or a 4xx) */
  function submitTraining(
    route: string,
    body: Record<string, unknown>,
    fault: Fault | undefined,
    fwd?: ForwardBackwardRequestJson,
  ): string {
    const modelId = String(body.model_id ?? fwd?.model_id);
    const m = models.get(modelId);
    if (!m) throw new HttpFailure(404, `model ${modelId} not found`);
    const seqId = Number(body.seq_id ?? fwd?.seq_id);
    if (!Number.isInteger(seqId) || seqId < 1)
      throw new HttpFailure(400, `seq_id must be >= 1, got ${seqId}`);
    const hash = createHash('sha256')
      .update(`${route}\n${canonical(fwd ?? body)}`)
      .digest('hex');
    const seen = m.seen.get(seqId);
    if (seen) {
      if (seen.hash !== hash) throw new HttpFailure(409, 'Training request sequence number was reused');
      if (futures.has(seen.requestId)) return seen.requestId;
      // the future expired (410): a new one carries the stored outcome; nothing runs twice
      const again = newFuture(route);
      const old = storedOutcomes.get(seen.requestId);
      storedOutcomes.set(again, old!);
      seen.requestId = again;
      if (old?.kind === 'done') complete(again, old.result, old.proto);
      else if (old?.kind === 'failed') failFuture(again, old.message, old.category);
      return again;
    }
    if (seqId < m.expected) throw new HttpFailure(409, `seq_id ${seqId} is behind the model's ${m.expected}`);
    if (route === 'load_weights' && seqId !== 1)
      throw new HttpFailure(400, 'load_weights is only allowed as the first request of a model');
    const requestId = newFuture(route);
    m.seen.set(seqId, { hash, requestId });
    const run = () => {
      m.ran.push({ seqId, route, at: performance.now(), order: ++events });
      const current = m.seen.get(seqId)!.requestId;
      if (fault && 'fail' in fault) {
        storedOutcomes.set(current, {
          kind: 'failed',
          message: fault.fail,
          category: fault.category ?? 'user',
        });
        failFuture(current, fault.fail, fault.category ?? 'user');
        return;
      }
      try {
        const { result, proto } = execute(m, route, body, fwd);
        storedOutcomes.set(current, { kind: 'done', result, ...(proto ? { proto } : {}) });
        complete(current, result, proto);
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        storedOutcomes.set(current, { kind: 'failed', message, category: 'user' });
        failFuture(current, message);
      }
    };
    const hold = opts.holdRun?.({ route, seqId, body: fwd ?? body });
    if (hold) {
      const entry = {
        until: hold.until,
        release: () => {
          clearTimeout(timer);
          held.delete(entry);
          m.waiting.set(seqId, run);
          drain(m);
        },
      };
      const timer = setTimeout(entry.release, hold.timeoutMs);
      held.add(entry);
    } else {
      m.waiting.set(seqId, run);
      drain(m);
    }
    return requestId;
  }

  // ---- sampling --------------------------------------------------------------------------------

  function runSample(body: Record<string, unknown>): SampleResponse {
    const params = (body.sampling_params ?? {}) as Record<string, unknown>;
    if (flavour === 'skyrl') {
      if (typeof params.max_tokens !== 'number') throw new HttpFailure(400, 'max_tokens is required');
      if (params.stop !== undefined && !Array.isArray(params.stop))
        throw new HttpFailure(422, 'stop must be a list');
      if (body.sampling_session_id !== undefined && body.seq_id === undefined)
        throw new HttpFailure(400, 'seq_id is required with sampling_session_id');
    }
    let weights: WeightsState | undefined;
    if (typeof body.sampling_session_id === 'string') weights = samplers.get(body.sampling_session_id);
    else if (typeof body.model_path === 'string') {
      const ck = checkpoints.get(body.model_path);
      weights = ck ? { baseModel: ck.baseModel, step: ck.step, lrs: ck.lrs } : undefined;
    } else if (typeof body.base_model === 'string')
      weights = { baseModel: body.base_model, step: 0, lrs: [] };
    if (!weights) throw new HttpFailure(404, 'sampling session not found');
    const prompt = ((body.prompt as { chunks?: { tokens?: number[] }[] })?.chunks ?? []).flatMap(
      (c) => c.tokens ?? [],
    );
    samples.push({
      ...(typeof body.sampling_session_id === 'string'
        ? { samplingSessionId: body.sampling_session_id }
        : {}),
      ...(typeof body.model_path === 'string' ? { modelPath: body.model_path } : {}),
      ...(typeof body.base_model === 'string' ? { baseModel: body.base_model } : {}),
      promptLogprobs: Boolean(body.prompt_logprobs),
      prompt,
      maxTokens: Number(params.max_tokens ?? 16),
      weights,
    });
    const sp: TestSampleParams = {
      maxTokens: Number(params.max_tokens ?? 16),
      temperature: Number(params.temperature ?? 1),
      ...(typeof params.seed === 'number' ? { seed: params.seed } : {}),
      ...(Array.isArray(params.stop) ? { stop: params.stop as (string | number)[] } : {}),
    };
    const n = Number(body.num_samples ?? 1);
    const sequences = Array.from({ length: n }, (_, i) => {
      const c = model.sample(prompt, sp, weights, i);
      return { stop_reason: c.stopReason, tokens: c.tokens, logprobs: c.logprobs.map(Math.fround) };
    });
    const promptLogprobs = body.prompt_logprobs
      ? [null, ...model.logprobs(prompt.slice(0, -1), prompt.slice(1), weights).map(Math.fround)]
      : null;
    if (typeof body.sampling_session_id === 'string') {
      const session = body.sampling_session_id.split(':sample:')[0]!;
      bill(session, 'sampling_prefill', prompt.length);
      bill(
        session,
        'sampling_sample',
        sequences.reduce((n, q) => n + q.tokens.length, 0),
      );
    }
    return { sequences, prompt_logprobs: promptLogprobs, prompt_cache_hit_tokens: 0 };
  }

  // ---- billing ---------------------------------------------------------------------------------

  /** tokens run per session and usage type, for the billing route */
  const billed = new Map<string, Map<string, number>>();
  function bill(session: string, type: string, tokens: number): void {
    const s = billed.get(session) ?? new Map<string, number>();
    s.set(type, (s.get(type) ?? 0) + tokens);
    billed.set(session, s);
  }

  function billingRoute(query: URLSearchParams): { status: number; body: unknown } {
    const b = opts.billing;
    if (b === undefined) return { status: 404, body: { detail: 'Not Found: billing/usage/events' } };
    if (b === 'forbidden') return { status: 403, body: { detail: 'billing view access required' } };
    const from = Date.parse(query.get('starting_on') ?? '');
    const to = Date.parse(query.get('ending_before') ?? '');
    const hour = 3_600_000;
    if (!(from % hour === 0 && to % hour === 0 && to > from && to - from <= 14 * 24 * hour))
      return { status: 400, body: { detail: 'a window of whole UTC hours, at most 14 days' } };
    const data = [...billed].flatMap(([session, types]) =>
      [...types].map(([type, tokens]) => ({
        type,
        session_id: session,
        event_info: { token_count: tokens },
        estimated_cost_usd: (tokens * b.usdPerMillion) / 1e6,
      })),
    );
    return { status: 200, body: { data, sessions: {}, cost_data_through: null } };
  }

  // ---- routes ----------------------------------------------------------------------------------

  const clientConfig = () =>
    flavour === 'skyrl'
      ? { pjwt_auth_enabled: false }
      : {
          pjwt_auth_enabled: false,
          parallel_fwdbwd_chunks: true,
          proto_compress_fwdbwd: opts.compressFwdbwd ?? false,
          fwdbwd_max_chunk_len: 1024,
          fwdbwd_max_chunk_bytes_count: 5_000_000,
          billing_exception_max_pause_duration_sec: 3600,
          sample_max_concurrent_requests: 2000,
          ...opts.clientConfig,
        };

  async function retrieve(body: Record<string, unknown>, accept: string): Promise<Answer> {
    const id = String(body.request_id);
    const f = futures.get(id);
    if (!f) return { status: 404, body: { detail: `Future ${id} not found` } };
    const notYet = () =>
      flavour === 'skyrl'
        ? { status: 408, body: { detail: 'Timeout waiting for result' } }
        : { status: 200, body: { type: 'try_again', request_id: id, queue_state: 'active' } };
    if (f.state === 'pending' || f.polls <= (opts.pendingPolls ?? 0)) {
      if (f.state === 'pending') {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, flavour === 'skyrl' ? longPollMs : holdMs);
          futureWaiters.set(id, [
            ...(futureWaiters.get(id) ?? []),
            () => {
              clearTimeout(timer);
              resolve();
            },
          ]);
        });
      }
      if (f.state === 'pending' || f.polls <= (opts.pendingPolls ?? 0)) return notYet();
    }
    if (f.state === 'failed') {
      return flavour === 'skyrl'
        ? { status: 400, body: { detail: f.error!.message } }
        : { status: 200, body: { error: f.error!.message, category: f.error!.category } };
    }
    if (f.proto && accept.includes(PROTO_CONTENT_TYPE)) {
      const bytes =
        f.proto === 'fwdbwd'
          ? encodeForwardBackwardOutput(f.result as ForwardBackwardOutput)
          : encodeSampleResponse(f.result as SampleResponse);
      return { status: 200, body: undefined, proto: bytes };
    }
    return { status: 200, body: f.result };
  }

  // ---- checkpoints, their archives, the OpenAI-compatible routes ---------------------------------

  const archiveOf = (ck: TestCheckpoint): Uint8Array => {
    const made = testAdapterFiles(ck);
    const files = opts.archive?.files ? opts.archive.files(made) : made;
    return opts.archive?.bytes ? opts.archive.bytes(files) : tarOf(files, opts.archive?.gzip ?? false);
  };

  /** a new signed URL for the checkpoint at `path`, served at `at` (a path) or /signed/TOKEN */
  const grant = (path: string, at?: (token: string) => string, hop = false) => {
    const token = randomUUID();
    const expires = Date.now() + 15 * 60_000;
    const where = at ? at(token) : `/signed/${token}`;
    signed.set(token, { path, expires, at: where, ...(hop ? { hop } : {}) });
    return { token, expires, url: `${baseUrl}${where}?expires=${expires}` };
  };

  /** `training_runs/{run}/checkpoints[/{weights|sampler_weights}/{name}[/ttl|/archive]]` */
  function checkpointRoute(route: string, method: string, body: Record<string, unknown>): Answer {
    const m =
      /^training_runs\/([^/]+)\/checkpoints(?:\/(weights|sampler_weights)\/([^/]+)(?:\/(ttl|archive))?)?$/.exec(
        route,
      );
    if (!m) return { status: 404, body: { detail: `Not Found: ${route}` } };
    const [, run, kind, name, action] = m;
    const wrongMethod = { status: 405, body: { detail: 'Method Not Allowed' } };
    if (!kind) {
      if (method !== 'GET') return wrongMethod;
      if (!models.has(run!)) return { status: 404, body: { detail: `Training run not found: ${run}` } };
      const list = [...checkpoints]
        .filter(([p]) => p.startsWith(`tinker://${run}/`))
        .map(([p, c]) => ({
          checkpoint_id: p.split('/').slice(-2).join('/'),
          checkpoint_type: c.kind === 'weights' ? 'training' : 'sampler',
          time: c.time,
          tinker_path: p,
          size_bytes: archiveOf(c).length,
          public: false,
          expires_at: c.expiresAt ?? null,
        }));
      return {
        status: 200,
        body: { checkpoints: list, cursor: { offset: 0, limit: 100, total_count: list.length } },
      };
    }
    const path = `tinker://${run}/${kind}/${name}`;
    const ck = checkpoints.get(path);
    if (!ck) return { status: 404, body: { detail: `Checkpoint not found: ${path}` } };
    if (action === 'ttl') {
      if (method !== 'PUT') return wrongMethod;
      const ttl = body.ttl_seconds;
      if (ttl === null) {
        delete ck.ttlSeconds;
        delete ck.expiresAt;
      } else if (typeof ttl === 'number' && Number.isInteger(ttl) && ttl > 0) {
        ck.ttlSeconds = ttl;
        ck.expiresAt = new Date(Date.now() + ttl * 1000).toISOString();
      } else return { status: 400, body: { detail: 'ttl_seconds must be a positive integer or null' } };
      return { status: 200, body: { tinker_path: path, expires_at: ck.expiresAt ?? null } };
    }
    if (action === 'archive') {
      if (method !== 'GET') return wrongMethod;
      if (opts.archive?.form === 'bytes')
        return {
          status: 200,
          body: undefined,
          bytes: { contentType: 'application/gzip', data: archiveOf(ck) },
        };
      const relative = opts.archive?.location === 'relative' && opts.archive?.form !== 'json';
      const hop = (opts.archive?.signed ?? 'archive').endsWith('-redirect');
      // relative: `archive/../signed/TOKEN` beside the route, i.e. `.../{name}/signed/TOKEN`
      const g = grant(
        path,
        relative ? (t) => `/api/v1/${route.replace(/archive$/, `signed/${t}`)}` : undefined,
        hop,
      );
      signedUrls.push(g.url);
      if (opts.archive?.form === 'json')
        return { status: 200, body: { url: g.url, expires: new Date(g.expires).toISOString() } };
      return {
        status: 302,
        body: null,
        headers: {
          location: relative ? `signed/${g.token}?expires=${g.expires}` : g.url,
          expires: new Date(g.expires).toUTCString(),
        },
      };
    }
    if (method !== 'DELETE') return wrongMethod;
    checkpoints.delete(path);
    return { status: 200, body: null };
  }

  /** a signed URL: the archive of the checkpoint it was made for, while it is good */
  function signedRoute(route: string, pathname: string): Answer {
    const token = route.slice('signed/'.length).split('?')[0]!;
    const granted = signed.get(token);
    if (!granted || Date.now() > granted.expires)
      return { status: 403, body: { detail: 'AccessDenied: the signature is unknown or expired' } };
    // a signed URL is good at the one place it was made for
    if (granted.at !== pathname) return { status: 404, body: { detail: 'NoSuchKey' } };
    const ck = checkpoints.get(granted.path);
    if (!ck) return { status: 404, body: { detail: 'NoSuchKey' } };
    const mode = opts.archive?.signed ?? 'archive';
    if (mode === 'loop')
      return { status: 302, body: null, headers: { location: `${baseUrl}${pathname}?again=1` } };
    if (mode === 'html')
      return {
        status: 200,
        body: undefined,
        bytes: {
          contentType: 'text/html; charset=utf-8',
          data: Buffer.from('<!doctype html><html><body><h1>Sign in to continue</h1></body></html>\n'),
        },
      };
    if (granted.hop) {
      // the next URL beside this one: a relative Location resolves there
      const next = grant(granted.path, (t) => pathname.replace(/[^/]+$/, t));
      return {
        status: 302,
        body: null,
        headers: {
          location: mode === 'relative-redirect' ? `${next.token}?expires=${next.expires}` : next.url,
        },
      };
    }
    return {
      status: 200,
      body: undefined,
      bytes: {
        contentType: opts.archive?.gzip ? 'application/gzip' : 'application/x-tar',
        data: archiveOf(ck),
      },
    };
  }

  /**
   * `/oai/api/v1/chat/completions` and `/completions`: sampling a base model or saved sampler
   * weights (`model` a tinker:// path, or `<base>;<path>`) through the OpenAI protocol. The text
   * answered names the weights' step, so a test sees which weights it sampled.
   */
  function oaiRoute(route: string, method: string, body: Record<string, unknown>): Answer {
    oaiRequests.push(body);
    const oaiError = (status: number, message: string): Answer => ({
      status,
      body: { error: { message, type: 'invalid_request_error', code: null } },
    });
    if (method !== 'POST') return oaiError(405, 'Method Not Allowed');
    const asked = String(body.model ?? '');
    const name = asked.includes(';') ? asked.slice(asked.indexOf(';') + 1) : asked;
    let w: WeightsState;
    if (name.startsWith('tinker://')) {
      const ck = checkpoints.get(name);
      if (ck?.kind !== 'sampler_weights') return oaiError(404, `The model '${name}' does not exist`);
      w = { baseModel: ck.baseModel, step: ck.step, lrs: ck.lrs };
    } else if (baseModels.includes(name)) w = { baseModel: name, step: 0, lrs: [] };
    else return oaiError(404, `The model '${name}' does not exist`);
    const text = `Sampled from ${w.baseModel} at step ${w.step}; no call this turn.`;
    const usage = { prompt_tokens: 10, completion_tokens: 12, total_tokens: 22 };
    const common = {
      id: `cmpl-${randomUUID()}`,
      created: Math.floor(Date.now() / 1000),
      model: asked,
      usage,
    };
    if (route === 'oai/chat/completions')
      return {
        status: 200,
        body: {
          ...common,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
        },
      };
    if (route === 'oai/completions')
      return {
        status: 200,
        body: {
          ...common,
          object: 'text_completion',
          choices: [{ index: 0, text, finish_reason: 'stop', logprobs: null }],
        },
      };
    return oaiError(404, `Not Found: ${route}`);
  }

  async function handle(
    route: string,
    method: string,
    body: Record<string, unknown>,
    raw: { fwd?: ForwardBackwardRequestJson; query?: URLSearchParams; pathname?: string },
    accept: string,
    fault: Fault | undefined,
  ): Promise<Answer> {
    switch (route) {
      case 'healthz':
        return { status: 200, body: { status: 'ok' } };
      case 'client/config':
        return { status: 200, body: { ...clientConfig(), ...(opts.jwt ? { pjwt_auth_enabled: true } : {}) } };
      case 'auth/token': {
        if (!opts.jwt) return { status: 404, body: { detail: 'Not Found: auth/token' } };
        const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
        const expires = Date.now() + opts.jwt.ttlSeconds * 1000;
        const jwt = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ exp: expires / 1000, n: tokens.length })}.sig`;
        tokens.push(jwt);
        liveTokens.set(jwt, expires);
        return { status: 200, body: { jwt } };
      }
      case 'get_server_capabilities':
        return {
          status: 200,
          body: {
            supported_models: baseModels.map((model_name) => ({
              model_name,
              max_context_length: opts.maxContextLength ?? 32768,
            })),
          },
        };
      case 'create_session': {
        const id = flavour === 'skyrl' ? newId('session') : newId('sess');
        sessions.set(id, { heartbeats: 0, models: 0 });
        return { status: 200, body: { session_id: id, type: 'create_session' } };
      }
      case 'session_heartbeat': {
        const s = sessions.get(String(body.session_id));
        if (!s) return { status: 404, body: { detail: 'session not found' } };
        s.heartbeats++;
        return { status: 200, body: { type: 'session_heartbeat' } };
      }
      case 'create_model': {
        const s = sessions.get(String(body.session_id));
        if (!s) return { status: 404, body: { detail: 'session not found' } };
        const base = String(body.base_model);
        const lora = body.lora_config as { rank?: number } | undefined;
        if (flavour === 'skyrl' && !lora) return { status: 422, body: { detail: 'lora_config is required' } };
        if (!baseModels.includes(base)) {
          const requestId = newFuture(route);
          failFuture(requestId, `base model ${base} is not served here`);
          return { status: 200, body: futureAnswer(requestId) };
        }
        const id =
          flavour === 'skyrl'
            ? newId('model')
            : `${String(body.session_id)}:train:${String(body.model_seq_id)}`;
        models.set(id, {
          id,
          baseModel: base,
          rank: lora?.rank ?? 32,
          step: 0,
          lrs: [],
          expected: 1,
          waiting: new Map(),
          seen: new Map(),
          ran: [],
          passes: [],
          steps: [],
          accum: { lossSum: 0, datums: 0 },
        });
        const requestId = newFuture(route);
        if (fault && 'fail' in fault) failFuture(requestId, fault.fail, fault.category);
        else
          complete(
            requestId,
            flavour === 'skyrl'
              ? { model_id: id, base_model: base, lora_config: lora }
              : { model_id: id, type: 'create_model' },
          );
        return {
          status: 200,
          body: futureAnswer(
            requestId,
            flavour === 'skyrl'
              ? { model_id: id, base_model: base, lora_config: lora, status: 'pending' }
              : { model_id: id },
          ),
        };
      }
      case 'get_info': {
        const m = models.get(String(body.model_id));
        if (!m) return { status: 404, body: { detail: 'model not found' } };
        return {
          status: 200,
          body:
            flavour === 'skyrl'
              ? {
                  model_id: m.id,
                  status: 'ready',
                  model_data: {
                    base_model: m.baseModel,
                    lora_config: { rank: m.rank },
                    model_name: m.baseModel,
                  },
                }
              : {
                  model_id: m.id,
                  model_data: { arch: 'toy', model_name: m.baseModel, tokenizer_id: m.baseModel },
                  is_lora: true,
                  lora_rank: m.rank,
                  model_name: m.baseModel,
                  type: 'get_info',
                },
        };
      }
      case 'create_sampling_session': {
        const id =
          flavour === 'skyrl'
            ? newId('sampling')
            : `${String(body.session_id)}:sample:${String(body.sampling_session_seq_id)}`;
        let w: WeightsState | undefined;
        if (typeof body.model_path === 'string') {
          const ck = checkpoints.get(body.model_path);
          if (!ck) return { status: 404, body: { detail: `no weights at ${body.model_path}` } };
          w = { baseModel: ck.baseModel, step: ck.step, lrs: ck.lrs };
        } else w = { baseModel: String(body.base_model), step: 0, lrs: [] };
        samplers.set(id, w);
        return { status: 200, body: { sampling_session_id: id } };
      }
      case 'asample': {
        const requestId = newFuture(route);
        try {
          if (fault && 'fail' in fault) throw new HttpFailure(400, fault.fail);
          const res = runSample(body);
          // the sampler answers a little later, as a real one would
          setTimeout(
            () => complete(requestId, { ...res, type: 'sample' }, 'sample'),
            opts.sampleDelayMs ?? 5,
          );
        } catch (e) {
          if (e instanceof HttpFailure && e.status !== 400) {
            futures.delete(requestId);
            throw e;
          }
          failFuture(requestId, (e as Error).message);
        }
        return { status: 200, body: futureAnswer(requestId) };
      }
      case 'retrieve_future':
        return retrieve(body, accept);
      default:
        if (route === 'billing/usage/events') return billingRoute(raw.query ?? new URLSearchParams());
        if (route.startsWith('training_runs/')) return checkpointRoute(route, method, body);
        if (route.startsWith('signed/')) return signedRoute(route, raw.pathname ?? '');
        if (route.startsWith('oai/')) return oaiRoute(route, method, body);
        if (TRAINING_ROUTES.has(route)) {
          if (method !== 'POST') return { status: 405, body: { detail: 'method not allowed' } };
          const requestId = submitTraining(route, body, fault, raw.fwd);
          return { status: 200, body: futureAnswer(requestId) };
        }
        return { status: 404, body: { detail: `Not Found: ${route}` } };
    }
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      // `/api/v1/x` is `x`, the OpenAI-compatible `/oai/api/v1/x` is `oai/x`, a signed URL `signed/...`
      const route = url.pathname.startsWith('/oai/api/v1/')
        ? `oai/${url.pathname.slice('/oai/api/v1/'.length)}`
        : /\/signed\/[^/]+$/.test(url.pathname)
          ? `signed/${url.pathname.split('/').at(-1)}`
          : url.pathname.replace(/^\/api\/v1\//, '');
      const contentType = String(req.headers['content-type'] ?? '');
      const accept = String(req.headers.accept ?? '');
      const wireBody = await readBody(req);
      const contentEncoding = req.headers['content-encoding']?.trim().toLowerCase() || undefined;
      const encoded = contentEncoding !== undefined ? { contentEncoding } : {};
      const send = (
        status: number,
        body: unknown,
        headers: Record<string, string> = {},
        proto?: Uint8Array,
      ) => {
        if (proto) {
          res.writeHead(status, { 'content-type': PROTO_CONTENT_TYPE, ...headers });
          res.end(Buffer.from(proto));
          return;
        }
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body ?? null));
      };
      // a body the server will not read: recorded as refused before it is read
      const refuse = () =>
        requests.push({
          route,
          method: req.method ?? 'POST',
          contentType,
          accept,
          ...encoded,
          refused: true,
          order: ++events,
        });
      let body: Record<string, unknown> = {};
      const raw: { fwd?: ForwardBackwardRequestJson; query?: URLSearchParams; pathname?: string } = {
        query: url.searchParams,
        pathname: url.pathname,
      };
      let rawBody = wireBody;
      if (contentEncoding !== undefined && contentEncoding !== 'identity') {
        if (contentEncoding !== 'zstd') {
          refuse();
          return send(415, { detail: `Unsupported content encoding: ${contentEncoding}` });
        }
        try {
          rawBody = Buffer.from(await zstdDecompress(new Uint8Array(wireBody)));
        } catch (e) {
          return send(400, { detail: `bad zstd body: ${(e as Error).message}` });
        }
      }
      try {
        if (contentType.includes(PROTO_CONTENT_TYPE)) {
          if (route !== 'forward_backward')
            return send(415, { detail: 'protobuf bodies are read on forward_backward only' });
          if (!forms.proto) {
            refuse();
            return send(415, { detail: 'Unsupported media type: application/x-protobuf' });
          }
          const decoded = decodeForwardBackwardRequest(new Uint8Array(rawBody));
          raw.fwd = decoded.request;
          body = { model_id: decoded.request.model_id, seq_id: decoded.request.seq_id };
          if (decoded.forwardOnly) return finish('forward');
        } else if (rawBody.length > 0) {
          body = JSON.parse(rawBody.toString('utf8')) as Record<string, unknown>;
          if (route === 'forward_backward') {
            if (!forms.json) {
              refuse();
              return send(415, { detail: 'forward_backward takes application/x-protobuf' });
            }
            raw.fwd = body as unknown as ForwardBackwardRequestJson;
          } else if (route === 'forward') {
            raw.fwd = {
              model_id: String(body.model_id),
              seq_id: Number(body.seq_id),
              forward_backward_input:
                body.forward_input as ForwardBackwardRequestJson['forward_backward_input'],
            };
          }
        }
      } catch (e) {
        return send(400, { detail: `bad body: ${(e as Error).message}` });
      }
      return finish(route);

      async function finish(r: string) {
        const record: RequestRecord = {
          route: r,
          method: req.method ?? 'GET',
          contentType,
          accept,
          ...(typeof body.seq_id === 'number' ? { seqId: body.seq_id } : {}),
          bodySha: createHash('sha256').update(wireBody).digest('hex'),
          ...encoded,
          wireBytes: wireBody.length,
          bodyBytes: rawBody.length,
          at: performance.now(),
          order: ++events,
          ...(raw.fwd ? { fwdbwd: raw.fwd } : {}),
          ...(typeof req.headers['x-api-key'] === 'string' ? { apiKey: req.headers['x-api-key'] } : {}),
          ...(typeof req.headers['x-tinker-request-type'] === 'string'
            ? { requestType: req.headers['x-tinker-request-type'] }
            : {}),
          ...(typeof req.headers['x-idempotency-key'] === 'string'
            ? { idempotencyKey: req.headers['x-idempotency-key'] }
            : {}),
        };
        requests.push(record);
        for (const h of [...held]) if (h.until(record)) h.release();
        const key = req.headers['x-api-key'];
        if (r.startsWith('signed/')) {
          // the signature in the URL is the authorisation; no key is asked for
        } else if (r.startsWith('oai/')) {
          if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`)
            return send(401, { error: { message: 'Invalid API key', type: 'authentication_error' } });
        } else if (opts.jwt && r !== 'client/config' && r !== 'auth/token') {
          const expires = typeof key === 'string' ? liveTokens.get(key) : undefined;
          if (expires === undefined || Date.now() >= expires)
            return send(401, { detail: 'token expired or unknown' });
        } else if (opts.apiKey !== undefined && key !== opts.apiKey) {
          return send(401, { detail: 'Invalid API key' });
        }
        const attempt = routeCounts.get(r) ?? 0;
        routeCounts.set(r, attempt + 1);
        const fut = r === 'retrieve_future' ? futures.get(String(body.request_id)) : undefined;
        const ctx: FaultContext = {
          route: r,
          method: record.method,
          body: raw.fwd ?? body,
          attempt,
          ...(record.seqId !== undefined ? { seqId: record.seqId } : {}),
          ...(fut
            ? { future: { requestId: String(body.request_id), route: fut.route, polls: fut.polls } }
            : {}),
          headers: req.headers,
        };
        // every poll counts, answered or not
        if (fut) fut.polls++;
        const fault = opts.fault?.(ctx);
        if (fault) {
          if ('hang' in fault) return;
          if ('drop' in fault && fault.drop === 'before') return req.socket.destroy();
          if ('status' in fault)
            return send(fault.status, fault.body ?? { detail: `injected ${fault.status}` }, {
              ...fault.headers,
            });
          if ('expire' in fault) {
            futures.delete(String(body.request_id));
            return send(410, { detail: 'promise expired' });
          }
          if ('delayMs' in fault) await new Promise((r2) => setTimeout(r2, fault.delayMs));
        }
        try {
          const out = await handle(r, record.method, body, raw, accept, fault);
          if (fault && 'drop' in fault && fault.drop === 'after') return req.socket.destroy();
          if (out.bytes) {
            res.writeHead(out.status, { 'content-type': out.bytes.contentType, ...out.headers });
            res.end(Buffer.from(out.bytes.data));
            return;
          }
          send(out.status, out.body, out.headers ?? {}, out.proto);
        } catch (e) {
          if (e instanceof HttpFailure) return send(e.status, { detail: e.detail });
          send(500, { detail: `internal error: ${(e as Error).message}` });
        }
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${port}`;
  return {
    url: `http://127.0.0.1:${port}`,
    flavour,
    requests,
    models,
    sessions,
    samplers,
    samples,
    checkpoints,
    oaiRequests,
    signedUrls,
    get ticks() {
      return ticks;
    },
    tokens,
    revokeTokens: () => liveTokens.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        if (clock) clearInterval(clock);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * client options for tests: this server, no heartbeat, short backoffs. The request timeout and
 * the deadline are long: this server answers in the test's own process, so on a loaded machine
 * an answer can take seconds, and a short timeout would resend a request the test counts once.
 * The tests of timeouts and deadlines set their own.
 */
export function fastOptions(url: string, extra: TinkerClientOptions = {}): TinkerClientOptions {
  return {
    baseUrl: url,
    apiKey: 'tml-test',
    heartbeatMs: 0,
    pollTimeoutMs: 2000,
    deadlineMs: 300_000,
    retry: {
      initialBackoffMs: 5,
      maxBackoffMs: 20,
      requestTimeoutMs: 60_000,
      billingPauseMs: 10,
      maxRetries: 4,
    },
    onWarning: () => {},
    ...extra,
  };
}
