/**
 * The `calculate` tool of retail and airline. The reference checks the characters and then runs
 * Python's `eval` on the text; seal parses the arithmetic those characters can spell (numbers,
 * `+ - * / // **`, parentheses, unary signs, `()` and `...`) and computes it with Python's
 * operators, then `str(round(float(result), 2))`. Errors read as Python's: the character check,
 * SyntaxError texts of CPython 3.10+ for the usual slips, ZeroDivisionError, TypeError.
 */
import { PyException, TypeError_, ValueError_ } from '../py/errors.js';
import { str } from '../py/format.js';
import { add, floordiv, iterate, mul, neg, pow, pyRound, sub, toFloat, truediv } from '../py/ops.js';
import { ELLIPSIS, PyTuple, type PyValue, typeName } from '../py/values.js';

const ALLOWED = '0123456789+-*/(). ';
/** CPython's TypeError text for a source that is not a str: an error message, nothing evaluates it. */
const NOT_A_SOURCE = 'eval() arg 1 must be a string, bytes or code object';

/** `calculate(expression)` as the reference's tool computes it. */
export function calculate(expression: PyValue): string {
  for (const ch of iterate(expression)) {
    if (typeof ch !== 'string')
      throw TypeError_(`'in <string>' requires string as left operand, not ${typeName(ch)}`);
    if (!ALLOWED.includes(ch)) throw ValueError_('Invalid characters in expression');
  }
  if (typeof expression !== 'string') throw TypeError_(NOT_A_SOURCE);
  const value = compute(expression);
  return str(pyRound(toFloat(value), 2n));
}

type Token = { kind: 'num'; value: PyValue } | { kind: 'op'; text: string } | { kind: 'end' };

function syntaxError(msg: string, line = 1): PyException {
  return new PyException('SyntaxError', `${msg} (<string>, line ${line})`);
}

const NUMBER = /(\d+)(\.\d*)?|\.\d+/y;

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let depth = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ') {
      i++;
      continue;
    }
    if (text.startsWith('...', i)) {
      out.push({ kind: 'num', value: ELLIPSIS });
      i += 3;
      continue;
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (m) {
      i += m[0].length;
      if (m[2] === undefined && m[1] !== undefined) {
        if (/^0+[1-9]/.test(m[1]))
          throw syntaxError(
            'leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers',
          );
        out.push({ kind: 'num', value: BigInt(m[1]) });
      } else out.push({ kind: 'num', value: Number(m[0]) });
      continue;
    }
    const two = text.slice(i, i + 2);
    const op = two === '**' || two === '//' ? two : c;
    if (op === '(') depth++;
    if (op === ')' && --depth < 0) throw syntaxError("unmatched ')'");
    out.push({ kind: 'op', text: op });
    i += op.length;
  }
  out.push({ kind: 'end' });
  return out;
}

class Parser {
  i = 0;
  depth = 0;
  constructor(readonly tokens: Token[]) {}
  peek(): Token {
    return this.tokens[this.i]!;
  }
  isOp(text: string): boolean {
    const t = this.peek();
    return t.kind === 'op' && t.text === text;
  }
  fail(): never {
    const t = this.peek();
    if (this.depth > 0 && t.kind === 'num') throw syntaxError('invalid syntax. Perhaps you forgot a comma?');
    if (this.depth > 0 && t.kind === 'end') throw syntaxError("'(' was never closed");
    throw syntaxError('invalid syntax');
  }
  expr(): () => PyValue {
    let left = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const op = (this.tokens[this.i++] as { text: string }).text;
      const a = left;
      const b = this.term();
      left = op === '+' ? () => add(a(), b()) : () => sub(a(), b());
    }
    return left;
  }
  term(): () => PyValue {
    let left = this.factor();
    while (this.isOp('*') || this.isOp('/') || this.isOp('//')) {
      const op = (this.tokens[this.i++] as { text: string }).text;
      const a = left;
      const b = this.factor();
      left =
        op === '*' ? () => mul(a(), b()) : op === '/' ? () => truediv(a(), b()) : () => floordiv(a(), b());
    }
    return left;
  }
  factor(): () => PyValue {
    if (this.isOp('-') || this.isOp('+')) {
      const op = (this.tokens[this.i++] as { text: string }).text;
      const f = this.factor();
      return op === '-' ? () => neg(f()) : () => plus(f());
    }
    return this.power();
  }
  /** an atom and its calls: `2(3)` parses, and fails when run as Python's call of an int does */
  primary(): () => PyValue {
    let value = this.atom();
    while (this.isOp('(')) {
      this.i++;
      this.depth++;
      const arg = this.isOp(')') ? undefined : this.expr();
      if (!this.isOp(')')) this.fail();
      this.i++;
      this.depth--;
      const callee = value;
      value = () => {
        const f = callee();
        arg?.();
        throw TypeError_(`'${typeName(f)}' object is not callable`);
      };
    }
    return value;
  }
  power(): () => PyValue {
    const base = this.primary();
    if (!this.isOp('**')) return base;
    this.i++;
    const exp = this.factor();
    return () => boundedPow(base(), exp());
  }
  atom(): () => PyValue {
    const t = this.peek();
    if (t.kind === 'num') {
      this.i++;
      return () => t.value;
    }
    if (this.isOp('(')) {
      this.i++;
      this.depth++;
      if (this.isOp(')')) {
        this.i++;
        this.depth--;
        return () => new PyTuple([]);
      }
      const inner = this.expr();
      if (!this.isOp(')')) this.fail();
      this.i++;
      this.depth--;
      return inner;
    }
    return this.fail();
  }
}

/** `+x`: numbers only (`+()` is a TypeError). */
function plus(v: PyValue): PyValue {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1n : 0n;
  throw TypeError_(`bad operand type for unary +: '${typeName(v)}'`);
}

/**
 * `a ** b`, refusing ints so large that `float()` of the result must overflow (Python would
 * spend minutes building them first, then raise the same error).
 */
function boundedPow(a: PyValue, b: PyValue): PyValue {
  if (typeof a === 'bigint' && typeof b === 'bigint' && b > 0n) {
    const bits = BigInt(a < 0n ? (-a).toString(2).length : a.toString(2).length);
    if (a !== 0n && a !== 1n && a !== -1n && (bits - 1n) * b > 1_000_000n)
      throw new PyException('OverflowError', 'int too large to convert to float');
  }
  return pow(a, b);
}

/** The arithmetic of `text`, parsed and computed with Python's operators (nothing is run). */
function compute(text: string): PyValue {
  // Python's builtin strips leading spaces and tabs of a str source before compiling it
  const tokens = tokenize(text);
  if (tokens.length === 1) throw syntaxError('invalid syntax', 0);
  const p = new Parser(tokens);
  const run = p.expr();
  if (p.peek().kind !== 'end') p.fail();
  return run();
}
