/**
 * What the retail and airline tools share: Python's behaviour on the raw arguments a model sends
 * (lookups that refuse unhashable keys, `list.count`, `sorted`, f-string formatting), and reading
 * a domain's files from a data root.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../../util/errors.js';
import { AttributeError_, PyException } from '../../py/errors.js';
import { str as pyStr } from '../../py/format.js';
import { parsePyJson } from '../../py/json.js';
import { iterate, lt, requireHashable } from '../../py/ops.js';
import { type PyValue, pyEquals } from '../../py/values.js';
import { PyModel } from '../pydantic.js';
import { domainDir, loadTau2Tasks } from '../tasks.js';
import type { Tau2DomainName, Tau2Task } from '../types.js';

/** `key in d` for a dict with str keys (an unhashable key is a TypeError, as in Python). */
export function hasKey(d: ReadonlyMap<string, unknown>, key: PyValue): key is string {
  requireHashable(key);
  return typeof key === 'string' && d.has(key);
}

/** `xs.count(x)` on whatever a model passed as a list (a str counts substrings). */
export function pyCount(xs: PyValue, x: PyValue): number {
  if (Array.isArray(xs)) return xs.filter((y) => pyEquals(y, x)).length;
  if (typeof xs === 'string' && typeof x === 'string') return xs.split(x).length - 1;
  throw AttributeError_(xs, 'count');
}

/** `sorted(xs)`: stable, by Python's `<` (mixed types raise its TypeError). */
export function pySorted(xs: PyValue): PyValue[] {
  return [...iterate(xs)].sort((a, b) => (lt(a, b) ? -1 : lt(b, a) ? 1 : 0));
}

/** `f"{x}"` */
export const fmt = (x: PyValue): string => pyStr(x);

/** A domain's database (as json.loads reads it), policy and tasks. */
export interface DomainFiles {
  readonly db: PyValue;
  readonly policy: string;
  readonly tasks: readonly Tau2Task[];
}

export function readDomainFiles(root: string, domain: Tau2DomainName, policyFile = 'policy.md'): DomainFiles {
  const dir = domainDir(root, domain);
  const need = (name: string): string => {
    const path = join(dir, name);
    if (!existsSync(path))
      throw new UserError(
        `no τ² ${domain} ${name} at ${path}; run \`seal data pull tau2\` or pass the folder that holds data/tau2`,
      );
    return readFileSync(path, 'utf8');
  };
  const db = parsePyJson(need('db.json'));
  // Python reads the policy in text mode: universal newlines
  const policy = need(policyFile).replace(/\r\n?/g, '\n');
  return { db, policy, tasks: loadTau2Tasks(root, domain) };
}

/** `a += b` / `a -= b`: Python names the augmented operator in its TypeError. */
export function augmented(
  op: '+' | '-',
  fn: (a: PyValue, b: PyValue) => PyValue,
  a: PyValue,
  b: PyValue,
): PyValue {
  try {
    return fn(a, b);
  } catch (e) {
    if (e instanceof PyException && e.message.startsWith(`unsupported operand type(s) for ${op}:`))
      throw new PyException(e.pyType, e.message.replace(`for ${op}:`, `for ${op}=:`));
    throw e;
  }
}

/** `x.name` on a value a model sent where the reference expects a model instance. */
export function attr(x: PyValue, name: string): PyValue {
  if (x instanceof PyModel && x.$spec.fields.some((f) => f.name === name))
    return (x as unknown as Record<string, PyValue>)[name]!;
  throw AttributeError_(x, name);
}
