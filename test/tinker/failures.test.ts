/**
 * Every failure form of both Tinker servers, injected into the test server over real HTTP: the
 * client survives the transient ones with the right behaviour (same body and seq_id on a resend,
 * nothing run twice, Retry-After obeyed, queue states reported), and reports the unrecoverable ones
 * as a `TinkerError` of the kind that says what to do.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TinkerClient } from '../../src/tinker/client.js';
import { sequenceDatum, type TinkerDatum } from '../../src/tinker/datums.js';
import type { QueueStateEvent } from '../../src/tinker/futures.js';
import type { TinkerClientOptions } from '../../src/tinker/session.js';
import {
  type FaultContext,
  fastOptions,
  startTinkerServer,
  type TinkerServerOptions,
} from '../support/tinker-server.js';

const BASE = 'Qwen/Qwen3-8B';
const open: { close(): unknown }[] = [];

afterEach(async () => {
  while (open.length > 0) await open.pop()!.close();
});

async function setup(server: TinkerServerOptions, client: TinkerClientOptions = {}) {
  const s = await startTinkerServer(server);
  open.push(s);
  const c = await TinkerClient.connect(fastOptions(s.url, client));
  open.push(c);
  return { s, c };
}

const data = (n = 2): TinkerDatum[] =>
  Array.from({ length: n }, (_, j) =>
    sequenceDatum([1, 2, 3, 4, 5 + j, 6, 7], { weights: [0, 0, 0, 0, 1, 1, 1] }),
  );

/** a fault on the first `times` requests matching `when` */
function firstTimes(times: number, when: (c: FaultContext) => boolean, fault: object) {
  let n = 0;
  return (c: FaultContext) => (when(c) && n++ < times ? fault : undefined) as never;
}

const isPollOf = (route: string) => (c: FaultContext) =>
  c.route === 'retrieve_future' && c.future?.route === route;

describe('Tinker client survives', () => {
  it('try_again with a queue state (hosted), and reports the state', async () => {
    const events: QueueStateEvent[] = [];
    const { s, c } = await setup(
      {
        flavour: 'hosted',
        fault: firstTimes(2, isPollOf('forward_backward'), {
          status: 200,
          body: {
            type: 'try_again',
            request_id: 'x',
            queue_state: 'paused_rate_limit',
            queue_state_reason: 'too many requests',
          },
        }),
      },
      { onQueueState: (e) => events.push(e) },
    );
    const t = await c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
    const res = await t.forwardBackward(data(), { fn: 'cross_entropy' });
    expect(res.outputs).toHaveLength(2);
    expect(events.map((e) => [e.queueState, e.reason])).toEqual([
      ['paused_rate_limit', 'too many requests'],
      ['paused_rate_limit', 'too many requests'],
    ]);
    expect(s.models.get(t.modelId)!.ran).toHaveLength(1);
  });

  it("SkyRL's long poll ending in 408, and a hosted 408 carrying a queue state", async () => {
    const { s, c } = await setup({ flavour: 'skyrl', pendingPolls: 3, longPollMs: 30 });
    const t = await c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
    await t.forwardBackward(data(), { fn: 'cross_entropy' });
    expect(s.requests.filter((r) => r.route === 'retrieve_future').length).toBeGreaterThanOrEqual(8);

    const events: QueueStateEvent[] = [];
    const hosted = await setup(
      {
        flavour: 'hosted',
        fault: firstTimes(1, isPollOf('optim_step'), {
          status: 408,
          body: { queue_state: 'paused_capacity' },
        }),
      },
      { onQueueState: (e) => events.push(e) },
    );
    const t2 = await hosted.c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
    await t2.optimStep();
    expect(events.map((e) => e.queueState)).toEqual(['paused_capacity']);
  });

  it('5xx on a submission and on polls', async () => {
    const { s, c } = await setup({
      flavour: 'hosted',
      fault: (ctx) =>
        (ctx.route === 'forward_backward' && ctx.attempt < 2) ||
        (isPollOf('forward_backward')(ctx) && ctx.future!.polls < 3)
          ? { status: ctx.attempt % 2 ? 502 : 503 }
          : undefined,
    });
    const t = await c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
    const res = await t.forwardBackward(data(), { fn: 'cross_entropy' });
    expect(res.outputs).toHaveLength(2);
    const sends = s.requests.filter((r) => r.route === 'forward_backward');
    expect(sends.map((r) => r.seqId)).toEqual([1, 1, 1]);
    // a resend is the same request: one idempotency key
    expect(new Set(sends.map((r) => r.idempotencyKey)).size).toBe(1);
    expect(new Set(sends.map((r) => r.bodySha)).size).toBe(1);
    expect(s.models.get(t.modelId)!.ran.map(({ seqId, route }) => ({ seqId, route }))).toEqual([
      { seqId: 1, route: 'forward_backward' },
    ]);
    // and another request, another key: a server that has seen a key answers with that request's result
    await t.optimStep();
    const byKey = new Map<string, Set<string>>();
    for (const r of s.requests)
      if (r.idempotencyKey)
        byKey.set(
          r.idempotencyKey,
          (byKey.get(r.idempotencyKey) ?? new Set()).add(`${r.route} ${r.bodySha}`),
        );
    expect(byKey.size).toBeGreaterThanOrEqual(4); // session, model, forward_backward, optim_step at least
    for (const [key, requests] of byKey) expect([...requests], key).toHaveLength(1);
  });

  it('409 resent as the SDK does, and x-should-retry obeyed both ways', async () => {
    const seen = new Map<string, number>();
    const { s, c } = await setup({
      flavour: 'hosted',
      fault: (ctx) => {
        const n = (seen.get(ctx.route) ?? 0) + 1;
        seen.set(ctx.route, n);
        // a 409 the server settles (a lock): resent, then accepted
        if (ctx.route === 'forward_backward' && n === 1) return { status: 409, body: { detail: 'busy' } };
        // a 400 the server says to retry, and a 503 it says not to
        if (ctx.route === 'optim_step' && n === 1)
          return { status: 400, headers: { 'x-should-retry': 'true' }, body: { detail: 'try again' } };
        if (ctx.route === 'optim_step' && n === 3)
          return { status: 503, headers: { 'x-should-retry': 'false' }, body: { detail: 'do not' } };
        return undefined;
      },
    });
    const t = await c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
    await t.forwardBackward(data(), { fn: 'cross_entropy' });
    expect(s.requests.filter((r) => r.route === 'forward_backward').map((r) => r.seqId)).toEqual([1, 1]);
    await t.optimStep();
    expect(s.requests.filter((r) => r.route === 'optim_step').map((r) => r.seqId)).toEqual([2, 2]);
    await expect(t.optimStep()).rejects.toMatchObject({ kind: 'http', status: 503 });
    expect(s.requests.filter((r) => r.route === 'optim_step')).toHaveLength(3);
  });

  it('429 on asample and on a poll, waiting what Retry-After / retry-after-ms says', async () => {
    // the waits go through an injected sleep that records them and returns at once
    const waits: number[] = [];
    const { s, c } = await setup(
      {
        flavour: 'skyrl',
        fault: (ctx) =>
          (ctx.route === 'asample' && ctx.attempt === 0
            ? { status: 429, headers: { 'retry-after-ms': '150' }, body: { detail: 'slow down' } }
            : isPollOf('asample')(ctx) && ctx.future?.polls === 0
              ? { status: 429, headers: { 'Retry-After': '0' } }
              : undefined) as never,
      },
      { sleep: async (ms) => void waits.push(ms) },
    );
    const sampler = await c.createSamplingClient({ baseModel: BASE });
    const out = await sampler.sample([1, 2, 3], { maxTokens: 4 });
    expect(out.sequences[0]!.tokens).toHaveLength(4);
    expect(waits).toEqual([150, 0]);
    expect(s.requests.filter((r) => r.route === 'asample').map((r) => r.seqId)).toEqual([0, 0]);
  });

  it('410 on a poll: resubmits the same body with the same seq_id, and the server runs it once', async () => {
    for (const flavour of ['hosted', 'skyrl'] as const) {
      const { s, c } = await setup({
        flavour,
        fault: firstTimes(1, isPollOf('forward_backward'), { expire: true }),
      });
      const t = await c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
      const [res] = await Promise.all([t.forwardBackward(data(3), { fn: 'cross_entropy' }), t.optimStep()]);
      expect(res.outputs).toHaveLength(3);
      const sends = s.requests.filter((r) => r.route === 'forward_backward');
      expect(sends.map((r) => r.seqId)).toEqual([1, 1]);
      expect(sends[1]!.bodySha).toBe(sends[0]!.bodySha);
      const m = s.models.get(t.modelId)!;
      expect(m.ran.map((r) => r.seqId)).toEqual([1, 2]);
      expect(m.steps[0]!.datums).toBe(3);
    }
  });

  it('402 billing pauses, within the budget', async () => {
    const { c } = await setup({
      flavour: 'hosted',
      fault: firstTimes(3, isPollOf('optim_step'), { status: 402, body: { detail: 'billing' } }),
    });
    const t = await c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
    expect((await t.optimStep()).seqId).toBe(1);
  });

  it('a connection dropped mid-request after it took effect, and one dropped before', async () => {
    const { s, c } = await setup({
      flavour: 'skyrl',
      fault: (ctx) =>
        ctx.route === 'forward_backward' && ctx.attempt === 0
          ? { drop: 'after' }
          : isPollOf('forward_backward')(ctx) && ctx.future!.polls === 0
            ? { drop: 'before' }
            : undefined,
    });
    const t = await c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
    const [res] = await Promise.all([t.forwardBackward(data(), { fn: 'cross_entropy' }), t.optimStep()]);
    expect(res.outputs).toHaveLength(2);
    const m = s.models.get(t.modelId)!;
    expect(s.requests.filter((r) => r.route === 'forward_backward').map((r) => r.seqId)).toEqual([1, 1]);
    expect(m.ran.map((r) => r.seqId)).toEqual([1, 2]);
    expect(m.steps[0]!.datums).toBe(2);
  });

  it('a poll that hangs past its timeout, then a submission that hangs', async () => {
    const { c } = await setup(
      {
        flavour: 'hosted',
        fault: (ctx) =>
          (isPollOf('forward_backward')(ctx) && ctx.future!.polls === 0) ||
          (ctx.route === 'optim_step' && ctx.attempt === 0)
            ? { hang: true }
            : undefined,
      },
      {
        pollTimeoutMs: 200,
        retry: { requestTimeoutMs: 200, initialBackoffMs: 5, maxBackoffMs: 20, maxRetries: 3 },
      },
    );
    const t = await c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
    const [res, step] = await Promise.all([
      t.forwardBackward(data(), { fn: 'cross_entropy' }),
      t.optimStep(),
    ]);
    expect(res.outputs).toHaveLength(2);
    expect(step.seqId).toBe(2);
  });
});

describe('Tinker client reports', () => {
  it("a request that failed on the server: hosted {error, category}, SkyRL's 400 {detail}", async () => {
    for (const flavour of ['hosted', 'skyrl'] as const) {
      const { c } = await setup({
        flavour,
        fault: (ctx) =>
          ctx.route === 'forward_backward'
            ? { fail: 'target_tokens out of vocabulary', category: 'user' }
            : undefined,
      });
      const t = await c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
      const err = await t.forwardBackward(data(), { fn: 'cross_entropy' }).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'TinkerError', kind: 'request_failed', category: 'user' });
      expect((err as Error).message).toContain('target_tokens out of vocabulary');
      expect((err as { status: number }).status).toBe(flavour === 'hosted' ? 200 : 400);
      // the seq_id was used, so the model goes on
      expect((await t.optimStep()).seqId).toBe(2);
    }
  });

  it('an unsupported loss as a failed request (SkyRL has no dro)', async () => {
    const { c } = await setup({ flavour: 'skyrl' });
    const t = await c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
    await expect(t.forwardBackward(data(), { fn: 'dro', config: { beta: 0.1 } })).rejects.toMatchObject({
      kind: 'request_failed',
      message: expect.stringContaining("unsupported loss_fn 'dro'"),
    });
  });

  it('a seq_id reused with another body as a conflict (409), and the model as stopped after it', async () => {
    const { s, c } = await setup({ flavour: 'skyrl' });
    const t = await c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
    await t.forwardBackward(data(), { fn: 'cross_entropy' });
    // a second client on the same model with a counter from 1 (a resumed process that forgot)
    const stale = c.trainingClient(t.modelId, { nextSeqId: 1 });
    const err = await stale.optimStep().catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'conflict', status: 409 });
    expect((err as Error).message).toContain('reused');
    await expect(stale.optimStep()).rejects.toMatchObject({ kind: 'conflict' });
    // the original client carries on
    expect((await t.optimStep()).seqId).toBe(2);
    expect(s.models.get(t.modelId)!.ran.map((r) => r.seqId)).toEqual([1, 2]);
  });

  it('a gap in seq_ids as a deadline: the server waits for the missing one', async () => {
    const { c } = await setup({ flavour: 'hosted' }, { deadlineMs: 400 });
    const t = await c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
    const skipped = c.trainingClient(t.modelId, { nextSeqId: 5 });
    const err = await skipped.optimStep().catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'deadline' });
    expect((err as { requestId?: string }).requestId).toBeTruthy();
  });

  it('402 beyond the billing budget', async () => {
    const { c } = await setup(
      {
        flavour: 'hosted',
        fault: (ctx) =>
          isPollOf('optim_step')(ctx) ? { status: 402, body: { detail: 'out of credit' } } : undefined,
      },
      { retry: { billingPauseMs: 10, billingMaxPauseMs: 50, initialBackoffMs: 5, maxBackoffMs: 20 } },
    );
    const t = await c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
    await expect(t.optimStep()).rejects.toMatchObject({
      kind: 'billing',
      message: expect.stringContaining('out of credit'),
    });
  });

  it('a wrong key (401) as auth, at connect', async () => {
    const s = await startTinkerServer({ flavour: 'hosted', apiKey: 'tml-right' });
    open.push(s);
    await expect(TinkerClient.connect(fastOptions(s.url, { apiKey: 'tml-wrong' }))).rejects.toMatchObject({
      kind: 'auth',
      status: 401,
      message: expect.stringContaining('TINKER_API_KEY'),
    });
  });

  it('a service that is not there as unreachable, after the retries', async () => {
    const s = await startTinkerServer({});
    const url = s.url;
    await s.close();
    const started = Date.now();
    await expect(
      TinkerClient.connect(
        fastOptions(url, { retry: { maxRetries: 2, initialBackoffMs: 5, maxBackoffMs: 10 } }),
      ),
    ).rejects.toMatchObject({
      kind: 'unreachable',
      message: expect.stringContaining('3 tries'),
    });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a submission that never answers as a timeout, after the retries', async () => {
    const { c } = await setup(
      { flavour: 'hosted', fault: (ctx) => (ctx.route === 'optim_step' ? { hang: true } : undefined) },
      { retry: { requestTimeoutMs: 100, maxRetries: 1, initialBackoffMs: 5, maxBackoffMs: 10 } },
    );
    const t = await c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
    await expect(t.optimStep()).rejects.toMatchObject({
      kind: 'timeout',
      message: expect.stringContaining('2 tries'),
    });
  });

  it('5xx that never ends as http after the retries, on polls and on a submission', async () => {
    const { c } = await setup(
      {
        flavour: 'skyrl',
        fault: (ctx) =>
          isPollOf('optim_step')(ctx)
            ? { status: 500 }
            : ctx.route === 'save_weights'
              ? { status: 503 }
              : undefined,
      },
      { deadlineMs: 300 },
    );
    const t = await c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
    await expect(t.optimStep()).rejects.toMatchObject({
      kind: 'http',
      status: 500,
      message: expect.stringContaining('5 polls in a row'),
    });
    const other = await c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
    await expect(other.saveWeights('x')).rejects.toMatchObject({
      kind: 'http',
      message: expect.stringContaining('HTTP 503'),
    });
  });

  it('a server answer of the wrong shape as bad_response', async () => {
    const { c } = await setup({
      flavour: 'hosted',
      fault: (ctx) =>
        ctx.route === 'create_model' ? { status: 200, body: { id: 'not-a-future' } } : undefined,
    });
    await expect(c.createTrainingClient({ baseModel: BASE, loraRank: 4 })).rejects.toMatchObject({
      kind: 'bad_response',
      message: expect.stringContaining('request_id'),
    });
  });

  it('bad data before sending anything', async () => {
    const { s, c } = await setup({ flavour: 'hosted' });
    const t = await c.createTrainingClient({ baseModel: BASE, loraRank: 4 });
    const bad: TinkerDatum = { modelInput: [1, 2, 3], lossFnInputs: { target_tokens: [2, 3] } };
    await expect(t.forwardBackward([bad], { fn: 'cross_entropy' })).rejects.toMatchObject({ kind: 'usage' });
    const nan: TinkerDatum = {
      modelInput: [1, 2],
      lossFnInputs: { target_tokens: [2, 3], advantages: [0, Number.NaN] },
    };
    await expect(t.forwardBackward([nan], { fn: 'importance_sampling' })).rejects.toMatchObject({
      kind: 'usage',
    });
    expect(s.requests.filter((r) => r.route === 'forward_backward')).toHaveLength(0);
    // and nothing was taken from the seq counter
    expect(t.nextSeqId).toBe(1);
  });
});

describe('Retry-After in every form, each on the wait it causes (an injected sleep and clock)', () => {
  const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
  const forms: [string, Record<string, string>, number][] = [
    ['seconds', { 'Retry-After': '3' }, 3000],
    ['fractional seconds', { 'Retry-After': '1.5' }, 1500],
    ['zero', { 'Retry-After': '0' }, 0],
    ['milliseconds (retry-after-ms, as the SDK reads it)', { 'retry-after-ms': '1250' }, 1250],
    ['milliseconds over seconds when both are given', { 'retry-after-ms': '250', 'Retry-After': '7' }, 250],
    ['an HTTP date, 4 s after the clock', { 'Retry-After': new Date(NOW + 4000).toUTCString() }, 4000],
    // over 60 s, or unreadable: the client's own backoff, min(max, initial) * (0.75 + 0.25 * 0)
    ['over 60 s: the backoff instead', { 'Retry-After': '120' }, 5 * 0.75],
    ['milliseconds over 60 s: the seconds instead', { 'retry-after-ms': '90000', 'Retry-After': '2' }, 2000],
    ['not a number or a date: the backoff', { 'Retry-After': 'soon' }, 5 * 0.75],
  ];

  async function waitsFor(
    headers: Record<string, string>,
    where: 'submission' | 'poll',
  ): Promise<{ waits: number[]; told: number[] }> {
    const waits: number[] = [];
    const told: number[] = [];
    let fired = false;
    await setup(
      {
        flavour: 'hosted',
        fault: (ctx) => {
          const hit = where === 'submission' ? ctx.route === 'asample' : isPollOf('asample')(ctx);
          if (!hit || fired) return undefined;
          fired = true;
          return { status: 429, headers, body: { detail: 'rate limited' } } as never;
        },
      },
      {
        sleep: async (ms) => void waits.push(ms),
        now: () => NOW,
        random: () => 0,
        onRetry: (e) => told.push(e.waitMs),
      },
    ).then(async ({ c }) => {
      const sampler = await c.createSamplingClient({ baseModel: BASE });
      expect((await sampler.sample([1, 2], { maxTokens: 2 })).sequences).toHaveLength(1);
    });
    expect(fired).toBe(true);
    return { waits, told };
  }

  it.each(forms)('%s, on a submission: the resend waits that long, and says so', async (_, headers, ms) => {
    const { waits, told } = await waitsFor(headers, 'submission');
    expect(waits).toEqual([ms]);
    expect(told).toEqual([ms]);
  });

  it.each(forms)('%s, on a poll: the next poll waits that long', async (_, headers, ms) => {
    const { waits } = await waitsFor(headers, 'poll');
    // a poll's 429 backs off from its first connection retry: the same min(max, initial) * 0.75
    expect(waits).toEqual([ms]);
  });
});
