/**
 * zstd forward_backward bodies: a server whose client/config sets `proto_compress_fwdbwd` gets
 * its protobuf forward_backward bodies compressed (`Content-Encoding: zstd`), every other body as
 * before; the compressed run trains exactly as the uncompressed one. Real HTTP on loopback against
 * the test Tinker server, which decompresses what it gets.
 */
import { describe, expect, it } from 'vitest';
import { ppoLossFromClipEps, sequenceDatum, type TinkerDatum } from '../../src/tinker/datums.js';
import { encodeForwardBackwardRequest, PROTO_CONTENT_TYPE } from '../../src/tinker/proto.js';
import type { TinkerClientOptions } from '../../src/tinker/session.js';
import { zstdCompress, zstdDecompress, zstdFrameContentSize } from '../../src/tinker/zstd.js';
import { tinkerHarness } from '../support/tinker-harness.js';
import type { TinkerTestServer } from '../support/tinker-server.js';

const BASE = 'Qwen/Qwen3-8B';
const { server, connect } = tinkerHarness();

/** rollouts of a realistic shape: a prompt, then sampled tokens with their logprobs and advantages */
function rollouts(n: number, len = 400): TinkerDatum[] {
  return Array.from({ length: n }, (_, j) => {
    const tokens = Array.from({ length: len }, (_, i) => (j * 131 + i * 17 + 5) % 4000);
    const sampled = tokens.map((_, i) => (i >= len / 2 ? 1 : 0));
    return sequenceDatum(tokens, {
      weights: sampled,
      logprobs: sampled.map((s, i) => (s ? -0.5 - ((i * 7) % 13) / 10 : 0)),
      advantages: sampled.map((s) => (s ? (j % 2 ? 0.75 : -0.5) : 0)),
    });
  });
}

/** forward_backward + optim_step twice, then a forward-only pass: what a training round sends */
async function trainingRun(s: TinkerTestServer, extra: TinkerClientOptions = {}) {
  const client = await connect(s.url, { wire: 'proto', ...extra });
  const training = await client.createTrainingClient({ baseModel: BASE, loraRank: 8, seed: 1 });
  const loss = ppoLossFromClipEps(0.2);
  const results = [];
  for (const batch of [rollouts(4), rollouts(3, 250)]) {
    const fb = training.forwardBackward(batch, loss);
    const step = training.optimStep({ learningRate: 1e-4 });
    const [r] = await Promise.all([fb, step]);
    results.push({ logprobs: r.logprobs, metrics: r.metrics });
  }
  const fwd = await training.forward(rollouts(2), { fn: 'cross_entropy' });
  const model = s.models.get(training.modelId)!;
  return { client, results, fwd: fwd.logprobs, passes: model.passes, steps: model.steps };
}

describe('zstd forward_backward bodies', () => {
  it('go compressed when client/config asks, decode to the same datums, and train identically', async () => {
    const zs = await server({ flavour: 'hosted', compressFwdbwd: true });
    const plain = await server({ flavour: 'hosted' });
    const compressed = await trainingRun(zs);
    const uncompressed = await trainingRun(plain);
    expect(compressed.client.config.protoCompressFwdbwd).toBe(true);
    expect(uncompressed.client.config.protoCompressFwdbwd).toBe(false);

    // every forward(-backward) body compressed, forward-only ones too; nothing else
    const passes = zs.requests.filter((r) => r.route === 'forward_backward' || r.route === 'forward');
    expect(passes.map((r) => r.route)).toEqual(['forward_backward', 'forward_backward', 'forward']);
    for (const r of passes) {
      expect(r.contentType).toBe(PROTO_CONTENT_TYPE);
      expect(r.contentEncoding).toBe('zstd');
      expect(r.wireBytes!).toBeLessThan(r.bodyBytes! / 2);
    }
    expect(zs.requests.filter((r) => !passes.includes(r)).every((r) => r.contentEncoding === undefined)).toBe(
      true,
    );
    // the uncompressed run's bodies are the same protobuf, byte for byte, as the compressed run's decoded
    const plainPasses = plain.requests.filter((r) => r.route === 'forward_backward' || r.route === 'forward');
    expect(plainPasses.every((r) => r.contentEncoding === undefined && r.wireBytes === r.bodyBytes)).toBe(
      true,
    );
    expect(plainPasses.map((r) => r.bodyBytes)).toEqual(passes.map((r) => r.bodyBytes));

    // the server read the same datums, and training went the same way
    expect(compressed.passes.map((p) => p.input)).toEqual(uncompressed.passes.map((p) => p.input));
    expect(compressed.passes[0]!.input.data).toHaveLength(4);
    expect(compressed.results).toEqual(uncompressed.results);
    expect(compressed.fwd).toEqual(uncompressed.fwd);
    expect(compressed.steps).toEqual(uncompressed.steps);
    expect(compressed.steps).toHaveLength(2);
    expect(compressed.steps[1]!.datums).toBe(3);
  });

  it('are not compressed when the server does not ask, nor in JSON', async () => {
    const plain = await server({ flavour: 'hosted' });
    await trainingRun(plain);
    expect(plain.requests.every((r) => r.contentEncoding === undefined)).toBe(true);

    const zs = await server({ flavour: 'hosted', compressFwdbwd: true });
    const client = await connect(zs.url, { wire: 'json' });
    const training = await client.createTrainingClient({ baseModel: BASE, loraRank: 8 });
    await training.forwardBackward(rollouts(2), { fn: 'cross_entropy' });
    const fb = zs.requests.filter((r) => r.route === 'forward_backward');
    expect(fb.map((r) => [r.contentType, r.contentEncoding])).toEqual([['application/json', undefined]]);
  });

  it('auto: a refused compressed protobuf body falls back to plain JSON', async () => {
    const s = await server({ flavour: 'hosted', compressFwdbwd: true, fwdbwdForms: { proto: false } });
    const client = await connect(s.url, { wire: 'auto' });
    const training = await client.createTrainingClient({ baseModel: BASE, loraRank: 8 });
    const res = await training.forwardBackward(rollouts(2), { fn: 'cross_entropy' });
    expect(res.outputs).toHaveLength(2);
    expect(
      s.requests
        .filter((r) => r.route === 'forward_backward')
        .map((r) => [r.contentType, r.contentEncoding, r.refused ?? false]),
    ).toEqual([
      [PROTO_CONTENT_TYPE, 'zstd', true],
      ['application/json', undefined, false],
    ]);
  });

  it('a resend after a 503 is the same compressed bytes', async () => {
    const s = await server({
      flavour: 'hosted',
      compressFwdbwd: true,
      fault: (ctx) => (ctx.route === 'forward_backward' && ctx.attempt === 0 ? { status: 503 } : undefined),
    });
    const client = await connect(s.url, { wire: 'proto' });
    const training = await client.createTrainingClient({ baseModel: BASE, loraRank: 8 });
    await training.forwardBackward(rollouts(2), { fn: 'cross_entropy' });
    const sends = s.requests.filter((r) => r.route === 'forward_backward');
    expect(sends).toHaveLength(2);
    expect(sends.every((r) => r.contentEncoding === 'zstd')).toBe(true);
    expect(sends[1]!.bodySha).toBe(sends[0]!.bodySha);
    expect(s.models.get(training.modelId)!.ran.map((r) => [r.seqId, r.route])).toEqual([
      [1, 'forward_backward'],
    ]);
  });
});

describe('the test server and content encodings', () => {
  async function post(url: string, body: Uint8Array, encoding: string): Promise<Response> {
    return fetch(`${url}/api/v1/forward_backward`, {
      method: 'POST',
      headers: { 'Content-Type': PROTO_CONTENT_TYPE, 'Content-Encoding': encoding },
      body,
    });
  }

  it('refuses an encoding it does not know (415) and a body that is not zstd (400)', async () => {
    const s = await server({ flavour: 'hosted' });
    const body = encodeForwardBackwardRequest(
      {
        model_id: 'm',
        seq_id: 1,
        forward_backward_input: { data: [], loss_fn: 'cross_entropy', loss_fn_config: null },
      },
      false,
    );
    const gzip = await post(s.url, body, 'gzip');
    expect(gzip.status).toBe(415);
    expect(await gzip.json()).toEqual({ detail: 'Unsupported content encoding: gzip' });
    const notZstd = await post(s.url, body, 'zstd');
    expect(notZstd.status).toBe(400);
    expect(((await notZstd.json()) as { detail: string }).detail).toMatch(/zstd/);
  });
});

describe('zstd frames', () => {
  it('round-trip, and state their size in the header at each width', async () => {
    for (const size of [0, 200, 300, 70_000]) {
      const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 31) % 7);
      const frame = await zstdCompress(bytes);
      expect(zstdFrameContentSize(frame)).toBe(size);
      expect(await zstdDecompress(frame)).toEqual(bytes);
    }
    expect(zstdFrameContentSize(new TextEncoder().encode('not a frame'))).toBeUndefined();
  });

  it('refuses a frame that claims more than the limit before allocating it', async () => {
    const frame = await zstdCompress(new Uint8Array(100_000));
    await expect(zstdDecompress(frame, 50_000)).rejects.toThrow(/100000 bytes, over the limit of 50000/);
  });
});
