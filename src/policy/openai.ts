/**
 * The OpenAI-compatible sampler: a Policy backed by any server that speaks `POST /v1/chat/completions`
 * (vLLM, SGLang, Ollama, llama.cpp's server, a hosted OpenAI-compatible API), through the official
 * `openai` SDK.
 *
 * Retries are ours, not the SDK's (its own are switched off), so the rule is explicit and tested:
 * HTTP 429, 5xx, per-attempt timeouts and network errors (refused, reset, DNS) are retried with
 * exponential backoff and jitter, honouring `Retry-After`; any other 4xx fails at once. When the
 * retries run out, or on a 4xx, a `ModelServerError` names the URL and what to check. An aborted
 * `signal` cancels the request in flight and the backoff wait, and rejects with `signal.reason`.
 *
 * Token ids and logprobs are read when the server returns them: logprobs from the standard
 * `choices[0].logprobs.content[].logprob` (ask for them with `returnLogprobs`), completion token ids
 * from vLLM's / SGLang's `choices[0].token_ids` (ask with `extraBody: { return_token_ids: true }`),
 * and, defensively, SGLang's `sglext.output_ids` and the older vLLM patches' `response_token_ids`.
 * Prompt token ids (`prompt_token_ids`) are never taken for the completion's.
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { OpenAiTool } from '../envs/tools.js';
import type {
  ChatMessage,
  Completion,
  CompletionRequest,
  NativeToolCall,
  Policy,
  SamplingOptions,
} from './policy.js';

export interface OpenAiCompatibleOptions extends SamplingOptions {
  /** the server's base URL, including the version prefix, e.g. `http://127.0.0.1:8000/v1` */
  readonly baseUrl: string;
  /** the model id the server knows (vLLM's `--served-model-name`, Ollama's tag, ...) */
  readonly model: string;
  /** default: `process.env.OPENAI_API_KEY`, else 'EMPTY' (local servers ignore it) */
  readonly apiKey?: string;
  /** the policy's name in records and tables (default: `model`) */
  readonly name?: string;
  /**
   * merged into every request body, e.g. vLLM's `{ return_token_ids: true }`, `{ top_k: 20 }` or
   * `{ chat_template_kwargs: { enable_thinking: false } }`. Fields this class sets (model, messages,
   * tools, and the sampling values that are set) win over the same keys here.
   */
  readonly extraBody?: Readonly<Record<string, unknown>>;
  /** ask for per-token logprobs (`logprobs: true`) */
  readonly returnLogprobs?: boolean;
  /** the field that carries `maxTokens` (default 'max_tokens', which every local server accepts) */
  readonly maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** per attempt, covering the whole response (default 300000) */
  readonly timeoutMs?: number;
  /** retries after the first attempt (default 3, so at most 4 attempts) */
  readonly maxRetries?: number;
  /** backoff before retry k (1-based) is min(maxBackoffMs, initialBackoffMs * 2^(k-1)) scaled by jitter */
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** jitter source in [0, 1): the wait is scaled by 0.5 + 0.5 * random() (default Math.random) */
  readonly random?: () => number;
  /** how to wait between attempts; must reject when `signal` aborts (default: a timer) */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

import { ModelServerError, type ModelServerErrorKind } from './errors.js';

export { ModelServerError, type ModelServerErrorKind };

const DEFAULTS = {
  timeoutMs: 300_000,
  maxRetries: 3,
  initialBackoffMs: 500,
  maxBackoffMs: 10_000,
  /** a server's Retry-After is honoured up to this long */
  maxRetryAfterMs: 60_000,
} as const;

/** why one attempt failed */
interface Failure {
  readonly kind: ModelServerErrorKind;
  readonly retryable: boolean;
  /** short, e.g. 'ECONNREFUSED', 'no answer within 100 ms', '503 overloaded' */
  readonly detail: string;
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly cause: unknown;
}

export class OpenAiCompatiblePolicy implements Policy {
  readonly name: string;
  readonly baseUrl: string;
  readonly model: string;
  private readonly client: OpenAI;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly random: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(private readonly options: OpenAiCompatibleOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    if (!URL.canParse(this.baseUrl) || !/^https?:$/.test(new URL(this.baseUrl).protocol)) {
      throw new Error(
        `invalid model server URL '${options.baseUrl}': expected e.g. http://127.0.0.1:8000/v1`,
      );
    }
    if (!options.model) throw new Error('no model name given: pass the model id the server serves (--model)');
    this.model = options.model;
    this.name = options.name ?? options.model;
    this.timeoutMs = positive(options.timeoutMs ?? DEFAULTS.timeoutMs, 'timeoutMs');
    this.maxRetries = Math.max(0, Math.floor(options.maxRetries ?? DEFAULTS.maxRetries));
    this.initialBackoffMs = Math.max(0, options.initialBackoffMs ?? DEFAULTS.initialBackoffMs);
    this.maxBackoffMs = Math.max(this.initialBackoffMs, options.maxBackoffMs ?? DEFAULTS.maxBackoffMs);
    this.random = options.random ?? Math.random;
    this.sleep = options.sleep ?? abortableSleep;
    this.client = new OpenAI({
      baseURL: this.baseUrl,
      apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? 'EMPTY',
      maxRetries: 0, // the loop in complete() retries
      timeout: Math.ceil(this.timeoutMs), // ours (which also covers the body) fires first or together
      fetch: normalisingFetch,
    });
  }

  /** the request body sent for `request` (exposed for tests and dry runs) */
  body(request: CompletionRequest): ChatCompletionCreateParamsNonStreaming {
    const o = this.options;
    const sampling: Record<string, unknown> = {};
    const set = (key: string, value: unknown) => {
      if (value !== undefined) sampling[key] = value;
    };
    set('temperature', request.temperature ?? o.temperature);
    set('top_p', request.topP ?? o.topP);
    set(o.maxTokensField ?? 'max_tokens', request.maxTokens ?? o.maxTokens);
    const stop = request.stop ?? o.stop;
    if (stop && stop.length > 0) sampling.stop = [...stop];
    set('seed', request.seed ?? o.seed);
    if (o.returnLogprobs) sampling.logprobs = true;

    const body: Record<string, unknown> = {
      ...o.extraBody,
      ...sampling,
      model: this.model,
      messages: request.messages.map(toWireMessage),
    };
    if (request.tools && request.tools.length > 0) body.tools = request.tools.map(toWireTool);
    else delete body.tools;
    return body as unknown as ChatCompletionCreateParamsNonStreaming;
  }

  async complete(request: CompletionRequest, signal?: AbortSignal): Promise<Completion> {
    const body = this.body(request);
    const attempts = this.maxRetries + 1;
    let last: Failure | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) await this.sleep(this.backoffMs(attempt - 1, last?.retryAfterMs), signal);
      throwIfAborted(signal);
      const started = performance.now();
      const result = await this.attempt(body, signal);
      if ('failure' in result) {
        last = result.failure;
        if (!last.retryable) throw this.error(last, attempt);
        continue;
      }
      const completion = readCompletion(result.response, performance.now() - started);
      if (typeof completion === 'string') {
        throw this.error(
          { kind: 'bad_response', retryable: false, detail: completion, cause: result.response },
          attempt,
        );
      }
      return completion;
    }
    throw this.error(last!, attempts);
  }

  /** the wait before retry `k` (1-based) */
  private backoffMs(k: number, retryAfterMs: number | undefined): number {
    const base = Math.min(this.maxBackoffMs, this.initialBackoffMs * 2 ** (k - 1));
    const jittered = base * (0.5 + 0.5 * this.random());
    return Math.max(jittered, Math.min(retryAfterMs ?? 0, DEFAULTS.maxRetryAfterMs));
  }

  private async attempt(
    body: ChatCompletionCreateParamsNonStreaming,
    signal: AbortSignal | undefined,
  ): Promise<{ response: ChatCompletion } | { failure: Failure }> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await this.client.chat.completions.create(body, { signal: controller.signal });
      return { response };
    } catch (err) {
      throwIfAborted(signal);
      return { failure: timedOut ? this.timeoutFailure(err) : classify(err, this.timeoutMs) };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private timeoutFailure(cause: unknown): Failure {
    return { kind: 'timeout', retryable: true, detail: `no answer within ${this.timeoutMs} ms`, cause };
  }

  private error(f: Failure, attempts: number): ModelServerError {
    const url = this.baseUrl;
    const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
    let message: string;
    switch (f.kind) {
      case 'unreachable':
        message = `cannot reach the model server at ${url} (${f.detail}) after ${tries}: is it running? check --base-url`;
        break;
      case 'timeout':
        message =
          `the model server at ${url} timed out (no answer within ${this.timeoutMs} ms) after ${tries}: ` +
          'is it overloaded or still loading the model? raise the timeout or check --base-url';
        break;
      case 'bad_response':
        message = `the model server at ${url} sent something that is not a chat completion: ${f.detail}`;
        break;
      case 'http':
        message = f.retryable
          ? `the model server at ${url} kept failing: HTTP ${f.detail} (after ${tries})`
          : `the model server at ${url} rejected the request: HTTP ${f.detail}${hint(f.status, this.model)}`;
        break;
    }
    return new ModelServerError(message, f.kind, url, attempts, f.status, { cause: f.cause });
  }
}

function hint(status: number | undefined, model: string): string {
  if (status === 401 || status === 403)
    return ' (check the API key: the variable --api-key-env names, OPENAI_API_KEY by default)';
  if (status === 404)
    return ` (check --base-url, which usually ends in /v1, and that the server serves '${model}')`;
  return '';
}

function classify(err: unknown, timeoutMs: number): Failure {
  if (err instanceof APIConnectionTimeoutError) {
    return { kind: 'timeout', retryable: true, detail: `no answer within ${timeoutMs} ms`, cause: err };
  }
  if (err instanceof APIError && typeof err.status === 'number') {
    const status = err.status;
    return {
      kind: 'http',
      retryable: status === 429 || status >= 500,
      status,
      detail: `${status} ${serverMessage(err)}`.trim(),
      retryAfterMs: retryAfterMs(err.headers),
      cause: err,
    };
  }
  if (err instanceof SyntaxError) {
    return { kind: 'bad_response', retryable: false, detail: `invalid JSON (${err.message})`, cause: err };
  }
  // APIConnectionError, or a body cut off mid-read (undici's TypeError 'terminated'): the network
  const code = errorCode(err);
  const detail = code ?? (err instanceof APIConnectionError ? messageOf(err.cause) : messageOf(err));
  return { kind: 'unreachable', retryable: true, detail, cause: err };
}

/** the server's own error message, without the SDK's status prefix */
function serverMessage(err: APIError): string {
  const body = err.error as { message?: unknown } | undefined;
  if (body && typeof body.message === 'string') return body.message;
  return err.message.replace(/^\d{3}\s*/, '');
}

function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms)) return ms;
  const raw = headers?.get('retry-after');
  if (!raw) return undefined;
  const seconds = Number.parseFloat(raw);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

/** the first errno-style code (ECONNREFUSED, ECONNRESET, ENOTFOUND, UND_ERR_SOCKET, ...) in a cause chain */
function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 6 && typeof e === 'object' && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z_]+$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function positive(value: number, what: string): number {
  if (!(value > 0) || !Number.isFinite(value))
    throw new Error(`${what} must be a positive number, got ${value}`);
  return value;
}

/**
 * Local servers disagree on the error body: OpenAI, llama.cpp, Ollama and recent vLLM send
 * `{error: {message, ...}}`, SGLang and older vLLM send `{object: 'error', message, ...}` at the top
 * level, some proxies send `{detail}` or plain text. The SDK only reads the first shape, so rewrite
 * the others into it before the SDK sees them.
 */
const normalisingFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  if (res.ok) return res;
  const text = await res.text();
  const headers = new Headers(res.headers);
  headers.delete('content-length');
  headers.delete('content-encoding');
  return new Response(normaliseErrorBody(text), { status: res.status, statusText: res.statusText, headers });
};

function normaliseErrorBody(text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text; // plain text: the SDK uses it as the message
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return text;
  const obj = parsed as Record<string, unknown>;
  if (typeof obj.error === 'object' && obj.error !== null) return text;
  const message = obj.message ?? obj.detail ?? obj.error;
  if (message === undefined) return text;
  return JSON.stringify({
    error: { ...obj, message: typeof message === 'string' ? message : JSON.stringify(message) },
  });
}

function toWireMessage(m: ChatMessage): ChatCompletionMessageParam {
  switch (m.role) {
    case 'system':
    case 'user':
      return { role: m.role, content: m.content };
    case 'tool':
      return { role: 'tool', content: m.content, tool_call_id: m.tool_call_id };
    case 'assistant':
      return m.tool_calls && m.tool_calls.length > 0
        ? {
            role: 'assistant',
            content: m.content,
            tool_calls: m.tool_calls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.function.name, arguments: c.function.arguments },
            })),
          }
        : { role: 'assistant', content: m.content };
  }
}

/** only the fields the API defines: hosted APIs reject unknown keys such as BFCL's `response` */
function toWireTool(t: OpenAiTool): ChatCompletionTool {
  return {
    type: 'function',
    function: {
      name: t.function.name,
      description: t.function.description,
      parameters: t.function.parameters as unknown as Record<string, unknown>,
    },
  };
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** a Completion, or a string saying what is wrong with the body */
function readCompletion(response: ChatCompletion, latencyMs: number): Completion | string {
  const raw: unknown = response;
  if (!isObject(raw)) return `expected a JSON object, got ${JSON.stringify(raw)?.slice(0, 200)}`;
  const choice = Array.isArray(raw.choices) ? raw.choices[0] : undefined;
  if (!isObject(choice) || !isObject(choice.message)) {
    return `no choices[0].message in ${JSON.stringify(raw).slice(0, 300)}`;
  }
  const message = choice.message;
  const toolCalls = readToolCalls(message.tool_calls);
  const logprobs = readLogprobs(choice.logprobs);
  const tokenIds = readTokenIds(raw, choice);
  const usage = isObject(raw.usage) ? raw.usage : undefined;
  return {
    // reasoning_content (thinking models) is deliberately not part of the text
    text: typeof message.content === 'string' ? message.content : '',
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    ...(typeof choice.finish_reason === 'string' ? { finishReason: choice.finish_reason } : {}),
    ...(tokenIds ? { tokenIds } : {}),
    ...(logprobs ? { logprobs } : {}),
    ...(usage && typeof usage.prompt_tokens === 'number' && typeof usage.completion_tokens === 'number'
      ? { usage: { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens } }
      : {}),
    latencyMs,
  };
}

function readToolCalls(value: unknown): NativeToolCall[] {
  if (!Array.isArray(value)) return [];
  const calls: NativeToolCall[] = [];
  value.forEach((call: unknown, i) => {
    if (!isObject(call) || !isObject(call.function) || typeof call.function.name !== 'string') return;
    if (call.type !== undefined && call.type !== 'function') return;
    const args = call.function.arguments;
    calls.push({
      id: typeof call.id === 'string' && call.id !== '' ? call.id : `call_${i}`,
      type: 'function',
      function: {
        name: call.function.name,
        // Some servers send an object rather than the JSON string the API specifies.
        arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
      },
    });
  });
  return calls;
}

function readLogprobs(value: unknown): number[] | undefined {
  if (!isObject(value) || !Array.isArray(value.content)) return undefined;
  const out: number[] = [];
  for (const entry of value.content) {
    if (!isObject(entry) || typeof entry.logprob !== 'number') return undefined;
    out.push(entry.logprob);
  }
  return out;
}

/**
 * The completion's token ids, wherever this server puts them: vLLM (>= 0.10.2) and SGLang with
 * `return_token_ids` set `choices[i].token_ids`; SGLang's `sglext.output_ids` holds one list per
 * choice; the older vLLM patches (agent-lightning) put `response_token_ids` at the root.
 */
function readTokenIds(response: Json, choice: Json): number[] | undefined {
  const sglext = isObject(response.sglext) ? response.sglext : undefined;
  for (const candidate of [choice.token_ids, sglext?.output_ids, response.response_token_ids]) {
    const ids = intList(candidate) ?? (Array.isArray(candidate) ? intList(candidate[0]) : undefined);
    if (ids) return ids;
  }
  return undefined;
}

function intList(value: unknown): number[] | undefined {
  if (!Array.isArray(value) || !value.every((v) => Number.isInteger(v))) return undefined;
  return value as number[];
}
