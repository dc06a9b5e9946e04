/**
 * Small helpers of the mini suite (its seeded PRNG is util/rng.ts's mulberry32): Python literal
 * formatting for ground-truth call strings, and a canonical JSON form of Python values (ints stay
 * ints, floats keep a decimal point) for hashing and overlap checks.
 */
import { PyObject, PySet, PyTuple, type PyValue } from '../py/values.js';

/** A literal argument of a ground-truth call: bigint is a Python int, number a Python float. */
export type Lit = string | bigint | number | boolean | null | readonly Lit[] | { readonly [k: string]: Lit };

function pyStr(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
}

/** Python float repr for the simple values the suite uses (always with a decimal point). */
export function pyFloat(x: number): string {
  const s = String(x);
  return /[.eE]/.test(s) || !Number.isFinite(x) ? s : `${s}.0`;
}

export function pyLit(v: Lit): string {
  if (v === null) return 'None';
  if (typeof v === 'string') return pyStr(v);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return pyFloat(v);
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (Array.isArray(v)) return `[${(v as readonly Lit[]).map(pyLit).join(', ')}]`;
  const entries = Object.entries(v as { readonly [k: string]: Lit });
  return `{${entries.map(([k, x]) => `${pyStr(k)}: ${pyLit(x)}`).join(', ')}}`;
}

/** `name(k1=v1, k2=v2)` with keyword arguments in the given order. */
export function call(name: string, args: { readonly [k: string]: Lit } = {}): string {
  return `${name}(${Object.entries(args)
    .map(([k, v]) => `${k}=${pyLit(v)}`)
    .join(', ')})`;
}

/** Canonical JSON of a Python value: dicts as objects, ints bare, floats with a decimal point. */
export function pyJson(v: PyValue): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return pyFloat(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return `[${v.map(pyJson).join(', ')}]`;
  if (v instanceof Map) {
    return `{${[...v].map(([k, x]) => `${JSON.stringify(String(k))}: ${pyJson(x)}`).join(', ')}}`;
  }
  if (v instanceof PyTuple) return `[${v.items.map(pyJson).join(', ')}]`;
  if (v instanceof PySet) return `[${[...v.items].map((x) => pyJson(x)).join(', ')}]`;
  if (v instanceof PyObject) throw new Error('pyJson: class instances do not occur in mini configs');
  return JSON.stringify(v.reprText);
}
