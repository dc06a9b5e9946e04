/**
 * Ground-truth call strings as a model writes them in the structured formats: a name and its
 * arguments' JSON text, written the way Python's json.dumps writes them. A float stays `19.0`:
 * JSON.stringify would write the int `19`, which the tools keep as an int and the checker then
 * tells apart from the ground truth's float. The scripted model of the fake server and the
 * `seal serve` test client both write calls through here.
 */

import { paramsOfTool } from '../../src/bfcl/trajectory.js';
import type { BfclData } from '../../src/envs/bfcl/data/tasks.js';
import { jsonDumps } from '../../src/envs/py/format.js';
import { calleeName, literalValue, parsePythonExpression } from '../../src/envs/py/parse.js';
import type { PyDict } from '../../src/envs/py/values.js';

export interface StructuredCall {
  readonly name: string;
  /** the arguments as JSON text, floats written as floats */
  readonly arguments: string;
}

/** A call string's name and arguments, positional ones named by the tool's parameter order. */
export function structuredCall(call: string, data: BfclData): StructuredCall {
  const expr = parsePythonExpression(call);
  if (expr.kind !== 'call') throw new Error(`not a call: ${call}`);
  const name = calleeName(expr.callee)!;
  const params = paramsOfTool(data)(name) ?? [];
  const args: PyDict = new Map();
  for (const [i, a] of expr.args.entries()) args.set(params[i]!.name, literalValue(a)!);
  for (const k of expr.kwargs) args.set(k.name, literalValue(k.value)!);
  return { name, arguments: jsonDumps(args) };
}

/** Calls as a Hermes / Qwen assistant message writes them: one `<tool_call>` block each. */
export function hermesText(calls: readonly StructuredCall[]): string {
  return calls
    .map((s) => `<tool_call>\n{"name": ${JSON.stringify(s.name)}, "arguments": ${s.arguments}}\n</tool_call>`)
    .join('\n');
}
