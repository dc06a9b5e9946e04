/**
 * What a Tinker client reports when it gives up. Everything transient (try_again, 408, 5xx, 429,
 * 410, 402 within the pause budget, dropped connections, per-request timeouts) is retried below
 * this; a `TinkerError` is what is left, and its `kind` says whose move it is.
 */
export type TinkerErrorKind =
  /** no connection to the service after every retry (refused, reset, DNS) */
  | 'unreachable'
  /** a request got no full answer within its timeout, after every retry */
  | 'timeout'
  /** the overall deadline of a call passed (the server may still be working on it) */
  | 'deadline'
  /** the server ran the request and it failed (`{error, category}` or SkyRL's 400 `{detail}`) */
  | 'request_failed'
  /** 409: a seq_id was reused with another body (two clients on one model, or a resumed counter) */
  | 'conflict'
  /** 401/403: the key is missing, wrong or expired */
  | 'auth'
  /** 402 for longer than the billing pause budget */
  | 'billing'
  /** any other status the protocol does not retry */
  | 'http'
  /** a 2xx whose body is not the shape the protocol defines */
  | 'bad_response'
  /** a call the client refuses before sending (bad datum, load_weights after training began) */
  | 'usage'
  /** the client was closed */
  | 'closed';

export interface TinkerErrorDetails {
  readonly route?: string;
  readonly status?: number;
  /** `user` / `server` / `unknown` from the hosted service's failure body */
  readonly category?: string;
  readonly requestId?: string;
  readonly body?: unknown;
}

export class TinkerError extends Error {
  override readonly name = 'TinkerError';
  readonly route: string | undefined;
  readonly status: number | undefined;
  readonly category: string | undefined;
  readonly requestId: string | undefined;
  readonly body: unknown;
  constructor(
    readonly kind: TinkerErrorKind,
    message: string,
    details: TinkerErrorDetails = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.route = details.route;
    this.status = details.status;
    this.category = details.category;
    this.requestId = details.requestId;
    this.body = details.body;
  }
}
