/**
 * `seal render` in a real process: the golden chats in, exactly the golden texts out, with token
 * ids that decode to them; bad input exits 2 with a message naming what to fix, and writes nothing.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDist, seal } from '../support/cli.js';
import { CHAT_GOLDEN, chatGoldenLines, QWEN3_DIR, qwen3Renderer } from '../support/render.js';

describe('seal render', () => {
  const dir = mkdtempSync(join(tmpdir(), 'seal-render-cli-'));
  beforeAll(async () => {
    await buildDist();
  }, 120_000);

  it('renders every golden chat to its exact text and tokens', async () => {
    const out = join(dir, 'rendered.jsonl');
    const r = await seal(['render', '--tokenizer', QWEN3_DIR, '--input', CHAT_GOLDEN, '--out', out]);
    expect(r.stderr).toContain('chats');
    expect(r.code).toBe(0);
    const cases = chatGoldenLines();
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    expect(lines.length).toBe(cases.length);
    const renderer = qwen3Renderer();
    for (const [i, line] of lines.entries()) {
      const got = JSON.parse(line) as { text: string; tokens: number[] };
      expect(Object.keys(got)).toEqual(['text', 'tokens']);
      expect(got.text).toBe(cases[i]!.golden.text);
      expect(renderer.decode(got.tokens)).toBe(got.text);
    }
  }, 120_000);

  it('exits 2 on a bad line, naming it, and writes nothing', async () => {
    const input = join(dir, 'bad.jsonl');
    writeFileSync(
      input,
      `${JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], tools: null, add_generation_prompt: true })}\n{"messages": [\n`,
    );
    const out = join(dir, 'bad-out.jsonl');
    const r = await seal(['render', '--tokenizer', QWEN3_DIR, '--input', input, '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/bad\.jsonl line 2: not valid JSON/);
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace
    expect(existsSync(out)).toBe(false);

    writeFileSync(input, `${JSON.stringify({ messages: 'hi' })}\n`);
    const shape = await seal(['render', '--tokenizer', QWEN3_DIR, '--input', input, '--out', out]);
    expect(shape.code).toBe(2);
    expect(shape.stderr).toMatch(/line 1: "messages" must be a list/);
  }, 60_000);

  it('exits 2 when the tokenizer folder is missing, and says what to give', async () => {
    const missing = join(dir, 'no-such-model');
    const r = await seal([
      'render',
      '--tokenizer',
      missing,
      '--input',
      CHAT_GOLDEN,
      '--out',
      join(dir, 'x.jsonl'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`tokenizer folder ${missing} does not exist`);

    const cache = await seal(
      [
        'render',
        '--renderer',
        'hf_template',
        '--base-model',
        'Qwen/Qwen3-8B',
        '--input',
        CHAT_GOLDEN,
        '--out',
        join(dir, 'x.jsonl'),
      ],
      {
        HF_HOME: join(dir, 'empty-hf-home'),
      },
    );
    expect(cache.code).toBe(2);
    expect(cache.stderr).toMatch(/no tokenizer files for Qwen\/Qwen3-8B .*--tokenizer DIR/);
    expect(existsSync(join(dir, 'x.jsonl'))).toBe(false);
  }, 60_000);

  const chat = {
    messages: [
      { role: 'system', content: 'You move things.' },
      { role: 'user', content: 'Move it 30.0 m, to Zoë' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          {
            id: 'call_0',
            type: 'function',
            function: { name: 'move', arguments: '{"x": 30.0, "to": "Zoë"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_0', content: '{"moved": true}' },
    ],
    tools: [
      {
        type: 'function',
        function: {
          name: 'move',
          description: 'Move a thing',
          parameters: {
            type: 'object',
            properties: { x: { type: 'number' }, to: { type: 'string' } },
            required: ['x'],
          },
        },
      },
    ],
    add_generation_prompt: true,
  };

  it('renders in a family format with --renderer, and writes the text alone when no tokenizer is found', async () => {
    const input = join(dir, 'family.jsonl');
    writeFileSync(input, `${JSON.stringify(chat)}\n`);
    const out = join(dir, 'family-out.jsonl');
    const r = await seal([
      'render',
      '--renderer',
      'qwen3',
      '--tokenizer',
      QWEN3_DIR,
      '--input',
      input,
      '--out',
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('(qwen3, tokenizer');
    const got = JSON.parse(readFileSync(out, 'utf8')) as { text: string; tokens: number[] };
    expect(got.text).toContain('<tools>\n{"type": "function"');
    // the call as the model wrote it, and the generation prompt
    expect(got.text).toContain(
      '<tool_call>\n{"name": "move", "arguments": {"x": 30.0, "to": "Zo\\u00eb"}}\n</tool_call>',
    );
    expect(got.text.endsWith('<|im_start|>assistant\n')).toBe(true);
    expect(qwen3Renderer().decode(got.tokens)).toBe(got.text);

    // Qwen/Qwen3-8B picks qwen3 by default; with no tokenizer files anywhere, the text alone
    const textOnly = join(dir, 'family-text.jsonl');
    const t = await seal(['render', '--base-model', 'Qwen/Qwen3-8B', '--input', input, '--out', textOnly], {
      HF_HOME: join(dir, 'empty-hf-home'),
    });
    expect(t.code, t.stderr).toBe(0);
    expect(t.stderr).toMatch(/as text alone \(qwen3\): no tokenizer found/);
    expect(JSON.parse(readFileSync(textOnly, 'utf8'))).toEqual({ text: got.text });

    // a family without tool calls refuses tools, naming the line
    const refused = await seal([
      'render',
      '--renderer',
      'role_colon',
      '--input',
      input,
      '--out',
      join(dir, 'rc.jsonl'),
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/family\.jsonl line 1: role_colon has no tool-call convention/);
    expect(existsSync(join(dir, 'rc.jsonl'))).toBe(false);
  }, 60_000);

  it('writes a tool result under the call it answers: its tool_call_id gives the name (gpt-oss) and both (Kimi)', async () => {
    // a rollout's tool messages carry the call's id alone, as the chat above does
    const input = join(dir, 'tool-result.jsonl');
    writeFileSync(input, `${JSON.stringify(chat)}\n`);
    const rendered = async (renderer: string) => {
      const out = join(dir, `tool-result-${renderer}.jsonl`);
      const r = await seal(['render', '--renderer', renderer, '--input', input, '--out', out], {
        HF_HOME: join(dir, 'empty-hf-home'),
      });
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(readFileSync(out, 'utf8')) as { text: string }).text;
    };
    expect(await rendered('gpt_oss_no_sysprompt')).toContain(
      '<|start|>functions.move to=assistant<|channel|>commentary<|message|>{"moved": true}<|end|>',
    );
    expect(await rendered('kimi_k2')).toContain(
      '<|im_system|>move<|im_middle|>## Return of call_0\n{"moved": true}<|im_end|>',
    );
  }, 60_000);

  it('parses completions with --parse: calls with their arguments as written, malformed ones not ok', async () => {
    const input = join(dir, 'completions.jsonl');
    const call =
      '<tool_call>\n{"name": "move", "arguments": {"x": 30.0, "to": "Zoë"}}\n</tool_call><|im_end|>';
    const ids = qwen3Renderer().encode(call);
    writeFileSync(
      input,
      [
        { text: `<think>\nfar\n</think>\n\n${call}` },
        { tokens: ids },
        { text: '<tool_call>\n{"name": "move", "arguments": {"x": 1,}\n</tool_call><|im_end|>' },
        { text: 'Done.' },
      ]
        .map((l) => `${JSON.stringify(l)}\n`)
        .join(''),
    );
    const out = join(dir, 'parsed.jsonl');
    const r = await seal([
      'render',
      '--parse',
      '--renderer',
      'qwen3',
      '--tokenizer',
      QWEN3_DIR,
      '--input',
      input,
      '--out',
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(4);
    // 30.0 stays as the model wrote it
    expect(lines[0]).toContain('"arguments":{"x": 30.0, "to": "Zoë"}');
    const parsed = lines.map(
      (l) => JSON.parse(l) as { message: Record<string, unknown>; ok: boolean; unparsed?: unknown[] },
    );
    expect(parsed[0]).toEqual({
      message: {
        role: 'assistant',
        content: '',
        reasoning: 'far',
        tool_calls: [{ name: 'move', arguments: { x: 30, to: 'Zoë' } }],
      },
      ok: true,
    });
    expect(parsed[1]!.message.tool_calls).toEqual(parsed[0]!.message.tool_calls);
    expect(parsed[2]!.ok).toBe(false);
    expect(parsed[2]!.message.tool_calls).toEqual([]);
    expect(parsed[2]!.unparsed).toHaveLength(1);
    expect(parsed[3]).toMatchObject({ message: { content: 'Done.', tool_calls: [] }, ok: false });

    // token ids need a tokenizer; the HF template has no parser
    const noTok = await seal([
      'render',
      '--parse',
      '--renderer',
      'qwen3',
      '--input',
      input,
      '--out',
      join(dir, 'p2.jsonl'),
    ]);
    expect(noTok.code).toBe(2);
    expect(noTok.stderr).toMatch(/completions\.jsonl line 2: token ids need the tokenizer/);
    expect(existsSync(join(dir, 'p2.jsonl'))).toBe(false);
    const hf = await seal([
      'render',
      '--parse',
      '--renderer',
      'hf_template',
      '--input',
      input,
      '--out',
      join(dir, 'p3.jsonl'),
    ]);
    expect(hf.code).toBe(2);
    expect(hf.stderr).toMatch(/--parse needs a family renderer/);
  }, 60_000);
});
