/**
 * A Renderer from a Hugging Face model folder: the chat template (`chat_template.jinja`, else the
 * `chat_template` of `tokenizer_config.json`) rendered as transformers renders it (template.ts),
 * and the text tokenized by `tokenizer.json` through @huggingface/tokenizers, special tokens
 * recognised and none added, as `apply_chat_template(..., tokenize=True)` does.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { UserError } from '../util/errors.js';
import {
  type ChatInput,
  completionTextOf,
  type Renderer,
  type Rendering,
  type TemplateValue,
} from './renderer.js';
import { ChatTemplate } from './template.js';

/** the files of a model folder that rendering reads, parsed */
export interface HfTokenizerFiles {
  /** tokenizer.json */
  readonly tokenizer: object;
  /** tokenizer_config.json ({} when the folder has none) */
  readonly config: Readonly<Record<string, unknown>>;
  /** chat_template.jinja, when the folder has one (it wins over the config's chat_template) */
  readonly chatTemplate?: string;
  /** generation_config.json, when the folder has one (its eos_token_id are stop tokens too) */
  readonly generationConfig?: Readonly<Record<string, unknown>>;
}

export const HF_FILES = {
  tokenizer: 'tokenizer.json',
  config: 'tokenizer_config.json',
  chatTemplate: 'chat_template.jinja',
  generationConfig: 'generation_config.json',
} as const;

const SPECIAL_TOKEN_KEYS = [
  'bos_token',
  'eos_token',
  'unk_token',
  'sep_token',
  'pad_token',
  'cls_token',
  'mask_token',
] as const;

/** a special token as the config gives it: a string, or an AddedToken object with `content` */
export function tokenText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'object' && v !== null && typeof (v as { content?: unknown }).content === 'string')
    return (v as { content: string }).content;
  return undefined;
}

/** the template to use: a config may hold one, or named ones (`default`, `tool_use`) */
function templateSource(files: HfTokenizerFiles, withTools: boolean): string {
  if (files.chatTemplate !== undefined) return files.chatTemplate;
  const t = files.config.chat_template;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const named = new Map<string, string>();
    for (const item of t as { name?: unknown; template?: unknown }[])
      if (typeof item?.name === 'string' && typeof item.template === 'string')
        named.set(item.name, item.template);
    const chosen = (withTools ? named.get('tool_use') : undefined) ?? named.get('default');
    if (chosen !== undefined) return chosen;
  }
  throw new UserError(
    `the tokenizer has no chat template: give a folder whose ${HF_FILES.config} has "chat_template", or that holds ${HF_FILES.chatTemplate} (a base model has none; use its instruct version's files)`,
  );
}

function readJson(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UserError(`cannot read ${path}: ${(e as Error).message}`);
  }
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not a JSON object');
    return v as Record<string, unknown>;
  } catch (e) {
    throw new UserError(`${path} is not a valid JSON object (${(e as Error).message}); download it again`);
  }
}

/** the parsed files of a model folder; a clear UserError when it is not one */
export function readTokenizerFiles(dir: string): HfTokenizerFiles {
  const tokenizerPath = join(dir, HF_FILES.tokenizer);
  if (!existsSync(dir)) throw new UserError(`tokenizer folder ${dir} does not exist`);
  if (!existsSync(tokenizerPath))
    throw new UserError(
      `${dir} has no ${HF_FILES.tokenizer}: give a Hugging Face model folder with ${HF_FILES.tokenizer} and ${HF_FILES.config} (the model's own files)`,
    );
  const at = (name: string) => join(dir, name);
  return {
    tokenizer: readJson(tokenizerPath),
    config: existsSync(at(HF_FILES.config)) ? readJson(at(HF_FILES.config)) : {},
    ...(existsSync(at(HF_FILES.chatTemplate))
      ? { chatTemplate: readFileSync(at(HF_FILES.chatTemplate), 'utf8') }
      : {}),
    ...(existsSync(at(HF_FILES.generationConfig))
      ? { generationConfig: readJson(at(HF_FILES.generationConfig)) }
      : {}),
  };
}

export class HfRenderer implements Renderer {
  private readonly tokenizer: Tokenizer;
  private readonly templates = new Map<string, ChatTemplate>();
  /** the special tokens the template sees (bos_token, eos_token, ...), as transformers passes them */
  readonly specialTokens: Readonly<Record<string, string | readonly string[]>>;
  readonly stopTokens: readonly number[];

  /** a model folder's renderer (the files are read once) */
  static load(dir: string): HfRenderer {
    return new HfRenderer(readTokenizerFiles(dir), dir);
  }

  constructor(
    readonly files: HfTokenizerFiles,
    readonly name = 'huggingface',
  ) {
    this.tokenizer = new Tokenizer(files.tokenizer, files.config);
    const special: Record<string, string | readonly string[]> = {};
    for (const key of SPECIAL_TOKEN_KEYS) {
      const text = tokenText(files.config[key]);
      if (text !== undefined) special[key] = text;
    }
    const extra = files.config.additional_special_tokens;
    if (Array.isArray(extra))
      special.additional_special_tokens = extra.map(tokenText).filter((t) => t !== undefined);
    this.specialTokens = special;

    const stops = new Set<number>();
    const eos =
      typeof special.eos_token === 'string' ? this.tokenizer.token_to_id(special.eos_token) : undefined;
    if (eos !== undefined) stops.add(eos);
    const gen = files.generationConfig?.eos_token_id;
    for (const id of Array.isArray(gen) ? gen : [gen]) if (typeof id === 'number') stops.add(id);
    this.stopTokens = [...stops];
  }

  /** the template's text for a chat: what transformers' apply_chat_template(tokenize=False) returns */
  renderText(chat: ChatInput): string {
    const withTools = Array.isArray(chat.tools) && chat.tools.length > 0;
    const source = templateSource(this.files, withTools);
    let template = this.templates.get(source);
    if (!template) {
      template = new ChatTemplate(source);
      this.templates.set(source, template);
    }
    return template.render({
      ...this.specialTokens,
      messages: chat.messages as unknown as TemplateValue,
      tools: (chat.tools ?? null) as TemplateValue,
      add_generation_prompt: chat.addGenerationPrompt ?? false,
      ...(chat.enableThinking !== undefined ? { enable_thinking: chat.enableThinking } : {}),
    });
  }

  render(chat: ChatInput): Rendering {
    const text = this.renderText(chat);
    return { text, tokens: this.encode(text) };
  }

  encode(text: string): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: false }).ids;
  }

  decode(ids: readonly number[]): string {
    return this.tokenizer.decode([...ids], {
      skip_special_tokens: false,
      clean_up_tokenization_spaces: false,
    });
  }

  completionText(ids: readonly number[]): string {
    return completionTextOf(this, ids);
  }

  /** the id of a token string (a special token such as `<|im_end|>`), if the vocabulary has it */
  tokenId(token: string): number | undefined {
    return this.tokenizer.token_to_id(token);
  }
}
