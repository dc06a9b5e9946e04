/**
 * The policy contract: chat messages in, assistant output out (text, native tool calls, and the
 * token ids and logprobs when the backend returns them). Every sampler implements it: an
 * OpenAI-compatible server, the embedded model, a Tinker-compatible service.
 */
import type { OpenAiTool } from '../envs/tools.js';

export interface NativeToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

export type ChatMessage =
  | { readonly role: 'system' | 'user'; readonly content: string }
  | {
      readonly role: 'assistant';
      readonly content: string | null;
      readonly tool_calls?: readonly NativeToolCall[];
    }
  | { readonly role: 'tool'; readonly content: string; readonly tool_call_id: string };

export interface SamplingOptions {
  readonly temperature?: number;
  readonly topP?: number;
  readonly maxTokens?: number;
  readonly stop?: readonly string[];
  readonly seed?: number;
}

export interface CompletionRequest extends SamplingOptions {
  readonly messages: readonly ChatMessage[];
  /** native tool calling only: the tools offered through the API's `tools` field */
  readonly tools?: readonly OpenAiTool[];
}

export interface Completion {
  /** the assistant's text ('' when it only called tools) */
  readonly text: string;
  /** native tool calls, when the backend returned structured calls */
  readonly toolCalls?: readonly NativeToolCall[];
  /**
   * native tool calls the backend's parser found but could not read (a model family's call block
   * with bad JSON, unterminated, without a name), each with its raw text: the turn is a parse error
   */
  readonly unparsedToolCalls?: readonly { readonly raw: string; readonly error: string }[];
  readonly finishReason?: string;
  /**
   * the prompt ids the completion was conditioned on, when the backend returns them (the embedded
   * policy; vLLM's prompt_token_ids): a trainer's sequences are these and `tokenIds`, never re-tokenised
   */
  readonly promptTokenIds?: readonly number[];
  /** completion token ids and their logprobs, when the backend returns them */
  readonly tokenIds?: readonly number[];
  readonly logprobs?: readonly number[];
  readonly usage?: {
    readonly promptTokens: number;
    readonly completionTokens: number;
    /** prompt tokens the backend says it served from its prefix cache, when it says */
    readonly cachedPromptTokens?: number;
  };
  readonly latencyMs: number;
}

/** How long a request's prompt is in a policy's own encoding, and the most it keeps uncut. */
export interface PromptLength {
  readonly tokens: number;
  /** prompt tokens the policy keeps; a longer prompt is cut (the embedded model: from the left) */
  readonly budget: number;
}

export interface Policy {
  /** a short name for records and tables (the model name for a server) */
  readonly name: string;
  complete(request: CompletionRequest, signal?: AbortSignal): Promise<Completion>;
  /**
   * Optional: the request's prompt length against the policy's prompt budget, for a policy with a
   * small context (the embedded model). The training interface is fitted to it; a policy without
   * it (a server) is shown the whole interface.
   */
  readonly promptLength?: (request: CompletionRequest) => PromptLength;
  /**
   * Optional: the prompt ids `complete` would condition on for this request, without sampling (a
   * policy that renders its own prompts: the embedded model). The guided update scores sampled
   * actions under a prompt they were not sampled with (the original environment's) through it.
   */
  readonly promptTokenIds?: (request: CompletionRequest) => readonly number[];
}

/**
 * A sample request that failed for good and says nothing about the sampler as a whole: the service
 * refused this one prompt (longer than the model's context, say). A training rollout that meets it
 * ends there, as a forced quit; the round goes on.
 */
export class SampleFailedError extends Error {
  override name = 'SampleFailedError';
}
