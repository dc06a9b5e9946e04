/**
 * The Tinker client against the test Tinker server (real HTTP on loopback) in both flavours: the
 * happy path of a training round, the wire forms, chunking and seq_id ordering, sampling, saves
 * and loads, the session heartbeat.
 */
import { describe, expect, it } from 'vitest';
import { TinkerClient } from '../../src/tinker/client.js';
import { ppoLossFromClipEps, sequenceDatum, type TinkerDatum } from '../../src/tinker/datums.js';
import { TinkerError } from '../../src/tinker/errors.js';
import { resolveOptions } from '../../src/tinker/session.js';
import { tinkerHarness } from '../support/tinker-harness.js';
import { type Flavour, fastOptions, toyModel } from '../support/tinker-server.js';

const BASE = 'Qwen/Qwen3-8B';
const { server, connect } = tinkerHarness();

/** rollouts: prompt tokens then sampled tokens, advantages on the sampled ones only */
function rollouts(n: number, len = 12): TinkerDatum[] {
  return Array.from({ length: n }, (_, j) => {
    const tokens = Array.from({ length: len }, (_, i) => (j * 37 + i * 11 + 3) % 1000);
    const sampled = tokens.map((_, i) => (i >= 5 ? 1 : 0));
    return sequenceDatum(tokens, {
      weights: sampled,
      logprobs: sampled.map((s, i) => (s ? -1 - 0.1 * i : 0)),
      advantages: sampled.map((s) => (s ? (j % 2 ? 0.5 : -0.25) : 0)),
    });
  });
}

/** the toy model's loss for rollouts under Tinker's ppo (a sum over tokens) */
function ppoLossSum(data: TinkerDatum[], lo: number, hi: number, flavour: Flavour): number {
  const model = toyModel();
  let total = 0;
  for (const d of data) {
    const input = d.modelInput as number[];
    const lps = model.logprobs(input, d.lossFnInputs.target_tokens, { baseModel: BASE, step: 0, lrs: [] });
    lps.forEach((lp, i) => {
      // float32 on the wire
      const a = Math.fround(d.lossFnInputs.advantages![i]!);
      const r = Math.exp(lp - Math.fround(d.lossFnInputs.logprobs![i]!));
      const l = -Math.min(r * a, Math.min(Math.max(r, lo), hi) * a);
      total += flavour === 'skyrl' ? l * d.lossFnInputs.weights![i]! : l;
    });
  }
  return total;
}

describe.each(['hosted', 'skyrl'] as const)('Tinker client against a %s-like server', (flavour) => {
  it('runs a training round: create_model, get_info, forward_backward + optim_step queued together', async () => {
    const s = await server({ flavour });
    const client = await connect(s.url);
    expect(client.sessionId).toBeTruthy();
    const caps = await client.serverCapabilities();
    expect(caps.supported_models.map((m) => m.model_name)).toEqual([BASE]);
    const training = await client.createTrainingClient({ baseModel: BASE, loraRank: 16, seed: 3 });
    const info = await training.getInfo();
    expect(info.model_id).toBe(training.modelId);
    expect(info.model_data?.model_name ?? info.model_data?.base_model).toBe(BASE);

    const data = rollouts(3);
    const loss = ppoLossFromClipEps(0.2);
    // both queued before either is awaited
    const fb = training.forwardBackward(data, loss);
    const step = training.optimStep({ learningRate: 1e-5 });
    const [result, stepped] = await Promise.all([fb, step]);

    expect(result.seqIds).toEqual([1]);
    expect(stepped.seqId).toBe(2);
    expect(result.outputs).toHaveLength(3);
    const model = toyModel();
    result.logprobs.forEach((lps, j) => {
      const d = data[j]!;
      const expected = model.logprobs(d.modelInput as number[], d.lossFnInputs.target_tokens, {
        baseModel: BASE,
        step: 0,
        lrs: [],
      });
      expect(lps).toEqual(expected.map(Math.fround));
    });
    const m = s.models.get(training.modelId)!;
    expect(m.ran.map(({ seqId, route }) => ({ seqId, route }))).toEqual([
      { seqId: 1, route: 'forward_backward' },
      { seqId: 2, route: 'optim_step' },
    ]);
    expect(m.steps).toHaveLength(1);
    expect(m.steps[0]!.lossSum).toBeCloseTo(ppoLossSum(data, 0.8, 1.2, flavour), 9);
    expect(m.steps[0]!.lr).toBe(1e-5);
    if (flavour === 'hosted') {
      expect(result.metrics['loss:sum']).toBeCloseTo(m.steps[0]!.lossSum, 9);
      expect(result.lossFnOutputType).toBe('ArrayRecord');
    } else {
      expect(result.metrics).toEqual({});
      expect(Object.keys(result.outputs[0]!).sort()).toEqual(['elementwise_loss', 'logprobs']);
    }
    // both submissions reached the server before the first result was fetched
    const routes = s.requests.map((r) => r.route);
    expect(routes.indexOf('optim_step')).toBeLessThan(
      routes.indexOf('retrieve_future', routes.indexOf('forward_backward')) + 2,
    );
  });

  it('splits a batch into chunks within the server limits, one seq_id each, and merges the results', async () => {
    const small = await server({ flavour: 'hosted', clientConfig: { fwdbwd_max_chunk_len: 2 } });
    const whole = await server({ flavour: 'hosted' });
    const data = rollouts(5);
    const loss = ppoLossFromClipEps(0.2);

    const chunked = await (await connect(small.url)).createTrainingClient({ baseModel: BASE, loraRank: 8 });
    const r1 = chunked.forwardBackward(data, loss);
    const o1 = chunked.optimStep();
    const [res1] = await Promise.all([r1, o1]);
    expect(res1.seqIds).toEqual([1, 2, 3]);
    expect(res1.outputs).toHaveLength(5);

    const single = await (await connect(whole.url)).createTrainingClient({ baseModel: BASE, loraRank: 8 });
    const res2 = await single.forwardBackward(data, loss);
    await single.optimStep();
    expect(res2.seqIds).toEqual([1]);

    expect(res1.logprobs).toEqual(res2.logprobs);
    expect(res1.metrics['loss:sum']).toBeCloseTo(res2.metrics['loss:sum']!, 9);
    expect(res1.metrics['clip_frac:mean']).toBeCloseTo(res2.metrics['clip_frac:mean']!, 9);
    // the gradient the step applied is the same: three chunks accumulate as one batch
    const a = small.models.get(chunked.modelId)!;
    const b = whole.models.get(single.modelId)!;
    expect(a.steps[0]!.datums).toBe(5);
    expect(a.steps[0]!.lossSum).toBeCloseTo(b.steps[0]!.lossSum, 9);
    expect(a.ran.map((r) => r.seqId)).toEqual([1, 2, 3, 4]);
    const sent = small.requests.filter((r) => r.route === 'forward_backward').map((r) => r.seqId);
    expect(sent).toEqual([1, 2, 3]);
  });

  it('samples through an ephemeral sampler save, a named sampler save and a base-model session', async () => {
    const s = await server({ flavour });
    const client = await connect(s.url);
    const training = await client.createTrainingClient({ baseModel: BASE, loraRank: 8 });
    await training.forwardBackward(rollouts(2), { fn: 'cross_entropy' });
    await training.optimStep();
    const sampler = await training.samplingClient();
    const prompt = [5, 6, 7, 8];
    const out = await sampler.sample(prompt, { maxTokens: 6, numSamples: 3, seed: 11, stop: [999] });
    expect(out.sequences).toHaveLength(3);
    const model = toyModel();
    const trained = { baseModel: BASE, step: 1, lrs: [...s.models.get(training.modelId)!.lrs] };
    expect(trained.lrs).toHaveLength(1);
    // the server ran the sample on the trained weights, and says so
    expect(s.samples.at(-1)).toMatchObject({ promptLogprobs: false, weights: trained });
    out.sequences.forEach((seq, i) => {
      const exp = model.sample(prompt, { maxTokens: 6, temperature: 1, seed: 11, stop: [999] }, trained, i);
      expect(seq.tokens).toEqual(exp.tokens);
      expect(seq.logprobs).toEqual(exp.logprobs.map(Math.fround));
      expect(seq.stopReason).toBe(exp.stopReason);
    });
    const lps = await sampler.computeLogprobs(prompt);
    expect(lps[0]).toBeNull();
    expect(lps.slice(1)).toEqual(
      model.logprobs(prompt.slice(0, -1), prompt.slice(1), trained).map(Math.fround),
    );

    const path = await training.saveWeightsForSampler('round-1', { ttlSeconds: 3600 });
    expect(path).toBe(`tinker://${training.modelId}/sampler_weights/round-1`);
    expect(s.checkpoints.get(path)).toMatchObject({ step: 1, ttlSeconds: 3600 });
    const fromPath = await client.createSamplingClient({ modelPath: path });
    expect(
      (await fromPath.sample(prompt, { maxTokens: 6, seed: 11, stop: [999] })).sequences[0]!.tokens,
    ).toEqual(out.sequences[0]!.tokens);
    const base = await client.createSamplingClient({ baseModel: BASE });
    const baseOut = await base.sample(prompt, { maxTokens: 4, seed: 11 });
    const baseWeights = { baseModel: BASE, step: 0, lrs: [] };
    const baseExp = model.sample(prompt, { maxTokens: 4, temperature: 1, seed: 11 }, baseWeights, 0);
    expect(baseOut.sequences[0]!.tokens).toEqual(baseExp.tokens);
    expect(baseOut.sequences[0]!.logprobs).toEqual(baseExp.logprobs.map(Math.fround));
    // the base model and the trained weights answer the same request differently
    expect(baseOut.sequences[0]!.tokens).not.toEqual(out.sequences[0]!.tokens.slice(0, 4));
    expect(s.samples.at(-1)).toMatchObject({ weights: baseWeights });
    // sampling seq_ids count from 0 per sampling session
    const samples = s.requests.filter((r) => r.route === 'asample');
    expect(samples.map((r) => r.seqId)).toEqual([0, 1, 0, 0]);
  });

  it("saves the training state with a TTL and loads it as a new model's first request", async () => {
    const s = await server({ flavour });
    const client = await connect(s.url);
    const training = await client.createTrainingClient({ baseModel: BASE, loraRank: 8 });
    for (let i = 0; i < 2; i++) {
      await Promise.all([
        training.forwardBackward(rollouts(1), { fn: 'cross_entropy' }),
        training.optimStep({ learningRate: 1e-4 * (i + 1) }),
      ]);
    }
    const path = await training.saveWeights('ckpt-2', { ttlSeconds: 86400 });
    expect(path).toBe(`tinker://${training.modelId}/weights/ckpt-2`);
    expect(s.checkpoints.get(path)).toMatchObject({ step: 2, ttlSeconds: 86400, kind: 'weights' });

    const resumed = await client.createTrainingClient({ baseModel: BASE, loraRank: 8, loadFrom: { path } });
    expect(resumed.nextSeqId).toBe(2);
    const m = s.models.get(resumed.modelId)!;
    expect(m.step).toBe(2);
    expect(m.ran.map(({ seqId, route }) => ({ seqId, route }))).toEqual([
      { seqId: 1, route: 'load_weights' },
    ]);
    await expect(training.loadWeights(path)).rejects.toMatchObject({ kind: 'usage' });
    await expect(training.saveWeights('bad name')).rejects.toMatchObject({ kind: 'usage' });
  });

  it('beats the session heartbeat every interval and stops on close', async () => {
    const s = await server({ flavour });
    const client = await TinkerClient.connect(fastOptions(s.url, { heartbeatMs: 40 }));
    await new Promise((r) => setTimeout(r, 230));
    const beats = s.sessions.get(client.sessionId)!.heartbeats;
    expect(beats).toBeGreaterThanOrEqual(3);
    client.close();
    await new Promise((r) => setTimeout(r, 120));
    expect(s.sessions.get(client.sessionId)!.heartbeats).toBeLessThanOrEqual(beats + 1);
    await expect(client.createTrainingClient({ baseModel: BASE, loraRank: 1 })).rejects.toMatchObject({
      kind: 'closed',
    });
  });
});

describe('Tinker client wire forms', () => {
  it('proto: forward_backward goes as protobuf and its results come back as protobuf', async () => {
    const s = await server({ flavour: 'hosted' });
    const client = await connect(s.url, { wire: 'proto' });
    const training = await client.createTrainingClient({ baseModel: BASE, loraRank: 8 });
    const res = await training.forwardBackward(rollouts(2), ppoLossFromClipEps(0.2));
    expect(res.outputs).toHaveLength(2);
    const fb = s.requests.find((r) => r.route === 'forward_backward')!;
    expect(fb.contentType).toBe('application/x-protobuf');
    const polls = s.requests.filter((r) => r.requestType === 'ForwardBackward');
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.every((r) => r.accept.includes('application/x-protobuf'))).toBe(true);
    const others = s.requests.filter((r) => r.requestType === 'CreateModel');
    expect(others.every((r) => r.accept === 'application/json')).toBe(true);
    // forward-only goes to forward_backward with the flag
    const fwd = await training.forward(rollouts(1), { fn: 'cross_entropy' });
    expect(fwd.outputs).toHaveLength(1);
    expect(
      s.requests
        .filter((r) => r.route === 'forward')
        .every((r) => r.contentType === 'application/x-protobuf'),
    ).toBe(true);
    expect(s.models.get(training.modelId)!.accum.datums).toBe(2);
  });

  it('json: every body is JSON, and a forward-only pass goes to /forward', async () => {
    const s = await server({ flavour: 'skyrl' });
    const client = await connect(s.url, { wire: 'json' });
    const training = await client.createTrainingClient({ baseModel: BASE, loraRank: 8 });
    await training.forwardBackward(rollouts(2), { fn: 'importance_sampling' });
    await training.forward(rollouts(1), { fn: 'cross_entropy' });
    expect(
      s.requests.filter((r) => r.route.startsWith('forward')).map((r) => [r.route, r.contentType]),
    ).toEqual([
      ['forward_backward', 'application/json'],
      ['forward', 'application/json'],
    ]);
    expect(
      s.requests.filter((r) => r.route === 'retrieve_future').every((r) => !r.accept.includes('protobuf')),
    ).toBe(true);
    const sampler = await training.samplingClient();
    const out = await sampler.sample([1, 2, 3], { maxTokens: 3 });
    expect(out.sequences[0]!.tokens).toHaveLength(3);
  });

  it('auto: falls back to JSON for good when the server refuses protobuf (415)', async () => {
    const s = await server({ flavour: 'skyrl', fwdbwdForms: { proto: false } });
    const client = await connect(s.url, { wire: 'auto' });
    const training = await client.createTrainingClient({ baseModel: BASE, loraRank: 8 });
    expect(client.wire).toBe('proto');
    await training.forwardBackward(rollouts(2), { fn: 'cross_entropy' });
    expect(client.wire).toBe('json');
    await training.forwardBackward(rollouts(2), { fn: 'cross_entropy' });
    expect(s.requests.filter((r) => r.route === 'forward_backward').map((r) => r.contentType)).toEqual([
      'application/x-protobuf',
      'application/json',
      'application/json',
    ]);
    expect(s.models.get(training.modelId)!.ran.map((r) => r.seqId)).toEqual([1, 2]);
  });

  it('json against a protobuf-only server reports the 415', async () => {
    const s = await server({ flavour: 'hosted', fwdbwdForms: { json: false } });
    const client = await connect(s.url, { wire: 'json' });
    const training = await client.createTrainingClient({ baseModel: BASE, loraRank: 8 });
    const err = await training.forwardBackward(rollouts(1), { fn: 'cross_entropy' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TinkerError);
    expect(err).toMatchObject({ kind: 'http', status: 415 });
    // the refused seq_id leaves a gap: the model takes no more requests
    await expect(training.optimStep()).rejects.toMatchObject({ kind: 'http' });
  });
});

describe('Tinker client sampling concurrency', () => {
  it('keeps at most sample_max_concurrent_requests samples in flight', async () => {
    const s = await server({
      flavour: 'hosted',
      clientConfig: { sample_max_concurrent_requests: 2 },
      // every sample result takes 80 ms to fetch
      fault: (c) =>
        c.route === 'retrieve_future' && c.future?.route === 'asample' ? { delayMs: 80 } : undefined,
    });
    const client = await connect(s.url);
    expect(client.config.sampleMaxConcurrentRequests).toBe(2);
    const sampler = await client.createSamplingClient({ baseModel: BASE });
    const started = Date.now();
    const outs = await Promise.all(
      Array.from({ length: 6 }, (_, i) => sampler.sample([1, 2, i], { maxTokens: 2 })),
    );
    expect(outs).toHaveLength(6);
    // three waves of two
    expect(Date.now() - started).toBeGreaterThanOrEqual(3 * 80 - 10);
    // the third sample was sent only after one of the first two had its result
    const order = s.requests
      .filter((r) => r.route === 'asample' || r.requestType === 'Sample')
      .map((r) => r.route);
    const third = order.findIndex(
      (r, i) => r === 'asample' && order.slice(0, i).filter((x) => x === 'asample').length === 2,
    );
    expect(order.slice(0, third)).toContain('retrieve_future');
  });
});

describe('Tinker client options', () => {
  it('reads TINKER_BASE_URL, TINKER_API_KEY and TINKER_TAGS, and options win', () => {
    const env = { TINKER_BASE_URL: 'http://127.0.0.1:9/', TINKER_API_KEY: 'tml-env', TINKER_TAGS: 'a, b' };
    const r = resolveOptions({}, env);
    expect(r).toMatchObject({
      baseUrl: 'http://127.0.0.1:9/',
      apiKey: 'tml-env',
      tags: ['a', 'b'],
      wire: 'auto',
      heartbeatMs: 10_000,
    });
    expect(resolveOptions({ baseUrl: 'http://x:1', apiKey: 'k', wire: 'json' }, env)).toMatchObject({
      baseUrl: 'http://x:1',
      apiKey: 'k',
      wire: 'json',
    });
    expect(() => resolveOptions({}, {})).toThrow(/TINKER_API_KEY/);
    expect(() => resolveOptions({ baseUrl: 'ftp://x' }, {})).toThrow(/http/);
    expect(() => resolveOptions({ baseUrl: 'http://x', wire: 'xml' as 'json' }, {})).toThrow(
      /auto, json or proto/,
    );
  });

  it('sends the key as X-API-Key on every request', async () => {
    const s = await server({ flavour: 'hosted', apiKey: 'tml-secret' });
    const client = await connect(s.url, { apiKey: 'tml-secret' });
    await client.createTrainingClient({ baseModel: BASE, loraRank: 4 });
    expect(s.requests.length).toBeGreaterThan(3);
    expect(s.requests.every((r) => r.apiKey === 'tml-secret')).toBe(true);
  });
});
