/**
 * The transport: one HTTP exchange with the service (`attempt`), and a request sent until it is
 * accepted (`send`). Node's own fetch; no SDK retries underneath, so the rules are these and
 * tested: 408, 409, 429, 5xx (or whatever the server's `x-should-retry` says), per-request timeouts
 * and dropped connections are retried with the same body and the same idempotency key (training
 * requests carry a seq_id, so a resent one is the same request to the server), waiting for
 * `retry-after-ms` / `Retry-After` where given (else backing off); 402 pauses while the billing
 * budget lasts; anything else is a `TinkerError` at once.
 */
import { randomUUID } from 'node:crypto';
import type { Credential } from './auth.js';
import { TinkerError } from './errors.js';
import type { EncodedRequest } from './requests.js';

export interface RetryPolicy {
  /** tries after the first for a request that gets no usable answer (default 10) */
  readonly maxRetries: number;
  /** backoff before retry k is min(maxBackoffMs, initialBackoffMs * 2^(k-1)) with jitter */
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  /** per HTTP exchange, covering the whole answer (default 60000) */
  readonly requestTimeoutMs: number;
  /** the wait between retries while the service answers 402 (default 5000) */
  readonly billingPauseMs: number;
  /** how long 402s are waited out before `billing` is reported (default 3600 s, or the server's) */
  readonly billingMaxPauseMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 10,
  initialBackoffMs: 500,
  maxBackoffMs: 10_000,
  requestTimeoutMs: 60_000,
  billingPauseMs: 5_000,
  billingMaxPauseMs: 3_600_000,
};

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly contentType: string;
  readonly body: Uint8Array;
}

/** what became of one exchange that brought no HTTP answer */
export type NoAnswer = { readonly kind: 'timeout' | 'network' | 'deadline'; readonly error: unknown };

export interface TransportOptions {
  readonly baseUrl: string;
  readonly apiKey?: string;
  /** where each request's key comes from when it is not a fixed `apiKey` (a JWT bought with it) */
  readonly credential?: Credential;
  readonly retry: RetryPolicy;
  /** headers sent with every request */
  readonly headers?: Readonly<Record<string, string>>;
  /** jitter source in [0, 1) (default Math.random) */
  readonly random?: () => number;
  /** told before each wait to resend, so a person sees why nothing moves */
  readonly onRetry?: (retry: RetryEvent) => void;
  /** every wait between tries, of sends and polls alike (default `sleep`, a timer) */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** the clock an HTTP-date `Retry-After` is counted from (default Date.now) */
  readonly now?: () => number;
}

/** a request about to be sent again */
export interface RetryEvent {
  readonly what: string;
  readonly route: string;
  /** why: the status and body, or the connection failure */
  readonly reason: string;
  /** this retry's number (1 for the second try) and how many there may be */
  readonly retry: number;
  readonly maxRetries: number;
  readonly waitMs: number;
}

/** one line for a person: what failed and when it is tried again */
export function retryLine(e: RetryEvent): string {
  return `${e.what}: ${e.reason}; try ${e.retry + 1} of ${e.maxRetries + 1} in ${(e.waitMs / 1000).toFixed(1)} s`;
}

export interface SendOptions {
  /** the overall deadline: aborting it ends every exchange and wait with `deadline` */
  readonly signal?: AbortSignal;
  readonly headers?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
  /** a label for errors (default: the route) */
  readonly what?: string;
  /** one key for every send of one logical request (default: a new key per `send`) */
  readonly idempotencyKey?: string;
  /** `manual`: a 3xx is the answer (its Location read by the caller), not followed */
  readonly redirect?: 'follow' | 'manual';
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Whether an error answer is sent again, as the SDK decides: the server's `x-should-retry: true` or
 * `false` first, else 408, 409 (a lock or a seq_id the server is still settling), 429 and 5xx.
 */
export function shouldRetry(answer: Pick<HttpAnswer, 'status' | 'headers'>): boolean {
  const said = answer.headers.get('x-should-retry');
  if (said === 'true') return true;
  if (said === 'false') return false;
  const s = answer.status;
  return s === 408 || s === 409 || s === 429 || s >= 500;
}

/** `retry-after-ms`, else `Retry-After` in seconds (an HTTP date too, from `now`), when 60 s or less */
export function retryAfterMs(headers: Headers, now: () => number = Date.now): number | undefined {
  const ms = Number(headers.get('retry-after-ms'));
  if (headers.get('retry-after-ms') !== null && Number.isFinite(ms) && ms >= 0 && ms <= 60_000) return ms;
  const raw = headers.get('retry-after');
  if (raw === null) return undefined;
  const secs = Number(raw);
  const wait = Number.isFinite(secs) ? secs * 1000 : Date.parse(raw) - now();
  return Number.isFinite(wait) && wait >= 0 && wait <= 60_000 ? wait : undefined;
}

/** a short text of an error body for messages: FastAPI's `detail`, the hosted `error`, or the text */
export function describeBody(answer: HttpAnswer): string {
  const text = Buffer.from(answer.body).toString('utf8');
  try {
    const parsed = JSON.parse(text) as { detail?: unknown; error?: unknown; message?: unknown };
    const msg = parsed.detail ?? parsed.error ?? parsed.message;
    if (msg !== undefined) return typeof msg === 'string' ? msg : JSON.stringify(msg);
  } catch {
    // not JSON: the text itself
  }
  return text.slice(0, 300) || '(empty body)';
}

export function parseJsonBody(answer: HttpAnswer, what: string): unknown {
  const text = Buffer.from(answer.body).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new TinkerError('bad_response', `${what}: the server's answer is not JSON: ${text.slice(0, 200)}`, {
      status: answer.status,
    });
  }
}

/** The error a status that is not retried becomes. */
export function statusError(answer: HttpAnswer, what: string, route: string): TinkerError {
  const detail = describeBody(answer);
  const status = answer.status;
  const details = { route, status, body: detail };
  if (status === 401 || status === 403) {
    return new TinkerError(
      'auth',
      `${what}: HTTP ${status} ${detail}. Check TINKER_API_KEY (sent as X-API-Key).`,
      details,
    );
  }
  if (status === 409) {
    return new TinkerError(
      'conflict',
      `${what}: HTTP 409 ${detail}. A seq_id was reused with another body: is another client training this model?`,
      details,
    );
  }
  return new TinkerError('http', `${what}: HTTP ${status} ${detail}`, details);
}

export class TinkerTransport {
  readonly baseUrl: string;
  private readonly random: () => number;
  readonly now: () => number;
  constructor(private readonly opts: TransportOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.random = opts.random ?? Math.random;
    this.now = opts.now ?? Date.now;
  }

  get retry(): RetryPolicy {
    return this.opts.retry;
  }

  url(route: string): string {
    return `${this.baseUrl}/api/v1/${route}`;
  }

  backoffMs(retry: number): number {
    const { initialBackoffMs, maxBackoffMs } = this.opts.retry;
    const base = Math.min(maxBackoffMs, initialBackoffMs * 2 ** Math.max(0, retry - 1));
    return base * (0.75 + 0.25 * this.random());
  }

  /** One exchange: an HTTP answer (any status), or why there was none. */
  async attempt(
    method: HttpMethod,
    route: string,
    request: EncodedRequest | undefined,
    opts: SendOptions,
  ): Promise<HttpAnswer | NoAnswer> {
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? this.opts.retry.requestTimeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    const key = this.opts.credential ? await this.opts.credential.key() : this.opts.apiKey;
    const headers: Record<string, string> = {
      ...this.opts.headers,
      ...(key ? { 'X-API-Key': key } : {}),
      ...(request ? { 'Content-Type': request.contentType } : {}),
      ...(request?.contentEncoding ? { 'Content-Encoding': request.contentEncoding } : {}),
      ...(opts.idempotencyKey ? { 'X-Idempotency-Key': opts.idempotencyKey } : {}),
      ...opts.headers,
    };
    try {
      const res = await fetch(this.url(route), {
        method,
        headers,
        ...(request ? { body: request.body } : {}),
        redirect: opts.redirect ?? 'follow',
        signal,
      });
      const body = new Uint8Array(await res.arrayBuffer());
      return {
        status: res.status,
        headers: res.headers,
        contentType: res.headers.get('content-type') ?? '',
        body,
      };
    } catch (error) {
      if (opts.signal?.aborted) return { kind: 'deadline', error };
      if (timeout.aborted) return { kind: 'timeout', error };
      return { kind: 'network', error };
    }
  }

  /**
   * Sends until the server accepts (2xx), resending the same body with the same idempotency key.
   * Throws a `TinkerError` when the status is not retried or the retries run out.
   */
  async send(
    method: HttpMethod,
    route: string,
    request: EncodedRequest | undefined,
    opts: SendOptions = {},
  ): Promise<HttpAnswer> {
    const what = opts.what ?? route;
    // as the SDK: every request but a GET carries one
    const idempotencyKey = opts.idempotencyKey ?? (method !== 'GET' ? newIdempotencyKey() : undefined);
    const { maxRetries, billingPauseMs, billingMaxPauseMs } = this.opts.retry;
    let retries = 0;
    let billingWaited = 0;
    let last = '';
    let lastStatus: number | undefined;
    let refreshed = false;
    for (;;) {
      const answer = await this.attempt(method, route, request, { ...opts, idempotencyKey });
      let waitMs: number;
      if ('kind' in answer) {
        if (answer.kind === 'deadline') throw deadlineError(what, route, answer.error);
        last = answer.kind === 'timeout' ? 'no answer within the request timeout' : networkText(answer.error);
        waitMs = this.backoffMs(retries + 1);
      } else if (answer.status >= 200 && answer.status < 300) {
        return answer;
      } else if (opts.redirect === 'manual' && answer.status >= 300 && answer.status < 400) {
        return answer;
      } else if (answer.status === 402) {
        if (billingWaited >= billingMaxPauseMs) {
          throw new TinkerError(
            'billing',
            `${what}: HTTP 402 ${describeBody(answer)} for ${Math.round(billingWaited / 1000)} s`,
            {
              route,
              status: 402,
            },
          );
        }
        billingWaited += billingPauseMs;
        await this.wait(billingPauseMs, opts.signal, what, route);
        continue;
      } else if (answer.status === 401 && !refreshed && (await this.opts.credential?.refresh())) {
        // a short-lived credential went stale: one new one, sent at once
        refreshed = true;
        continue;
      } else if (shouldRetry(answer)) {
        last = `HTTP ${answer.status} ${describeBody(answer)}`;
        lastStatus = answer.status;
        waitMs = retryAfterMs(answer.headers, this.now) ?? this.backoffMs(retries + 1);
      } else {
        throw statusError(answer, what, route);
      }
      if (retries >= maxRetries) {
        const kind = last.startsWith('no answer')
          ? 'timeout'
          : lastStatus === 409
            ? 'conflict'
            : last.startsWith('HTTP')
              ? 'http'
              : 'unreachable';
        throw new TinkerError(kind, `${what}: ${last} after ${retries + 1} tries (${this.url(route)})`, {
          route,
          ...(lastStatus !== undefined ? { status: lastStatus } : {}),
        });
      }
      retries++;
      this.opts.onRetry?.({ what, route, reason: last, retry: retries, maxRetries, waitMs });
      await this.wait(waitMs, opts.signal, what, route);
    }
  }

  async wait(ms: number, signal: AbortSignal | undefined, what: string, route: string): Promise<void> {
    try {
      await (this.opts.sleep ?? sleep)(ms, signal);
    } catch (error) {
      throw deadlineError(what, route, error);
    }
  }
}

export function newIdempotencyKey(): string {
  return `seal-retry-${randomUUID()}`;
}

export function deadlineError(what: string, route: string, cause: unknown, requestId?: string): TinkerError {
  return new TinkerError(
    'deadline',
    `${what}: the deadline passed${requestId ? ` waiting for request ${requestId}` : ''}`,
    { route, ...(requestId ? { requestId } : {}) },
    { cause },
  );
}

function networkText(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return `connection failed (${cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error)})`;
}
