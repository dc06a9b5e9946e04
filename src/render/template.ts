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
import { floatRepr, jsonString } from '../envs/bfcl/py/format.js';
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

export interface DumpOptions {
  readonly ensureAscii?: boolean;
  readonly indent?: number | string | null;
  readonly separators?: readonly [string, string] | null;
  readonly sortKeys?: boolean;
}

/** Python's json.dumps string escaping with ensure_ascii=False: only `"`, `\` and controls. */
function jsonStringUnicode(s: string): string {
  return `"${s.replace(/["\\\u0000-\u001f]/g, (c) => {
    switch (c) {
      case '"':
        return '\\"';
      case '\\':
        return '\\\\';
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\t':
        return '\\t';
      case '\b':
        return '\\b';
      case '\f':
        return '\\f';
      default:
        return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    }
  })}"`;
}

/** Python's sorted() order of str keys: by code point, not by UTF-16 unit or locale */
function codePointCompare(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** Python's `json.dumps` of an interpreter value (transformers' tojson filter) */
export function pyJsonDumps(v: Rv, o: DumpOptions = {}): string {
  const indent =
    o.indent === null || o.indent === undefined
      ? null
      : typeof o.indent === 'number'
        ? ' '.repeat(o.indent)
        : o.indent;
  const [itemSep, keySep] = o.separators ?? (indent === null ? [', ', ': '] : [',', ': ']);
  const str = o.ensureAscii ? jsonString : jsonStringUnicode;
  const dump = (x: Rv, depth: number): string => {
    switch (x.type) {
      case 'NullValue':
        return 'null';
      case 'BooleanValue':
        return x.value ? 'true' : 'false';
      case 'IntegerValue':
        return String(x.value);
      case 'FloatValue': {
        const f = x.value as number;
        if (Number.isNaN(f)) return 'NaN';
        if (!Number.isFinite(f)) return f > 0 ? 'Infinity' : '-Infinity';
        return floatRepr(f);
      }
      case 'StringValue':
        return str(x.value as string);
      case 'ArrayValue':
      case 'TupleValue':
      case 'ObjectValue':
      case 'KeywordArgumentsValue': {
        const isList = x.type === 'ArrayValue' || x.type === 'TupleValue';
        let items: string[];
        if (isList) items = (x.value as Rv[]).map((item) => dump(item, depth + 1));
        else {
          let entries = [...(x.value as Map<string, Rv>).entries()];
          if (o.sortKeys) entries = entries.sort(([a], [b]) => codePointCompare(a, b));
          items = entries.map(([k, item]) => `${str(k)}${keySep}${dump(item, depth + 1)}`);
        }
        const [open, close] = isList ? ['[', ']'] : ['{', '}'];
        if (items.length === 0) return `${open}${close}`;
        if (indent === null) return `${open}${items.join(itemSep)}${close}`;
        const inner = `\n${indent.repeat(depth + 1)}`;
        return `${open}${inner}${items.join(`${itemSep}${inner}`)}\n${indent.repeat(depth)}${close}`;
      }
      default:
        // Python's json.dumps raises on jinja's Undefined, namespaces and functions alike
        throw new TemplateError(
          `tojson: a value of type ${x.type.replace(/Value$/, '')} is not JSON serializable`,
        );
    }
  };
  return dump(v, 0);
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
