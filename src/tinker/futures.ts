/**
 * The future pattern: an async route answers with a request id, and `retrieve_future` is polled
 * until the result is there. Both servers' answer forms are read here:
 *
 * - not yet: a 200 `{type: "try_again", queue_state}` (hosted), a 408 after a long poll (SkyRL,
 *   or hosted with a queue_state body), a poll that timed out on our side; polled again;
 * - 5xx: polled again, at once and then backing off, `maxRetries` times in a row at most (SkyRL
 *   answers 500 for a request that failed unexpectedly);
 * - 429 and dropped connections: polled again after a backoff (Retry-After obeyed);
 * - 410: the promise expired on the server, so the original request is sent again (same body, same
 *   seq_id: the server runs it once) and its new id polled;
 * - 402: billing pause, waited out within the budget;
 * - failed: a 200 `{error, category}` (hosted) or a 400 `{detail}` (SkyRL): `request_failed`;
 * - done: a protobuf body (by its Content-Type) or the JSON result.
 *
 * The overall deadline covers the submission, every poll and every wait.
 */
import { TinkerError } from './errors.js';
import {
  deadlineError,
  describeBody,
  type HttpAnswer,
  parseJsonBody,
  retryAfterMs,
  statusError,
  type TinkerTransport,
} from './http.js';
import { PROTO_CONTENT_TYPE } from './proto.js';
import {
  DetailSchema,
  FutureSchema,
  MetadataOnlySchema,
  parseWire,
  RequestFailedSchema,
  TryAgainSchema,
} from './schemas.js';

/** what a queue is doing while a request waits: `active`, `paused_capacity`, `paused_rate_limit` */
export interface QueueStateEvent {
  readonly requestId: string;
  readonly queueState: string;
  readonly reason?: string;
}

export interface FutureOptions {
  /** the SDK's request type name, sent as X-Tinker-Request-Type (e.g. ForwardBackward, Sample) */
  readonly requestType: string;
  /** ask for a protobuf result (sample and forward-backward results only) */
  readonly acceptProto: boolean;
  /** the overall deadline of the call */
  readonly signal?: AbortSignal;
  /** one poll's timeout; longer than a server's long poll is best (SkyRL holds 300 s) */
  readonly pollTimeoutMs: number;
  readonly onQueueState?: (event: QueueStateEvent) => void;
}

/** a body of a completed future: JSON, or protobuf bytes to decode */
export type FutureResult =
  | { readonly kind: 'json'; readonly value: unknown }
  | { readonly kind: 'proto'; readonly bytes: Uint8Array };

const MAX_BARE_400 = 3;

/** Submits and returns the request id the server gave the future. */
export async function submitForFuture(submit: () => Promise<HttpAnswer>, what: string): Promise<string> {
  const answer = await submit();
  return parseWire(FutureSchema, parseJsonBody(answer, what), what).request_id;
}

/**
 * Runs one async request to its result: `submit` sends the original request (again on a 410) and
 * answers with the server's acceptance.
 */
export async function runFuture(
  transport: TinkerTransport,
  submit: () => Promise<HttpAnswer>,
  what: string,
  opts: FutureOptions,
): Promise<FutureResult> {
  let requestId = await submitForFuture(submit, what);
  const retry = transport.retry;
  let iteration = 0;
  let connectionRetries = 0;
  let serverErrors = 0;
  let bare400 = 0;
  let billingWaited = 0;
  const started = Date.now();
  for (;;) {
    const answer = await transport.attempt(
      'POST',
      'retrieve_future',
      {
        route: 'retrieve_future',
        body: JSON.stringify({ request_id: requestId, allow_metadata_only: false }),
        contentType: 'application/json',
      },
      {
        ...(opts.signal ? { signal: opts.signal } : {}),
        timeoutMs: opts.pollTimeoutMs,
        headers: {
          Accept: opts.acceptProto ? `${PROTO_CONTENT_TYPE}, application/json` : 'application/json',
          'X-Tinker-Request-Iteration': String(iteration),
          'X-Tinker-Request-Type': opts.requestType,
          ...(iteration === 0
            ? { 'X-Tinker-Create-Promise-Roundtrip-Time': String(Date.now() - started) }
            : {}),
        },
      },
    );
    iteration++;
    const wait = (ms: number) =>
      transport.wait(ms, opts.signal, what, 'retrieve_future').catch((e: unknown) => {
        throw deadlineError(what, 'retrieve_future', e, requestId);
      });
    if ('kind' in answer) {
      if (answer.kind === 'deadline') throw deadlineError(what, 'retrieve_future', answer.error, requestId);
      // our own poll timeout is a long poll that ran out: ask again
      if (answer.kind === 'timeout') continue;
      connectionRetries++;
      if (connectionRetries > retry.maxRetries) {
        throw new TinkerError(
          'unreachable',
          `${what}: the connection failed ${connectionRetries} times in a row polling request ${requestId} (${transport.url('retrieve_future')})`,
          { route: 'retrieve_future', requestId },
          { cause: answer.error },
        );
      }
      await wait(Math.min(transport.backoffMs(connectionRetries), 30_000));
      continue;
    }
    connectionRetries = 0;
    const { status } = answer;
    if (status === 200) {
      serverErrors = 0;
      if (answer.contentType.includes(PROTO_CONTENT_TYPE)) return { kind: 'proto', bytes: answer.body };
      const value = parseJsonBody(answer, what);
      const tryAgain = TryAgainSchema.safeParse(value);
      if (tryAgain.success) {
        reportQueueState(opts, requestId, tryAgain.data);
        continue;
      }
      if (MetadataOnlySchema.safeParse(value).success) continue;
      const failed = RequestFailedSchema.safeParse(value);
      if (failed.success) {
        throw new TinkerError(
          'request_failed',
          `${what} failed on the server (${failed.data.category ?? 'unknown'}): ${failed.data.error}`,
          {
            route: 'retrieve_future',
            status,
            requestId,
            ...(failed.data.category ? { category: failed.data.category } : {}),
            body: value,
          },
        );
      }
      return { kind: 'json', value };
    }
    if (status === 408) {
      // a long poll that ended, possibly with the queue's state
      try {
        const body = JSON.parse(Buffer.from(answer.body).toString('utf8')) as unknown;
        const state = TryAgainSchema.partial({ type: true }).safeParse(body);
        if (state.success) reportQueueState(opts, requestId, state.data);
      } catch {
        // a 408 without a JSON body is still "not yet"
      }
      continue;
    }
    if (status === 410) {
      requestId = await submitForFuture(submit, what);
      iteration = 0;
      continue;
    }
    if (status >= 500) {
      // SkyRL answers 500 for a request that failed unexpectedly, which no poll will change
      if (serverErrors >= retry.maxRetries) {
        throw new TinkerError(
          'http',
          `${what}: HTTP ${status} ${describeBody(answer)} on ${serverErrors + 1} polls in a row of request ${requestId}`,
          { route: 'retrieve_future', status, requestId },
        );
      }
      serverErrors++;
      if (serverErrors > 1) await wait(transport.backoffMs(serverErrors - 1));
      continue;
    }
    if (status === 429) {
      connectionRetries++;
      await wait(
        retryAfterMs(answer.headers, transport.now) ??
          Math.min(transport.backoffMs(connectionRetries), 30_000),
      );
      continue;
    }
    if (status === 402) {
      if (billingWaited >= retry.billingMaxPauseMs) {
        throw new TinkerError(
          'billing',
          `${what}: HTTP 402 ${describeBody(answer)} for ${Math.round(billingWaited / 1000)} s`,
          {
            route: 'retrieve_future',
            status,
            requestId,
          },
        );
      }
      billingWaited += retry.billingPauseMs;
      await wait(retry.billingPauseMs);
      continue;
    }
    if (status === 400) {
      const body = safeJson(answer.body);
      const detail = DetailSchema.safeParse(body);
      if (detail.success) {
        const text =
          typeof detail.data.detail === 'string' ? detail.data.detail : JSON.stringify(detail.data.detail);
        throw new TinkerError('request_failed', `${what} failed on the server: ${text}`, {
          route: 'retrieve_future',
          status,
          requestId,
          category: 'user',
          body,
        });
      }
      // a bare 400 may come from a proxy on the way
      if (++bare400 <= MAX_BARE_400) continue;
    }
    if (status === 404) {
      throw new TinkerError(
        'http',
        `${what}: the server does not know request ${requestId} (HTTP 404 ${describeBody(answer)}); was it restarted?`,
        { route: 'retrieve_future', status, requestId },
      );
    }
    throw statusError(answer, what, 'retrieve_future');
  }
}

function reportQueueState(
  opts: FutureOptions,
  requestId: string,
  body: { queue_state?: string | null | undefined; queue_state_reason?: string | null | undefined },
): void {
  if (!opts.onQueueState || !body.queue_state) return;
  opts.onQueueState({
    requestId,
    queueState: body.queue_state,
    ...(body.queue_state_reason ? { reason: body.queue_state_reason } : {}),
  });
}

function safeJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return undefined;
  }
}

/** a JSON result through its schema */
export function jsonResult<T>(result: FutureResult, parse: (value: unknown) => T, what: string): T {
  if (result.kind === 'proto') {
    throw new TinkerError(
      'bad_response',
      `${what}: the server sent a protobuf body for a result that is JSON`,
    );
  }
  return parse(result.value);
}
