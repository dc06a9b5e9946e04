/**
 * The embedded model behind the Policy contract: chat messages are rendered in the embedded prompt
 * format (`<|role|>content<|end|>`), the completion is sampled with the KV cache, and the completion
 * token ids (including the closing `<|end|>` when produced) and their logprobs are returned. The model
 * has no native tool calling: tools are described in the prompt and calls parsed from the text.
 */

import type { Gpt } from '../../nn/model.js';
import { encodeChat, messageText, type Tokenizer } from '../../nn/tokenizer.js';
import { Rng } from '../../util/rng.js';
import type { ChatMessage, Completion, CompletionRequest, Policy, PromptLength } from '../policy.js';
import {
  checkJob,
  PrefixCache,
  type PrefixCacheOptions,
  type SampleJob,
  type SampleResult,
  sampleMany,
} from './sampler.js';
import { windowStart } from './window.js';

/**
 * The tool-call format the embedded model is trained and evaluated in: python call lists with the
 * tools as one-line signatures, so a prompt fits the small context.
 */
export const EMBEDDED_TOOL_FORMAT = 'compact' as const;

export interface EmbeddedPolicyOptions {
  readonly name?: string;
  /** seeds the per-request streams of requests that give no seed */
  readonly seed?: number;
  readonly defaultMaxTokens?: number;
  /**
   * tokens kept free for the completion when a long chat is cut to the context (see window.ts):
   * this or the request's max tokens, whichever is smaller, and at most a quarter of the context;
   * default 128
   */
  readonly completionRoom?: number;
  /**
   * the keys and values of earlier prompts and completions kept for reuse (see PrefixCache: exact,
   * so it changes speed only); false turns it off. Default: on, with PrefixCache's defaults.
   */
  readonly prefixCache?: PrefixCacheOptions | false;
  /**
   * most requests decoded together: requests made while others wait (concurrent rollouts) are
   * sampled as one batch (`sampleMany`; each gets exactly what it would get alone). Default 64;
   * 1 samples each request on its own.
   */
  readonly maxBatch?: number;
}

interface Pending {
  readonly job: SampleJob;
  readonly finish: (r: SampleResult) => void;
  readonly fail: (e: unknown) => void;
  readonly signal: AbortSignal | undefined;
}

/** the default `completionRoom` */
export const DEFAULT_COMPLETION_ROOM = 128;

/** completion tokens a request that names no `maxTokens` may take */
export const DEFAULT_MAX_TOKENS = 256;

/** Prompt tokens kept for a context of `contextLength` with `room` tokens wanted for the completion. */
export function promptBudget(contextLength: number, room: number): number {
  return contextLength - Math.min(room, contextLength >> 2) - 1;
}

/**
 * A request's prompt length in the embedded encoding (its messages, without the generation
 * prompt) against the budget `promptIds` keeps uncut: what the training interface is fitted to.
 */
export function embeddedPromptLength(
  tokenizer: Tokenizer,
  contextLength: number,
  request: CompletionRequest,
  completionRoom = DEFAULT_COMPLETION_ROOM,
): PromptLength {
  const tokens = encodeChat(tokenizer, request.messages.map(messageText)).ids.length;
  const room = Math.min(completionRoom, request.maxTokens ?? Number.POSITIVE_INFINITY);
  return { tokens, budget: promptBudget(contextLength, room) };
}

import { ContextOverflowError } from '../errors.js';

export { ContextOverflowError };

/**
 * The prompt ids of a chat, ending with the generation prompt `<|assistant|>`, leaving `room`
 * tokens (at most a quarter of the context) for the completion. A chat that does not fit loses
 * its oldest messages after the system prompt (window.ts); when even the system prompt and the
 * last message do not fit, only their last tokens are kept.
 */
export function embeddedPromptIds(
  tokenizer: Tokenizer,
  contextLength: number,
  messages: readonly ChatMessage[],
  room: number,
): number[] {
  const parts = messages.map((m) => encodeChat(tokenizer, [messageText(m)]).ids);
  const budget = promptBudget(contextLength, room);
  const head = messages[0]?.role === 'system' ? 1 : 0;
  const system = parts.slice(0, head).flat();
  const start = windowStart(
    messages.map((m, i) => ({ role: m.role, tokens: parts[i]!.length })),
    budget,
  );
  if (budget < 16)
    throw new ContextOverflowError(
      `the embedded model's context (${contextLength} tokens) leaves no room for a prompt; use a checkpoint with a longer --context`,
    );
  let ids: number[];
  if (start !== undefined) ids = [...system, ...parts.slice(Math.max(start, head)).flat()];
  else {
    // Not even the tools and the last message fit: the model sees the end of that, like a
    // reader whose page is too long. A policy with too many tools degrades; it does not crash
    // the run.
    ids = [...system, ...(parts.length > head ? parts.at(-1)! : [])].slice(-budget);
  }
  ids.push(tokenizer.special('<|assistant|>'));
  return ids;
}

/** the prompt ids a request gets from an embedded policy with the default completion room and length */
export function embeddedRequestPromptIds(
  tokenizer: Tokenizer,
  contextLength: number,
  request: CompletionRequest,
): number[] {
  const room = Math.min(DEFAULT_COMPLETION_ROOM, request.maxTokens ?? DEFAULT_MAX_TOKENS);
  return embeddedPromptIds(tokenizer, contextLength, request.messages, room);
}

export class EmbeddedPolicy implements Policy {
  readonly name: string;
  private readonly seeds: Rng;
  private readonly defaultMaxTokens: number;
  private readonly completionRoom: number;
  /** undefined when turned off */
  readonly prefixCache: PrefixCache | undefined;
  private readonly maxBatch: number;
  private readonly pending: Pending[] = [];
  /** batches sampled and the requests in them, so far (for benchmarks and tests) */
  readonly batching = { batches: 0, requests: 0 };

  constructor(
    readonly model: Gpt,
    readonly tokenizer: Tokenizer,
    opts: EmbeddedPolicyOptions = {},
  ) {
    this.name = opts.name ?? 'embedded';
    this.seeds = new Rng(opts.seed ?? 0);
    this.defaultMaxTokens = opts.defaultMaxTokens ?? DEFAULT_MAX_TOKENS;
    this.completionRoom = opts.completionRoom ?? DEFAULT_COMPLETION_ROOM;
    this.prefixCache = opts.prefixCache === false ? undefined : new PrefixCache(model, opts.prefixCache);
    this.maxBatch = Math.max(1, opts.maxBatch ?? 64);
  }

  /** The prompt ids of a chat (`embeddedPromptIds` in this model's tokenizer and context). */
  promptIds(messages: readonly ChatMessage[], room = this.completionRoom): number[] {
    return embeddedPromptIds(this.tokenizer, this.model.config.contextLength, messages, room);
  }

  readonly promptTokenIds = (request: CompletionRequest): readonly number[] =>
    this.promptIds(
      request.messages,
      Math.min(this.completionRoom, request.maxTokens ?? this.defaultMaxTokens),
    );

  readonly promptLength = (request: CompletionRequest): PromptLength =>
    embeddedPromptLength(
      this.tokenizer,
      this.model.config.contextLength,
      { ...request, maxTokens: request.maxTokens ?? this.defaultMaxTokens },
      this.completionRoom,
    );

  async complete(request: CompletionRequest, signal?: AbortSignal): Promise<Completion> {
    signal?.throwIfAborted();
    const t0 = performance.now();
    const end = this.tokenizer.special('<|end|>');
    const maxTokens = request.maxTokens ?? this.defaultMaxTokens;
    const prompt = this.promptIds(request.messages, Math.min(this.completionRoom, maxTokens));
    const stops = request.stop ?? [];
    // drawn at the call, so seeds follow the order of the calls as when each request ran alone
    const seed = request.seed ?? this.seeds.nextU32();
    const job: SampleJob = {
      prompt,
      options: {
        temperature: request.temperature ?? 1,
        topP: request.topP ?? 1,
        maxTokens,
        stopIds: [end],
        seed,
        ...(this.prefixCache ? { prefixCache: this.prefixCache } : {}),
        ...(stops.length > 0
          ? {
              onToken: (_id: number, ids: readonly number[]) => {
                const text = this.tokenizer.decode(ids);
                return stops.some((s) => text.includes(s));
              },
            }
          : {}),
      },
    };
    checkJob(this.model, job); // a bad request fails here, alone, not the batch it would join
    const r = await new Promise<SampleResult>((finish, fail) => {
      this.pending.push({ job, finish, fail, signal });
      // requests made before the event loop comes round (every rollout that was waiting on the
      // last batch makes its next request in the same tick) join one batch
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
    const body = r.tokenIds.filter((id) => !this.tokenizer.isSpecial(id));
    let text = this.tokenizer.decode(body);
    for (const s of stops) {
      const i = text.indexOf(s);
      if (i >= 0) text = text.slice(0, i);
    }
    return {
      text,
      finishReason: r.finishReason,
      promptTokenIds: prompt,
      tokenIds: r.tokenIds,
      logprobs: r.logprobs,
      usage: { promptTokens: r.promptTokens, completionTokens: r.tokenIds.length },
      latencyMs: performance.now() - t0,
    };
  }

  private flush(): void {
    const all = this.pending.splice(0);
    for (let i = 0; i < all.length; i += this.maxBatch) {
      const batch: Pending[] = [];
      for (const p of all.slice(i, i + this.maxBatch)) {
        if (p.signal?.aborted) p.fail(p.signal.reason);
        else batch.push(p);
      }
      if (batch.length === 0) continue;
      this.batching.batches++;
      this.batching.requests += batch.length;
      let results: SampleResult[];
      try {
        results = sampleMany(
          this.model,
          batch.map((p) => p.job),
        );
      } catch (e) {
        for (const p of batch) p.fail(e);
        continue;
      }
      for (const [k, p] of batch.entries()) p.finish(results[k]!);
    }
  }
}
