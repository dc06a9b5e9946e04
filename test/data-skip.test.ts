/**
 * A clone with no BFCL task files and no network (no shared folder beside it, nothing in the
 * cache, the download refused): `npm test` runs every test that needs no data and says, in one
 * line, which files it left out and how to provide the data; under CI the same is an error. Run
 * as a user would: vitest in a scratch copy of the repository.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filesNeedingBfclData } from './support/data-setup.js';

const REPO = join(import.meta.dirname, '..');
/** one test file that needs the data and one that does not */
const NEEDS_DATA = 'test/seal/diagnosis.test.ts';
const NO_DATA = 'test/util/suggest.test.ts';

let scratch = '';
let repo = '';
let closedPort = 0;

beforeAll(async () => {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closedPort = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  scratch = mkdtempSync(join(tmpdir(), 'seal-nodata-'));
  repo = join(scratch, 'seal');
  mkdirSync(join(repo, 'test'), { recursive: true });
  // dist/ with the sources' times kept, so that the suite's global setup finds it fresh, as built
  const files = [
    'src',
    'dist',
    'bin',
    'manifests',
    'test/support',
    'package.json',
    'tsconfig.json',
    'tsconfig.build.json',
  ];
  for (const p of [...files, 'vitest.config.ts'])
    cpSync(join(REPO, p), join(repo, p), { recursive: true, preserveTimestamps: true });
  for (const p of [NEEDS_DATA, NO_DATA]) cpSync(join(REPO, p), join(repo, p));
  symlinkSync(join(REPO, 'node_modules'), join(repo, 'node_modules'), 'dir');
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function vitest(ci: boolean): Promise<{ code: number; out: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of [
    'CI',
    'SEAL_SHARED_BFCL',
    'SEAL_BFCL_DATA',
    'VITEST',
    'VITEST_WORKER_ID',
    'VITEST_POOL_ID',
  ])
    delete env[k];
  Object.assign(env, {
    SEAL_CACHE_DIR: join(scratch, 'cache'),
    // a loopback port nothing listens on: refused at once, as on a machine without network
    SEAL_BFCL_BASE_URL: `http://127.0.0.1:${closedPort}`,
    NO_COLOR: '1',
    ...(ci ? { CI: 'true' } : {}),
  });
  return new Promise((done) => {
    execFile(
      process.execPath,
      [join(repo, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--reporter=default'],
      { cwd: repo, env },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, out: `${stdout}\n${stderr}` });
      },
    );
  });
}

describe('npm test without the BFCL task files', () => {
  it('runs the tests that need no data and names the way to provide it', async () => {
    const r = await vitest(false);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(
      /Skipping the 1 test file tagged bfcl-data: the BFCL task files are not in .*ECONNREFUSED/,
    );
    expect(r.out).toMatch(/seal data pull bfcl.*SEAL_BFCL_DATA=DIR.*SEAL_BFCL_BASE_URL=URL/);
    expect(r.out).toContain('suggest.test.ts');
    expect(r.out).not.toContain('diagnosis.test.ts');
    expect(r.out).toMatch(/Test Files\s+1 passed \(1\)/);
  });

  it('fails under CI, where skipping the port would pass a run that checked nothing', async () => {
    const r = await vitest(true);
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('CI needs the BFCL task files');
  });
});

describe('the bfcl-data tag', () => {
  it('marks the files that read the task files', () => {
    const tagged = filesNeedingBfclData(join(REPO, 'test')).map((f) => f.slice(REPO.length + 1));
    expect(tagged).toContain(NEEDS_DATA);
    expect(tagged).not.toContain(NO_DATA);
  });
});
