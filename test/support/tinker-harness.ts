/**
 * Test servers and clients a Tinker test opens, closed after each test (in the order opposite to
 * their opening), so a failed assertion leaves no server listening and no heartbeat running.
 *
 *   const { server, connect } = tinkerHarness();
 *   it('...', async () => { const s = await server({}); const c = await connect(s.url); ... });
 */
import { afterEach } from 'vitest';
import { TinkerClient } from '../../src/tinker/client.js';
import type { TinkerClientOptions } from '../../src/tinker/session.js';
import {
  fastOptions,
  startTinkerServer,
  type TinkerServerOptions,
  type TinkerTestServer,
} from './tinker-server.js';

export function tinkerHarness(): {
  server(opts: TinkerServerOptions): Promise<TinkerTestServer>;
  connect(url: string, extra?: TinkerClientOptions): Promise<TinkerClient>;
} {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    while (open.length > 0) await open.pop()!.close();
  });
  return {
    async server(opts) {
      const s = await startTinkerServer(opts);
      open.push(s);
      return s;
    },
    async connect(url, extra = {}) {
      const c = await TinkerClient.connect(fastOptions(url, extra));
      open.push(c);
      return c;
    },
  };
}
