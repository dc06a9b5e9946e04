/**
 * `seal render`: chats -> exactly what the model reads. Each input line `{messages, tools,
 * add_generation_prompt, enable_thinking?}` becomes `{text, tokens}` in a model family's chat
 * format (--renderer, by the cookbook's names) or the model's own Hugging Face chat template, and
 * its tokenizer (src/render); a family renders text alone when no tokenizer is found. `--parse`
 * goes the other way: sampled completions (`{tokens}` or `{text}`) -> the assistant message the
 * family's parser reads. The output is written whole or not at all: a bad line stops the command
 * before anything is written, and names the line.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { ChatLineError, readChatLine } from '../render/chat-line.js';
import { type ChatFamily, type ParsedCompletion, RenderRefused, textOf } from '../render/families/family.js';
import { chatFamily } from '../render/families/index.js';
import { FamilyRenderer, familyMessages } from '../render/family-renderer.js';
import { cachedSnapshot } from '../render/locate.js';
import { familyOnly, HF_TEMPLATE, openRenderer, rendererSetting, resolveRenderer } from '../render/open.js';
import type { ChatInput, Renderer } from '../render/renderer.js';
import { TemplateError } from '../render/template.js';
import { UserError } from '../util/errors.js';
import { Settings } from '../util/settings.js';
import { addSettingOptions } from './flags.js';

export const RENDER_SETTINGS = new Settings(
  z.object({
    renderer: rendererSetting(),
    tokenizer: z.string().min(1).optional().meta({
      description:
        'a Hugging Face model folder: tokenizer.json and tokenizer_config.json (with chat_template, or chat_template.jinja, for hf_template)',
      placeholder: 'dir',
    }),
    baseModel: z.string().min(1).optional().meta({
      description:
        'the model (e.g. Qwen/Qwen3-8B): picks the renderer for auto, and without --tokenizer its files are read from the local Hugging Face cache',
      placeholder: 'name',
    }),
    parse: z
      .literal(true)
      .optional()
      .describe(
        'read completions instead: lines {"tokens": [...]} or {"text": "..."} -> {"message": {role, content, reasoning, tool_calls}, "ok"} by the family\'s parser',
      ),
  }),
  'flag',
);

type RenderConfig = ReturnType<typeof RENDER_SETTINGS.resolve>['config'];

/** `seal render` */
export function registerRender(program: Command): void {
  const cmd = program
    .command('render')
    .description(
      "Render chats in a model family's chat format and tokenizer (what the model sees, as text and token ids), or parse sampled completions back into messages (--parse)",
    )
    .requiredOption(
      '--input <file>',
      'chats, one JSON object a line: {messages, tools, add_generation_prompt, enable_thinking?}; with --parse, completions: {"tokens": [...]} or {"text": "..."}',
    )
    .requiredOption(
      '--out <file>',
      'output, one {text, tokens} a line (or {message, ok} with --parse), in input order',
    );
  addSettingOptions(cmd, RENDER_SETTINGS);
  cmd.action((opts: Record<string, unknown>) => runRenderCommand(opts, (s) => console.error(s)));
}

/** the whole file or nothing: a reader never sees half a file */
function writeWhole(out: string, lines: readonly string[]): void {
  const partial = `${out}.partial`;
  try {
    writeFileSync(partial, lines.map((l) => `${l}\n`).join(''));
    renameSync(partial, out);
  } catch (e) {
    throw new UserError(`cannot write --out ${out}: ${(e as Error).message}`);
  }
}

/** the input's non-empty lines with their line numbers */
function inputLines(input: string): { line: string; no: number }[] {
  if (!existsSync(input)) throw new UserError(`--input ${input} does not exist`);
  const lines = readFileSync(input, 'utf8')
    .split('\n')
    .map((line, i) => ({ line, no: i + 1 }))
    .filter((l) => l.line.trim() !== '');
  if (lines.length === 0) throw new UserError(`${input} holds no lines (one JSON object a line)`);
  return lines;
}

/**
 * The renderer with its tokenizer, or undefined when a family renders text alone: no --tokenizer,
 * and no base model in the local cache. The HF template always needs the files.
 */
function tokenizedRenderer(config: RenderConfig): { renderer: Renderer; dir: string } | undefined {
  const resolved = resolveRenderer(config.renderer, config.baseModel);
  const found =
    config.tokenizer !== undefined ||
    (config.baseModel !== undefined && cachedSnapshot(config.baseModel) !== undefined);
  if (resolved !== HF_TEMPLATE && !found) return undefined;
  const { renderer, dir } = openRenderer(config.renderer, config);
  return { renderer, dir };
}

export function runRenderCommand(opts: Readonly<Record<string, unknown>>, print: (s: string) => void): void {
  const input = String(opts.input);
  const out = String(opts.out);
  const { config } = RENDER_SETTINGS.resolve([
    { source: 'flags', values: RENDER_SETTINGS.fromFlags(opts), flags: true },
  ]);
  if (config.parse) {
    runParse(config, input, out, print);
    return;
  }
  const lines = inputLines(input);
  const started = performance.now();
  const opened = tokenizedRenderer(config);
  const loadedMs = performance.now() - started;
  const resolved = resolveRenderer(config.renderer, config.baseModel);
  // text alone: the family's pieces joined, no tokenizer read
  const textOnly =
    opened === undefined ? chatFamily(familyOnly(resolved, 'text without a tokenizer')) : undefined;

  const rendered: string[] = [];
  let tokens = 0;
  for (const { line, no } of lines) {
    try {
      const chat = readChatLine(line);
      if (resolved !== HF_TEMPLATE && chat.enableThinking !== undefined)
        throw new ChatLineError(
          `"enable_thinking" is the Hugging Face template's switch; the ${resolved} renderer has none (a *_disable_thinking renderer turns thinking off)`,
        );
      if (textOnly) {
        rendered.push(JSON.stringify({ text: familyText(textOnly, chat) }));
        continue;
      }
      const r = opened!.renderer.render(chat);
      tokens += r.tokens.length;
      rendered.push(JSON.stringify({ text: r.text, tokens: r.tokens }));
    } catch (e) {
      if (e instanceof ChatLineError || e instanceof TemplateError || e instanceof RenderRefused)
        throw new UserError(`${input} line ${no}: ${e.message}; nothing was written`);
      throw e;
    }
  }
  writeWhole(out, rendered);
  const secs = (performance.now() - started) / 1000;
  print(
    opened
      ? `${out}: ${rendered.length} chats, ${tokens} tokens (${resolved}, tokenizer ${opened.dir}, loaded in ${(loadedMs / 1000).toFixed(2)} s; ${secs.toFixed(2)} s in all)`
      : `${out}: ${rendered.length} chats as text alone (${resolved}): no tokenizer found, give --tokenizer DIR or a --base-model in the local Hugging Face cache for token ids`,
  );
}

/** a chat in a family's format, as text */
function familyText(family: ChatFamily, chat: ChatInput): string {
  const messages = familyMessages(family, chat);
  return textOf(chat.addGenerationPrompt ? family.generationPrompt(messages) : family.supervised(messages));
}

/** a completion line: its text, decoded when it holds token ids */
function completionOf(line: string, decode: ((ids: number[]) => string) | undefined): string {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch (e) {
    throw new ChatLineError(`not valid JSON (${(e as Error).message})`);
  }
  const o = (typeof v === 'object' && v !== null ? v : {}) as { tokens?: unknown; text?: unknown };
  if (typeof o.text === 'string') return o.text;
  if (Array.isArray(o.tokens) && o.tokens.every((t) => Number.isSafeInteger(t) && (t as number) >= 0)) {
    if (!decode)
      throw new ChatLineError(
        'token ids need the tokenizer: give --tokenizer DIR (or a --base-model in the local Hugging Face cache), or lines {"text": "..."}',
      );
    return decode(o.tokens as number[]);
  }
  throw new ChatLineError('give {"tokens": [ids...]} or {"text": "..."}');
}

/**
 * A parsed completion as an output line. Arguments go out as the JSON text the model wrote (so 30.0
 * stays 30.0); calls that did not parse are listed under `unparsed` with their raw text.
 */
export function parsedLine(p: ParsedCompletion): string {
  const calls = p.toolCalls.map((c) => {
    let args = c.arguments;
    try {
      JSON.parse(args);
    } catch {
      // Python's NaN or Infinity, which JSON has not: the text as a string
      args = JSON.stringify(args);
    }
    return `{"name":${JSON.stringify(c.name)},"arguments":${args}}`;
  });
  const message = `{"role":"assistant","content":${JSON.stringify(p.content)},"reasoning":${JSON.stringify(p.reasoning)},"tool_calls":[${calls.join(',')}]}`;
  const unparsed = p.unparsed.length > 0 ? `,"unparsed":${JSON.stringify(p.unparsed)}` : '';
  return `{"message":${message},"ok":${p.ok}${unparsed}}`;
}

function runParse(config: RenderConfig, input: string, out: string, print: (s: string) => void): void {
  const resolved = familyOnly(resolveRenderer(config.renderer, config.baseModel), '--parse');
  const lines = inputLines(input);
  const opened = tokenizedRenderer(config);
  // the opened renderer's family knows the tokenizer's eos (role_colon reads it as an end)
  const family = opened?.renderer instanceof FamilyRenderer ? opened.renderer.family : chatFamily(resolved);
  const written: string[] = [];
  let calls = 0;
  let clean = 0;
  for (const { line, no } of lines) {
    try {
      const text = completionOf(line, opened ? (ids) => opened.renderer.decode(ids) : undefined);
      const parsed = family.parse(text);
      calls += parsed.toolCalls.length;
      if (parsed.ok) clean++;
      written.push(parsedLine(parsed));
    } catch (e) {
      if (e instanceof ChatLineError)
        throw new UserError(`${input} line ${no}: ${e.message}; nothing was written`);
      throw e;
    }
  }
  writeWhole(out, written);
  print(`${out}: ${written.length} completions (${resolved}), ${calls} tool calls, ${clean} ended cleanly`);
}
