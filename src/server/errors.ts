/** Errors a route answers with a status and a `{detail}` body instead of a 500. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The reference answers a missing or unknown instance, task or env type with 400. */
export const badRequest = (message: string) => new HttpError(400, message);
