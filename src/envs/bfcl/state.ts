/**
 * Instance state in the golden traces' form (SPEC 9.1) and its canonical hash, used to compare
 * the port with the reference and to fingerprint states in run records.
 */
import { createHash } from 'node:crypto';
import { type JsonValue, toStateJson } from '../py/values.js';
import type { ClassName } from './apis/api.js';
import type { TaskEnvironment } from './executor.js';

/** `{Class: {attribute: value}}` for every involved instance. */
export function stateSnapshot(env: TaskEnvironment): Record<string, Record<string, JsonValue>> {
  const out: Record<string, Record<string, JsonValue>> = {};
  for (const [cls, attrs] of env.publicState()) {
    const obj: Record<string, JsonValue> = {};
    for (const [k, v] of attrs) obj[k] = toStateJson(v);
    out[cls as ClassName] = obj;
  }
  return out;
}

/**
 * Canonical JSON: keys sorted by UTF-16 code units, no whitespace, numbers as ECMAScript
 * writes them. (JSON.stringify of a sorted object is not enough: integer-like keys come first.)
 */
export function canonicalJson(v: JsonValue): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(v).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k]!)}`).join(',')}}`;
}

export function stateHash(classState: JsonValue): string {
  return createHash('sha256').update(canonicalJson(classState), 'utf8').digest('hex');
}
