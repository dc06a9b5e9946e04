/**
 * The template engine's Python side: transformers' `tojson` is `json.dumps(x, ensure_ascii=False)`
 * (the expected strings are what CPython 3 prints), ints and floats stay apart, and a model
 * folder's template is found where transformers finds it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readChatLine } from '../../src/render/chat-line.js';
import { HfRenderer, readTokenizerFiles } from '../../src/render/hf-renderer.js';
import { PyFloat } from '../../src/render/renderer.js';
import { ChatTemplate, strftime, TemplateError } from '../../src/render/template.js';
import { UserError } from '../../src/util/errors.js';
import { QWEN3_DIR, qwen3Renderer } from '../support/render.js';

const render = (source: string, context: Record<string, unknown> = {}) =>
  new ChatTemplate(source).render(context as never);

describe('tojson', () => {
  const value = {
    b: 1,
    // PyFloat: a float whose JavaScript number is integral (a plain 1e16 or -0 is an int)
    a: [
      new PyFloat(1),
      1e-7,
      new PyFloat(1e16),
      2.5,
      'é\n\u0001\u007f',
      true,
      null,
      new PyFloat(-0),
      Number.NaN,
      Number.POSITIVE_INFINITY,
    ],
    é: {},
  };

  it("is Python's json.dumps with ensure_ascii=False", () => {
    // json.dumps({'b': 1, 'a': [1.0, 1e-07, 1e16, 2.5, 'é\n\x01\x7f', True, None, -0.0, nan, inf], 'é': {}}, ensure_ascii=False)
    expect(render('{{ v | tojson }}', { v: value })).toBe(
      '{"b": 1, "a": [1.0, 1e-07, 1e+16, 2.5, "é\\n\\u0001\u007f", true, null, -0.0, NaN, Infinity], "é": {}}',
    );
  });

  it('takes ensure_ascii, indent, separators and sort_keys as transformers does', () => {
    expect(render('{{ v | tojson(ensure_ascii=true) }}', { v: value })).toBe(
      '{"b": 1, "a": [1.0, 1e-07, 1e+16, 2.5, "\\u00e9\\n\\u0001\\u007f", true, null, -0.0, NaN, Infinity], "\\u00e9": {}}',
    );
    expect(render('{{ v | tojson(indent=2, sort_keys=true) }}', { v: { b: [1, 2], a: {}, c: [] } })).toBe(
      '{\n  "a": {},\n  "b": [\n    1,\n    2\n  ],\n  "c": []\n}',
    );
    expect(render("{{ v | tojson(separators=(',', ':')) }}", { v: { b: [1, 2] } })).toBe('{"b":[1,2]}');
  });

  it('keeps the float 30.0 and the int 30 apart, and every digit of an int beyond 2^53, as read from a JSON line', () => {
    const chat = readChatLine(
      '{"messages": [{"role": "user", "content": "x", "n": [30.0, 30, 1.5, 12345678901234567890, -9007199254740993]}]}',
    );
    // Python: json.dumps([30.0, 30, 1.5, 12345678901234567890, -9007199254740993]) and str() of each
    expect(
      render(
        '{{ messages[0].n | tojson }} {{ messages[0].n[0] }} {{ messages[0].n[1] }} {{ messages[0].n[3] }}',
        chat as never,
      ),
    ).toBe('[30.0, 30, 1.5, 12345678901234567890, -9007199254740993] 30.0 30 12345678901234567890');
  });

  it('refuses what json.dumps refuses', () => {
    expect(() => render('{{ missing | tojson }}')).toThrow(TemplateError);
  });
});

describe('the template context', () => {
  it("runs raise_exception as an error naming the template's reason", () => {
    expect(() => render("{{ raise_exception('System role not supported') }}")).toThrow(
      /refused the chat: System role not supported/,
    );
  });

  it('has range, strftime_now and the Python constants', () => {
    expect(render('{% for i in range(3) %}{{ i }}{% endfor %}{{ True }}{{ none is none }}')).toBe(
      '012truetrue',
    );
    expect(strftime('%d %b %Y, %A %H:%M', new Date(2026, 6, 4, 9, 5))).toBe('04 Jul 2026, Saturday 09:05');
    expect(new ChatTemplate("{{ strftime_now('%Y-%m-%d') }}").render({}, () => new Date(2025, 0, 31))).toBe(
      '2025-01-31',
    );
  });

  it('strips blocks as transformers does (trim_blocks, lstrip_blocks)', () => {
    expect(render('a\n  {% if true %}\nb\n  {% endif %}\nc')).toBe('a\nb\nc');
  });

  it('does not parse a broken template, and says so', () => {
    expect(() => new ChatTemplate('{% if %}')).toThrow(/does not parse/);
  });
});

describe('a model folder', () => {
  const copy = (extra: Record<string, string>, config?: Record<string, unknown>) => {
    const dir = mkdtempSync(join(tmpdir(), 'seal-render-'));
    const files = readTokenizerFiles(QWEN3_DIR);
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(files.tokenizer));
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(config ?? files.config));
    for (const [name, text] of Object.entries(extra)) writeFileSync(join(dir, name), text);
    return dir;
  };
  const chat = { messages: [{ role: 'user', content: 'hi' }], addGenerationPrompt: true };

  it('prefers chat_template.jinja to the config, and adds generation_config.json stop tokens', () => {
    const dir = copy({
      'chat_template.jinja':
        '{% for m in messages %}[{{ m.role }}] {{ m.content }}{% endfor %}{{ eos_token }}',
      'generation_config.json': JSON.stringify({ eos_token_id: [151645, 151643] }),
    });
    const r = HfRenderer.load(dir);
    expect(r.render(chat).text).toBe('[user] hi<|im_end|>');
    expect(r.stopTokens).toEqual([151645, 151643]);
  });

  it('chooses the tool_use template of named templates when there are tools', () => {
    const { chat_template: _, ...config } = qwen3Renderer().files.config;
    const dir = copy(
      {},
      {
        ...config,
        chat_template: [
          { name: 'default', template: 'plain' },
          { name: 'tool_use', template: 'tools: {{ tools | length }}' },
        ],
      },
    );
    const r = HfRenderer.load(dir);
    expect(r.render(chat).text).toBe('plain');
    expect(r.render({ ...chat, tools: [{ type: 'function', function: { name: 'f' } }] }).text).toBe(
      'tools: 1',
    );
  });

  it('says what is missing', () => {
    const { chat_template: _, ...config } = qwen3Renderer().files.config;
    expect(() => HfRenderer.load(copy({}, config)).render(chat)).toThrow(/no chat template/);
    expect(() => readTokenizerFiles(join(tmpdir(), 'seal-no-such-folder'))).toThrow(UserError);
    expect(() => readTokenizerFiles(mkdtempSync(join(tmpdir(), 'seal-render-')))).toThrow(
      /has no tokenizer.json/,
    );
  });
});
