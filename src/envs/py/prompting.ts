/**
 * BFCL's default prompting decoder for execution, rule for rule: what the official multi-turn
 * pipeline (`default_decode_execute_prompting` in bfcl_eval/model_handler/utils.py, with
 * `ast_parse`, `resolve_ast_call` and `decoded_output_to_execution_list`) turns a model's text
 * into, or the error that makes it end the turn. `seal eval --format python` and `seal verify`
 * on text steps score with this, so their verdicts are the official evaluator's.
 *
 * The rules, all the official ones, including the surprising ones:
 * - only backticks, newlines and spaces are stripped at the ends; then `[` / `]` are added where
 *   missing, and whitespace and single quotes stripped: prose around a fenced list, a
 *   ```python fence (its `python` stays) or two lists do not parse, and the turn ends;
 * - the whole text must be one Python expression: a call, or a list/tuple whose items are all
 *   calls;
 * - keyword arguments only: positional ones (and `*args`) are dropped, so `touch('a.csv')`
 *   runs as `touch()`; `**kw` becomes an argument named `None`; a repeated keyword keeps the
 *   last value;
 * - values: literals as they are; a bare name becomes its name as a string; `...` the string
 *   `'...'`; a unary operator negates its operand's `.value` (so `+5` is -5 and `--1` an error);
 *   a call without keywords becomes its source text as a string, one with keywords a nested
 *   call; a subscript its source text; sets, attributes, comparisons, f-strings and the like
 *   are errors;
 * - the call string is `name(k=v, ...)` with `repr` values, except that a dict whose values are
 *   all dicts is written as a call (`{'g': {'x': 1}}` -> `g(x=1)`, and `{}` is an IndexError),
 *   and other dicts are written with their keys in single quotes as they are.
 *
 * One deliberate difference: the official decoder runs Python's `eval` on binary operations
 * (`a=1+2`). Here they are computed only when every operand is a number or string literal, with
 * Python's arithmetic; anything else (names, calls, builtins) is refused as never evaluated,
 * which ends the turn as the official decoder's NameError would for most of them.
 */
import { PyException } from './errors.js';
import { floatRepr, repr, str } from './format.js';
import { add, floordiv, mod, mul, neg, pow, requireHashable, sub, truediv } from './ops.js';
import { type Expr, PySyntaxError, parsePythonExpression } from './parse.js';
import { dictSet, ELLIPSIS, type PyDict, PyOpaque, PyTuple, type PyValue } from './values.js';

/** What the official decoder made of a text: the call strings to execute, or the error. */
export type PromptingDecode =
  | { readonly ok: true; readonly calls: string[] }
  | { readonly ok: false; readonly errorType: string; readonly message: string };

/** Python's own exception type names, for the errors the official decoder raises. */
class DecodeError extends Error {
  constructor(
    readonly pyType: string,
    message: string,
  ) {
    super(message);
  }
}

const unsupportedType = (t: string) =>
  new DecodeError('Exception', `Unsupported AST type: <class 'ast.${t}'>`);

/** Python's `str.strip(chars)`. */
function stripChars(s: string, chars: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && chars.includes(s[a]!)) a++;
  while (b > a && chars.includes(s[b - 1]!)) b--;
  return s.slice(a, b);
}

/** The characters Python's `str.strip()` removes (str.isspace). */
const PY_SPACE =
  '\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

/**
 * What BFCL's handlers for reasoning models do before decoding: keep what follows the last
 * `</think>`. (Text without one is left alone.)
 */
export function stripReasoningOfficial(text: string): string {
  const i = text.lastIndexOf('</think>');
  return i < 0 ? text : text.slice(i + '</think>'.length).replace(/^\n+/, '');
}

/** BFCL's `default_decode_execute_prompting(text)` (see the module's rules). */
export function decodeExecutePrompting(text: string): PromptingDecode {
  let s = stripChars(text, '`\n ');
  if (!s.startsWith('[')) s = `[${s}`;
  if (!s.endsWith(']')) s = `${s}]`;
  const cleaned = stripChars(stripChars(s, PY_SPACE), "'");
  try {
    let body: Expr;
    try {
      body = parsePythonExpression(cleaned, { repeatedKeywords: true });
    } catch (e) {
      if (e instanceof PySyntaxError)
        throw new DecodeError('SyntaxError', `${e.msg} (<unknown>, line ${e.line})`);
      throw new DecodeError('RecursionError', (e as Error).message);
    }
    const decoded: PyDict[] = [];
    if (body.kind === 'call') decoded.push(resolveCall(body));
    else if (body.kind === 'list' || body.kind === 'tuple' || body.kind === 'set') {
      for (const item of body.items) {
        if (item.kind !== 'call') throw new DecodeError('AssertionError', '');
        decoded.push(resolveCall(item));
      }
    } else throw new DecodeError('AttributeError', `'${astType(body)}' object has no attribute 'elts'`);
    return { ok: true, calls: decoded.flatMap(executionStrings) };
  } catch (e) {
    if (e instanceof DecodeError) return { ok: false, errorType: e.pyType, message: e.message };
    if (e instanceof PyException) return { ok: false, errorType: e.pyType, message: e.message };
    if (e instanceof RangeError)
      return { ok: false, errorType: 'RecursionError', message: 'input is nested too deeply' };
    throw e;
  }
}

/** The Python AST class an expression would be. */
function astType(e: Expr): string {
  switch (e.kind) {
    case 'literal':
      return e.signed ? 'UnaryOp' : 'Constant';
    case 'name':
      return 'Name';
    case 'attribute':
      return 'Attribute';
    case 'call':
      return 'Call';
    case 'list':
      return 'List';
    case 'tuple':
      return 'Tuple';
    case 'set':
      return 'Set';
    case 'dict':
      return 'Dict';
    case 'unsupported':
      return e.node?.type ?? 'expr';
  }
}

interface ValueNote {
  readonly value: Expr;
}
interface KeywordUnpackNote extends ValueNote {
  readonly keywordIndex: number;
}
interface UnaryNote {
  readonly op: string;
  readonly operand: Expr;
}
interface BinNote {
  readonly op: string;
  readonly left: Expr;
  readonly right: Expr;
}
interface ConstantNote {
  readonly typeName: string;
  readonly repr: string;
}
interface SubscriptNote extends ValueNote {
  readonly sliceText: string;
  readonly slice?: Expr;
}

/** `ast.unparse` of a subscript's index: the expression when it is one, else its tokens */
function sliceSource(n: SubscriptNote): string {
  if (n.slice === undefined) return n.sliceText;
  try {
    return unparse(n.slice);
  } catch {
    return n.sliceText;
  }
}

/** The parser's note on an unsupported construct of the given Python AST type. */
function noteOf<N>(e: Expr, type: string): N | undefined {
  return e.kind === 'unsupported' && e.node?.type === type ? (e.node as N) : undefined;
}

/** `resolve_ast_call`: `{name: {keyword: value}}`, the name from the dotted chain of names. */
function resolveCall(e: Extract<Expr, { kind: 'call' }>): PyDict {
  const parts: string[] = [];
  let callee = e.callee;
  while (callee.kind === 'attribute') {
    parts.push(callee.attr);
    callee = callee.object;
  }
  if (callee.kind === 'name') parts.push(callee.name);
  const args: PyDict = new Map();
  for (const [key, value] of keywordsOf(e)) dictSet(args, key, resolveValue(value));
  return new Map([[parts.reverse().join('.'), args]]);
}

/** The call's keywords in source order, `**value` as a keyword named None. */
function keywordsOf(e: Extract<Expr, { kind: 'call' }>): [string | null, Expr][] {
  const out: [string | null, Expr][] = e.kwargs.map((k) => [k.name, k.value]);
  const unpacked = e.args
    .map((a) => noteOf<KeywordUnpackNote>(a, 'KeywordUnpack'))
    .filter((n): n is NonNullable<typeof n> => n !== undefined);
  for (const u of unpacked.reverse()) out.splice(u.keywordIndex, 0, [null, u.value]);
  return out;
}

function hasKeywords(e: Extract<Expr, { kind: 'call' }>): boolean {
  return (
    e.kwargs.length > 0 || e.args.some((a) => noteOf<KeywordUnpackNote>(a, 'KeywordUnpack') !== undefined)
  );
}

/** `resolve_ast_by_type` */
function resolveValue(e: Expr): PyValue {
  switch (e.kind) {
    case 'literal':
      if (e.signed) return negateValueOf(e.signed.operand);
      return e.value === ELLIPSIS ? '...' : e.value;
    case 'name':
      return e.name;
    case 'list':
      return e.items.map(resolveValue);
    case 'tuple':
      return new PyTuple(e.items.map(resolveValue));
    case 'dict': {
      const d: PyDict = new Map();
      for (const [k, v] of e.entries) {
        const key = requireHashable(resolveValue(k));
        dictSet(d, key, resolveValue(v));
      }
      return d;
    }
    case 'call':
      return hasKeywords(e) ? resolveCall(e) : unparse(e);
    case 'set':
    case 'attribute':
      throw unsupportedType(astType(e));
    case 'unsupported': {
      const n = e.node;
      if (!n) throw new DecodeError('Exception', `${e.what} is not supported`);
      switch (n.type) {
        case 'UnaryOp':
          return negateValueOf((n as UnaryNote).operand);
        case 'BinOp':
          return computeBinOp(e);
        case 'Constant':
          return new PyOpaque((n as ConstantNote).typeName, (n as ConstantNote).repr);
        case 'Lambda':
          // the official code subscripts the lambda's body, which is never a list
          throw new DecodeError(
            'TypeError',
            `'${astType((n as { body: Expr }).body)}' object is not subscriptable`,
          );
        case 'Subscript': {
          const sub = n as SubscriptNote;
          return `${unparse(sub.value)}[${sliceSource(sub)}]`;
        }
        default:
          throw unsupportedType(n.type);
      }
    }
  }
}

/** The official `-operand.value`: the operand's `value` attribute, negated. */
function negateValueOf(operand: Expr): PyValue {
  if (operand.kind === 'literal' && !operand.signed) {
    const v = operand.value;
    if (typeof v === 'bigint') return -v;
    if (typeof v === 'number') return -v;
    if (typeof v === 'boolean') return v ? -1n : 0n;
    throw new DecodeError(
      'TypeError',
      `bad operand type for unary -: '${v === null ? 'NoneType' : v === ELLIPSIS ? 'ellipsis' : 'str'}'`,
    );
  }
  const constant = noteOf<ConstantNote>(operand, 'Constant');
  if (constant) {
    if (constant.typeName === 'complex') {
      const im = constant.repr.slice(0, -1);
      return new PyOpaque('complex', `(-0${im.startsWith('-') ? '+' : '-'}${im.replace(/^-/, '')}j)`);
    }
    throw new DecodeError('TypeError', `bad operand type for unary -: '${constant.typeName}'`);
  }
  // nodes whose `.value` is another node: negating a node is a TypeError
  let inner: Expr | undefined;
  if (operand.kind === 'attribute') inner = operand.object;
  else if (operand.kind === 'unsupported' && operand.node) {
    const n = operand.node as { value?: Expr };
    if (n.value !== undefined && operand.node.type !== 'KeywordUnpack') inner = n.value;
  }
  if (inner !== undefined)
    throw new DecodeError('TypeError', `bad operand type for unary -: '${astType(inner)}'`);
  throw new DecodeError('AttributeError', `'${astType(operand)}' object has no attribute 'value'`);
}

const BINARY_OPS: Readonly<Record<string, (a: PyValue, b: PyValue) => PyValue>> = {
  '+': add,
  '-': sub,
  '*': mul,
  '/': truediv,
  '//': floordiv,
  '%': mod,
  '**': pow,
};

/**
 * The official decoder `eval`s a binary operation. Only arithmetic on number and string
 * literals is computed here (with Python's semantics); anything that would need evaluation of
 * names or calls is refused.
 */
function computeBinOp(e: Expr): PyValue {
  const operand = (x: Expr): PyValue => {
    if (x.kind === 'literal' && (typeof x.value !== 'object' || x.value === null)) return x.value;
    const bin = noteOf<BinNote>(x, 'BinOp');
    if (bin) return computeBinOp(x);
    const unary = noteOf<UnaryNote>(x, 'UnaryOp');
    if (unary && unary.op === '-') return neg(operand(unary.operand));
    if (x.kind === 'name') throw new DecodeError('NameError', `name '${x.name}' is not defined`);
    throw new DecodeError(
      'NotEvaluated',
      `${x.kind === 'unsupported' ? x.what : x.kind} in an argument is not computed: tool calls are parsed, never evaluated`,
    );
  };
  const n = noteOf<BinNote>(e, 'BinOp')!;
  const f = BINARY_OPS[n.op];
  if (!f)
    throw new DecodeError(
      'NotEvaluated',
      `operator '${n.op}' is not computed: tool calls are parsed, never evaluated`,
    );
  const a = operand(n.left);
  const b = operand(n.right);
  if (n.op === '**' && typeof b === 'bigint' && (b > 10_000n || b < -10_000n))
    throw new DecodeError('NotEvaluated', 'power too large to compute');
  if (n.op === '*' && (typeof a === 'string' || typeof b === 'string')) {
    const count = typeof a === 'string' ? b : a;
    const s = typeof a === 'string' ? a : (b as string);
    if (typeof count === 'bigint' && count * BigInt(s.length) > 1_000_000n)
      throw new DecodeError('NotEvaluated', 'repeated string too long to compute');
  }
  return f(a, b);
}

/** Python's `ast.unparse` for the expressions that reach it (calls without keywords, subscript bases). */
function unparse(e: Expr): string {
  switch (e.kind) {
    case 'literal':
      if (e.signed) return `${e.signed.op}${unparse(e.signed.operand)}`;
      if (e.value === ELLIPSIS) return '...';
      return typeof e.value === 'number' ? floatRepr(e.value) : repr(e.value);
    case 'name':
      return e.name;
    case 'attribute':
      return `${unparse(e.object)}.${e.attr}`;
    case 'call': {
      const args = e.args.map((a) => {
        const star = noteOf<ValueNote>(a, 'Starred');
        if (star) return `*${unparse(star.value)}`;
        const kw = noteOf<KeywordUnpackNote>(a, 'KeywordUnpack');
        if (kw) return `**${unparse(kw.value)}`;
        return unparse(a);
      });
      return `${unparse(e.callee)}(${[...args, ...e.kwargs.map((k) => `${k.name}=${unparse(k.value)}`)].join(', ')})`;
    }
    case 'list':
      return `[${e.items.map(unparse).join(', ')}]`;
    case 'tuple':
      return e.items.length === 1 ? `(${unparse(e.items[0]!)},)` : `(${e.items.map(unparse).join(', ')})`;
    case 'set':
      return `{${e.items.map(unparse).join(', ')}}`;
    case 'dict':
      return `{${e.entries.map(([k, v]) => `${unparse(k)}: ${unparse(v)}`).join(', ')}}`;
    case 'unsupported': {
      const n = e.node;
      const sub = noteOf<SubscriptNote>(e, 'Subscript');
      if (sub) return `${unparse(sub.value)}[${sliceSource(sub)}]`;
      const bin = noteOf<BinNote>(e, 'BinOp');
      if (bin) return `${unparse(bin.left)} ${bin.op} ${unparse(bin.right)}`;
      const constant = noteOf<ConstantNote>(e, 'Constant');
      if (constant) return constant.repr;
      throw new DecodeError('NotEvaluated', `${n?.type ?? e.what} cannot be written back as source here`);
    }
  }
}

/** `decoded_output_to_execution_list` for one decoded call. */
function executionStrings(call: PyDict): string[] {
  return [...call].map(([name, args]) => {
    const parts = [...(args as PyDict)].map(([k, v]) => `${str(k)}=${nestedValueText(v)}`);
    return `${str(name)}(${parts.join(', ')})`;
  });
}

/** `parse_nested_value` */
function nestedValueText(v: PyValue): string {
  if (!(v instanceof Map)) return repr(v);
  if ([...v.values()].every((x) => x instanceof Map)) {
    const first = v.keys().next();
    if (first.done) throw new DecodeError('IndexError', 'list index out of range');
    const args = v.get(first.value) as PyDict;
    return `${str(first.value)}(${[...args].map(([k, x]) => `${str(k)}=${nestedValueText(x)}`).join(', ')})`;
  }
  return `{${[...v].map(([k, x]) => `'${str(k)}': ${nestedValueText(x)}`).join(', ')}}`;
}
