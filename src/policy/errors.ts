/**
 * The samplers' errors that the command line names to the user, apart from the samplers
 * themselves: `seal` maps them to exit codes without loading a model server client or the
 * embedded model for every command.
 */

export type ModelServerErrorKind =
  /** connection refused / reset / DNS failure, after every retry */
  | 'unreachable'
  /** no full answer within `timeoutMs`, after every retry */
  | 'timeout'
  /** an HTTP error status (a 4xx at once, or 429/5xx after every retry) */
  | 'http'
  /** a 200 whose body is not a chat completion */
  | 'bad_response';

export class ModelServerError extends Error {
  override readonly name = 'ModelServerError';
  constructor(
    message: string,
    readonly kind: ModelServerErrorKind,
    /** the base URL the request went to */
    readonly url: string,
    /** how many attempts were made */
    readonly attempts: number,
    /** the HTTP status, for kind 'http' */
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The tools alone fill the context: a setting to change, not a model failure. */
export class ContextOverflowError extends Error {}
