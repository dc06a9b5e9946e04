/**
 * A Renderer made of a model family's chat format (families/*.ts, the cookbook's renderers) and the
 * family's tokenizer: each piece the format cuts is encoded on its own and the ids concatenated, as
 * the cookbook does, so the tokens are the ones a cookbook user trains on. A sampled completion
 * is read back by the family's own parser (harmony's channels, DeepSeek's and Kimi's call blocks,
 * ...), not by Qwen's `<tool_call>` rule.
 */
import { Tokenizer } from '@huggingface/tokenizers';
import { UserError } from '../util/errors.js';
import type {
  ChatFamily,
  FamilyMessage,
  FamilyToolCall,
  ParsedCompletion,
  Piece,
  ToolSpec,
} from './families/family.js';
import { textOf } from './families/family.js';
import { dumps, fromJs } from './families/python.js';
import { type HfTokenizerFiles, readTokenizerFiles } from './hf-renderer.js';
import {
  type ChatInput,
  completionTextOf,
  type Renderer,
  type Rendering,
  type RenderMessage,
  type TemplateValue,
} from './renderer.js';

/** ids for pieces, and text for ids */
export interface PieceEncoder {
  encode(piece: Piece): number[];
  decode(ids: readonly number[]): string;
  /** the id of a string that is one token of the vocabulary, if it is */
  tokenId(text: string): number | undefined;
}

interface AddedTokenJson {
  readonly content: string;
  readonly special?: boolean;
}

/**
 * The tokenizer of a Hugging Face model folder. A piece with `specialAsText` is encoded by a second
 * tokenizer that knows only the non-special added tokens, which is what transformers'
 * `split_special_tokens=True` does.
 */
export function pieceEncoderFromFolder(dir: string): PieceEncoder {
  return pieceEncoderOf(readTokenizerFiles(dir));
}

/** the same, from a folder's files already read */
export function pieceEncoderOf(files: HfTokenizerFiles): PieceEncoder {
  const full = new Tokenizer(files.tokenizer, files.config);
  const json = files.tokenizer as { added_tokens?: readonly AddedTokenJson[] };
  const plainJson = { ...json, added_tokens: (json.added_tokens ?? []).filter((t) => t.special !== true) };
  const { additional_special_tokens: _, ...plainConfig } = files.config;
  let plain: Tokenizer | undefined;
  return {
    encode(piece) {
      if (piece.text === '') return [];
      if (!piece.specialAsText) return full.encode(piece.text, { add_special_tokens: false }).ids;
      plain ??= new Tokenizer(plainJson, plainConfig);
      return plain.encode(piece.text, { add_special_tokens: false }).ids;
    },
    decode(ids) {
      if (ids.length === 0) return '';
      return full.decode([...ids], { skip_special_tokens: false, clean_up_tokenization_spaces: false });
    },
    tokenId(text) {
      const ids = full.encode(text, { add_special_tokens: false }).ids;
      return ids.length === 1 ? ids[0] : undefined;
    },
  };
}

/**
 * a tool call's arguments as JSON text: a string as given, an object as Python's json.dumps writes
 * it (a chat read by readChatLine keeps its float `30.0` a float, and an int beyond 2^53 exact)
 */
function argumentsJson(args: string | { readonly [key: string]: TemplateValue }): string {
  return typeof args === 'string' ? args : dumps(fromJs(args));
}

function toolSpec(tool: unknown): ToolSpec {
  const t = tool as { type?: string; function?: ToolSpec } & Partial<ToolSpec>;
  const f = t.type === 'function' && t.function ? t.function : (t as ToolSpec);
  if (typeof f?.name !== 'string')
    throw new UserError(`a tool without a function name: ${JSON.stringify(tool)}`);
  return { name: f.name, description: f.description ?? '', parameters: f.parameters ?? {} };
}

/**
 * An OpenAI-form chat as a family's messages: a leading system message and the tools become the
 * family's tool declaration; `reasoning_content` the thinking part; a tool message without a name
 * gets the name of the call it answers.
 */
export function familyMessages(family: ChatFamily, chat: ChatInput): FamilyMessage[] {
  const messages = [...chat.messages];
  const tools = (chat.tools ?? []).map(toolSpec);
  const out: FamilyMessage[] = [];
  if (tools.length > 0) {
    const system = messages[0]?.role === 'system' ? messages.shift() : undefined;
    out.push(...family.toolDeclaration(tools, system?.content ?? ''));
  }
  const callNames = new Map<string, string>();
  for (const m of messages) out.push(familyMessage(m, callNames));
  return out;
}

function familyMessage(m: RenderMessage, callNames: Map<string, string>): FamilyMessage {
  const toolCalls: FamilyToolCall[] | undefined = m.tool_calls?.map((c) => {
    if (c.id) callNames.set(c.id, c.function.name);
    return { id: c.id ?? null, name: c.function.name, arguments: argumentsJson(c.function.arguments) };
  });
  const name = m.name ?? (m.tool_call_id ? callNames.get(m.tool_call_id) : undefined);
  return {
    role: m.role,
    content: m.content ?? '',
    ...(m.reasoning_content ? { thinking: m.reasoning_content } : {}),
    ...(toolCalls?.length ? { toolCalls } : {}),
    ...(m.tool_call_id !== undefined ? { toolCallId: m.tool_call_id } : {}),
    ...(name !== undefined ? { name } : {}),
  };
}

export class FamilyRenderer implements Renderer {
  readonly stopTokens: readonly number[];
  /**
   * what a sampler stops on: the stop tokens' ids when each stop sequence is one token (a string
   * stop could cut inside a token), else the strings (role_colon's `\n\nUser:`), as the cookbook sends them
   */
  readonly samplingStop: readonly number[] | readonly string[];

  constructor(
    readonly family: ChatFamily,
    private readonly encoder: PieceEncoder,
    readonly name: string = family.name,
  ) {
    this.stopTokens = family.stop.map((s) => encoder.tokenId(s)).filter((id) => id !== undefined);
    this.samplingStop = this.stopTokens.length === family.stop.length ? this.stopTokens : family.stop;
  }

  /** the pieces of a chat: the generation prompt, or the whole sequence */
  pieces(chat: ChatInput): Piece[] {
    const messages = familyMessages(this.family, chat);
    return chat.addGenerationPrompt
      ? this.family.generationPrompt(messages)
      : this.family.supervised(messages);
  }

  render(chat: ChatInput): Rendering {
    const pieces = this.pieces(chat);
    return { text: textOf(pieces), tokens: pieces.flatMap((p) => this.encoder.encode(p)) };
  }

  encode(text: string): number[] {
    return this.encoder.encode({ text });
  }

  decode(ids: readonly number[]): string {
    return this.encoder.decode(ids);
  }

  completionText(ids: readonly number[]): string {
    return completionTextOf(this, ids);
  }

  /** a sampled completion (its stop token included when it was sampled) read by the family's parser */
  parseCompletion(ids: readonly number[]): ParsedCompletion {
    return this.family.parse(this.decode(ids));
  }
}
