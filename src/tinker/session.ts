/**
 * A session with a Tinker service: where it is and how to reach it (options and environment), the
 * server's client config (chunk limits, billing pause), `create_session`, the heartbeat every
 * 10 s that keeps the session (and, on SkyRL, its LoRA slots) alive, and the per-session counters
 * that number models and sampling sessions.
 */
import { type Credential, credentialFromCommand, JwtCredential } from './auth.js';
import { TinkerError } from './errors.js';
import type { QueueStateEvent } from './futures.js';
import { DEFAULT_RETRY, parseJsonBody, type RetryEvent, type RetryPolicy, TinkerTransport } from './http.js';
import { json } from './requests.js';
import {
  CapabilitiesSchema,
  type ClientConfigAnswer,
  ClientConfigSchema,
  CreateSessionSchema,
  parseWire,
  type ServerCapabilities,
} from './schemas.js';

/** the hosted service, when neither `baseUrl` nor TINKER_BASE_URL names another */
export const HOSTED_BASE_URL = 'https://tinker.thinkingmachines.dev/services/tinker-prod';

/**
 * `json`: every body JSON (SkyRL up to its open proto-only change; the hosted service before SDK
 * 0.25). `proto`: forward_backward sent as protobuf and its and sample results asked for as
 * protobuf (the hosted service since 0.25). `auto`: protobuf first, JSON from the first
 * forward_backward the server refuses as protobuf (415, 400 or 422) on.
 */
export type WireForm = 'auto' | 'json' | 'proto';

export interface TinkerClientOptions {
  /** default: TINKER_BASE_URL, else the hosted service */
  readonly baseUrl?: string;
  /** default: TINKER_API_KEY; sent as X-API-Key (SkyRL ignores it) */
  readonly apiKey?: string;
  readonly wire?: WireForm;
  /** default 10000, as the SDK */
  readonly heartbeatMs?: number;
  readonly retry?: Partial<RetryPolicy>;
  /** one retrieve_future poll (default 75000: over the SDK's 45 s, a re-poll after SkyRL's 300 s 408 is fine) */
  readonly pollTimeoutMs?: number;
  /** the overall deadline of one call, submission to result (default 1800000) */
  readonly deadlineMs?: number;
  /** the protocol version told to the server (default 0.25.0, the SDK this client follows) */
  readonly sdkVersion?: string;
  /** session tags (default: TINKER_TAGS, comma separated) */
  readonly tags?: readonly string[];
  readonly userMetadata?: Readonly<Record<string, string>>;
  readonly projectId?: string;
  /** a request waits in a queue (try_again / 408 bodies); shows rate limiting and capacity pauses */
  readonly onQueueState?: (event: QueueStateEvent) => void;
  /** the server's info/warning messages and failed heartbeats */
  readonly onWarning?: (message: string) => void;
  /** headers added to every request (e.g. an access proxy's) */
  readonly headers?: Readonly<Record<string, string>>;
  /** jitter source in [0, 1) (default Math.random) */
  readonly random?: () => number;
  /** a request is about to be sent again (see `retryLine`) */
  readonly onRetry?: (retry: RetryEvent) => void;
  /** every wait between tries (default: a timer); a test's records the wait and returns at once */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** the clock an HTTP-date Retry-After is counted from (default Date.now) */
  readonly now?: () => number;
}

/** the limits and switches the client takes from `client/config`, with the SDK's defaults */
export interface ClientConfig {
  readonly maxChunkDatums: number;
  readonly maxChunkBytes: number;
  readonly parallelFwdbwdChunks: boolean;
  readonly protoCompressFwdbwd: boolean;
  readonly billingMaxPauseMs: number;
  readonly sampleMaxConcurrentRequests: number;
  readonly pjwtAuthEnabled: boolean;
}

export function clientConfigFrom(answer: ClientConfigAnswer): ClientConfig {
  return {
    maxChunkDatums: answer.fwdbwd_max_chunk_len ?? 1024,
    maxChunkBytes: answer.fwdbwd_max_chunk_bytes_count ?? 5_000_000,
    parallelFwdbwdChunks: answer.parallel_fwdbwd_chunks ?? true,
    protoCompressFwdbwd: answer.proto_compress_fwdbwd ?? false,
    billingMaxPauseMs: (answer.billing_exception_max_pause_duration_sec ?? 3600) * 1000,
    sampleMaxConcurrentRequests: answer.sample_max_concurrent_requests ?? 2000,
    pjwtAuthEnabled: answer.pjwt_auth_enabled ?? false,
  };
}

export interface ResolvedOptions {
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  readonly wire: WireForm;
  readonly heartbeatMs: number;
  readonly retry: RetryPolicy;
  readonly pollTimeoutMs: number;
  readonly deadlineMs: number;
  readonly sdkVersion: string;
  readonly tags: readonly string[];
  readonly onQueueState?: (event: QueueStateEvent) => void;
}

/** the shapes of key the SDK sends: an API key (`tml-...`) or a JWT (`eyJ...`), no whitespace */
export function isTinkerKeyShape(key: string): boolean {
  return /^(tml-|eyJ)\S+$/.test(key);
}

/** options over the environment over the defaults; a usage error says what is missing */
export function resolveOptions(
  opts: TinkerClientOptions,
  env: NodeJS.ProcessEnv = process.env,
): ResolvedOptions {
  const baseUrl = opts.baseUrl ?? (env.TINKER_BASE_URL || undefined) ?? HOSTED_BASE_URL;
  if (!/^https?:\/\//.test(baseUrl)) {
    throw new TinkerError(
      'usage',
      `the Tinker base URL must start with http:// or https://, got '${baseUrl}'`,
    );
  }
  const apiKey =
    opts.apiKey ??
    (env.TINKER_API_KEY || undefined) ??
    (env.TINKER_CREDENTIAL_CMD ? credentialFromCommand(env.TINKER_CREDENTIAL_CMD) : undefined);
  const hosted = baseUrl.replace(/\/+$/, '') === HOSTED_BASE_URL;
  if (!apiKey && hosted) {
    throw new TinkerError(
      'usage',
      'the hosted Tinker service needs a key: set TINKER_API_KEY to your key (it starts with tml-), or name a self-hosted server with --base-url or TINKER_BASE_URL',
    );
  }
  // the SDK refuses such a key before sending anything; a self-hosted server may take any
  if (apiKey && hosted && !isTinkerKeyShape(apiKey)) {
    throw new TinkerError(
      'usage',
      `TINKER_API_KEY does not look like a Tinker key (it should start with tml-, or be a JWT starting eyJ; got ${JSON.stringify(`${apiKey.slice(0, 4)}...`)}): set it to the key from your Tinker console`,
    );
  }
  const wire = opts.wire ?? 'auto';
  if (!['auto', 'json', 'proto'].includes(wire)) {
    throw new TinkerError('usage', `wire must be auto, json or proto, got '${wire}'`);
  }
  const tags =
    opts.tags ??
    (env.TINKER_TAGS
      ? env.TINKER_TAGS.split(',')
          .map((t) => t.trim())
          .filter(Boolean)
      : []);
  return {
    baseUrl,
    apiKey,
    wire,
    heartbeatMs: opts.heartbeatMs ?? 10_000,
    retry: { ...DEFAULT_RETRY, ...opts.retry },
    pollTimeoutMs: opts.pollTimeoutMs ?? 75_000,
    deadlineMs: opts.deadlineMs ?? 1_800_000,
    sdkVersion: opts.sdkVersion ?? '0.25.0',
    tags,
    ...(opts.onQueueState ? { onQueueState: opts.onQueueState } : {}),
  };
}

/** One session: created by `openSession`, kept alive until `close`. */
export class TinkerSession {
  private heartbeat: NodeJS.Timeout | undefined;
  private heartbeatInFlight = false;
  private modelSeq = 0;
  private samplingSeq = 0;
  private closed = false;
  /** the last heartbeat's failure, cleared by a heartbeat that gets through */
  lastHeartbeatError: Error | undefined;
  heartbeatsSent = 0;

  constructor(
    readonly transport: TinkerTransport,
    readonly options: ResolvedOptions,
    readonly config: ClientConfig,
    readonly sessionId: string,
    private readonly warn: (message: string) => void,
  ) {}

  /** the next `model_seq_id` (per session, from 0) */
  nextModelSeqId(): number {
    return this.modelSeq++;
  }

  /** the next `sampling_session_seq_id`, shared by sampling sessions and ephemeral sampler saves */
  nextSamplingSessionSeqId(): number {
    return this.samplingSeq++;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  startHeartbeat(): void {
    if (this.options.heartbeatMs <= 0) return;
    this.heartbeat = setInterval(() => void this.beat(), this.options.heartbeatMs);
    this.heartbeat.unref();
  }

  /** one heartbeat; a failure is reported, not thrown (the next may get through) */
  async beat(): Promise<void> {
    if (this.heartbeatInFlight || this.closed) return;
    this.heartbeatInFlight = true;
    try {
      await this.transport.send(
        'POST',
        'session_heartbeat',
        json('session_heartbeat', { session_id: this.sessionId, type: 'session_heartbeat' }),
        { what: 'session heartbeat', timeoutMs: Math.max(1000, this.options.heartbeatMs) },
      );
      this.heartbeatsSent++;
      this.lastHeartbeatError = undefined;
    } catch (e) {
      this.lastHeartbeatError = e instanceof Error ? e : new Error(String(e));
      this.warn(`Tinker session ${this.sessionId}: heartbeat failed: ${this.lastHeartbeatError.message}`);
    } finally {
      this.heartbeatInFlight = false;
    }
  }

  close(): void {
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}

export async function fetchCapabilities(transport: TinkerTransport): Promise<ServerCapabilities> {
  const answer = await transport.send('GET', 'get_server_capabilities', undefined, {
    what: 'get_server_capabilities',
  });
  return parseWire(
    CapabilitiesSchema,
    parseJsonBody(answer, 'get_server_capabilities'),
    'get_server_capabilities',
  );
}

/** client/config, then create_session, then the heartbeat (the SDK's startup order) */
export async function openSession(opts: TinkerClientOptions = {}): Promise<TinkerSession> {
  const resolved = resolveOptions(opts);
  const warn = opts.onWarning ?? ((m: string) => process.stderr.write(`${m}\n`));
  // the config and token requests use the key itself; the session's, the server's retry budget and
  // whatever credential the config asks for
  const transportWith = (retry: RetryPolicy, credential?: Credential) =>
    new TinkerTransport({
      baseUrl: resolved.baseUrl,
      ...(resolved.apiKey ? { apiKey: resolved.apiKey } : {}),
      ...(credential ? { credential } : {}),
      retry,
      ...(opts.headers ? { headers: opts.headers } : {}),
      ...(opts.random ? { random: opts.random } : {}),
      ...(opts.onRetry ? { onRetry: opts.onRetry } : {}),
      ...(opts.sleep ? { sleep: opts.sleep } : {}),
      ...(opts.now ? { now: opts.now } : {}),
    });
  const transport = transportWith(resolved.retry);
  const cfgAnswer = await transport.send(
    'POST',
    'client/config',
    json('client/config', { sdk_version: resolved.sdkVersion }),
    {
      what: 'client/config',
    },
  );
  const config = clientConfigFrom(
    parseWire(ClientConfigSchema, parseJsonBody(cfgAnswer, 'client/config'), 'client/config'),
  );
  // a service that says so takes a short-lived JWT, bought with the key, instead of the key
  let credential: Credential | undefined;
  if (config.pjwtAuthEnabled) {
    if (!resolved.apiKey)
      throw new TinkerError(
        'usage',
        'this Tinker service exchanges a key for short-lived tokens and no key was given: set TINKER_API_KEY or TINKER_CREDENTIAL_CMD',
      );
    credential = new JwtCredential(async () => {
      const answer = await transport.send('POST', 'auth/token', json('auth/token', {}), {
        what: 'auth/token',
      });
      const body = parseJsonBody(answer, 'auth/token') as { jwt?: unknown };
      if (typeof body.jwt !== 'string' || !body.jwt)
        throw new TinkerError('bad_response', 'auth/token: the answer carries no jwt', {
          route: 'auth/token',
        });
      return body.jwt;
    });
  }
  // the server's own pause budget wins over the default, not over an explicit option
  const retry: RetryPolicy = {
    ...resolved.retry,
    billingMaxPauseMs: opts.retry?.billingMaxPauseMs ?? config.billingMaxPauseMs,
  };
  const sessionTransport = transportWith(retry, credential);
  const created = await sessionTransport.send(
    'POST',
    'create_session',
    json('create_session', {
      tags: resolved.tags,
      user_metadata: opts.userMetadata ?? null,
      sdk_version: resolved.sdkVersion,
      ...(opts.projectId ? { project_id: opts.projectId } : {}),
      type: 'create_session',
    }),
    { what: 'create_session' },
  );
  const session = parseWire(CreateSessionSchema, parseJsonBody(created, 'create_session'), 'create_session');
  if (session.error_message)
    throw new TinkerError('http', `create_session: ${session.error_message}`, { route: 'create_session' });
  for (const m of [session.info_message, session.warning_message]) if (m) warn(`Tinker: ${m}`);
  const s = new TinkerSession(sessionTransport, { ...resolved, retry }, config, session.session_id, warn);
  s.startHeartbeat();
  return s;
}
