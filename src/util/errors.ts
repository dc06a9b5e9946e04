/**
 * One base class for every error that is the user's to fix (a bad flag, a missing file, a corrupt
 * run folder): the CLI prints its message alone, without a stack trace, and exits 2. Anything else
 * that escapes is a bug in seal and keeps its stack.
 */
export class UserError extends Error {
  override name = 'UserError';
}

/** `exit 2` errors raised by the CLI itself (flags and their combinations). */
export class UsageError extends UserError {
  override name = 'UsageError';
}
