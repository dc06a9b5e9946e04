/**
 * Python source read as text, never run: tokens, string literals decoded as Python reads them,
 * and an outline of a module's classes (their bases, docstrings, methods with their docstrings,
 * and the annotated fields of their bodies). Enough of Python's lexical rules for the reference's
 * tool and data-model modules; what it cannot decode as a constant (f-strings, bytes, `\N{...}`)
 * comes back as undefined, never guessed.
 */
import { decodeEscapes, NamedEscapeError, PySyntaxError } from '../py/parse.js';

/** A token of a logical line. `value` is a string literal's decoded text (undefined when not a constant str). */
export interface PyToken {
  readonly kind: 'name' | 'string' | 'number' | 'op';
  readonly text: string;
  readonly value?: string | undefined;
}

/** A logical line: its indentation (tabs to multiples of 8, as Python counts them) and tokens. */
export interface LogicalLine {
  readonly indent: number;
  readonly tokens: readonly PyToken[];
  /** 1-based line of its first token, for messages */
  readonly line: number;
}

export class PySourceError extends Error {}

const NAME_START = /[\p{L}\p{Nl}_]/u;
const NAME_CHAR = /[\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}_]/u;
const OPS3 = ['**=', '//=', '>>=', '<<=', '...'];
const OPS2 = [
  '**',
  '//',
  '>>',
  '<<',
  '<=',
  '>=',
  '==',
  '!=',
  '->',
  ':=',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '&=',
  '|=',
  '^=',
  '@=',
];
const STRING_PREFIX = /^(?:[rR][bBfF]?|[bBfF][rR]?|[uU])?(?='|")/;

/** Python's escape sequences in a non-raw str literal; undefined for `\N{...}`, which needs the Unicode name table. */
function decodeStrEscapes(body: string): string | undefined {
  try {
    return decodeEscapes(body, 1);
  } catch (e) {
    if (e instanceof NamedEscapeError) return undefined;
    if (e instanceof PySyntaxError) throw new PySourceError(e.msg);
    throw e;
  }
}

/** The decoded value of one string literal token's text (prefix and quotes included). */
export function stringLiteralValue(text: string): string | undefined {
  const prefix = STRING_PREFIX.exec(text)?.[0] ?? '';
  const p = prefix.toLowerCase();
  if (p.includes('b') || p.includes('f')) return undefined;
  const rest = text.slice(prefix.length);
  const q = rest.startsWith('"""') || rest.startsWith("'''") ? 3 : 1;
  const body = rest.slice(q, rest.length - q);
  return p.includes('r') ? body : decodeStrEscapes(body);
}

/** Source text as Python reads it (universal newlines), split into logical lines of tokens. */
export function logicalLines(source: string): LogicalLine[] {
  const src = source.replace(/\r\n?/g, '\n').replace(/^\uFEFF/, '');
  const lines: LogicalLine[] = [];
  let tokens: PyToken[] = [];
  let depth = 0;
  let indent = 0;
  let atLineStart = true;
  let lineNo = 1;
  let firstLine = 1;
  let i = 0;
  const endLine = () => {
    if (tokens.length > 0) lines.push({ indent, tokens, line: firstLine });
    tokens = [];
    atLineStart = true;
  };
  while (i < src.length) {
    const ch = src[i]!;
    if (atLineStart) {
      // measure the indentation of a physical line that starts a logical one
      let col = 0;
      while (src[i] === ' ' || src[i] === '\t' || src[i] === '\f') {
        col = src[i] === '\t' ? (Math.floor(col / 8) + 1) * 8 : src[i] === '\f' ? 0 : col + 1;
        i++;
      }
      indent = col;
      atLineStart = false;
      firstLine = lineNo;
      continue;
    }
    if (ch === '\n') {
      lineNo++;
      i++;
      if (depth === 0) endLine();
      continue;
    }
    if (ch === ' ' || ch === '\t' || ch === '\f') {
      i++;
      continue;
    }
    if (ch === '#') {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    if (ch === '\\' && src[i + 1] === '\n') {
      i += 2;
      lineNo++;
      continue;
    }
    const prefix = STRING_PREFIX.exec(src.slice(i, i + 3))?.[0];
    if (prefix !== undefined) {
      const start = i;
      const startLine = lineNo;
      i += prefix.length;
      const quote = src[i]!;
      const triple = src.startsWith(quote.repeat(3), i);
      const close = triple ? quote.repeat(3) : quote;
      i += close.length;
      for (;;) {
        if (i >= src.length) throw new PySourceError(`line ${startLine}: unterminated string literal`);
        if (src[i] === '\\') {
          if (src[i + 1] === '\n') lineNo++;
          i += 2;
          continue;
        }
        if (src.startsWith(close, i)) break;
        if (src[i] === '\n') {
          if (!triple) throw new PySourceError(`line ${startLine}: unterminated string literal`);
          lineNo++;
        }
        i++;
      }
      i += close.length;
      const text = src.slice(start, i);
      tokens.push({ kind: 'string', text, value: stringLiteralValue(text) });
      continue;
    }
    if (NAME_START.test(ch)) {
      const start = i;
      while (i < src.length && NAME_CHAR.test(src[i]!)) i++;
      tokens.push({ kind: 'name', text: src.slice(start, i) });
      continue;
    }
    if (/[0-9]/.test(ch) || (ch === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      const m = /^(?:0[xXoObB][0-9a-fA-F_]+|(?:[0-9][0-9_]*)?\.?[0-9_]*(?:[eE][+-]?[0-9_]+)?[jJ]?)/.exec(
        src.slice(i),
      );
      const len = Math.max(1, m?.[0].length ?? 1);
      tokens.push({ kind: 'number', text: src.slice(i, i + len) });
      i += len;
      continue;
    }
    const op = OPS3.find((o) => src.startsWith(o, i)) ?? OPS2.find((o) => src.startsWith(o, i)) ?? ch;
    if ('([{'.includes(op)) depth++;
    else if (')]}'.includes(op)) depth = Math.max(0, depth - 1);
    tokens.push({ kind: 'op', text: op });
    i += op.length;
  }
  endLine();
  return lines;
}

/** The text of adjacent string tokens as Python concatenates them; undefined unless every token is a str constant. */
export function concatenated(tokens: readonly PyToken[]): string | undefined {
  let ts = tokens;
  while (ts.length >= 2 && ts[0]!.text === '(' && ts[ts.length - 1]!.text === ')') ts = ts.slice(1, -1);
  if (ts.length === 0 || ts.some((t) => t.kind !== 'string' || t.value === undefined)) return undefined;
  return ts.map((t) => t.value).join('');
}

/** The index just past the bracket that closes the one at `open`. */
function closing(tokens: readonly PyToken[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const t = tokens[i]!.text;
    if (tokens[i]!.kind !== 'op') continue;
    if (t === '(' || t === '[' || t === '{') depth++;
    else if (t === ')' || t === ']' || t === '}') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return tokens.length;
}

/** A keyword argument's value tokens in the call whose `(` is at `open`. */
function keywordArgument(tokens: readonly PyToken[], open: number, keyword: string): PyToken[] | undefined {
  const end = closing(tokens, open) - 1;
  let depth = 0;
  for (let i = open + 1; i < end; i++) {
    const t = tokens[i]!;
    if (t.kind === 'op' && '([{'.includes(t.text)) depth++;
    else if (t.kind === 'op' && ')]}'.includes(t.text)) depth--;
    else if (depth === 0 && t.kind === 'name' && t.text === keyword && tokens[i + 1]?.text === '=') {
      let j = i + 2;
      let d = 0;
      while (j < end) {
        const u = tokens[j]!;
        if (u.kind === 'op' && '([{'.includes(u.text)) d++;
        else if (u.kind === 'op' && ')]}'.includes(u.text)) d--;
        else if (d === 0 && u.text === ',') break;
        j++;
      }
      return tokens.slice(i + 2, j);
    }
  }
  return undefined;
}

/** Whether a `Field(` call starts at `i` (also `pydantic.Field(`, as the name ends). */
const isFieldCall = (tokens: readonly PyToken[], i: number) =>
  tokens[i]?.kind === 'name' && tokens[i]!.text === 'Field' && tokens[i + 1]?.text === '(';

/**
 * `description=` of the `Field(...)` calls in `tokens`: the last call that has one wins, as
 * pydantic merges several FieldInfos. `null` when a call has a description that is not a
 * string constant; undefined when none has one.
 */
export function fieldDescription(tokens: readonly PyToken[], onlyAtStart = false): string | null | undefined {
  let found: string | null | undefined;
  for (let i = 0; i < tokens.length; i++) {
    if (onlyAtStart) {
      // pydantic.Field(...) or Field(...) as the whole value
      const at = tokens[0]?.text === 'pydantic' && tokens[1]?.text === '.' ? 2 : 0;
      if (i !== at) continue;
    }
    if (!isFieldCall(tokens, i)) continue;
    const arg = keywordArgument(tokens, i + 1, 'description');
    if (arg !== undefined) found = concatenated(arg) ?? null;
    if (onlyAtStart) break;
  }
  return found;
}

export interface PyFunctionOutline {
  readonly name: string;
  /** the raw docstring (escapes decoded, indentation as written), or undefined */
  readonly docstring: string | undefined;
}

export interface PyFieldOutline {
  readonly name: string;
  /** the annotation's tokens */
  readonly annotation: readonly PyToken[];
  /** the assigned value's tokens (empty when there is none) */
  readonly value: readonly PyToken[];
}

export interface PyClassOutline {
  readonly name: string;
  /** the base classes as written (dotted names), keywords such as `metaclass=` left out */
  readonly bases: readonly string[];
  readonly docstring: string | undefined;
  readonly methods: ReadonlyMap<string, PyFunctionOutline>;
  readonly fields: ReadonlyMap<string, PyFieldOutline>;
}

export interface PyModuleOutline {
  /** top-level classes in source order */
  readonly classes: readonly PyClassOutline[];
  /** top-level `NAME = <expression>` assignments, by name (the last one wins) */
  readonly assignments: ReadonlyMap<string, readonly PyToken[]>;
}

/** The index of the `:` that ends a compound statement's header (the first one outside brackets). */
function headerColon(tokens: readonly PyToken[]): number {
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind !== 'op') continue;
    if ('([{'.includes(t.text)) depth++;
    else if (')]}'.includes(t.text)) depth--;
    else if (depth === 0 && t.text === ':') return i;
  }
  return -1;
}

/** A statement that is a string expression (and so a docstring when it comes first in a body). */
function docstringOf(tokens: readonly PyToken[]): string | undefined {
  const semi = tokens.findIndex((t) => t.kind === 'op' && t.text === ';');
  const first = semi < 0 ? tokens : tokens.slice(0, semi);
  if (first.length === 0 || first.some((t) => t.kind !== 'string')) return undefined;
  return concatenated(first);
}

/** The body of the compound statement at `lines[at]`: the same-line body, or the more-indented lines after it. */
function body(lines: readonly LogicalLine[], at: number): { sameLine: PyToken[]; end: number } {
  const header = lines[at]!;
  const colon = headerColon(header.tokens);
  const sameLine = colon >= 0 ? header.tokens.slice(colon + 1) : [];
  let end = at + 1;
  if (sameLine.length === 0) while (end < lines.length && lines[end]!.indent > header.indent) end++;
  return { sameLine, end };
}

function firstDocstring(lines: readonly LogicalLine[], at: number): string | undefined {
  const { sameLine, end } = body(lines, at);
  if (sameLine.length > 0) return docstringOf(sameLine);
  return end > at + 1 ? docstringOf(lines[at + 1]!.tokens) : undefined;
}

function basesOf(tokens: readonly PyToken[]): string[] {
  // class NAME ( base, pkg.Base, metaclass=M ) :
  if (tokens[2]?.text !== '(') return [];
  const end = closing(tokens, 2) - 1;
  const bases: string[] = [];
  let current = '';
  let depth = 0;
  let keyword = false;
  for (let i = 3; i < end; i++) {
    const t = tokens[i]!;
    if (t.kind === 'op' && '([{'.includes(t.text)) depth++;
    else if (t.kind === 'op' && ')]}'.includes(t.text)) depth--;
    if (depth === 0 && t.text === ',') {
      if (current && !keyword) bases.push(current);
      current = '';
      keyword = false;
    } else if (depth === 0 && t.text === '=') keyword = true;
    else if (depth === 0 && (t.kind === 'name' || t.text === '.')) current += t.text;
  }
  if (current && !keyword) bases.push(current);
  return bases;
}

/** The classes and top-level assignments of a module's source. */
export function outlineModule(source: string, name = 'the module'): PyModuleOutline {
  let lines: LogicalLine[];
  try {
    lines = logicalLines(source);
  } catch (e) {
    if (e instanceof PySourceError) throw new PySourceError(`${name}: ${e.message}`);
    throw e;
  }
  const classes: PyClassOutline[] = [];
  const assignments = new Map<string, readonly PyToken[]>();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.indent !== 0) continue;
    const t = line.tokens;
    if (t[0]?.text === 'class' && t[1]?.kind === 'name') {
      classes.push(outlineClass(lines, i));
    } else if (t[0]?.kind === 'name' && t[1]?.text === '=') {
      assignments.set(t[0].text, t.slice(2));
    }
  }
  return { classes, assignments };
}

function outlineClass(lines: readonly LogicalLine[], at: number): PyClassOutline {
  const header = lines[at]!;
  const methods = new Map<string, PyFunctionOutline>();
  const fields = new Map<string, PyFieldOutline>();
  const { end } = body(lines, at);
  const bodyIndent = lines[at + 1]?.indent;
  for (let i = at + 1; i < end; i++) {
    const line = lines[i]!;
    if (line.indent !== bodyIndent) continue;
    const t = line.tokens;
    const def = t[0]?.text === 'async' ? 1 : 0;
    if (t[def]?.text === 'def' && t[def + 1]?.kind === 'name') {
      const name = t[def + 1]!.text;
      methods.set(name, { name, docstring: firstDocstring(lines, i) });
    } else if (t[0]?.kind === 'name' && t[1]?.text === ':') {
      const eq = t.findIndex((x, k) => k > 1 && x.kind === 'op' && x.text === '=' && depthAt(t, k) === 0);
      fields.set(t[0].text, {
        name: t[0].text,
        annotation: t.slice(2, eq < 0 ? t.length : eq),
        value: eq < 0 ? [] : t.slice(eq + 1),
      });
    }
  }
  return {
    name: header.tokens[1]!.text,
    bases: basesOf(header.tokens),
    docstring: firstDocstring(lines, at),
    methods,
    fields,
  };
}

/** The bracket depth just before token `k`. */
function depthAt(tokens: readonly PyToken[], k: number): number {
  let depth = 0;
  for (let i = 0; i < k; i++) {
    const t = tokens[i]!;
    if (t.kind !== 'op') continue;
    if ('([{'.includes(t.text)) depth++;
    else if (')]}'.includes(t.text)) depth--;
  }
  return depth;
}
