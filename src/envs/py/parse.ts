/**
 * Parser for tool calls written in Python call syntax, e.g. `cd(folder='document')`.
 *
 * The reference executor hands these strings to Python's `eval`. We never evaluate model
 * output: this parser accepts Python's expression syntax, keeps literals (strings, numbers,
 * True/False/None, lists, tuples, dicts, sets) and names, and turns every other construct
 * (arithmetic, nested calls, attribute access on values, subscripts, comprehensions...) into an
 * `unsupported` node that the executor reports as an error result. Syntax errors carry CPython
 * 3.11's messages, because the reference returns them to the model verbatim.
 */
import { floatRepr } from './format.js';
import { dictSet, ELLIPSIS, type PyDict, type PyKey, PySet, PyTuple, type PyValue } from './values.js';

export type Expr =
  | {
      readonly kind: 'literal';
      readonly value: PyValue;
      /** set when the literal is a sign applied to a number (`-2`, `+2`): the operator and its operand */
      readonly signed?: { readonly op: '+' | '-'; readonly operand: Expr };
    }
  | { readonly kind: 'name'; readonly name: string }
  | { readonly kind: 'attribute'; readonly object: Expr; readonly attr: string }
  | {
      readonly kind: 'call';
      readonly callee: Expr;
      readonly args: readonly Expr[];
      readonly kwargs: readonly Kwarg[];
    }
  | { readonly kind: 'list' | 'tuple' | 'set'; readonly items: readonly Expr[] }
  | { readonly kind: 'dict'; readonly entries: readonly (readonly [Expr, Expr])[] }
  | { readonly kind: 'unsupported'; readonly what: string; readonly node?: AstNote };

/**
 * What an unsupported construct is in Python's own AST, for readers that must treat it as the
 * official decoder does (prompting.ts); the executor only needs `what`.
 */
export type AstNote =
  | { readonly type: 'UnaryOp'; readonly op: string; readonly operand: Expr }
  | {
      readonly type: 'BinOp' | 'Compare' | 'BoolOp';
      readonly op: string;
      readonly left: Expr;
      readonly right: Expr;
    }
  | {
      readonly type: 'Subscript';
      readonly value: Expr;
      /** the index as written, tokens joined; `slice` when it is one expression */
      readonly sliceText: string;
      readonly slice?: Expr;
    }
  | { readonly type: 'Lambda'; readonly body: Expr }
  | { readonly type: 'NamedExpr' | 'Await' | 'Starred'; readonly value: Expr }
  | { readonly type: 'Constant'; readonly typeName: string; readonly repr: string }
  /** `**value` among a call's arguments: a keyword without a name, the `keywordIndex`th keyword */
  | { readonly type: 'KeywordUnpack'; readonly value: Expr; readonly keywordIndex: number }
  | { readonly type: string };

export interface Kwarg {
  readonly name: string;
  readonly value: Expr;
}

/** CPython's SyntaxError, formatted as `str(e)`: `<msg> (<string>, line N)`. */
export class PySyntaxError extends Error {
  constructor(
    readonly msg: string,
    readonly line: number,
  ) {
    super(`${msg} (<string>, line ${line})`);
  }
}

type TokKind = 'name' | 'number' | 'string' | 'op' | 'newline' | 'end';
interface Token {
  readonly kind: TokKind;
  readonly text: string;
  readonly line: number;
  /** decoded value for number/string tokens */
  readonly value?: PyValue;
  readonly unsupported?: string;
}

const OPERATORS = [
  '**=',
  '//=',
  '>>=',
  '<<=',
  '...',
  '->',
  ':=',
  '**',
  '//',
  '<<',
  '>>',
  '<=',
  '>=',
  '==',
  '!=',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '&=',
  '|=',
  '^=',
  '@=',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  ',',
  ':',
  '.',
  ';',
  '@',
  '=',
  '+',
  '-',
  '*',
  '/',
  '%',
  '&',
  '|',
  '^',
  '~',
  '<',
  '>',
];
const OPENERS: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
const CLOSERS: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
/** Python's reserved words: never names of functions or keyword arguments. */
export const PYTHON_KEYWORDS: ReadonlySet<string> = new Set([
  'False',
  'None',
  'True',
  'and',
  'as',
  'assert',
  'async',
  'await',
  'break',
  'class',
  'continue',
  'def',
  'del',
  'elif',
  'else',
  'except',
  'finally',
  'for',
  'from',
  'global',
  'if',
  'import',
  'in',
  'is',
  'lambda',
  'nonlocal',
  'not',
  'or',
  'pass',
  'raise',
  'return',
  'try',
  'while',
  'with',
  'yield',
]);

const NAME_RE = /[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*/uy;
const NUMBER_RE =
  /(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|(?:\d(?:_?\d)*\.?(?:\d(?:_?\d)*)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?[jJ]?)/y;
const STRING_PREFIX_RE = /(?:[rRuUbBfF]|[rR][bBfF]|[bBfF][rR])?(?='|")/y;

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  const depthStack: { ch: string; line: number }[] = [];
  let i = 0;
  let line = 1;
  while (i < src.length) {
    const c = src[i]!;
    if (c === ' ' || c === '\t' || c === '\f') {
      i++;
      continue;
    }
    if (c === '\\' && (src[i + 1] === '\n' || (src[i + 1] === '\r' && src[i + 2] === '\n'))) {
      i += src[i + 1] === '\n' ? 2 : 3;
      line++;
      continue;
    }
    if (c === '\n' || c === '\r') {
      i += c === '\r' && src[i + 1] === '\n' ? 2 : 1;
      if (depthStack.length === 0) tokens.push({ kind: 'newline', text: '\n', line });
      line++;
      continue;
    }
    if (c === '#') {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    STRING_PREFIX_RE.lastIndex = i;
    const prefix = STRING_PREFIX_RE.exec(src);
    if (prefix) {
      const start = i;
      const startLine = line;
      const pre = prefix[0].toLowerCase();
      i += prefix[0].length;
      const q = src[i]!;
      const triple = src.startsWith(q.repeat(3), i);
      const delim = triple ? q.repeat(3) : q;
      i += delim.length;
      let body = '';
      let closed = false;
      while (i < src.length) {
        if (src.startsWith(delim, i)) {
          i += delim.length;
          closed = true;
          break;
        }
        const ch = src[i]!;
        if (ch === '\\' && i + 1 < src.length) {
          body += ch + src[i + 1];
          if (src[i + 1] === '\n') line++;
          i += 2;
          continue;
        }
        if (ch === '\n') {
          if (!triple) break;
          line++;
        }
        body += ch;
        i++;
      }
      if (!closed) {
        if (triple) {
          throw new PySyntaxError(
            `unterminated triple-quoted string literal (detected at line ${line})`,
            startLine,
          );
        }
        throw new PySyntaxError(`unterminated string literal (detected at line ${startLine})`, startLine);
      }
      const text = src.slice(start, i);
      if (pre.includes('b') || pre.includes('f')) {
        tokens.push({
          kind: 'string',
          text,
          line: startLine,
          unsupported: pre.includes('b') ? 'bytes literal' : 'f-string',
        });
      } else {
        tokens.push({
          kind: 'string',
          text,
          line: startLine,
          value: pre.includes('r') ? body : decodeEscapes(body, startLine),
        });
      }
      continue;
    }
    NAME_RE.lastIndex = i;
    const name = NAME_RE.exec(src);
    if (name) {
      tokens.push({ kind: 'name', text: name[0], line });
      i += name[0].length;
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      NUMBER_RE.lastIndex = i;
      const m = NUMBER_RE.exec(src)!;
      const text = m[0];
      i += text.length;
      if (/^[\p{L}_]/u.test(src[i] ?? '')) throw new PySyntaxError('invalid decimal literal', line);
      tokens.push(numberToken(text, line));
      continue;
    }
    const op = OPERATORS.find((o) => src.startsWith(o, i));
    if (!op) {
      if (c === '!' || c === '$' || c === '?' || c === '`') throw new PySyntaxError('invalid syntax', line);
      throw new PySyntaxError(
        `invalid character '${c}' (U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')})`,
        line,
      );
    }
    if (OPENERS[op]) {
      // CPython's tokenizer gives up at 200 nested brackets; so do we (and never recurse deeper).
      if (depthStack.length >= 200) throw new PySyntaxError('too many nested parentheses', line);
      depthStack.push({ ch: op, line });
    } else if (CLOSERS[op]) {
      const top = depthStack.pop();
      if (!top) throw new PySyntaxError(`unmatched '${op}'`, line);
      if (top.ch !== CLOSERS[op]) {
        const where = top.line === line ? '' : ` on line ${top.line}`;
        throw new PySyntaxError(
          `closing parenthesis '${op}' does not match opening parenthesis '${top.ch}'${where}`,
          line,
        );
      }
    }
    tokens.push({ kind: 'op', text: op, line });
    i += op.length;
  }
  if (depthStack.length > 0) {
    const top = depthStack[depthStack.length - 1]!;
    throw new PySyntaxError(`'${top.ch}' was never closed`, top.line);
  }
  tokens.push({ kind: 'end', text: '', line });
  return tokens;
}

function numberToken(text: string, line: number): Token {
  const clean = text.replace(/_/g, '');
  if (/[jJ]$/.test(clean)) return { kind: 'number', text, line, unsupported: 'complex number' };
  if (clean.length > 4300 && /^\d+$/.test(clean)) {
    throw new PySyntaxError(
      `Exceeds the limit (4300 digits) for integer string conversion: value has ${clean.length} digits; use sys.set_int_max_str_digits() to increase the limit - Consider hexadecimal for huge integer literals to avoid decimal conversion limits.`,
      line,
    );
  }
  if (/^0[xXoObB]/.test(clean)) return { kind: 'number', text, line, value: BigInt(clean) };
  if (/[.eE]/.test(clean)) return { kind: 'number', text, line, value: Number(clean) };
  if (/^0+\d/.test(clean)) {
    throw new PySyntaxError(
      'leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers',
      line,
    );
  }
  return { kind: 'number', text, line, value: BigInt(clean) };
}

const SIMPLE_ESCAPES: Record<string, string> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\n': '',
};

/** `\N{...}` in a literal: named escapes need the Unicode name table, which seal does not carry. */
export class NamedEscapeError extends PySyntaxError {}

/**
 * The escapes of a non-raw str literal's body decoded as Python decodes them, with CPython's
 * SyntaxError texts for a truncated or out-of-range one (`line` is where the literal starts).
 */
export function decodeEscapes(body: string, line: number): string {
  if (!body.includes('\\')) return body;
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const nx = body[i + 1];
    if (nx === undefined) {
      out += '\\';
      break;
    }
    if (nx in SIMPLE_ESCAPES) {
      out += SIMPLE_ESCAPES[nx];
      i++;
    } else if (/[0-7]/.test(nx)) {
      const m = /^[0-7]{1,3}/.exec(body.slice(i + 1))![0];
      out += String.fromCodePoint(Number.parseInt(m, 8));
      i += m.length;
    } else if (nx === 'x' || nx === 'u' || nx === 'U') {
      const n = nx === 'x' ? 2 : nx === 'u' ? 4 : 8;
      const hex = body.slice(i + 2, i + 2 + n);
      if (hex.length !== n || !/^[0-9a-fA-F]+$/.test(hex)) {
        throw new PySyntaxError(
          `(unicode error) 'unicodeescape' codec can't decode bytes in position ${out.length}-${out.length + 1}: truncated \\${nx}${'X'.repeat(n)} escape`,
          line,
        );
      }
      const cp = Number.parseInt(hex, 16);
      if (cp > 0x10ffff) {
        throw new PySyntaxError(
          `(unicode error) 'unicodeescape' codec can't decode bytes in position ${out.length}-${out.length + 9}: illegal Unicode character`,
          line,
        );
      }
      out += String.fromCodePoint(cp);
      i += 1 + n;
    } else if (nx === 'N') {
      throw new NamedEscapeError('(unicode error) named unicode escapes are not supported here', line);
    } else {
      // Python keeps unknown escapes as they are (with a DeprecationWarning).
      out += `\\${nx}`;
      i++;
    }
  }
  return out;
}

const BINARY_PRECEDENCE: Record<string, number> = {
  or: 1,
  and: 2,
  in: 4,
  is: 4,
  '<': 4,
  '>': 4,
  '==': 4,
  '>=': 4,
  '<=': 4,
  '!=': 4,
  '|': 5,
  '^': 6,
  '&': 7,
  '<<': 8,
  '>>': 8,
  '+': 9,
  '-': 9,
  '*': 10,
  '/': 10,
  '//': 10,
  '%': 10,
  '@': 10,
  '**': 12,
};

/** Raised for inputs nested deeper than we are willing to recurse (CPython raises RecursionError). */
export class ParseTooDeep extends Error {
  constructor() {
    super('maximum recursion depth exceeded during compilation');
  }
}

class Parser {
  private pos = 0;
  private depth = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly options: ParseOptions = {},
  ) {}

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.pos + offset, this.tokens.length - 1)]!;
  }
  private next(): Token {
    const t = this.peek();
    this.pos++;
    return t;
  }
  private isOp(text: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.kind === 'op' && t.text === text;
  }
  private fail(t: Token = this.peek()): never {
    throw new PySyntaxError('invalid syntax', t.line);
  }
  private expectOp(text: string): void {
    if (!this.isOp(text)) this.fail();
    this.pos++;
  }

  parseEval(): Expr {
    while (this.peek().kind === 'newline') this.pos++;
    if (this.peek().kind === 'end') throw new PySyntaxError('invalid syntax', 0);
    const e = this.testlist();
    while (this.peek().kind === 'newline') {
      this.pos++;
      if (this.peek().kind !== 'end') this.fail();
    }
    if (this.peek().kind !== 'end') this.fail();
    return e;
  }

  /** `a, b` at the top level is a tuple, as in Python expression mode. */
  private testlist(): Expr {
    const first = this.test();
    if (!this.isOp(',')) return first;
    const items = [first];
    while (this.isOp(',')) {
      this.pos++;
      if (this.atExprEnd()) break;
      items.push(this.test());
    }
    return { kind: 'tuple', items };
  }

  private atExprEnd(): boolean {
    const t = this.peek();
    return (
      t.kind === 'end' ||
      t.kind === 'newline' ||
      (t.kind === 'op' && [')', ']', '}', ':', '='].includes(t.text))
    );
  }

  private test(): Expr {
    if (this.peek().kind === 'name' && this.peek().text === 'lambda') {
      const start = this.pos;
      // the parameters run to the first ':' outside brackets; the body is an expression
      let depth = 0;
      for (;;) {
        const t = this.peek();
        if (t.kind === 'end' || t.kind === 'newline') {
          this.pos = start;
          this.skipBalancedUntilExprEnd();
          return { kind: 'unsupported', what: 'lambda expression' };
        }
        if (t.kind === 'op') {
          if (OPENERS[t.text]) depth++;
          else if (CLOSERS[t.text]) depth--;
          else if (depth === 0 && t.text === ':') break;
        }
        this.pos++;
      }
      this.pos++;
      const body = this.test();
      return { kind: 'unsupported', what: 'lambda expression', node: { type: 'Lambda', body } };
    }
    const e = this.binary(1);
    if (this.peek().kind === 'name' && this.peek().text === 'if') {
      this.pos++;
      this.binary(1);
      if (!(this.peek().kind === 'name' && this.peek().text === 'else')) this.fail();
      this.pos++;
      this.test();
      return { kind: 'unsupported', what: 'conditional expression', node: { type: 'IfExp' } };
    }
    if (this.isOp(':=')) {
      this.pos++;
      const value = this.test();
      return { kind: 'unsupported', what: 'assignment expression', node: { type: 'NamedExpr', value } };
    }
    return e;
  }

  private skipBalancedUntilExprEnd(): void {
    let depth = 0;
    for (;;) {
      const t = this.peek();
      if (t.kind === 'end' || t.kind === 'newline') return;
      if (t.kind === 'op') {
        if (OPENERS[t.text]) depth++;
        else if (CLOSERS[t.text]) {
          if (depth === 0) return;
          depth--;
        } else if (depth === 0 && t.text === ',') return;
      }
      this.pos++;
    }
  }

  private binaryOp(): string | undefined {
    const t = this.peek();
    if (t.kind === 'op' && t.text in BINARY_PRECEDENCE) return t.text;
    if (t.kind === 'name' && ['or', 'and', 'in', 'is'].includes(t.text)) return t.text;
    if (t.kind === 'name' && t.text === 'not' && this.peek(1).kind === 'name' && this.peek(1).text === 'in')
      return 'in';
    return undefined;
  }

  private binary(minPrec: number): Expr {
    let left = this.unary();
    for (;;) {
      const op = this.binaryOp();
      if (op === undefined) return left;
      const prec = BINARY_PRECEDENCE[op]!;
      if (prec < minPrec) return left;
      if (this.peek().text === 'not') this.pos++;
      this.pos++;
      if (op === 'is' && this.peek().kind === 'name' && this.peek().text === 'not') this.pos++;
      const right = this.binary(op === '**' ? prec : prec + 1);
      const type = prec === 4 ? 'Compare' : prec <= 2 ? 'BoolOp' : 'BinOp';
      left = { kind: 'unsupported', what: `operator '${op}'`, node: { type, op, left, right } };
    }
  }

  private unary(): Expr {
    if (++this.depth > 1000) throw new ParseTooDeep();
    try {
      return this.unaryInner();
    } finally {
      this.depth--;
    }
  }

  private unaryInner(): Expr {
    const t = this.peek();
    if (t.kind === 'name' && t.text === 'not') {
      this.pos++;
      const operand = this.binary(3);
      return { kind: 'unsupported', what: "operator 'not'", node: { type: 'UnaryOp', op: 'not', operand } };
    }
    if (t.kind === 'name' && t.text === 'await') {
      this.pos++;
      const value = this.unary();
      return { kind: 'unsupported', what: 'await expression', node: { type: 'Await', value } };
    }
    if (t.kind === 'op' && (t.text === '-' || t.text === '+' || t.text === '~')) {
      this.pos++;
      const operand = this.unary();
      // A sign on a number literal is part of the literal as far as a user is concerned (`b=-2`).
      if (
        t.text !== '~' &&
        operand.kind === 'literal' &&
        this.isNumberLiteral(operand.value) &&
        !this.isOp('**')
      ) {
        const v = operand.value;
        const signed = { op: t.text, operand } as const;
        if (t.text === '+') return { kind: 'literal', value: v, signed };
        return { kind: 'literal', value: typeof v === 'bigint' ? -v : -(v as number), signed };
      }
      return {
        kind: 'unsupported',
        what: `unary operator '${t.text}'`,
        node: { type: 'UnaryOp', op: t.text, operand },
      };
    }
    return this.power();
  }

  private isNumberLiteral(v: PyValue): boolean {
    return typeof v === 'bigint' || typeof v === 'number';
  }

  private power(): Expr {
    const base = this.primary();
    if (this.isOp('**')) {
      this.pos++;
      const right = this.unary();
      return {
        kind: 'unsupported',
        what: "operator '**'",
        node: { type: 'BinOp', op: '**', left: base, right },
      };
    }
    return base;
  }

  private primary(): Expr {
    let e = this.atom();
    for (;;) {
      if (this.isOp('(')) {
        e = this.callTrailer(e);
      } else if (this.isOp('.')) {
        this.pos++;
        const name = this.next();
        if (name.kind !== 'name' || PYTHON_KEYWORDS.has(name.text)) this.fail(name);
        e = { kind: 'attribute', object: e, attr: name.text };
      } else if (this.isOp('[')) {
        this.pos++;
        const from = this.pos;
        const slice = this.subscriptBody();
        const sliceText = this.tokens
          .slice(from, this.pos)
          .map((t) => t.text)
          .join('')
          .replace(/,/g, ', ');
        this.expectOp(']');
        e = {
          kind: 'unsupported',
          what: 'subscript',
          node: { type: 'Subscript', value: e, sliceText, ...(slice ? { slice } : {}) },
        };
      } else {
        return e;
      }
    }
  }

  /** the index expression when it is a single one (`a[0]`, not `a[1:2]` or `a[1, 2]`) */
  private subscriptBody(): Expr | undefined {
    if (this.isOp(']')) this.fail();
    let single: Expr | undefined;
    let parts = 0;
    for (;;) {
      if (!this.isOp(':') && !this.isOp(',') && !this.isOp(']')) single = this.test();
      if (this.isOp(':') || this.isOp(',')) {
        this.pos++;
        parts++;
        continue;
      }
      return parts === 0 ? single : undefined;
    }
  }

  private callTrailer(callee: Expr): Expr {
    this.expectOp('(');
    const args: Expr[] = [];
    const kwargs: Kwarg[] = [];
    const seen = new Set<string>();
    let sawKeyword = false;
    while (!this.isOp(')')) {
      const t = this.peek();
      if (t.kind === 'op' && (t.text === '*' || t.text === '**')) {
        this.pos++;
        const value = this.test();
        args.push({
          kind: 'unsupported',
          what: 'argument unpacking',
          node:
            t.text === '**'
              ? { type: 'KeywordUnpack', value, keywordIndex: kwargs.length }
              : { type: 'Starred', value },
        });
      } else if (t.kind === 'name' && !PYTHON_KEYWORDS.has(t.text) && this.isOp('=', 1)) {
        this.pos += 2;
        if (seen.has(t.text) && !this.options.repeatedKeywords)
          throw new PySyntaxError(`keyword argument repeated: ${t.text}`, t.line);
        seen.add(t.text);
        kwargs.push({ name: t.text, value: this.test() });
        sawKeyword = true;
      } else {
        const value = this.test();
        if (this.peek().kind === 'name' && this.peek().text === 'for') {
          this.skipBalancedUntilExprEnd();
          args.push({ kind: 'unsupported', what: 'generator expression', node: { type: 'GeneratorExp' } });
        } else {
          if (this.isOp('=')) this.fail();
          if (sawKeyword) throw new PySyntaxError('positional argument follows keyword argument', t.line);
          args.push(value);
        }
      }
      if (this.isOp(',')) this.pos++;
      else if (!this.isOp(')')) this.fail();
    }
    this.pos++;
    return { kind: 'call', callee, args, kwargs };
  }

  private atom(): Expr {
    const t = this.next();
    switch (t.kind) {
      case 'number':
        return t.unsupported
          ? {
              kind: 'unsupported',
              what: t.unsupported,
              node: { type: 'Constant', typeName: 'complex', repr: complexRepr(t.text) },
            }
          : { kind: 'literal', value: t.value! };
      case 'string': {
        // Adjacent string literals concatenate, as in Python.
        const parts = [t];
        while (this.peek().kind === 'string') parts.push(this.next());
        const kinds = new Set(parts.map((p) => p.unsupported ?? 'str'));
        if (kinds.has('bytes literal') && kinds.size > 1)
          throw new PySyntaxError('cannot mix bytes and nonbytes literals', t.line);
        if (kinds.has('f-string'))
          return { kind: 'unsupported', what: 'f-string', node: { type: 'JoinedStr' } };
        if (kinds.has('bytes literal')) {
          const bytes = parts.map((p) => bytesOfLiteral(p.text, p.line)).join('');
          return {
            kind: 'unsupported',
            what: 'bytes literal',
            node: { type: 'Constant', typeName: 'bytes', repr: bytesRepr(bytes) },
          };
        }
        return { kind: 'literal', value: parts.map((p) => p.value as string).join('') };
      }
      case 'name':
        if (t.text === 'True') return { kind: 'literal', value: true };
        if (t.text === 'False') return { kind: 'literal', value: false };
        if (t.text === 'None') return { kind: 'literal', value: null };
        if (PYTHON_KEYWORDS.has(t.text)) this.fail(t);
        return { kind: 'name', name: t.text };
      case 'op':
        if (t.text === '(') return this.parenthesised();
        if (t.text === '[') return this.listDisplay();
        if (t.text === '{') return this.braceDisplay();
        if (t.text === '...') return { kind: 'literal', value: ELLIPSIS };
        return this.fail(t);
      default:
        return this.fail(t);
    }
  }

  private parenthesised(): Expr {
    if (this.isOp(')')) {
      this.pos++;
      return { kind: 'tuple', items: [] };
    }
    const first = this.test();
    if (this.peek().kind === 'name' && this.peek().text === 'for') {
      this.skipBalancedUntilExprEnd();
      this.expectOp(')');
      return { kind: 'unsupported', what: 'generator expression', node: { type: 'GeneratorExp' } };
    }
    if (this.isOp(')')) {
      this.pos++;
      return first;
    }
    const items = [first];
    while (this.isOp(',')) {
      this.pos++;
      if (this.isOp(')')) break;
      items.push(this.test());
    }
    this.expectOp(')');
    return { kind: 'tuple', items };
  }

  private listDisplay(): Expr {
    const items: Expr[] = [];
    while (!this.isOp(']')) {
      items.push(this.test());
      if (this.peek().kind === 'name' && this.peek().text === 'for') {
        this.skipBalancedUntilExprEnd();
        this.expectOp(']');
        return { kind: 'unsupported', what: 'list comprehension', node: { type: 'ListComp' } };
      }
      if (this.isOp(',')) this.pos++;
      else if (!this.isOp(']')) this.fail();
    }
    this.pos++;
    return { kind: 'list', items };
  }

  private braceDisplay(): Expr {
    if (this.isOp('}')) {
      this.pos++;
      return { kind: 'dict', entries: [] };
    }
    const first = this.test();
    if (this.isOp(':')) {
      this.pos++;
      const entries: [Expr, Expr][] = [[first, this.test()]];
      if (this.peek().kind === 'name' && this.peek().text === 'for') {
        this.skipBalancedUntilExprEnd();
        this.expectOp('}');
        return { kind: 'unsupported', what: 'dict comprehension', node: { type: 'DictComp' } };
      }
      while (this.isOp(',')) {
        this.pos++;
        if (this.isOp('}')) break;
        const k = this.test();
        this.expectOp(':');
        entries.push([k, this.test()]);
      }
      this.expectOp('}');
      return { kind: 'dict', entries };
    }
    const items = [first];
    while (this.isOp(',')) {
      this.pos++;
      if (this.isOp('}')) break;
      items.push(this.test());
    }
    this.expectOp('}');
    return { kind: 'set', items };
  }
}

/**
 * A bytes literal's content as a string of code units 0-255. Only ASCII may appear literally;
 * escapes are Python's bytes escapes (no \u, \U or \N, which stay as written).
 */
function bytesOfLiteral(text: string, line: number): string {
  const prefixEnd = text.search(/['"]/);
  const raw = /r/i.test(text.slice(0, prefixEnd));
  const q = text.startsWith(text[prefixEnd]!.repeat(3), prefixEnd) ? 3 : 1;
  const body = text.slice(prefixEnd + q, text.length - q);
  if (/[^\x00-\x7f]/.test(body))
    throw new PySyntaxError('bytes can only contain ASCII literal characters', line);
  if (raw) return body;
  // \u, \U and \N are not escapes in bytes: double their backslash so they stay as written
  return decodeEscapes(
    body.replace(/\\([\s\S])/g, (m, c: string) => ('uUN'.includes(c) ? `\\${m}` : m)),
    line,
  );
}

/** Python's repr of a bytes value (code units 0-255). */
function bytesRepr(b: string): string {
  const q = b.includes("'") && !b.includes('"') ? '"' : "'";
  let out = `b${q}`;
  for (const ch of b) {
    const c = ch.charCodeAt(0);
    if (ch === q || ch === '\\') out += `\\${ch}`;
    else if (ch === '\t') out += '\\t';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c >= 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}${q}`;
}

/** Python's repr of an imaginary literal such as `2.5j` or `1e3j`. */
function complexRepr(text: string): string {
  const x = Number(text.replace(/_/g, '').slice(0, -1));
  const r = floatRepr(x);
  return `${r.endsWith('.0') ? r.slice(0, -2) : r}j`;
}

/** Parse a string as Python's `eval` would compile it; throws `PySyntaxError`. */
export function parsePythonExpression(src: string, options: ParseOptions = {}): Expr {
  return new Parser(tokenize(src), options).parseEval();
}

export interface ParseOptions {
  /**
   * Accept `f(a=1, a=2)`. CPython's parser does (`ast.parse`); only its compiler, which `eval`
   * runs, rejects it. The official prompting decoder uses `ast.parse`.
   */
  readonly repeatedKeywords?: boolean;
}

/** The dotted name a call expression calls (`ls`, `a.b`), or undefined when it is not a name. */
export function calleeName(e: Expr): string | undefined {
  if (e.kind === 'name') return e.name;
  if (e.kind === 'attribute') {
    const base = calleeName(e.object);
    return base === undefined ? undefined : `${base}.${e.attr}`;
  }
  return undefined;
}

/** The literal value of an expression made only of literals, or undefined. */
export function literalValue(e: Expr): PyValue | undefined {
  switch (e.kind) {
    case 'literal':
      return e.value;
    case 'list': {
      const out: PyValue[] = [];
      for (const it of e.items) {
        const v = literalValue(it);
        if (v === undefined) return undefined;
        out.push(v);
      }
      return out;
    }
    case 'tuple': {
      const out: PyValue[] = [];
      for (const it of e.items) {
        const v = literalValue(it);
        if (v === undefined) return undefined;
        out.push(v);
      }
      return new PyTuple(out);
    }
    case 'dict': {
      const d: PyDict = new Map();
      for (const [ke, ve] of e.entries) {
        const k = literalValue(ke);
        const v = literalValue(ve);
        if (
          k === undefined ||
          v === undefined ||
          (k !== null && typeof k === 'object' && !(k instanceof PyTuple))
        )
          return undefined;
        dictSet(d, k as PyKey, v);
      }
      return d;
    }
    case 'set': {
      const set = new PySet();
      for (const it of e.items) {
        const v = literalValue(it);
        if (v === undefined || (v !== null && typeof v === 'object')) return undefined;
        set.add(v);
      }
      return set;
    }
    default:
      return undefined;
  }
}
