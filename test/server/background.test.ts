/**
 * `seal serve` in the background as docs/commands/serve.md shows it: started from a shell with
 * `node bin/seal.js serve ... &`, `$!` is the server's own PID, and `kill $!` stops the server (not
 * a wrapper that would leave it answering, as `npx seal serve ... &` does).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDist, ROOT } from '../support/cli.js';

beforeAll(async () => {
  await buildDist();
});

async function until<T>(
  what: string,
  f: () => T | undefined | Promise<T | undefined>,
  ms = 30_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('seal serve in the background', () => {
  it('$! is the server, and kill $! stops it', async () => {
    const log = join(mkdtempSync(join(tmpdir(), 'seal-serve-bg-')), 'serve.log');
    // the doc's lines, as a shell runs them
    const pid = Number(
      execFileSync('sh', ['-c', `node bin/seal.js serve --suite mini --port 0 > '${log}' 2>&1 & echo $!`], {
        cwd: ROOT,
        encoding: 'utf8',
      }).trim(),
    );
    expect(pid).toBeGreaterThan(0);
    const url = await until('the listening line', () => {
      const m = /listening on (http:\/\/\S+)/.exec(readFileSync(log, 'utf8'));
      return m?.[1];
    });
    const health = await fetch(`${url}/healthz`);
    expect(await health.text()).toBe('OK');

    process.kill(pid, 'SIGTERM');
    // (an exited orphan may stay a zombie where nothing reaps it: the port and the log tell)
    await until('the port to close', () =>
      fetch(`${url}/healthz`).then(
        () => undefined,
        () => true,
      ),
    );
    await until('the stop line', () =>
      readFileSync(log, 'utf8').includes('seal serve: stopped (SIGTERM)') ? true : undefined,
    );
  });
});
