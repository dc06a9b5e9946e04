/**
 * Calls as Python call strings, the spelling BFCL's executor runs and its handlers write:
 * structured calls (`{name: {arg: value}}` or name + JSON arguments) become
 * `name(arg=repr(value), ...)`, and prompting-style text `[f(a=1), g()]` is parsed (never
 * evaluated) into one call string per call. The official reading of such text is prompting.ts.
 */
import { repr } from './format.js';
import { parsePyJson } from './json.js';
import { calleeName, type Expr, literalValue, parsePythonExpression } from './parse.js';
import type { PyValue } from './values.js';

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
