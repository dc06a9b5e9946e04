import type { PyValue } from './values.js';
import { typeName } from './values.js';

/**
 * A Python exception raised inside an API method. The executor turns it into
 * `"Error during execution: " + str(exception)`, so `message` must be exactly CPython's `str(e)`.
 */
export class PyException extends Error {
  constructor(
    readonly pyType: string,
    message: string,
  ) {
    super(message);
    this.name = `PyException(${pyType})`;
  }
}

export const TypeError_ = (msg: string) => new PyException('TypeError', msg);
export const ValueError_ = (msg: string) => new PyException('ValueError', msg);
export const ZeroDivisionError_ = (msg = 'division by zero') => new PyException('ZeroDivisionError', msg);
export const IndexError_ = (msg: string) => new PyException('IndexError', msg);
/** A plain `raise Exception(msg)`. */
export const Exception_ = (msg: string) => new PyException('Exception', msg);

/** `KeyError(key)`, given the key's repr (its str() is the repr of the key, e.g. `'trunk'`). */
export const KeyError_ = (keyRepr: string) => new PyException('KeyError', keyRepr);

/** `'int' object has no attribute 'rstrip'`: an attribute looked up on a value of the wrong type. */
export function AttributeError_(obj: PyValue, attr: string): PyException {
  return AttributeErrorForType(typeName(obj), attr);
}

/** The same for an instance of a reference class, e.g. `'Directory' object has no attribute '_write'`. */
export function AttributeErrorForType(pyTypeName: string, attr: string): PyException {
  return new PyException('AttributeError', `'${pyTypeName}' object has no attribute '${attr}'`);
}
