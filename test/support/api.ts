/** Calling one API method directly, the way the executor does, for the per-class unit tests. */
import type { ApiClass, BfclApi, BoundArgs } from '../../src/envs/bfcl/apis/api.js';
import { PyException } from '../../src/envs/py/errors.js';
import { resultToString } from '../../src/envs/py/format.js';
import type { PyValue } from '../../src/envs/py/values.js';

/** Positional arguments bound in the method's Python order; returns the result string or error text. */
export function callMethod<T extends BfclApi>(
  cls: ApiClass<T>,
  inst: T,
  name: string,
  ...args: (PyValue | undefined)[]
): string {
  const spec = cls.methods[name];
  if (!spec) throw new Error(`${cls.className} has no method ${name}`);
  const bound: BoundArgs = spec.params.map((_, i) => args[i]);
  try {
    return resultToString(spec.run(inst, bound));
  } catch (e) {
    if (e instanceof PyException) return `Error during execution: ${e.message}`;
    throw e;
  }
}
