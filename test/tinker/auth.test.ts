/**
 * Every way a request proves who sends it, against the Tinker test server on loopback: a service
 * with `pjwt_auth_enabled` sells the key for a short-lived JWT, which is sent instead of the key,
 * bought again before it expires and once more on a 401; a key may come from the output of
 * `TINKER_CREDENTIAL_CMD`. The JWT's expiry is read by parsing its payload.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { JwtCredential, jwtExpiryMs } from '../../src/tinker/auth.js';
import { TinkerClient } from '../../src/tinker/client.js';
import { sequenceDatum } from '../../src/tinker/datums.js';
import { resolveOptions } from '../../src/tinker/session.js';
import { fastOptions, startTinkerServer, type TinkerTestServer } from '../support/tinker-server.js';

const KEY = 'tml-the-key';
const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

async function jwtServer(ttlSeconds: number): Promise<{ s: TinkerTestServer; c: TinkerClient }> {
  const s = await startTinkerServer({ apiKey: KEY, jwt: { ttlSeconds } });
  open.push(s);
  const c = await TinkerClient.connect(fastOptions(s.url, { apiKey: KEY }));
  open.push(c);
  return { s, c };
}

const step = async (c: TinkerClient) => {
  const t = await c.createTrainingClient({ baseModel: 'Qwen/Qwen3-8B', loraRank: 4 });
  await t.forwardBackward([sequenceDatum([1, 2, 3, 4], { weights: [1, 1, 1, 1] })], { fn: 'cross_entropy' });
  await t.optimStep();
};

describe('JWT auth', () => {
  it('reads the expiry of a token from its payload, and none from what is not a token', () => {
    const payload = Buffer.from(JSON.stringify({ exp: 1_800_000_000 })).toString('base64url');
    expect(jwtExpiryMs(`eyJhbGciOiJIUzI1NiJ9.${payload}.sig`)).toBe(1_800_000_000_000);
    expect(jwtExpiryMs('tml-not-a-token')).toBeUndefined();
    expect(jwtExpiryMs('a.!!!.c')).toBeUndefined();
  });

  it('buys a token before it expires, at most one exchange at a time', async () => {
    let now = 0;
    let bought = 0;
    const token = (exp: number) =>
      `h.${Buffer.from(JSON.stringify({ exp })).toString('base64url')}.s${bought++}`;
    // a token of 600 s: bought again 60 s before it expires
    const cred = new JwtCredential(
      async () => token(now / 1000 + 600),
      () => now,
    );
    const [a, b] = await Promise.all([cred.key(), cred.key()]);
    expect(a).toBe(b);
    expect(bought).toBe(1);
    now = 539_000;
    expect(await cred.key()).toBe(a);
    now = 541_000;
    expect(await cred.key()).not.toBe(a);
    expect(bought).toBe(2);
  });

  it('buys a short-lived token again at half its life, when that is sooner than a minute before', async () => {
    let now = 1_000_000;
    let bought = 0;
    const token = (exp: number) =>
      `h.${Buffer.from(JSON.stringify({ exp })).toString('base64url')}.s${bought++}`;
    // a token of 100 s: half its life (50 s) is shorter than the minute's margin
    const cred = new JwtCredential(
      async () => token(now / 1000 + 100),
      () => now,
    );
    const first = await cred.key();
    now += 49_000;
    expect(await cred.key()).toBe(first);
    now += 2_000;
    const second = await cred.key();
    expect(second).not.toBe(first);
    expect(bought).toBe(2);
    // the new one is good for its own half life, from when it was bought
    now += 49_000;
    expect(await cred.key()).toBe(second);
    now += 2_000;
    expect(await cred.key()).not.toBe(second);
  });

  it('buys a token once more after a 401, not again when the fresh token is refused too', async () => {
    const s = await startTinkerServer({
      apiKey: KEY,
      jwt: { ttlSeconds: 3600 },
      // the service refuses every token on create_session (a key without the right to it), for a while
      fault: (c) => (c.route === 'create_session' && c.attempt < 20 ? { status: 401 } : undefined),
    });
    open.push(s);
    await expect(TinkerClient.connect(fastOptions(s.url, { apiKey: KEY }))).rejects.toMatchObject({
      kind: 'auth',
      status: 401,
    });
    expect(s.tokens).toHaveLength(2);
    expect(s.requests.filter((r) => r.route === 'create_session')).toHaveLength(2);
  });

  it('sends the token, not the key, to every route after the exchange', async () => {
    const { s, c } = await jwtServer(3600);
    await step(c);
    expect(s.tokens).toHaveLength(1);
    const after = s.requests.filter((r) => r.route !== 'client/config' && r.route !== 'auth/token');
    expect(after.length).toBeGreaterThan(3);
    for (const r of after) expect(r.apiKey).toBe(s.tokens[0]);
    expect(s.requests.find((r) => r.route === 'auth/token')?.apiKey).toBe(KEY);
  });

  it('buys a new token on a 401, once, and carries on', async () => {
    const { s, c } = await jwtServer(3600);
    await step(c);
    s.revokeTokens();
    await step(c);
    expect(s.tokens).toHaveLength(2);
    const refused = s.requests.filter((r) => r.apiKey === s.tokens[0]).at(-1)!;
    expect(refused.route).not.toBe('auth/token');
  });

  it('buys a new token before the old one expires (a 2 s token, 1 s later)', async () => {
    const { s, c } = await jwtServer(2);
    await step(c);
    await new Promise((r) => setTimeout(r, 1100));
    await step(c);
    expect(s.tokens.length).toBeGreaterThanOrEqual(2);
    // no request was refused: the new token came before the old one ran out
    expect(s.requests.filter((r) => r.route === 'auth/token')).toHaveLength(s.tokens.length);
  });

  it('a service that wants a token and gets no key says what to set', async () => {
    const s = await startTinkerServer({ jwt: { ttlSeconds: 60 } });
    open.push(s);
    await expect(TinkerClient.connect({ ...fastOptions(s.url), apiKey: '' })).rejects.toMatchObject({
      kind: 'usage',
      message: expect.stringContaining('TINKER_CREDENTIAL_CMD'),
    });
  });
});

describe('TINKER_CREDENTIAL_CMD', () => {
  it("takes the command's output as the key when TINKER_API_KEY is not set; TINKER_API_KEY wins", () => {
    const env = { TINKER_BASE_URL: 'http://127.0.0.1:1', TINKER_CREDENTIAL_CMD: 'printf "tml-from-cmd\\n"' };
    expect(resolveOptions({}, env).apiKey).toBe('tml-from-cmd');
    expect(resolveOptions({}, { ...env, TINKER_API_KEY: 'tml-env' }).apiKey).toBe('tml-env');
  });

  it('says what ran when the command fails or prints nothing', () => {
    const base = { TINKER_BASE_URL: 'http://127.0.0.1:1' };
    expect(() => resolveOptions({}, { ...base, TINKER_CREDENTIAL_CMD: 'exit 3' })).toThrow(
      /TINKER_CREDENTIAL_CMD \(exit 3\) failed/,
    );
    expect(() => resolveOptions({}, { ...base, TINKER_CREDENTIAL_CMD: 'true' })).toThrow(
      /printed no credential/,
    );
  });
});
