/**
 * Web page text for the web search tool's `truncate` and `markdown` modes. `truncate` follows
 * BeautifulSoup's `get_text(separator="\n", strip=True)` after removing `<script>` and `<style>`:
 * every text node stripped, empty ones dropped, joined by newlines; comments and doctypes are not
 * text. `markdown` is a plain conversion (headings, paragraphs, links, list items, emphasis), not
 * html2text's output character for character. Entities: the common named ones and numeric ones.
 */

const NAMED: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  copy: '©',
  reg: '®',
  mdash: '—',
  ndash: '–',
  hellip: '…',
  laquo: '«',
  raquo: '»',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  middot: '·',
  eacute: 'é',
  uuml: 'ü',
  ouml: 'ö',
  auml: 'ä',
};

export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z][a-z0-9]*);?/gi, (m, name: string) => {
    if (name[0] === '#') {
      const cp =
        name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : '\ufffd';
    }
    return NAMED[name] ?? NAMED[name.toLowerCase()] ?? m;
  });
}

/** Python's `str.strip()` whitespace. */
const PY_SPACE =
  '[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const STRIP = new RegExp(`^${PY_SPACE}+|${PY_SPACE}+$`, 'g');

/** The markup without comments, doctypes, scripts and styles. */
function clean(html: string): string {
  return html
    .replace(/<!--[\s\S]*?(?:-->|$)/g, '')
    .replace(/<!doctype[^>]*>/gi, '')
    .replace(/<(script|style)\b[^>]*>[\s\S]*?(?:<\/\1\s*>|$)/gi, '');
}

export function htmlToText(html: string): string {
  return clean(html)
    .split(/<[^>]*>/)
    .map((t) => decodeEntities(t).replace(STRIP, ''))
    .filter((t) => t !== '')
    .join('\n');
}

export function htmlToMarkdown(html: string): string {
  const s = clean(html)
    .replace(/<h([1-6])\b[^>]*>/gi, (_m, n: string) => `\n\n${'#'.repeat(Number(n))} `)
    .replace(/<\/h[1-6]\s*>/gi, '\n\n')
    .replace(/<(p|div|section|article|table|tr)\b[^>]*>/gi, '\n\n')
    .replace(/<br\s*\/?>/gi, '  \n')
    .replace(/<li\b[^>]*>/gi, '\n  * ')
    .replace(/<(strong|b)\b[^>]*>|<\/(strong|b)\s*>/gi, '**')
    .replace(/<(em|i)\b[^>]*>|<\/(em|i)\s*>/gi, '_')
    .replace(
      /<a\b[^>]*href\s*=\s*["']([^"']*)["'][^>]*>([\s\S]*?)<\/a\s*>/gi,
      (_m, href: string, text: string) => `[${text.replace(/<[^>]*>/g, '').trim()}](${href})`,
    )
    .replace(/<[^>]*>/g, '');
  return `${decodeEntities(s)
    .split('\n')
    .map((l) => l.replace(/[ \t]+/g, ' ').replace(/^ (?!\*)/, ''))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n\n`;
}
