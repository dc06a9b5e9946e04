/**
 * Reads a call string into a tool name and named arguments without executing anything: the
 * form the argument checks and the trajectory record need. Positional arguments are named by
 * the method's Python parameter order.
 */

import { repr } from '../../py/format.js';
import { calleeName, type Expr, literalValue, parsePythonExpression } from '../../py/parse.js';
import { type JsonValue, PyOpaque, PySet, PyTuple, type PyValue } from '../../py/values.js';
import type { ParamSpec } from '../apis/api.js';

export interface InspectedCall {
  /** the called name (`a.b` for dotted names), null when the text is not a call */
  readonly name: string | null;
  /** named arguments as JSON values, null when they could not be read as literals */
  readonly args: Readonly<Record<string, JsonValue>> | null;
  /** why name or args are missing */
  readonly problem?: string;
}

/** A Python value as the JSON a tool schema describes (ints and floats both numbers). */
export function pyToJson(v: PyValue): JsonValue {
  if (v === null || typeof v === 'boolean' || typeof v === 'string' || typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(pyToJson);
  if (v instanceof PyTuple) return v.items.map(pyToJson);
  if (v instanceof PySet) return [...v.items].map((x) => pyToJson(x));
  if (v instanceof Map) {
    const out: { [k: string]: JsonValue } = {};
    for (const [k, val] of v) out[typeof k === 'string' ? k : repr(k as PyValue)] = pyToJson(val);
    return out;
  }
  if (v instanceof PyOpaque) return v.reprText;
  return v.toStateJson();
}

export function inspectCall(
  call: string,
  paramsOf: (name: string) => readonly ParamSpec[] | undefined,
): InspectedCall {
  let expr: Expr;
  try {
    expr = parsePythonExpression(call);
  } catch (e) {
    return { name: null, args: null, problem: `not valid call syntax: ${(e as Error).message}` };
  }
  if (expr.kind !== 'call') return { name: null, args: null, problem: 'not a function call' };
  const name = calleeName(expr.callee) ?? null;
  if (name === null) return { name: null, args: null, problem: 'the called thing is not a name' };
  const params = paramsOf(name);
  const args: Record<string, JsonValue> = {};
  for (const [i, a] of expr.args.entries()) {
    const v = literalValue(a);
    if (v === undefined)
      return { name, args: null, problem: `positional argument ${i + 1} is not a literal` };
    const p = params?.[i];
    if (!p) return { name, args: null, problem: `too many positional arguments (${expr.args.length})` };
    args[p.name] = pyToJson(v);
  }
  for (const k of expr.kwargs) {
    const v = literalValue(k.value);
    if (v === undefined) return { name, args: null, problem: `argument '${k.name}' is not a literal` };
    if (Object.hasOwn(args, k.name)) return { name, args: null, problem: `argument '${k.name}' given twice` };
    args[k.name] = pyToJson(v);
  }
  return { name, args };
}
