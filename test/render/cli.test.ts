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
      ['render', '--base-model', 'Qwen/Qwen3-8B', '--input', CHAT_GOLDEN, '--out', join(dir, 'x.jsonl')],
      {
        HF_HOME: join(dir, 'empty-hf-home'),
      },
    );
    expect(cache.code).toBe(2);
    expect(cache.stderr).toMatch(/no tokenizer files for Qwen\/Qwen3-8B .*--tokenizer DIR/);
    expect(existsSync(join(dir, 'x.jsonl'))).toBe(false);
  }, 60_000);
});
