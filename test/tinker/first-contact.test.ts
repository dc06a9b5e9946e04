/**
 * First contact with a Tinker service, as a new user meets it: the real `seal` binary in its own
 * process. A missing or malformed key is refused at once (exit 2, before any request, no run folder
 * written); a service that cannot be reached shows a line per retry and ends with one sentence
 * (exit 1); a service that refuses the key is the user's to fix (exit 2). Never a stack trace.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, seal } from '../support/cli.js';
import { QWEN3_DIR } from '../support/render.js';
import { startTinkerServer, type TinkerTestServer } from '../support/tinker-server.js';
import { tinkerTrainArgs } from '../support/tiny-run.js';

const dir = mkdtempSync(join(tmpdir(), 'seal-first-contact-'));
let server: TinkerTestServer;
let closedPort: number;

/** a loopback port nothing listens on */
async function closedLoopbackPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const NO_ENV = { TINKER_API_KEY: '', TINKER_BASE_URL: '' };
const train = (out: string, ...extra: string[]) => [...tinkerTrainArgs(out, QWEN3_DIR), ...extra];
const evalTinker = (out: string, ...extra: string[]) => [
  'eval',
  '--suite',
  'mini',
  '--policy',
  'tinker',
  '--model',
  'Qwen/Qwen3-8B',
  '--tokenizer',
  QWEN3_DIR,
  '--out',
  out,
  ...extra,
];

function expectOneSentence(r: { code: number; stderr: string }, code: number, message: RegExp): void {
  expect(r.code, r.stderr).toBe(code);
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).not.toContain('TinkerError');
}

describe('a Tinker command meeting its service for the first time', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    await buildDist();
    server = await startTinkerServer({ apiKey: 'tml-the-right-key' });
    closedPort = await closedLoopbackPort();
  }, 600_000);
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('without a key, stops at once saying what to set, and writes no run folder', async () => {
    for (const [args, out] of [
      [train(join(dir, 'no-key-train')), join(dir, 'no-key-train')],
      [evalTinker(join(dir, 'no-key-eval')), join(dir, 'no-key-eval')],
    ] as const) {
      const r = await seal(args, NO_ENV);
      expectOneSentence(r, 2, /needs a key: set TINKER_API_KEY/);
      expect(existsSync(out)).toBe(false);
    }
  });

  it('with a key the SDK would refuse, stops at once naming what it should look like', async () => {
    const r = await seal(train(join(dir, 'bad-key')), { ...NO_ENV, TINKER_API_KEY: 'sk-not-a-tinker-key' });
    expectOneSentence(r, 2, /does not look like a Tinker key \(it should start with tml-/);
    expect(r.stderr).not.toContain('not-a-tinker-key');
    expect(existsSync(join(dir, 'bad-key'))).toBe(false);
  });

  it('against a port nothing listens on, shows each retry and ends with one sentence', async () => {
    const url = `http://127.0.0.1:${closedPort}`;
    const t = await seal(train(join(dir, 'closed-train'), '--base-url', url, '--retries', '2'), {
      ...NO_ENV,
      TINKER_API_KEY: 'tml-x',
    });
    expectOneSentence(t, 1, /could not be reached: client\/config: connection failed .* after 3 tries/);
    expect(t.stderr).toMatch(/check the base url \(--base-url or TINKER_BASE_URL\)/i);
    expect(
      t.stderr.match(/^tinker: client\/config: connection failed .*; try \d of 3 in [\d.]+ s$/gm),
    ).toHaveLength(2);
    const e = await seal(evalTinker(join(dir, 'closed-eval'), '--base-url', url, '--retries', '1'), NO_ENV);
    expectOneSentence(e, 1, /could not be reached: .* after 2 tries/);
    expect(e.stderr.match(/^tinker: .*; try 2 of 2 in/gm)).toHaveLength(1);
  });

  it('against a service that refuses the key, says so and what to set (exit 2)', async () => {
    const r = await seal(train(join(dir, 'refused'), '--base-url', server.url), {
      ...NO_ENV,
      TINKER_API_KEY: 'tml-a-wrong-key',
    });
    expectOneSentence(r, 2, /refused the key .*HTTP 401.* Set TINKER_API_KEY/);
  });

  it('takes a 403 on client/config or create_session as a refused key too (exit 2)', async () => {
    for (const route of ['client/config', 'create_session']) {
      const forbidding = await startTinkerServer({
        fault: (c) =>
          c.route === route ? { status: 403, body: { detail: 'Forbidden: key lacks access' } } : undefined,
      });
      try {
        const out = join(dir, `forbidden-${route.replace('/', '-')}`);
        const r = await seal(train(out, '--base-url', forbidding.url), {
          ...NO_ENV,
          TINKER_API_KEY: 'tml-x',
        });
        expectOneSentence(
          r,
          2,
          new RegExp(`refused the key \\(${route}: HTTP 403 .*Forbidden.* Set TINKER_API_KEY`),
        );
        // refused for good: not resent
        expect(
          forbidding.requests.filter((q) => q.route === route),
          route,
        ).toHaveLength(1);
      } finally {
        await forbidding.close();
      }
    }
  });
});
