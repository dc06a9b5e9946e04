/**
 * The renderer contract: a chat (OpenAI chat form) and its tools become the token ids a model
 * reads, in the model's own chat template and tokenizer; completion ids become text again. A
 * trainer that samples from token ids (Tinker) and trains on them needs both directions to be
 * exact: every trained token is one the sampler produced, and nothing is re-tokenised.
 *
 * Implementations: hf-renderer.ts (a Hugging Face model folder: `tokenizer.json` and the chat
 * template), embedded-renderer.ts (the embedded policy's own tokenizer and prompt format).
 */
import type { OpenAiTool } from '../envs/tools.js';

/**
 * A float that keeps its Python spelling. Chat templates print arguments through `tojson`, which
 * writes Python's float `30.0` as `30.0` and the int `30` as `30`; a JavaScript number cannot tell
 * them apart, so a chat read losslessly (readChatLine) wraps floats with an integral value in this.
 */
export class PyFloat {
  constructor(readonly value: number) {}
}

/**
 * A value a template can see: JSON-like data. `bigint` and integral numbers are ints, other numbers
 * and PyFloat are floats, Maps and plain objects are dicts (in insertion order).
 */
export type TemplateValue =
  | null
  | undefined
  | boolean
  | number
  | bigint
  | string
  | PyFloat
  | readonly TemplateValue[]
  | ReadonlyMap<string, TemplateValue>
  | { readonly [key: string]: TemplateValue };

/** One tool call of an assistant message: `arguments` as an object or its JSON text. */
export interface RenderToolCall {
  readonly id?: string;
  readonly type?: 'function';
  readonly function: {
    readonly name: string;
    readonly arguments: string | { readonly [key: string]: TemplateValue };
  };
}

/**
 * A chat message in the OpenAI chat form (policy.ts ChatMessage is one), with what some templates
 * read besides: `reasoning_content`, a tool message's `name`. Other keys reach the template as given.
 */
export interface RenderMessage {
  readonly role: string;
  readonly content?: string | null;
  readonly tool_calls?: readonly RenderToolCall[];
  readonly tool_call_id?: string;
  readonly name?: string;
  readonly reasoning_content?: string;
  readonly [key: string]: TemplateValue | readonly RenderToolCall[];
}

/** What to render: the golden file's shape, in camel case. */
export interface ChatInput {
  readonly messages: readonly RenderMessage[];
  /** OpenAI function tools, or none */
  readonly tools?: readonly (OpenAiTool | TemplateValue)[] | null;
  /** end with the header of an assistant turn, for sampling */
  readonly addGenerationPrompt?: boolean;
  /** Qwen3's switch; left out of the template's context when undefined (the template's default) */
  readonly enableThinking?: boolean;
}

export interface Rendering {
  /** the exact text the template produced */
  readonly text: string;
  /** its token ids, as the model's tokenizer encodes it (special tokens recognised, none added) */
  readonly tokens: readonly number[];
}

export interface Renderer {
  /** where the template and tokenizer came from (a folder, or `embedded`) */
  readonly name: string;
  /** token ids that end a completion (`<|im_end|>` for Qwen) */
  readonly stopTokens: readonly number[];
  render(chat: ChatInput): Rendering;
  /** text -> ids, special-token strings recognised, nothing added */
  encode(text: string): number[];
  /** ids -> text, special tokens kept, so decode(render(c).tokens) === render(c).text */
  decode(ids: readonly number[]): string;
  /** a sampled completion's text for the tool-call decoders: the trailing stop token dropped */
  completionText(ids: readonly number[]): string;
}

/** decode() of the ids without a trailing stop token */
export function completionTextOf(r: Pick<Renderer, 'stopTokens' | 'decode'>, ids: readonly number[]): string {
  const last = ids[ids.length - 1];
  const cut = last !== undefined && r.stopTokens.includes(last) ? ids.slice(0, -1) : ids;
  return r.decode(cut);
}

/**
 * The chat with `content: null` as `''`. The OpenAI form (and the native tool-call format) writes
 * a tool-call-only assistant message with null content; some templates, Qwen3's among them, fail
 * on it exactly as they do in transformers (`'</think>' in None`). A caller that wants those
 * messages rendered as empty text applies this first; the renderers themselves pass content as is.
 */
export function nullContentAsEmpty(messages: readonly RenderMessage[]): RenderMessage[] {
  return messages.map((m) => (m.content === null ? { ...m, content: '' } : m));
}
