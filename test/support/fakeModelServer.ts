/**
 * A scripted fake model server that speaks the real OpenAI chat-completions protocol over a real
 * socket (node:http on 127.0.0.1, an ephemeral port). The test supplies a script,
 * `(body, callIndex) => reply`, that decides every answer; the server records every request body.
 *
 *   const server = await startFakeModelServer((body, i) => (i === 0 ? { status: 500 } : { content: 'hi' }));
 *   const policy = new OpenAiCompatiblePolicy({ baseUrl: server.url, model: 'fake' });
 *   ...
 *   await server.close();
 *
 * Routes: `POST /v1/chat/completions` (scripted), `GET /v1/models` (lists the one model). Anything
 * else is a 404 in the OpenAI error shape.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The request body as the client sent it: the known chat-completion fields, plus anything extra. */
export interface ChatRequestBody {
  readonly model?: string;
  readonly messages?: readonly Record<string, unknown>[];
  readonly tools?: readonly Record<string, unknown>[];
  readonly temperature?: number;
  readonly top_p?: number;
  readonly max_tokens?: number;
  readonly max_completion_tokens?: number;
  readonly stop?: string | readonly string[];
  readonly seed?: number;
  readonly logprobs?: boolean;
  readonly [extra: string]: unknown;
}

export interface FakeToolCall {
  readonly name: string;
  /** a JSON string, or a value that is JSON-encoded for you */
  readonly arguments: string | Readonly<Record<string, unknown>>;
  readonly id?: string;
}

/** A successful completion. Everything is optional: `{}` is an empty assistant message. */
export interface FakeCompletionReply {
  readonly content?: string | null;
  readonly toolCalls?: readonly FakeToolCall[];
  /** a thinking model's hidden reasoning (vLLM / SGLang `reasoning_content`) */
  readonly reasoningContent?: string;
  /** completion token ids, sent as vLLM does with `return_token_ids` (`choices[0].token_ids`) */
  readonly tokenIds?: readonly number[];
  /** prompt token ids, sent at the response root as vLLM does (`prompt_token_ids`) */
  readonly promptTokenIds?: readonly number[];
  /** per-token logprobs, sent as `choices[0].logprobs.content[i].logprob` */
  readonly logprobs?: readonly number[];
  /** default: 'tool_calls' when there are tool calls, else 'stop' */
  readonly finishReason?: string;
  readonly usage?: { readonly promptTokens: number; readonly completionTokens: number };
  /** wait this long before answering */
  readonly delayMs?: number;
}

/** An HTTP error. The default body is the OpenAI error shape with a message naming the status. */
export interface FakeErrorReply {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  readonly delayMs?: number;
}

/** Never answer; the connection stays open until the client gives up or the server closes. */
export interface FakeHangReply {
  readonly hang: true;
}

export type FakeReply = FakeCompletionReply | FakeErrorReply | FakeHangReply;

export type FakeScript = (body: ChatRequestBody, callIndex: number) => FakeReply | Promise<FakeReply>;

export interface FakeModelServer {
  /** the base URL to hand a client, e.g. `http://127.0.0.1:41234/v1` */
  readonly url: string;
  /** every `POST /v1/chat/completions` body, in arrival order (parse failures are recorded as `{}`) */
  readonly requests: readonly ChatRequestBody[];
  close(): Promise<void>;
}

export interface FakeModelServerOptions {
  /** the model id reported in responses and by `GET /v1/models` (default: the request's model, else 'fake-model') */
  readonly model?: string;
}

/** A script that plays the given replies in order and repeats the last one. */
export function replies(...list: readonly FakeReply[]): FakeScript {
  if (list.length === 0) throw new Error('replies() needs at least one reply');
  return (_body, i) => list[Math.min(i, list.length - 1)]!;
}

export async function startFakeModelServer(
  script: FakeScript,
  options: FakeModelServerOptions = {},
): Promise<FakeModelServer> {
  const requests: ChatRequestBody[] = [];
  let calls = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, errorBody(`fake server script failed: ${String(err)}`, 500));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/v1/models') {
      const id = options.model ?? 'fake-model';
      sendJson(res, 200, {
        object: 'list',
        data: [{ id, object: 'model', created: 0, owned_by: 'fake' }],
      });
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      sendJson(res, 404, errorBody(`no route ${req.method} ${path}`, 404));
      return;
    }
    const body = parseBody(await readBody(req));
    requests.push(body);
    const reply = await script(body, calls++);

    if ('hang' in reply) return; // answered by nobody; closeAllConnections() ends it
    if (reply.delayMs !== undefined && reply.delayMs > 0) await wait(reply.delayMs);
    if (req.socket.destroyed) return; // the client gave up while we were waiting

    if ('status' in reply) {
      sendJson(
        res,
        reply.status,
        reply.body ?? errorBody(`fake error ${reply.status}`, reply.status),
        reply.headers,
      );
      return;
    }
    sendJson(res, 200, completionBody(reply, body, options.model));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function completionBody(
  reply: FakeCompletionReply,
  req: ChatRequestBody,
  model: string | undefined,
): unknown {
  const toolCalls = reply.toolCalls?.map((call, i) => ({
    id: call.id ?? `call_${i}`,
    type: 'function',
    function: {
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
    },
  }));
  const content = reply.content === undefined ? (toolCalls ? null : '') : reply.content;
  const message: Record<string, unknown> = { role: 'assistant', content };
  if (toolCalls && toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reply.reasoningContent !== undefined) message.reasoning_content = reply.reasoningContent;

  const choice: Record<string, unknown> = {
    index: 0,
    message,
    finish_reason: reply.finishReason ?? (toolCalls && toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    logprobs: reply.logprobs
      ? {
          content: reply.logprobs.map((logprob, i) => ({
            token: reply.tokenIds?.[i] !== undefined ? `token_id:${reply.tokenIds[i]}` : `t${i}`,
            logprob,
            bytes: null,
            top_logprobs: [],
          })),
        }
      : null,
  };
  if (reply.tokenIds) choice.token_ids = reply.tokenIds;

  const completionTokens =
    reply.usage?.completionTokens ?? reply.tokenIds?.length ?? countWords(content ?? '');
  const promptTokens =
    reply.usage?.promptTokens ??
    reply.promptTokenIds?.length ??
    (req.messages ?? []).reduce((n, m) => n + countWords(typeof m.content === 'string' ? m.content : ''), 0);

  const body: Record<string, unknown> = {
    id: `chatcmpl-fake-${Date.now()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: model ?? req.model ?? 'fake-model',
    choices: [choice],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
  if (reply.promptTokenIds) body.prompt_token_ids = reply.promptTokenIds;
  return body;
}

function errorBody(message: string, status: number): unknown {
  const type = status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { error: { message, type, param: null, code: status } };
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': typeof body === 'string' ? 'text/plain' : 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseBody(text: string): ChatRequestBody {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as ChatRequestBody)
      : {};
  } catch {
    return {};
  }
}

function countWords(text: string): number {
  const trimmed = text.trim();
  return trimmed === '' ? 0 : trimmed.split(/\s+/).length;
}

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
