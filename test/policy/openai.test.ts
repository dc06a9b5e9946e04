import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ModelServerError,
  type OpenAiCompatibleOptions,
  OpenAiCompatiblePolicy,
} from '../../src/policy/openai.js';
import type { CompletionRequest } from '../../src/policy/policy.js';
import {
  type FakeModelServer,
  type FakeScript,
  replies,
  startFakeModelServer,
} from '../support/fakeModelServer.js';

const servers: FakeModelServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(script: FakeScript): Promise<FakeModelServer> {
  const server = await startFakeModelServer(script);
  servers.push(server);
  return server;
}

/** fast retries, deterministic jitter, and a record of every wait */
function policyFor(url: string, options: Partial<OpenAiCompatibleOptions> = {}) {
  const waits: number[] = [];
  const policy = new OpenAiCompatiblePolicy({
    baseUrl: url,
    model: 'test-model',
    timeoutMs: 2_000,
    maxRetries: 2,
    initialBackoffMs: 5,
    maxBackoffMs: 20,
    random: () => 0.5,
    ...options,
    sleep: async (ms, signal) => {
      waits.push(ms);
      signal?.throwIfAborted();
      await new Promise((r) => setTimeout(r, ms));
      signal?.throwIfAborted();
    },
  });
  return { policy, waits };
}

const hello: CompletionRequest = { messages: [{ role: 'user', content: 'Say hello' }] };

/** a port nobody listens on: bind one, note it, close it */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const address = s.address();
  await new Promise<void>((r) => s.close(() => r()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('OpenAiCompatiblePolicy against a fake server over a real socket', () => {
  it('returns the assistant text, finish reason, usage and latency', async () => {
    const server = await serve(() => ({
      content: 'Hello there',
      usage: { promptTokens: 7, completionTokens: 2 },
    }));
    const { policy } = policyFor(server.url);
    const out = await policy.complete(hello);
    expect(out.text).toBe('Hello there');
    expect(out.finishReason).toBe('stop');
    expect(out.usage).toEqual({ promptTokens: 7, completionTokens: 2 });
    expect(out.toolCalls).toBeUndefined();
    expect(out.tokenIds).toBeUndefined();
    expect(out.logprobs).toBeUndefined();
    expect(out.latencyMs).toBeGreaterThan(0);
    expect(policy.name).toBe('test-model');
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.model).toBe('test-model');
    expect(server.requests[0]!.messages).toEqual([{ role: 'user', content: 'Say hello' }]);
  });

  it('returns native tool calls, with text "" when the content is null', async () => {
    const server = await serve(() => ({
      toolCalls: [
        { id: 'call_a', name: 'cd', arguments: { folder: 'docs' } },
        { name: 'ls', arguments: '{}' },
      ],
    }));
    const { policy } = policyFor(server.url);
    const out = await policy.complete({
      messages: [{ role: 'user', content: 'go to docs and list' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'cd',
            description: 'change directory',
            parameters: { type: 'object', properties: { folder: { type: 'string' } }, required: ['folder'] },
            response: { type: 'dict' },
          },
        },
      ],
    });
    expect(out.text).toBe('');
    expect(out.finishReason).toBe('tool_calls');
    expect(out.toolCalls).toEqual([
      { id: 'call_a', type: 'function', function: { name: 'cd', arguments: '{"folder":"docs"}' } },
      { id: 'call_1', type: 'function', function: { name: 'ls', arguments: '{}' } },
    ]);
    // the tools go out in the API's shape, without BFCL's non-standard `response` key
    expect(server.requests[0]!.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'cd',
          description: 'change directory',
          parameters: { type: 'object', properties: { folder: { type: 'string' } }, required: ['folder'] },
        },
      },
    ]);
  });

  it('sends a multi-turn history with assistant tool calls and tool results', async () => {
    const server = await serve(() => ({ content: 'done' }));
    const { policy } = policyFor(server.url);
    const call = { id: 'c1', type: 'function' as const, function: { name: 'ls', arguments: '{}' } };
    await policy.complete({
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'list' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', content: '["a.txt"]', tool_call_id: 'c1' },
      ],
    });
    expect(server.requests[0]!.messages).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'list' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', content: '["a.txt"]', tool_call_id: 'c1' },
    ]);
    expect(server.requests[0]!.tools).toBeUndefined();
  });

  it('forwards default sampling values, lets the request override them, and merges the extra body', async () => {
    const server = await serve(() => ({ content: 'ok' }));
    const { policy } = policyFor(server.url, {
      temperature: 0.7,
      topP: 0.9,
      maxTokens: 256,
      stop: ['</s>'],
      seed: 1,
      extraBody: { return_token_ids: true, top_k: 20, chat_template_kwargs: { enable_thinking: false } },
    });
    await policy.complete(hello);
    await policy.complete({ ...hello, temperature: 0, maxTokens: 16, seed: 42, stop: ['\n'] });
    const [first, second] = server.requests;
    expect(first).toMatchObject({
      temperature: 0.7,
      top_p: 0.9,
      max_tokens: 256,
      stop: ['</s>'],
      seed: 1,
      return_token_ids: true,
      top_k: 20,
      chat_template_kwargs: { enable_thinking: false },
    });
    expect(first!.logprobs).toBeUndefined();
    expect(second).toMatchObject({ temperature: 0, top_p: 0.9, max_tokens: 16, stop: ['\n'], seed: 42 });
  });

  it('leaves unset sampling fields out, and the class fields win over the extra body', async () => {
    const server = await serve(() => ({ content: 'ok' }));
    const { policy } = policyFor(server.url, {
      maxTokensField: 'max_completion_tokens',
      maxTokens: 8,
      extraBody: { model: 'other', temperature: 1.5 },
    });
    await policy.complete(hello);
    const body = server.requests[0]!;
    expect(body.model).toBe('test-model');
    expect(body.temperature).toBe(1.5); // not set by us, so the extra body's value stands
    expect(body.max_completion_tokens).toBe(8);
    expect(Object.keys(body)).not.toContain('max_tokens');
    expect(Object.keys(body)).not.toContain('top_p');
    expect(Object.keys(body)).not.toContain('seed');
    expect(Object.keys(body)).not.toContain('stop');
  });

  it("captures logprobs and vLLM's completion token ids, never the prompt's", async () => {
    const server = await serve(() => ({
      content: 'Hi!',
      tokenIds: [9906, 0],
      promptTokenIds: [1, 2, 3, 4],
      logprobs: [-0.25, -1.5],
    }));
    const { policy } = policyFor(server.url, { returnLogprobs: true, extraBody: { return_token_ids: true } });
    const out = await policy.complete(hello);
    expect(out.tokenIds).toEqual([9906, 0]);
    expect(out.logprobs).toEqual([-0.25, -1.5]);
    expect(server.requests[0]).toMatchObject({ logprobs: true, return_token_ids: true });
  });

  it('keeps reasoning_content out of the text', async () => {
    const server = await serve(() => ({ content: 'Answer', reasoningContent: 'let me think...' }));
    const { policy } = policyFor(server.url);
    expect((await policy.complete(hello)).text).toBe('Answer');
  });

  it('retries 500 and 429 with growing backoff, then succeeds', async () => {
    const server = await serve(replies({ status: 500 }, { status: 429 }, { content: 'finally' }));
    const { policy, waits } = policyFor(server.url);
    const out = await policy.complete(hello);
    expect(out.text).toBe('finally');
    expect(server.requests).toHaveLength(3);
    expect(waits).toEqual([3.75, 7.5]); // 5 * 2^(k-1) scaled by 0.5 + 0.5 * 0.5
  });

  it("honours a 429's Retry-After header", async () => {
    const server = await serve(
      replies({ status: 429, headers: { 'retry-after-ms': '40' } }, { content: 'ok' }),
    );
    const { policy, waits } = policyFor(server.url);
    await policy.complete(hello);
    expect(waits).toEqual([40]);
  });

  it('gives up after maxRetries on a persistent 503, naming the URL and the status', async () => {
    const server = await serve(() => ({ status: 503, body: { error: { message: 'engine overloaded' } } }));
    const { policy } = policyFor(server.url);
    const err = await rejection(policy.complete(hello));
    expect(err).toBeInstanceOf(ModelServerError);
    const e = err as ModelServerError;
    expect(e).toMatchObject({ kind: 'http', status: 503, attempts: 3, url: server.url });
    expect(e.message).toContain(server.url);
    expect(e.message).toContain('503 engine overloaded');
    expect(server.requests).toHaveLength(3);
  });

  it('does not retry a 400, and the error carries the status and the server message', async () => {
    const server = await serve(() => ({
      status: 400,
      // SGLang's / older vLLM's top-level error shape
      body: { object: 'error', message: "This model's maximum context length is 4096 tokens", code: 400 },
    }));
    const { policy } = policyFor(server.url);
    const err = await rejection(policy.complete(hello));
    expect(err).toBeInstanceOf(ModelServerError);
    const e = err as ModelServerError;
    expect(e).toMatchObject({ kind: 'http', status: 400, attempts: 1 });
    expect(e.message).toBe(
      `the model server at ${server.url} rejected the request: HTTP 400 This model's maximum context length is 4096 tokens`,
    );
    expect(server.requests).toHaveLength(1);
  });

  it('reads the OpenAI error shape and a plain-text error body too', async () => {
    const server = await serve(
      replies(
        { status: 404, body: { error: { message: 'The model `x` does not exist.', type: 'NotFoundError' } } },
        { status: 422, body: 'Unprocessable: bad tools' },
      ),
    );
    const { policy } = policyFor(server.url);
    const notFound = (await rejection(policy.complete(hello))) as ModelServerError;
    expect(notFound.message).toContain('HTTP 404 The model `x` does not exist.');
    expect(notFound.message).toContain('check --base-url');
    const unprocessable = (await rejection(policy.complete(hello))) as ModelServerError;
    expect(unprocessable.message).toContain('HTTP 422 Unprocessable: bad tools');
    expect(server.requests).toHaveLength(2);
  });

  it('times out a hanging request, retries it, and succeeds when the server answers', async () => {
    const server = await serve(replies({ hang: true }, { content: 'awake' }));
    const { policy } = policyFor(server.url, { timeoutMs: 100 });
    const out = await policy.complete(hello);
    expect(out.text).toBe('awake');
    expect(server.requests).toHaveLength(2);
  });

  it('fails with a ModelServerError naming the URL when every attempt hangs', async () => {
    const server = await serve(() => ({ hang: true }));
    const { policy } = policyFor(server.url, { timeoutMs: 80, maxRetries: 1 });
    const err = await rejection(policy.complete(hello));
    expect(err).toBeInstanceOf(ModelServerError);
    const e = err as ModelServerError;
    expect(e).toMatchObject({ kind: 'timeout', attempts: 2, url: server.url });
    expect(e.message).toContain(
      `the model server at ${server.url} timed out (no answer within 80 ms) after 2 attempts: is it`,
    );
    expect(server.requests).toHaveLength(2);
  });

  it('times out a response that is slower than the timeout (delayMs)', async () => {
    const server = await serve(replies({ content: 'late', delayMs: 300 }, { content: 'on time' }));
    const { policy } = policyFor(server.url, { timeoutMs: 100 });
    expect((await policy.complete(hello)).text).toBe('on time');
    expect(server.requests).toHaveLength(2);
  });

  it('fails fast-ish against a dead server with a ModelServerError naming the URL', async () => {
    const url = `http://127.0.0.1:${await deadPort()}/v1`;
    const { policy, waits } = policyFor(url);
    const started = Date.now();
    const err = await rejection(policy.complete(hello));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(err).toBeInstanceOf(ModelServerError);
    const e = err as ModelServerError;
    expect(e).toMatchObject({ kind: 'unreachable', attempts: 3, url });
    expect(e.message).toBe(
      `cannot reach the model server at ${url} (ECONNREFUSED) after 3 attempts: is it running? check --base-url`,
    );
    expect(waits).toHaveLength(2);
  });

  it('rejects with the abort reason when the signal aborts a request in flight', async () => {
    const server = await serve(() => ({ hang: true }));
    const { policy } = policyFor(server.url, { timeoutMs: 5_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user cancelled')), 50);
    const started = Date.now();
    const err = await rejection(policy.complete(hello, controller.signal));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(err).toEqual(new Error('user cancelled'));
    expect(server.requests).toHaveLength(1);
  });

  it('an abort during the backoff wait stops the retries', async () => {
    const server = await serve(() => ({ status: 500 }));
    const controller = new AbortController();
    const policy = new OpenAiCompatiblePolicy({
      baseUrl: server.url,
      model: 'm',
      maxRetries: 5,
      initialBackoffMs: 10_000, // the real timer: only the abort can end this wait
    });
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    const err = await rejection(policy.complete(hello, controller.signal));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((err as Error).name).toBe('AbortError');
    expect(server.requests).toHaveLength(1);
  });

  it('an already-aborted signal sends nothing', async () => {
    const server = await serve(() => ({ content: 'x' }));
    const { policy } = policyFor(server.url);
    const err = await rejection(policy.complete(hello, AbortSignal.abort()));
    expect((err as Error).name).toBe('AbortError');
    expect(server.requests).toHaveLength(0);
  });

  it('a 200 that is not a chat completion is a clear error, not retried', async () => {
    const server = await serve(() => ({ status: 200, body: { detail: 'proxy says hi' } }));
    const { policy } = policyFor(server.url);
    const e = (await rejection(policy.complete(hello))) as ModelServerError;
    expect(e).toBeInstanceOf(ModelServerError);
    expect(e.kind).toBe('bad_response');
    expect(e.message).toContain('no choices[0].message');
    expect(server.requests).toHaveLength(1);
  });

  it('rejects a malformed base URL at construction', () => {
    expect(() => new OpenAiCompatiblePolicy({ baseUrl: 'localhost:8000', model: 'm' })).toThrow(
      /invalid model server URL 'localhost:8000'/,
    );
  });
});

describe('the fake model server', () => {
  it('lists its model and 404s unknown routes in the OpenAI error shape', async () => {
    const server = await serve(() => ({ content: 'x' }));
    const models = await fetch(`${server.url}/models`).then((r) => r.json());
    expect(models).toMatchObject({ object: 'list', data: [{ id: 'fake-model', object: 'model' }] });
    const missing = await fetch(`${server.url}/completions`, { method: 'POST', body: '{}' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { message: expect.stringContaining('no route') } });
  });
});
