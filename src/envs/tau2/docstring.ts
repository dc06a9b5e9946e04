/**
 * A docstring split the way the reference splits it: its `Tool` calls `docstring_parser.parse`
 * (version 0.16, style AUTO) on the function's `__doc__`. AUTO parses with every style and keeps
 * the result with the most entries (ties to the first in the order reST, Google, numpydoc,
 * epydoc; a style that raises ParseError drops out). The reference's docstrings are Google style,
 * so the Google rules decide; reST's are here because they win where Google finds no section (a
 * docstring without one, or one Google refuses). Numpydoc's underlined sections and epydoc's
 * `@param` lines are not recognised: the pinned sources have none.
 *
 * Python's own text rules are kept where JavaScript's differ: `inspect.cleandoc` (CPython 3.13,
 * the reference's version: only spaces count as indentation), `str.strip()`'s whitespace, and
 * `re`'s `\s`, `.` and multiline anchors (only `\n` ends a line).
 */

export interface ParsedDocstring {
  /** `short_description`: the first line of the cleaned text ('' for none) */
  readonly short: string;
  /** `long_description`: the rest before the first section, stripped ('' for none) */
  readonly long: string;
  /** each parameter's description (Args and Attributes entries), later entries overriding earlier ones */
  readonly params: ReadonlyMap<string, string>;
}

/** Python's `str.isspace()` characters, for `\s`, `str.split()` and `str.strip()`. */
const WS =
  '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const IS_WS = new RegExp(`^[${WS}]$`);
const isWs = (ch: string) => IS_WS.test(ch);

/** `s.strip()` */
export function pyStrip(s: string): string {
  return s.replace(new RegExp(`^[${WS}]+|[${WS}]+$`, 'g'), '');
}

/** `s.strip(chars)` for a set of plain characters */
const stripChars = (s: string, chars: string) => {
  let a = 0;
  let b = s.length;
  while (a < b && chars.includes(s[a]!)) a++;
  while (b > a && chars.includes(s[b - 1]!)) b--;
  return s.slice(a, b);
};

/** `str.expandtabs()`: tab stops every 8 columns, counted from each `\n` or `\r`. */
function expandTabs(s: string): string {
  let out = '';
  let col = 0;
  for (const ch of s) {
    if (ch === '\t') {
      const n = 8 - (col % 8);
      out += ' '.repeat(n);
      col += n;
    } else {
      out += ch;
      col = ch === '\n' || ch === '\r' ? 0 : col + 1;
    }
  }
  return out;
}

const lstripSpaces = (s: string) => s.replace(/^ +/, '');

/** `inspect.cleandoc` (CPython 3.13). */
export function cleandoc(doc: string): string {
  const lines = expandTabs(doc).split('\n');
  let margin = Number.POSITIVE_INFINITY;
  for (const line of lines.slice(1)) {
    const content = lstripSpaces(line).length;
    if (content) margin = Math.min(margin, line.length - content);
  }
  lines[0] = lstripSpaces(lines[0]!);
  if (margin < Number.POSITIVE_INFINITY)
    for (let i = 1; i < lines.length; i++) lines[i] = lines[i]!.slice(margin);
  while (lines.length > 0 && !lines[lines.length - 1]) lines.pop();
  while (lines.length > 0 && !lines[0]) lines.shift();
  return lines.join('\n');
}

/** A style refuses the text (docstring_parser's ParseError). */
class ParseError extends Error {}

interface StyleResult {
  readonly short: string;
  readonly long: string;
  readonly params: [string, string][];
  /** how many entries (docstring_parser's `meta`), which decides between the styles */
  readonly entries: number;
}

/** The start offsets of the lines of `s` (Python's `^` under re.M: the start and after each `\n`). */
function lineStarts(s: string): number[] {
  const starts = [0];
  for (let i = 0; i < s.length; i++) if (s[i] === '\n') starts.push(i + 1);
  return starts;
}

/** short and long descriptions from the text before the first section */
function descriptions(descChunk: string): { short: string; long: string } {
  const nl = descChunk.indexOf('\n');
  if (nl < 0) return { short: descChunk, long: '' };
  return { short: descChunk.slice(0, nl), long: pyStrip(descChunk.slice(nl + 1)) };
}

type SectionType = 'single' | 'multiple' | 'single-or-multiple';
const GOOGLE_SECTIONS: Record<string, { key: string; type: SectionType }> = {
  Arguments: { key: 'param', type: 'multiple' },
  Args: { key: 'param', type: 'multiple' },
  Parameters: { key: 'param', type: 'multiple' },
  Params: { key: 'param', type: 'multiple' },
  Raises: { key: 'raises', type: 'multiple' },
  Exceptions: { key: 'raises', type: 'multiple' },
  Except: { key: 'raises', type: 'multiple' },
  Attributes: { key: 'attribute', type: 'multiple' },
  Example: { key: 'examples', type: 'single' },
  Examples: { key: 'examples', type: 'single' },
  Returns: { key: 'returns', type: 'single-or-multiple' },
  Yields: { key: 'yields', type: 'single-or-multiple' },
};
/** a section title line: `Title:` and nothing after it but ` \t\r\f\v` */
const TITLE_LINE = new RegExp(`^(${Object.keys(GOOGLE_SECTIONS).join('|')}):[ \\t\\r\\f\\v]*$`);
const PARAM_KEYS = new Set(['param', 'parameter', 'arg', 'argument', 'attribute', 'key', 'keyword']);
/** `\s*(.+?)\s*\(\s*(.*[^\s]+)\s*\)` matched at the start (Python's `.` stops only at `\n`) */
const GOOGLE_TYPED_ARG = new RegExp(`^[${WS}]*([^\\n]+?)[${WS}]*\\([${WS}]*([^\\n]*[^${WS}]+)[${WS}]*\\)`);
/** `(\s*[^:\s]+:)|([^:]*\]:.*)` matched at the start */
const MULTIPLE_PATTERN = new RegExp(`^(?:[${WS}]*[^:${WS}]+:|[^:]*\\]:)`);

/** The title lines of `s`: where each starts and ends, and its title. */
function titleLines(s: string): { start: number; end: number; title: string }[] {
  const out: { start: number; end: number; title: string }[] = [];
  for (const start of lineStarts(s)) {
    const nl = s.indexOf('\n', start);
    const end = nl < 0 ? s.length : nl;
    const m = TITLE_LINE.exec(s.slice(start, end));
    if (m) out.push({ start, end, title: m[1]! });
  }
  return out;
}

/** One entry of a Google section: its name (for parameters) and description, or ParseError. */
function googleEntry(text: string, title: string): { param?: [string, string] } {
  const section = GOOGLE_SECTIONS[title]!;
  if (section.type === 'single' || (section.type === 'single-or-multiple' && !MULTIPLE_PATTERN.test(text))) {
    if (PARAM_KEYS.has(section.key)) throw new ParseError('Expected paramenter name.');
    return {};
  }
  const colon = text.indexOf(':');
  if (colon < 0) throw new ParseError(`Expected a colon in ${text}.`);
  const before = text.slice(0, colon);
  let desc = text.slice(colon + 1);
  if (desc) {
    if (desc[0] === ' ') desc = desc.slice(1);
    const nl = desc.indexOf('\n');
    if (nl >= 0) desc = `${desc.slice(0, nl)}\n${cleandoc(desc.slice(nl + 1))}`;
    desc = stripChars(desc, '\n');
  }
  if (!PARAM_KEYS.has(section.key)) return {};
  const typed = GOOGLE_TYPED_ARG.exec(before);
  return { param: [typed ? typed[1]! : before, desc] };
}

/** docstring_parser's google.parse on cleaned text. */
function parseGoogle(text: string): StyleResult {
  const firstTitle = titleLines(text)[0];
  const descChunk = firstTitle ? text.slice(0, firstTitle.start) : text;
  const meta = firstTitle ? text.slice(firstTitle.start) : '';
  const { short, long } = descriptions(descChunk);
  const params: [string, string][] = [];
  let entries = 0;
  const titles = titleLines(meta);
  // a title seen twice keeps its first place and its last text, as the OrderedDict does
  const chunks = new Map<string, string>();
  titles.forEach((m, j) => {
    let details = meta.slice(m.end, j + 1 < titles.length ? titles[j + 1]!.start : meta.length);
    // a line that starts without indentation ends the section
    const unknown = new RegExp(`\\n[^${WS}]`).exec(details);
    if (unknown) details = details.slice(0, unknown.index);
    chunks.set(m.title, stripChars(details, '\n'));
  });
  for (const [title, chunk] of chunks) {
    let n = 0;
    while (n < chunk.length && isWs(chunk[n]!)) n++;
    const indent = chunk.slice(0, n);
    if (GOOGLE_SECTIONS[title]!.type !== 'multiple') {
      googleEntry(cleandoc(chunk), title);
      entries++;
      continue;
    }
    // entries start at lines with exactly that indentation followed by a non-space
    const starts = lineStarts(chunk).filter(
      (p) =>
        chunk.startsWith(indent, p) && p + indent.length < chunk.length && !isWs(chunk[p + indent.length]!),
    );
    if (starts.length === 0) throw new ParseError(`No specification for "${title}": "${chunk}"`);
    starts.forEach((p, j) => {
      const part = stripChars(
        chunk.slice(p + indent.length, j + 1 < starts.length ? starts[j + 1] : chunk.length),
        '\n',
      );
      const entry = googleEntry(part, title);
      if (entry.param) params.push(entry.param);
      entries++;
    });
  }
  return { short, long, params, entries };
}

/** docstring_parser's rest.parse on cleaned text. */
function parseRest(text: string): StyleResult {
  const colonLine = lineStarts(text).find((p) => text[p] === ':');
  const descChunk = colonLine === undefined ? text : text.slice(0, colonLine);
  const meta = colonLine === undefined ? '' : text.slice(colonLine);
  const { short, long } = descriptions(descChunk);
  const params: [string, string][] = [];
  let entries = 0;
  const starts = lineStarts(meta).filter((p) => meta[p] === ':');
  const rtypes = new Set<string>();
  let returns = false;
  starts.forEach((p, j) => {
    const chunk = meta.slice(p, j + 1 < starts.length ? starts[j + 1] : meta.length);
    const stripped = chunk.replace(/^:+/, '');
    const colon = stripped.indexOf(':');
    if (colon < 0) throw new ParseError(`Error parsing meta information near "${chunk}".`);
    const args = stripped
      .slice(0, colon)
      .split(new RegExp(`[${WS}]+`))
      .filter((a) => a !== '');
    let desc = pyStrip(stripped.slice(colon + 1));
    const nl = desc.indexOf('\n');
    if (nl >= 0) desc = `${desc.slice(0, nl)}\n${cleandoc(desc.slice(nl + 1))}`;
    const key = args[0];
    if (key === undefined) throw new ParseError('a meta line without a keyword'); // an IndexError in the reference
    if (args.length === 2 && key === 'type') return;
    if ((args.length === 1 || args.length === 2) && key === 'rtype') {
      rtypes.add(args.length === 1 ? '' : args[1]!);
      return;
    }
    if (PARAM_KEYS.has(key)) {
      if (args.length !== 2 && args.length !== 3)
        throw new ParseError(`Expected one or two arguments for a ${key} keyword.`);
      params.push([args[args.length - 1]!, desc]);
    } else if (
      ['return', 'returns', 'yield', 'yields', 'raises', 'raise', 'except', 'exception'].includes(key)
    ) {
      if (args.length > 2) throw new ParseError(`Expected one or no arguments for a ${key} keyword.`);
      if (['return', 'returns', 'yield', 'yields'].includes(key)) returns = true;
    }
    entries++;
  });
  if (!returns) entries += rtypes.size;
  return { short, long, params, entries };
}

/** `docstring_parser.parse(doc)` as the reference's Tool reads it. */
export function parseDocstring(doc: string | undefined): ParsedDocstring {
  if (!doc) return { short: '', long: '', params: new Map() };
  const text = cleandoc(doc);
  let best: StyleResult | undefined;
  let lastError: Error | undefined;
  for (const style of [parseRest, parseGoogle]) {
    try {
      const r = style(text);
      if (!best || r.entries > best.entries) best = r;
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      lastError = e;
    }
  }
  if (!best) throw lastError!;
  return { short: best.short, long: best.long, params: new Map(best.params) };
}
