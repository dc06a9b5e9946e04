/**
 * `seal data pull tau2` against a stand-in for the raw-file host on loopback, serving the shared
 * copy of τ²-bench's data, and where seal looks for the data afterwards.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  locateTau2Data,
  pullTau2,
  resolveTau2Root,
  TAU2_DATA_ENV,
  TAU2_MANIFEST,
  type Tau2Manifest,
} from '../../../src/envs/tau2/data.js';
import { loadTau2Tasks } from '../../../src/envs/tau2/tasks.js';
import { buildDist, seal } from '../../support/cli.js';

/** the shared copy of τ²-bench v0.2.0 beside the repository (`$SEAL_SHARED_TAU2` names another) */
const SHARED = resolve(
  process.env.SEAL_SHARED_TAU2 ??
    join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'tau2', 'v0.2.0'),
);
const HAS_SHARED = existsSync(join(SHARED, 'data', 'tau2'));
if (!HAS_SHARED)
  console.warn(
    `tau2 pull tests skipped: no copy of τ²-bench v0.2.0's data at ${SHARED} (../shared/tau2/v0.2.0, or $SEAL_SHARED_TAU2)`,
  );
/** this file's own stand-ins for the reference's source files (never the reference's text) */
const FIXTURE_SOURCES = join(import.meta.dirname, '..', '..', 'fixtures', 'tau2', 'tool-docs');
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const dataFiles = TAU2_MANIFEST.files.filter((f) => f.kind === 'data');
const sourceFiles = TAU2_MANIFEST.files.filter((f) => f.kind === 'tool-docs');

describe('the manifest', () => {
  it('pins v0.2.0 and lists the data files and the sources of the tool docs', () => {
    expect(TAU2_MANIFEST.commit).toBe('f8de30c298689cbe0117d76a378e7315a17e5bd8');
    expect(sourceFiles.map((f) => f.path).sort()).toEqual(
      [
        'src/tau2/domains/airline/data_model.py',
        'src/tau2/domains/airline/tools.py',
        'src/tau2/domains/retail/data_model.py',
        'src/tau2/domains/retail/tools.py',
        'src/tau2/domains/telecom/data_model.py',
        'src/tau2/domains/telecom/tools.py',
        'src/tau2/domains/telecom/user_data_model.py',
        'src/tau2/domains/telecom/user_tools.py',
        'src/tau2/environment/toolkit.py',
      ].sort(),
    );
    for (const f of TAU2_MANIFEST.files) expect(f.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it.skipIf(!HAS_SHARED)("lists exactly the shared copy's SHA256SUMS, with their sums and sizes", () => {
    const sums = readFileSync(join(SHARED, 'SHA256SUMS'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/))
      .map(([sum, path]) => ({ path: path!, sha256: sum! }));
    expect(dataFiles.map((f) => ({ path: f.path, sha256: f.sha256 }))).toEqual(sums);
    for (const f of dataFiles) expect(readFileSync(join(SHARED, f.path)).length, f.path).toBe(f.size);
  });
});

describe.skipIf(!HAS_SHARED)('seal data pull tau2', () => {
  let server: Server;
  let baseUrl = '';
  const hits: string[] = [];
  /** the repository path served with one byte added */
  let corrupt = '';
  /** repository paths served from this file's fixtures instead of answering 404 */
  let sources: Record<string, string> = {};
  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = decodeURIComponent(req.url ?? '');
      hits.push(url);
      const prefix = `/${TAU2_MANIFEST.commit}/`;
      const path = url.startsWith(prefix) ? url.slice(prefix.length) : '';
      const file = path.startsWith('data/') ? join(SHARED, path) : sources[path];
      if (!file || !existsSync(file)) {
        res.writeHead(404).end('not found');
        return;
      }
      const body = readFileSync(file);
      res.writeHead(200).end(path === corrupt ? Buffer.concat([body, Buffer.from('x')]) : body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    await buildDist();
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('downloads and checks every file at its repository path, refuses a corrupt one, and a rerun fetches only what is missing', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'seal-tau2-pull-'));
    corrupt = 'data/tau2/domains/retail/tasks.json';
    const first = await seal(['data', 'pull', 'tau2', '--dest', dest, '--base-url', baseUrl]);
    // the host has no source files: those fail with the host's answer, the data is all there but one
    expect(first.code, first.stderr).toBe(1);
    expect(first.stdout).toContain(
      `${dataFiles.length - 1} downloaded, 0 already present, ${sourceFiles.length + 1} failed`,
    );
    expect(first.stderr).toMatch(
      /data\/tau2\/domains\/retail\/tasks\.json: .*sha256 [0-9a-f]{64} does not match the manifest/,
    );
    for (const f of sourceFiles)
      expect(first.stderr).toContain(
        `${f.path}: ${baseUrl}/${TAU2_MANIFEST.commit}/${f.path} answered HTTP 404`,
      );
    expect(first.stderr).toContain('run the same command again to retry the rest');
    expect(existsSync(join(dest, corrupt))).toBe(false);
    expect(readdirSync(join(dest, 'data', 'tau2', 'domains', 'retail')).sort()).toEqual([
      'db.json',
      'policy.md',
    ]);
    expect(() => locateTau2Data(dest)).toThrow(
      /τ² data incomplete in .*1 of the pinned files are missing \(data\/tau2\/domains\/retail\/tasks\.json\); run `seal data pull tau2`/,
    );

    corrupt = '';
    hits.length = 0;
    // the rerun finds the folder and the host through their variables
    const second = await seal(['data', 'pull', 'tau2'], {
      [TAU2_DATA_ENV]: dest,
      SEAL_TAU2_BASE_URL: baseUrl,
    });
    expect(second.stdout).toContain(
      `${dest}: 1 downloaded, ${dataFiles.length - 1} already present, ${sourceFiles.length} failed`,
    );
    expect(hits.filter((h) => h.includes('/data/'))).toEqual([
      `/${TAU2_MANIFEST.commit}/data/tau2/domains/retail/tasks.json`,
    ]);
    for (const f of dataFiles) expect(sha256(readFileSync(join(dest, f.path))), f.path).toBe(f.sha256);
    expect(locateTau2Data(dest)).toBe(dest);
    expect(loadTau2Tasks(dest, 'retail')).toHaveLength(114);
  });

  it("with sources the host has (a manifest naming this file's stand-ins), the pull is complete; a changed file is fetched again", async () => {
    // a manifest whose source entries are this file's fixtures, served by the same host
    const fixtures = sourceFiles.map((f) => ({ ...f, local: join(FIXTURE_SOURCES, f.path) }));
    sources = Object.fromEntries(fixtures.map((f) => [f.path, f.local]));
    const manifest: Tau2Manifest = {
      ...TAU2_MANIFEST,
      files: [
        ...dataFiles,
        ...fixtures.map(({ local, ...f }) => ({ ...f, sha256: sha256(readFileSync(local)) })),
      ],
    };
    const dest = mkdtempSync(join(tmpdir(), 'seal-tau2-pull-full-'));
    const lines: string[] = [];
    const r = await pullTau2({ dest, baseUrl, manifest, log: (l) => lines.push(l) });
    expect(r.failed).toEqual([]);
    expect(r.downloaded).toEqual(manifest.files.map((f) => f.path));
    expect(lines).toContain('downloaded src/tau2/domains/retail/tools.py');
    expect(readFileSync(join(dest, 'src/tau2/domains/retail/tools.py'), 'utf8')).toBe(
      readFileSync(join(FIXTURE_SOURCES, 'src/tau2/domains/retail/tools.py'), 'utf8'),
    );
    const again = await pullTau2({ dest, baseUrl, manifest });
    expect(again.alreadyPresent).toHaveLength(manifest.files.length);
    // a source file that changed on disk is fetched again and replaced
    writeFileSync(join(dest, 'src/tau2/environment/toolkit.py'), 'changed');
    const repaired = await pullTau2({ dest, baseUrl, manifest });
    expect(repaired.downloaded).toEqual(['src/tau2/environment/toolkit.py']);
    sources = {};
  });

  it('reports an unreachable host by name and says how to use a local copy', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'seal-tau2-pull-dead-'));
    const r = await seal(['data', 'pull', 'tau2', '--dest', dest, '--base-url', 'http://127.0.0.1:9']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('cannot reach http://127.0.0.1:9/');
    expect(r.stderr).toContain(`Point --tau2-data DIR or $${TAU2_DATA_ENV} at a local copy`);
  });

  it('an unknown data set is a usage error naming both', async () => {
    const r = await seal(['data', 'pull', 'tau3']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown data set "tau3"; the ones available are bfcl, tau2.');
  });
});

describe('where the τ² data is looked for', () => {
  it('the flag, then $SEAL_TAU2_DATA, then the cache (below $SEAL_CACHE_DIR)', () => {
    const env = { [TAU2_DATA_ENV]: '/from/env', SEAL_CACHE_DIR: '/cache' };
    expect(resolveTau2Root('/from/flag', env)).toBe(resolve('/from/flag'));
    expect(resolveTau2Root(undefined, env)).toBe(resolve('/from/env'));
    expect(resolveTau2Root(undefined, { SEAL_CACHE_DIR: '/cache' })).toBe(
      join(resolve('/cache'), 'tau2', 'f8de30c29868'),
    );
  });

  it('a missing folder, or a file, is refused with the command that fixes it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'seal-tau2-locate-'));
    const none = join(dir, 'none');
    expect(() => locateTau2Data(none)).toThrow(
      new RegExp(
        `τ² data not found: .*none does not exist; run \`seal data pull tau2\` to download it into the cache, or point --tau2-data DIR or \\$${TAU2_DATA_ENV}`,
      ),
    );
    expect(() => locateTau2Data(undefined, '--tau2-data', { [TAU2_DATA_ENV]: none })).toThrow(
      /none does not exist/,
    );
    writeFileSync(join(dir, 'file'), 'x');
    expect(() => locateTau2Data(join(dir, 'file'))).toThrow(
      /is a file, not a folder; run `seal data pull tau2`/,
    );
    mkdirSync(join(dir, 'empty'));
    expect(() => locateTau2Data(join(dir, 'empty'))).toThrow(
      new RegExp(
        `${dataFiles.length} of the pinned files are missing \\(data/tau2/domains/airline/db\\.json, .*, \\.\\.\\.\\)`,
      ),
    );
    rmSync(dir, { recursive: true });
  });
});
