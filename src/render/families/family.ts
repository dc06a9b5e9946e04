/**
 * The contract of a model family's chat format, as the Tinker cookbook's renderers define it: how a
 * conversation with tools becomes the text a model of that family reads, cut into the pieces the
 * tokenizer encodes one by one, and how a sampled completion's text becomes an assistant message
 * with tool calls again. One module a family (families/*.ts); family-renderer.ts turns one into a
 * token-level Renderer with the family's tokenizer.
 *
 * Why pieces and not one string: the cookbook encodes a message's header, its body and its end
 * marker separately and concatenates the ids. A byte-pair tokenizer can merge across a boundary
 * when the whole text is encoded at once, so only the same cuts give the same tokens.
 */
/** a tool as the cookbook's renderers take it: OpenAI's function object without the wrapper */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** one call of an assistant message; `arguments` is the JSON text of the arguments object */
export interface FamilyToolCall {
  readonly id?: string | null;
  readonly name: string;
  readonly arguments: string;
}

/**
 * A conversation message. An assistant's `thinking` is its reasoning part (rendered where the
 * family keeps reasoning, dropped where it strips it from history); a tool message carries the
 * id and the function name of the call it answers (families read one or the other).
 */
export interface FamilyMessage {
  readonly role: string;
  readonly content: string;
  readonly thinking?: string;
  readonly toolCalls?: readonly FamilyToolCall[];
  readonly toolCallId?: string;
  readonly name?: string;
}

/**
 * A piece of rendered text encoded on its own. `specialAsText`: special-token strings inside it are
 * read as plain text (transformers' `split_special_tokens`), so a message cannot forge a turn
 * marker; added tokens that are not special (Qwen3's `<think>`, `<tool_call>`) still match.
 */
export interface Piece {
  readonly text: string;
  readonly specialAsText?: boolean;
}

/** a call found in a completion that could not be read: its raw text and why */
export interface UnparsedCall {
  readonly raw: string;
  readonly error: string;
}

/** what a sampled completion says */
export interface ParsedCompletion {
  /** the visible text, without reasoning and tool-call markup */
  readonly content: string;
  /** the reasoning part, or null when the completion has none */
  readonly reasoning: string | null;
  readonly toolCalls: readonly FamilyToolCall[];
  /** tool calls that did not parse, raw text kept: the rollout counts them as parse errors */
  readonly unparsed: readonly UnparsedCall[];
  /**
   * the completion ended the way the family ends a message (its stop sequence) and nothing in it
   * was malformed: the cookbook's STOP_SEQUENCE termination
   */
  readonly ok: boolean;
}

/** Something the family cannot render (a reasoning turn for a renderer that turned thinking off). */
export class RenderRefused extends Error {
  override name = 'RenderRefused';
}

export interface ChatFamily {
  /** the renderer's name, as the cookbook names it */
  readonly name: string;
  /** each generation prompt extends the previous prompt and completion (one sequence across turns) */
  readonly extension: boolean;
  /** the strings that end a completion, each one token of the family's vocabulary except role_colon's */
  readonly stop: readonly string[];
  /** the messages that declare `tools` in the family's own way, with `systemPrompt` */
  toolDeclaration(tools: readonly ToolSpec[], systemPrompt: string): FamilyMessage[];
  /** the conversation and the header of the assistant turn to sample */
  generationPrompt(messages: readonly FamilyMessage[]): Piece[];
  /** the whole conversation as a training sequence (the cookbook's build_supervised_example) */
  supervised(messages: readonly FamilyMessage[]): Piece[];
  /** a completion's text (special tokens kept, the stop string included when it was sampled) */
  parse(completion: string): ParsedCompletion;
}

export const textOf = (pieces: readonly Piece[]): string => pieces.map((p) => p.text).join('');
