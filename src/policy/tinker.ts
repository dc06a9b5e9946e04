/**
 * A policy that samples through a Tinker sampling session: the chat (and, for native tool calling,
 * its tools) rendered by the model's own chat template into token ids, one `asample` per request,
 * the sampled ids decoded by the same tokenizer. It returns the prompt ids, the sampled ids and
 * their logprobs, so a trainer trains on exactly the tokens the sampler saw and wrote.
 *
 * Tool calls: with request `tools` the policy behaves like a native tool-calling server: the
 * template renders the tools, and Qwen-style `<tool_call>{json}</tool_call>` blocks in the text
 * become structured calls (a block that does not parse stays in the text, so the turn ends in a
 * text answer). Without `tools` (the hermes format: tools in the system prompt as text), the text
 * is returned whole and the hermes decoder of the rollout parses it, with its parse errors.
 */

import { floatRepr } from '../envs/py/format.js';
import { parsePyJson } from '../envs/py/json.js';
import type { PyValue } from '../envs/py/values.js';
import { templateValue } from '../render/chat-line.js';
import { FamilyRenderer } from '../render/family-renderer.js';
import type { Renderer, RenderMessage, TemplateValue } from '../render/renderer.js';
import type { SamplingClient } from '../tinker/client.js';
import { TinkerError } from '../tinker/errors.js';
import { Semaphore } from '../util/semaphore.js';
import {
  type Completion,
  type CompletionRequest,
  type NativeToolCall,
  type Policy,
  SampleFailedError,
} from './policy.js';

export interface TinkerPolicyOptions {
  /** a name for records (the base model or the tinker:// path) */
  readonly name: string;
  /** asample requests in flight at once; later ones wait (backpressure). Default 64 */
  readonly maxInFlight?: number;
  /** completion length when a request names none */
  readonly defaultMaxTokens?: number;
  /** Qwen3's thinking switch, passed to the template when set */
  readonly enableThinking?: boolean;
  /** frees what the sampler holds (called once by close) */
  readonly onClose?: () => Promise<void> | void;
  /**
   * the service's `max_context_length` for the model: a prompt that leaves no room for a token is
   * refused here, before it is sent (`SampleFailedError`), and the completion is capped to the room
   */
  readonly maxContextLength?: number;
}

const TOOL_CALL_BLOCK = /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g;

/**
 * The JSON text of a value read from a model's output that keeps what the model wrote, as Python's
 * json.loads would read it back: ints of any size with all their digits, and a float with an
 * integral value as a float (`30.0`); everything else as JSON.stringify writes it. JSON.parse and
 * JSON.stringify would round 12345678901234567890 and turn 30.0 into the int 30.
 */
export function argumentsText(v: PyValue): string {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'NaN';
    if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
    return Number.isInteger(v) ? floatRepr(v) : JSON.stringify(v);
  }
  if (Array.isArray(v)) return `[${v.map(argumentsText).join(',')}]`;
  if (v instanceof Map)
    return `{${[...v].map(([k, x]) => `${JSON.stringify(String(k))}:${argumentsText(x)}`).join(',')}}`;
  return JSON.stringify(v);
}

/**
 * Qwen's tool-call blocks in `text` as native calls, and the text left without them; a block whose
 * JSON is not an object with a string `name` is left in the text and yields no call. The JSON is
 * read as Python reads it (parsePyJson), so the arguments keep the model's ints and floats exactly.
 */
export function nativeCallsOf(text: string): { text: string; calls: NativeToolCall[] } {
  const calls: NativeToolCall[] = [];
  const rest = text.replace(TOOL_CALL_BLOCK, (whole, body: string) => {
    let v: PyValue;
    try {
      v = parsePyJson(body);
    } catch {
      return whole;
    }
    if (!(v instanceof Map)) return whole;
    const name = v.get('name');
    if (typeof name !== 'string' || name === '') return whole;
    const args = v.get('arguments') ?? v.get('parameters') ?? new Map();
    calls.push({
      id: `call_${calls.length}`,
      type: 'function',
      function: { name, arguments: typeof args === 'string' ? args : argumentsText(args) },
    });
    return '';
  });
  return { text: calls.length > 0 ? rest.trim() : text, calls };
}

/** the chat as the template reads it: native calls' arguments as objects, as Qwen's template prints them */
function renderMessages(request: CompletionRequest): RenderMessage[] {
  return request.messages.map((m): RenderMessage => {
    if (m.role !== 'assistant') return m as RenderMessage;
    // null content (a call-only turn) as '': Python templates test `content is string`, which the
    // JavaScript template engine cannot do on null
    if (!m.tool_calls?.length) return { role: 'assistant', content: m.content ?? '' };
    return {
      role: 'assistant',
      content: m.content ?? '',
      tool_calls: m.tool_calls.map((c) => {
        // read as Python reads it, so the template prints the model's values as it wrote them
        let args: TemplateValue;
        try {
          args = templateValue(parsePyJson(c.function.arguments));
        } catch {
          args = c.function.arguments;
        }
        return {
          id: c.id,
          type: 'function',
          function: { name: c.function.name, arguments: args as Record<string, never> },
        };
      }),
    };
  });
}

/** a request's prompt ids: the chat and its tools in the model's template, with the generation prompt */
export function promptIdsOf(
  renderer: Renderer,
  request: CompletionRequest,
  enableThinking?: boolean,
): readonly number[] {
  return renderer.render({
    messages: renderMessages(request),
    tools: request.tools && request.tools.length > 0 ? request.tools : null,
    addGenerationPrompt: true,
    ...(enableThinking !== undefined ? { enableThinking } : {}),
  }).tokens;
}

export class TinkerPolicy implements Policy {
  readonly name: string;
  private readonly slots: Semaphore;
  private closed = false;

  constructor(
    private readonly sampler: SamplingClient,
    readonly renderer: Renderer,
    private readonly opts: TinkerPolicyOptions,
  ) {
    this.name = opts.name;
    this.slots = new Semaphore(opts.maxInFlight ?? 64);
  }

  /** the prompt ids of a request: what `complete` sends */
  promptIds(request: CompletionRequest): readonly number[] {
    return promptIdsOf(this.renderer, request, this.opts.enableThinking);
  }

  readonly promptTokenIds = (request: CompletionRequest): readonly number[] => this.promptIds(request);

  async complete(request: CompletionRequest, signal?: AbortSignal): Promise<Completion> {
    if (this.closed) throw new Error(`${this.name}: the sampler was closed`);
    const t0 = performance.now();
    const prompt = this.promptIds(request);
    let maxTokens = request.maxTokens ?? this.opts.defaultMaxTokens ?? 512;
    const context = this.opts.maxContextLength;
    if (context !== undefined) {
      if (prompt.length >= context)
        throw new SampleFailedError(
          `${this.name}: the prompt has ${prompt.length} tokens, the service's max_context_length is ${context}; not sent`,
        );
      maxTokens = Math.min(maxTokens, context - prompt.length);
    }
    const res = await this.slots
      .run(() =>
        this.sampler.sample(prompt, {
          maxTokens,
          temperature: request.temperature ?? 1,
          ...(request.topP !== undefined ? { topP: request.topP } : {}),
          ...(request.seed !== undefined ? { seed: request.seed } : {}),
          // stop on the template's end-of-turn ids; text stops would cut inside a token
          stop:
            this.renderer instanceof FamilyRenderer
              ? this.renderer.samplingStop
              : [...this.renderer.stopTokens],
          ...(signal ? { signal } : {}),
        }),
      )
      .catch((e: unknown) => {
        // the service ran this one request and refused it (a 400 for its prompt, say): that ends
        // the rollout, not the sampler; anything else (unreachable, auth) is the run's problem
        if (
          e instanceof TinkerError &&
          (e.kind === 'request_failed' || (e.kind === 'http' && e.status === 400))
        )
          throw new SampleFailedError(`${this.name}: the service refused the sample: ${e.message}`);
        throw e;
      });
    const seq = res.sequences[0];
    if (!seq) throw new Error(`${this.name}: asample answered no sequence`);
    if (!seq.logprobs || seq.logprobs.length !== seq.tokens.length)
      throw new Error(`${this.name}: asample answered ${seq.tokens.length} tokens without their logprobs`);
    const read = this.readCompletion(seq.tokens, request.tools !== undefined && request.tools.length > 0);
    return {
      ...read,
      finishReason: seq.stopReason,
      promptTokenIds: prompt,
      tokenIds: seq.tokens,
      logprobs: seq.logprobs,
      usage: {
        promptTokens: prompt.length,
        completionTokens: seq.tokens.length,
        cachedPromptTokens: res.promptCacheHitTokens,
      },
      latencyMs: performance.now() - t0,
    };
  }

  /**
   * A completion's text and native calls: a model family's renderer reads its own syntax (harmony
   * channels, DeepSeek's and Kimi's blocks, ...; the text is the visible content, reasoning and
   * markup removed); the Hugging Face template's renderer reads Qwen's `<tool_call>` blocks.
   */
  private readCompletion(
    ids: readonly number[],
    native: boolean,
  ): Pick<Completion, 'text' | 'toolCalls' | 'unparsedToolCalls'> {
    if (this.renderer instanceof FamilyRenderer) {
      const parsed = this.renderer.parseCompletion(ids);
      // a text format (hermes) reads its own tags: when the family's parser took them as its calls
      // (Qwen's <tool_call>), the decoder gets the raw text; otherwise the clean content
      if (!native)
        return {
          text:
            parsed.toolCalls.length > 0 || parsed.unparsed.length > 0
              ? this.renderer.completionText(ids)
              : parsed.content,
        };
      return {
        text: parsed.content,
        ...(parsed.toolCalls.length > 0
          ? {
              toolCalls: parsed.toolCalls.map(
                (c, i): NativeToolCall => ({
                  id: c.id || `call_${i}`,
                  type: 'function',
                  function: { name: c.name, arguments: c.arguments },
                }),
              ),
            }
          : {}),
        ...(parsed.unparsed.length > 0 ? { unparsedToolCalls: parsed.unparsed } : {}),
      };
    }
    const raw = this.renderer.completionText(ids);
    if (!native) return { text: raw };
    const calls = nativeCallsOf(raw);
    return { text: calls.text, ...(calls.calls.length > 0 ? { toolCalls: calls.calls } : {}) };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.opts.onClose?.();
  }
}
