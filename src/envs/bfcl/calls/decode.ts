/**
 * Decoding model output into call strings the executor runs, the way BFCL's handlers do:
 * structured calls (`{name: {arg: value}}` or name + JSON arguments) become
 * `name(arg=repr(value), ...)`, and prompting-style text `[f(a=1), g()]` is parsed (never
 * evaluated) into one call string per call.
 */
import { repr } from '../../py/format.js';
import { parsePyJson } from '../../py/json.js';
import { calleeName, type Expr, literalValue, parsePythonExpression } from '../../py/parse.js';
import type { PyValue } from '../../py/values.js';
import { decodeExecutePrompting } from './prompting.js';

/** `name(k=repr(v), ...)` from a structured call; arguments may be an object or its JSON text. */
export function structuredCallToString(name: string, args: unknown): string {
  const parsed: PyValue =
    typeof args === 'string'
      ? parsePyJson(args.trim() === '' ? '{}' : args)
      : parsePyJson(JSON.stringify(args ?? {}));
  if (!(parsed instanceof Map)) throw new Error(`arguments of ${name} are not a JSON object`);
  const parts: string[] = [];
  for (const [k, v] of parsed) parts.push(`${String(k)}=${repr(v)}`);
  return `${name}(${parts.join(',')})`;
}

function callToString(e: Expr): string {
  if (e.kind !== 'call') throw new Error('not a function call');
  const name = calleeName(e.callee);
  if (name === undefined) throw new Error('not a function name');
  const parts: string[] = [];
  for (const a of e.args) {
    const v = literalValue(a);
    if (v === undefined) throw new Error('argument is not a literal');
    parts.push(repr(v));
  }
  for (const k of e.kwargs) {
    const v = literalValue(k.value);
    if (v === undefined) throw new Error(`argument ${k.name} is not a literal`);
    parts.push(`${k.name}=${repr(v)}`);
  }
  return `${name}(${parts.join(',')})`;
}

/**
 * A call string with its positional arguments named by the method's parameter order, in the
 * official decoder's spelling (`name(k=repr(v), ...)`): `sort('a.txt')` -> `sort(file_name='a.txt')`.
 * It runs exactly as the original does, and BFCL's prompting decoder, which keeps keyword
 * arguments only, reads it back unchanged. A call that cannot be rewritten (not a literal call,
 * more positional arguments than parameters) is returned as it is.
 */
export function keywordCallString(
  call: string,
  paramsOf: (name: string) => readonly { readonly name: string }[] | undefined,
): string {
  let e: Expr;
  try {
    e = parsePythonExpression(call);
  } catch {
    return call;
  }
  if (e.kind !== 'call') return call;
  const name = calleeName(e.callee);
  if (name === undefined) return call;
  const params = paramsOf(name) ?? [];
  if (e.args.length > params.length) return call;
  const parts: string[] = [];
  for (const [i, a] of e.args.entries()) {
    const v = literalValue(a);
    if (v === undefined) return call;
    parts.push(`${params[i]!.name}=${repr(v)}`);
  }
  for (const k of e.kwargs) {
    const v = literalValue(k.value);
    if (v === undefined) return call;
    parts.push(`${k.name}=${repr(v)}`);
  }
  return `${name}(${parts.join(', ')})`;
}

/**
 * The lenient reading of prompting-style output, e.g. "```python\n[cd(folder='a'), ls()]\n```"
 * -> ["cd(folder='a')", "ls()"], positional arguments kept. Throws when the text is not a list of
 * calls with literal arguments. Training rollouts use it; scoring uses prompting.ts.
 */
export function decodePythonCallList(text: string): string[] {
  let s = text.trim();
  const fence = /^```(?:python|py|tool_code)?\s*\n?([\s\S]*?)\n?```$/.exec(s);
  if (fence) s = fence[1]!.trim();
  if (!s.startsWith('[')) s = `[${s}]`;
  const expr = parsePythonExpression(s);
  const items = expr.kind === 'list' || expr.kind === 'tuple' ? expr.items : [expr];
  return items.map(callToString);
}

/**
 * One step of a BFCL result file: already-decoded call strings (run as they are, as the official
 * checker runs them), a list of structured calls, or raw model text, which is decoded by BFCL's
 * default prompting decoder exactly (keyword arguments only; see prompting.ts). A step that does
 * not decode yields [] (the official evaluator drops it).
 */
export function decodeStep(step: unknown): string[] {
  try {
    if (typeof step === 'string') {
      const r = decodeExecutePrompting(step);
      return r.ok ? r.calls : [];
    }
    if (!Array.isArray(step)) return [];
    return step.flatMap((item): string[] => {
      if (typeof item === 'string') return [item];
      if (item && typeof item === 'object') {
        const obj = item as Record<string, unknown>;
        if (typeof obj.name === 'string' && 'arguments' in obj)
          return [structuredCallToString(obj.name, obj.arguments)];
        const fn = obj.function as Record<string, unknown> | undefined;
        if (fn && typeof fn.name === 'string') return [structuredCallToString(fn.name, fn.arguments)];
        const entries = Object.entries(obj);
        if (entries.length === 1) return [structuredCallToString(entries[0]![0], entries[0]![1])];
      }
      throw new Error('undecodable call');
    });
  } catch {
    return [];
  }
}
