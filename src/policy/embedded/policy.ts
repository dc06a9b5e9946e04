/**
 * The embedded model behind the Policy contract: chat messages are rendered in the embedded prompt
 * format (`<|role|>content<|end|>`), the completion is sampled with the KV cache, and the completion
 * token ids (including the closing `<|end|>` when produced) and their logprobs are returned. The model
 * has no native tool calling: tools are described in the prompt and calls parsed from the text.
 */
import type { ChatMessage, Completion, CompletionRequest, Policy } from '../policy.js';
import type { Gpt } from './model.js';
import { Rng } from './rng.js';
import { sample } from './sampler.js';
import { type ChatRole, encodeChat, type Tokenizer } from './tokenizer.js';

export interface EmbeddedPolicyOptions {
  readonly name?: string;
  /** seeds the per-request streams of requests that give no seed */
  readonly seed?: number;
  readonly defaultMaxTokens?: number;
}

/** the text the embedded model sees for one message */
export function messageText(m: ChatMessage): { role: ChatRole; content: string } {
  if (m.role === 'assistant') {
    let content = m.content ?? '';
    for (const c of m.tool_calls ?? []) {
      content += `${content ? '\n' : ''}${JSON.stringify({ name: c.function.name, arguments: c.function.arguments })}`;
    }
    return { role: 'assistant', content };
  }
  return { role: m.role, content: m.content };
}

export class EmbeddedPolicy implements Policy {
  readonly name: string;
  private readonly seeds: Rng;
  private readonly defaultMaxTokens: number;

  constructor(
    readonly model: Gpt,
    readonly tokenizer: Tokenizer,
    opts: EmbeddedPolicyOptions = {},
  ) {
    this.name = opts.name ?? 'embedded';
    this.seeds = new Rng(opts.seed ?? 0);
    this.defaultMaxTokens = opts.defaultMaxTokens ?? 256;
  }

  /** the prompt ids of a chat, ending with the generation prompt `<|assistant|>` */
  promptIds(messages: readonly ChatMessage[]): number[] {
    return encodeChat(this.tokenizer, messages.map(messageText), true).ids;
  }

  async complete(request: CompletionRequest, signal?: AbortSignal): Promise<Completion> {
    signal?.throwIfAborted();
    const t0 = performance.now();
    const end = this.tokenizer.special('<|end|>');
    const prompt = this.promptIds(request.messages);
    const stops = request.stop ?? [];
    const seed = request.seed ?? this.seeds.nextU32();
    const r = sample(this.model, prompt, {
      temperature: request.temperature ?? 1,
      topP: request.topP ?? 1,
      maxTokens: request.maxTokens ?? this.defaultMaxTokens,
      stopIds: [end],
      seed,
      onToken:
        stops.length > 0
          ? (_id, ids) => {
              const text = this.tokenizer.decode(ids);
              return stops.some((s) => text.includes(s));
            }
          : undefined,
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
      tokenIds: r.tokenIds,
      logprobs: r.logprobs,
      usage: { promptTokens: r.promptTokens, completionTokens: r.tokenIds.length },
      latencyMs: performance.now() - t0,
    };
  }
}
