/**
 * The tools' documentation read from Python sources as text. The sources here are this
 * project's own stand-ins (test/fixtures/tau2/tool-docs), in the reference's style; the expected
 * splits follow docstring_parser 0.16's rules (parse, style AUTO, as the reference's Tool calls
 * it) and were checked against that package on CPython 3.13.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleandoc, parseDocstring } from '../../../src/envs/tau2/docstring.js';
import { logicalLines, stringLiteralValue } from '../../../src/envs/tau2/py-source.js';
import {
  loadToolDocs,
  NO_TOOL_DOCS,
  TOOL_DOC_SOURCES,
  toolDescription,
} from '../../../src/envs/tau2/tool-docs.js';
import type { ToolDoc } from '../../../src/envs/tau2/types.js';

const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'tau2', 'tool-docs');
const docs = loadToolDocs(FIXTURES);
const plain = (d: ToolDoc | undefined) =>
  d && { short: d.short, long: d.long, params: Object.fromEntries(d.params) };

describe('tool docstrings, split as docstring_parser splits them', () => {
  it('are available when every source file is there', () => {
    expect(docs.available).toBe(true);
  });

  it('short line, Args entries with their continuation lines joined by newlines, Returns and Raises left out', () => {
    expect(plain(docs.tool('RetailTools', 'find_basket'))).toEqual({
      short: 'Look up a basket by its id.',
      long: '',
      params: {
        basket_id: "The basket id, like 'B-17'. It starts with\na capital B and a dash.",
        depth: 'How many levels of\nnested baskets to include.',
      },
    });
  });

  it('the short description is the first line only; the long one keeps inner indentation; typed names and a description on its own line', () => {
    expect(plain(docs.tool('RetailTools', 'fold_towels'))).toEqual({
      short: 'Fold some towels, then',
      long: 'stack them by colour.\n\nFolding is idempotent.\n  An indented remark stays indented.',
      params: { count: 'How many towels.', colours: 'The colours, in stacking order.' },
    });
  });

  it('one line; none; a same-line body', () => {
    expect(plain(docs.tool('RetailTools', 'list_shelves'))).toEqual({
      short: 'List every shelf in the shop.',
      long: '',
      params: {},
    });
    expect(docs.tool('RetailTools', 'no_docstring')).toBeUndefined();
    expect(docs.tool('RetailTools', 'no_such_method')).toBeUndefined();
    expect(docs.tool('NoSuchTools', 'x')).toBeUndefined();
    expect(docs.tool('TelecomUserTools', 'toggle_lamp')?.short).toBe('Toggle the desk lamp.');
  });

  it('an Args entry without a colon makes the Google reading fail: the reST reading wins, sections and all in the long description', () => {
    expect(plain(docs.tool('RetailTools', 'sweep_floor'))).toEqual({
      short: 'Sweep a room.',
      long: 'Args:\n    room the room to sweep, given without a colon',
      params: {},
    });
  });

  it('a reST docstring: more entries in that style, so it wins', () => {
    expect(plain(docs.tool('RetailTools', 'ring_bell'))).toEqual({
      short: 'Ring the bell.',
      long: '',
      params: { times: 'how often to ring' },
    });
  });

  it('a raw string, one space dropped after the colon, a repeated name (the last wins), a line at the margin ending the section', () => {
    expect(plain(docs.tool('RetailTools', 'count_coins'))).toEqual({
      short: 'Count coins in a purse\\n (raw).',
      long: '',
      params: {
        purse: 'The same name, described twice: this one wins.',
        purse_note: '   A note about the purse.',
      },
    });
  });

  it('escapes as Python reads them, a backslash-newline inside the literal, tabs expanded', () => {
    expect(docs.tool('RetailTools', 'tabs_and_escapes')?.short).toBe('Tabs    and "escapes" éAA continued.');
  });

  it('Attributes entries count as parameters; a title with trailing spaces is a title', () => {
    expect(plain(docs.tool('RetailTools', 'keep_gardens'))?.params).toEqual({
      plot: 'The plot, as an argument.',
    });
  });

  it('methods are found through base classes in the other files', () => {
    expect(docs.tool('GenericToolKit', 'describe')?.short).toBe('Describe the toolkit.');
    expect(plain(docs.tool('GenericToolKit', 'think'))).toEqual({
      short: 'Think about something.',
      long: '',
      params: { thought: 'A thought.' },
    });
  });

  it("the tool's description as the reference builds it: short, or short, a blank line and long; the name without a docstring", () => {
    expect(toolDescription(docs.tool('RetailTools', 'fold_towels'), 'fold_towels')).toBe(
      'Fold some towels, then\n\nstack them by colour.\n\nFolding is idempotent.\n  An indented remark stays indented.',
    );
    expect(toolDescription(docs.tool('RetailTools', 'list_shelves'), 'list_shelves')).toBe(
      'List every shelf in the shop.',
    );
    expect(toolDescription(undefined, 'list_shelves')).toBe('list_shelves');
  });
});

describe('pydantic field descriptions and model docstrings', () => {
  it('string literals concatenated across lines, both quote kinds, escapes, parentheses, triple quotes', () => {
    expect(docs.field('Basket', 'basket_id')).toBe('Identifier of the basket');
    expect(docs.field('Basket', 'label')).toBe(
      'A label that is written in two parts, with "quotes" and it\'s fine',
    );
    expect(docs.field('Basket', 'size')).toBe('The size, between one and nine');
    expect(docs.field('Basket', 'triple')).toBe('Spans\ntwo lines');
    expect(docs.field('Kite', 'kite_id')).toBe("A kite's id");
  });

  it('the assigned Field wins over the annotation; Annotated and an Annotated alias give one when it has none', () => {
    expect(docs.field('Basket', 'shade')).toBe('The shade, not the colour');
    expect(docs.field('Basket', 'colour')).toBe('A colour as a word');
    expect(docs.field('Basket', 'owner')).toBe('Who owns it');
    expect(docs.field('Basket', 'tag')).toBe('From the assignment');
    // several Field()s in the annotation and an assigned one without a description: the last that has one
    expect(docs.field('Basket', 'layered')).toBe('Second layer');
  });

  it('no description, an f-string (never evaluated), an unknown field: undefined', () => {
    expect(docs.field('Basket', 'plain')).toBeUndefined();
    expect(docs.field('Basket', 'note')).toBeUndefined();
    expect(docs.field('Basket', 'nothing')).toBeUndefined();
  });

  it('fields are inherited and overridden as in Python', () => {
    expect(docs.field('GiftBasket', 'label')).toBe('The gift tag');
    expect(docs.field('GiftBasket', 'basket_id')).toBe('Identifier of the basket');
  });

  it('a class two domains define is named with its domain; the bare name is refused', () => {
    expect(docs.field('retail.User', 'user_id')).toBe("The shop's user id");
    expect(docs.field('airline.User', 'user_id')).toBe("The airline's user id");
    expect(() => docs.field('User', 'user_id')).toThrow(/User is defined in retail\.User and airline\.User/);
  });

  it("a model's docstring, cleaned", () => {
    expect(docs.model('Basket')).toBe('A basket of goods.\n\nBaskets nest.');
    expect(docs.model('LampSettings')).toBe('Settings of a lamp, as the user sees them.');
    expect(docs.model('Lamp')).toBeUndefined();
  });
});

describe('without the source files', () => {
  it('a missing file makes every lookup undefined', () => {
    const dir = mkdtempSync(join(tmpdir(), 'seal-tool-docs-'));
    cpSync(FIXTURES, dir, { recursive: true });
    rmSync(join(dir, TOOL_DOC_SOURCES.at(-1)!));
    const partial = loadToolDocs(dir);
    expect(partial.available).toBe(false);
    expect(partial.tool('RetailTools', 'find_basket')).toBeUndefined();
    expect(partial.field('Basket', 'label')).toBeUndefined();
    expect(partial.model('Basket')).toBeUndefined();
    expect(loadToolDocs(join(dir, 'nowhere'))).toBe(NO_TOOL_DOCS);
    rmSync(dir, { recursive: true });
  });

  it('a source file that is not Python is refused with its name and the pull that fixes it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'seal-tool-docs-bad-'));
    cpSync(FIXTURES, dir, { recursive: true });
    writeFileSync(join(dir, 'src/tau2/domains/airline/tools.py'), 'class A:\n    """never closed\n');
    expect(() => loadToolDocs(dir)).toThrow(
      /cannot be read \(src\/tau2\/domains\/airline\/tools\.py: line 2: unterminated string literal\); pull them again with `seal data pull tau2`/,
    );
    rmSync(dir, { recursive: true });
  });
});

describe('the rules underneath', () => {
  it('inspect.cleandoc: the first line stripped, the common margin of the rest removed, blank ends dropped', () => {
    expect(cleandoc('  first\n    a\n      b\n    \n')).toBe('first\na\n  b');
    expect(cleandoc('\n\n  x\n\ty')).toBe('x\n      y');
    // a form feed is not indentation in CPython 3.13
    expect(cleandoc('a\n\fb\n  c')).toBe('a\n\fb\n  c');
  });

  it('string literals: prefixes, escapes, bytes and f-strings left undecoded', () => {
    expect(stringLiteralValue(String.raw`'a\'b'`)).toBe("a'b");
    expect(stringLiteralValue(String.raw`"\x41\101\u00e9\U0001F600\q"`)).toBe('AAé😀\\q');
    expect(stringLiteralValue(String.raw`R'\n'`)).toBe('\\n');
    expect(stringLiteralValue(String.raw`u'\n'`)).toBe('\n');
    expect(stringLiteralValue(`b'x'`)).toBeUndefined();
    expect(stringLiteralValue(`f'{x}'`)).toBeUndefined();
    expect(stringLiteralValue(String.raw`'\N{BULLET}'`)).toBeUndefined();
  });

  it('logical lines: brackets and backslashes join physical lines; comments and a # inside a string', () => {
    const lines = logicalLines('x = (1,\n  2)  # c\ny = "a # b" \\\n  + "c"\n\n  \n');
    expect(lines.map((l) => l.tokens.map((t) => t.text).join(' '))).toEqual([
      'x = ( 1 , 2 )',
      'y = "a # b" + "c"',
    ]);
  });

  it('parseDocstring of nothing, and of blanks (cleandoc keeps a last line of spaces)', () => {
    expect(parseDocstring(undefined)).toEqual({ short: '', long: '', params: new Map() });
    expect(parseDocstring('   \n   ')).toEqual({ short: '   ', long: '', params: new Map() });
  });
});
