/**
 * `seal render`: chats -> exactly what the model reads. Each input line `{messages, tools,
 * add_generation_prompt, enable_thinking?}` becomes `{text, tokens}` in the model's own chat
 * template and tokenizer (src/render). The output is written whole or not at all: a bad line
 * stops the command before anything is written, and names the line.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { ChatLineError, readChatLine } from '../render/chat-line.js';
import { HfRenderer } from '../render/hf-renderer.js';
import { locateTokenizer } from '../render/locate.js';
import { TemplateError } from '../render/template.js';
import { UserError } from '../util/errors.js';
import { Settings } from '../util/settings.js';
import { addSettingOptions } from './flags.js';

export const RENDER_SETTINGS = new Settings(
  z.object({
    tokenizer: z.string().min(1).optional().meta({
      description:
        'a Hugging Face model folder: tokenizer.json, and tokenizer_config.json with chat_template (or chat_template.jinja)',
      placeholder: 'dir',
    }),
    baseModel: z.string().min(1).optional().meta({
      description:
        'without --tokenizer: the model (e.g. Qwen/Qwen3-8B) whose files the local Hugging Face cache holds',
      placeholder: 'name',
    }),
  }),
  'flag',
);

/** `seal render` */
export function registerRender(program: Command): void {
  const cmd = program
    .command('render')
    .description(
      "Render chats in a model's own chat template and tokenizer: what the model sees, as text and token ids",
    )
    .requiredOption(
      '--input <file>',
      'chats, one JSON object a line: {messages, tools, add_generation_prompt, enable_thinking?}',
    )
    .requiredOption('--out <file>', 'output, one {text, tokens} a line, in input order');
  addSettingOptions(cmd, RENDER_SETTINGS);
  cmd.action((opts: Record<string, unknown>) => runRenderCommand(opts, (s) => console.error(s)));
}

export function runRenderCommand(opts: Readonly<Record<string, unknown>>, print: (s: string) => void): void {
  const input = String(opts.input);
  const out = String(opts.out);
  const { config } = RENDER_SETTINGS.resolve([
    { source: 'flags', values: RENDER_SETTINGS.fromFlags(opts), flags: true },
  ]);
  if (!existsSync(input)) throw new UserError(`--input ${input} does not exist`);
  const dir = locateTokenizer(config);
  const started = performance.now();
  const renderer = HfRenderer.load(dir);
  const loadedMs = performance.now() - started;

  const lines = readFileSync(input, 'utf8').split('\n');
  const rendered: string[] = [];
  let tokens = 0;
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    try {
      const r = renderer.render(readChatLine(line));
      tokens += r.tokens.length;
      rendered.push(JSON.stringify({ text: r.text, tokens: r.tokens }));
    } catch (e) {
      if (e instanceof ChatLineError || e instanceof TemplateError)
        throw new UserError(`${input} line ${i + 1}: ${e.message}; nothing was written`);
      throw e;
    }
  }
  if (rendered.length === 0) throw new UserError(`${input} holds no chats (one JSON object a line)`);
  // whole or not at all: a reader never sees half a file
  const partial = `${out}.partial`;
  try {
    writeFileSync(partial, rendered.map((l) => `${l}\n`).join(''));
    renameSync(partial, out);
  } catch (e) {
    throw new UserError(`cannot write --out ${out}: ${(e as Error).message}`);
  }
  const secs = (performance.now() - started) / 1000;
  print(
    `${out}: ${rendered.length} chats, ${tokens} tokens (tokenizer ${dir}, loaded in ${(loadedMs / 1000).toFixed(2)} s; ${secs.toFixed(2)} s in all)`,
  );
}
