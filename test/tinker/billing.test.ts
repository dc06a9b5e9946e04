/**
 * The billing route against the test server over real HTTP: a window of whole UTC hours around the
 * run, at most 14 days, the rows of the run's own sessions summed (another session's left out), and
 * a key without billing access refused in one error.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { billingWindow } from '../../src/tinker/billing.js';
import { TinkerClient } from '../../src/tinker/client.js';
import { TinkerError } from '../../src/tinker/errors.js';
import { fastOptions, startTinkerServer, type TinkerTestServer } from '../support/tinker-server.js';

let server: TinkerTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function sampleOnce(client: TinkerClient, tokens: number[]): Promise<void> {
  const s = await client.createSamplingClient({ baseModel: 'Qwen/Qwen3-8B' });
  await s.sample(tokens, { maxTokens: 3, temperature: 1, seed: 1 });
}

describe('billing', () => {
  it('widens the window to whole UTC hours and keeps it within 14 days', () => {
    const w = billingWindow(new Date('2026-12-04T05:28:10Z'), new Date('2026-12-04T07:01:00Z'));
    expect([w.startingOn.toISOString(), w.endingBefore.toISOString(), w.cut]).toEqual([
      '2026-12-04T05:00:00.000Z',
      '2026-12-04T08:00:00.000Z',
      false,
    ]);
    const long = billingWindow(new Date('2026-11-01T00:00:00Z'), new Date('2026-12-04T07:00:00Z'));
    expect([long.startingOn.toISOString(), long.cut]).toEqual(['2026-11-20T07:00:00.000Z', true]);
    // an instant on the hour still asks for one whole hour
    const point = billingWindow(new Date('2026-12-04T05:00:00Z'), new Date('2026-12-04T05:00:00Z'));
    expect(point.endingBefore.getTime() - point.startingOn.getTime()).toBe(3_600_000);
  });

  it("sums the priced rows of the run's own sessions", async () => {
    server = await startTinkerServer({ billing: { usdPerMillion: 1e5 } });
    const ours = await TinkerClient.connect(fastOptions(server.url));
    const other = await TinkerClient.connect(fastOptions(server.url));
    await sampleOnce(ours, [1, 2, 3, 4]);
    await sampleOnce(other, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const b = await ours.billedCost([ours.sessionId], new Date(Date.now() - 60_000), new Date());
    // 4 prompt tokens and 3 sampled at $0.1 a token; the other session's 12 are not ours
    expect(b.rows).toBe(2);
    expect(b.unpriced).toBe(0);
    expect(b.costUsd).toBeCloseTo(0.7, 10);
    expect(b.startingOn).toMatch(/^\d{4}-\d\d-\d\dT\d\d:00:00Z$/);
    const request = server.requests.find((r) => r.route === 'billing/usage/events');
    expect(request?.method).toBe('GET');
    ours.close();
    other.close();
  });

  it('a key without billing access is refused, once', async () => {
    server = await startTinkerServer({ billing: 'forbidden' });
    const client = await TinkerClient.connect(fastOptions(server.url));
    const e = await client.billedCost([client.sessionId], new Date(), new Date()).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TinkerError);
    expect((e as TinkerError).status).toBe(403);
    expect(server.requests.filter((r) => r.route === 'billing/usage/events')).toHaveLength(1);
    client.close();
  });
});
