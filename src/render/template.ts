/**
 * A Hugging Face chat template rendered the way transformers' `apply_chat_template` renders it:
 * jinja with `trim_blocks` and `lstrip_blocks` (@huggingface/jinja parses and runs it), and
 * transformers' own `tojson` filter, which is Python's `json.dumps(x, ensure_ascii=False)`.
 *
 * The library's `tojson` differs from Python's where templates meet real data: it writes the float
 * `30.0` as `30` and `1e-07` as `1e-7`. So the template runs on an interpreter whose `tojson` is
 * replaced by the Python one below, and on values converted here, which keep ints and floats apart
 * (PyFloat). The library does not export its value classes; their constructors are taken from the
 * values its Environment makes.
 */
import { Environment, Interpreter, Template } from '@huggingface/jinja';
import { type JsonDumpsOptions, jsonDumps } from '../envs/py/format.js';
import type { PyDict, PyValue } from '../envs/py/values.js';
import { PyFloat, type TemplateValue } from './renderer.js';

type Rv = ReturnType<Environment['lookupVariable']>;
type RvClass = new (value?: unknown) => Rv;

/** A template that raised (its `raise_exception`) or could not run on the given chat. */
export class TemplateError extends Error {
  override name = 'TemplateError';
}

const probe = new Environment();
const kind = (v: unknown): RvClass => probe.set(`v${probe.variables.size}`, v).constructor as RvClass;
const Values = {
  Int: kind(1),
  Float: kind(0.5),
  Str: kind(''),
  Bool: kind(true),
  Null: kind(null),
  Undefined: kind(undefined),
  Array: kind([]),
  Object: kind({}),
};

/** a TemplateValue as the interpreter's value: ints and floats kept apart, undefined keys dropped */
export function toRuntime(v: TemplateValue): Rv {
  if (v === null) return new Values.Null(null);
  if (v === undefined) return new Values.Undefined(undefined);
  if (typeof v === 'boolean') return new Values.Bool(v);
  if (typeof v === 'string') return new Values.Str(v);
  // an int beyond 2^53 keeps its digits (json.dumps prints it exactly); within, a number as usual
  if (typeof v === 'bigint') return new Values.Int(Number.isSafeInteger(Number(v)) ? Number(v) : v);
  if (typeof v === 'number') return Number.isInteger(v) ? new Values.Int(v) : new Values.Float(v);
  if (v instanceof PyFloat) return new Values.Float(v.value);
  if (Array.isArray(v)) return new Values.Array((v as readonly TemplateValue[]).map(toRuntime));
  const entries = v instanceof Map ? [...v.entries()] : Object.entries(v as { [k: string]: TemplateValue });
  const map = new Map<string, Rv>();
  for (const [k, item] of entries) if (item !== undefined) map.set(String(k), toRuntime(item));
  return new Values.Object(map);
}

export type DumpOptions = JsonDumpsOptions;

/** an interpreter value as the Python value it is; json.dumps raises on the others, and so does this */
function pyValueOf(x: Rv): PyValue {
  switch (x.type) {
    case 'NullValue':
      return null;
    case 'BooleanValue':
      return x.value as boolean;
    case 'IntegerValue': {
      // JavaScript writes an integral number from 1e21 on as `1e+21`, as Python writes the float
      const n = x.value as number | bigint;
      return typeof n === 'bigint' || (Number.isInteger(n) && Math.abs(n) < 1e21) ? BigInt(n) : n;
    }
    case 'FloatValue':
      return x.value as number;
    case 'StringValue':
      return x.value as string;
    case 'ArrayValue':
    case 'TupleValue':
      return (x.value as Rv[]).map(pyValueOf);
    case 'ObjectValue':
    case 'KeywordArgumentsValue': {
      const dict: PyDict = new Map();
      for (const [k, item] of x.value as Map<string, Rv>) dict.set(k, pyValueOf(item));
      return dict;
    }
    default:
      // Python's json.dumps raises on jinja's Undefined, namespaces and functions alike
      throw new TemplateError(
        `tojson: a value of type ${x.type.replace(/Value$/, '')} is not JSON serializable`,
      );
  }
}

/** Python's `json.dumps` of an interpreter value (transformers' tojson filter: ensure_ascii off unless asked) */
export function pyJsonDumps(v: Rv, o: DumpOptions = {}): string {
  return jsonDumps(pyValueOf(v), { ...o, ensureAscii: o.ensureAscii ?? false });
}

/** the keyword and positional arguments of `tojson(...)`, in transformers' order */
function dumpOptions(positional: readonly Rv[], keywords: ReadonlyMap<string, Rv>): DumpOptions {
  const names = ['ensure_ascii', 'indent', 'separators', 'sort_keys'];
  const arg = (i: number): Rv | undefined => keywords.get(names[i]!) ?? positional[i];
  const indent = arg(1);
  const separators = arg(2);
  const seps =
    separators && separators.type !== 'NullValue'
      ? (separators.value as Rv[]).map((s) => String(s.value))
      : null;
  return {
    ensureAscii: arg(0)?.value === true,
    indent: indent && indent.type !== 'NullValue' ? (indent.value as number | string) : null,
    separators: seps && seps.length === 2 ? [seps[0]!, seps[1]!] : null,
    sortKeys: arg(3)?.value === true,
  };
}

interface FilterNode {
  readonly type: string;
  readonly value?: unknown;
  readonly callee?: { readonly type: string; readonly value: unknown };
  readonly args?: unknown;
}

/** the interpreter's own (untyped) hooks that the tojson override goes through */
interface InterpreterHooks {
  applyFilter(operand: Rv, node: FilterNode, env: Environment): Rv;
  evaluateArguments(args: unknown, env: Environment): [Rv[], Map<string, Rv>];
}

/** Python's range() */
function range(a: number, b?: number, step = 1): number[] {
  const [start, stop] = b === undefined ? [0, a] : [a, b];
  if (step === 0) throw new TemplateError('range() arg 3 must not be zero');
  const out: number[] = [];
  for (let i = start; step > 0 ? i < stop : i > stop; i += step) out.push(i);
  return out;
}

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** Python's strftime for the directives chat templates use (the date in a system prompt) */
export function strftime(format: string, d: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  const dayOfYear = Math.floor((d.getTime() - new Date(d.getFullYear(), 0, 1).getTime()) / 86_400_000) + 1;
  return format.replace(/%([a-zA-Z%])/g, (all, c: string) => {
    switch (c) {
      case 'd':
        return two(d.getDate());
      case 'm':
        return two(d.getMonth() + 1);
      case 'Y':
        return String(d.getFullYear());
      case 'y':
        return two(d.getFullYear() % 100);
      case 'H':
        return two(d.getHours());
      case 'I':
        return two(d.getHours() % 12 || 12);
      case 'p':
        return d.getHours() < 12 ? 'AM' : 'PM';
      case 'M':
        return two(d.getMinutes());
      case 'S':
        return two(d.getSeconds());
      case 'b':
        return MONTHS[d.getMonth()]!.slice(0, 3);
      case 'B':
        return MONTHS[d.getMonth()]!;
      case 'a':
        return DAYS[d.getDay()]!.slice(0, 3);
      case 'A':
        return DAYS[d.getDay()]!;
      case 'j':
        return String(dayOfYear).padStart(3, '0');
      case '%':
        return '%';
      default:
        return all;
    }
  });
}

export class ChatTemplate {
  private readonly program: Template['parsed'];

  constructor(readonly source: string) {
    try {
      this.program = new Template(source).parsed;
    } catch (e) {
      throw new TemplateError(
        `the chat template does not parse: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
  }

  /** the template's text for a context (messages, tools, add_generation_prompt, special tokens, ...) */
  render(context: Readonly<Record<string, TemplateValue>>, now: () => Date = () => new Date()): string {
    const env = new Environment();
    // what Template.render declares, with Python's semantics for the functions
    for (const [k, v] of [
      ['false', false],
      ['true', true],
      ['none', null],
      ['False', false],
      ['True', true],
      ['None', null],
    ] as const)
      env.set(k, v);
    env.set('raise_exception', (message: unknown) => {
      throw new TemplateError(`the chat template refused the chat: ${String(message)}`);
    });
    env.set('range', range);
    env.set('strftime_now', (format: unknown) => strftime(String(format), now()));
    for (const [k, v] of Object.entries(context)) if (v !== undefined) env.setVariable(k, toRuntime(v));

    const interpreter = new Interpreter(env);
    const hooks = interpreter as unknown as InterpreterHooks;
    const applyFilter = hooks.applyFilter.bind(interpreter);
    hooks.applyFilter = (operand, node, scope) => {
      if (node.type === 'Identifier' && node.value === 'tojson') return new Values.Str(pyJsonDumps(operand));
      if (
        node.type === 'CallExpression' &&
        node.callee?.type === 'Identifier' &&
        node.callee.value === 'tojson'
      ) {
        const [positional, keywords] = hooks.evaluateArguments(node.args, scope);
        return new Values.Str(pyJsonDumps(operand, dumpOptions(positional, keywords)));
      }
      return applyFilter(operand, node, scope);
    };
    try {
      return String(interpreter.run(this.program).value);
    } catch (e) {
      if (e instanceof TemplateError) throw e;
      throw new TemplateError(
        `the chat template failed on this chat: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
  }
}
