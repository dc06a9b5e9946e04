// @module-tag bfcl-data
/**
 * `seal data pull bfcl` brings BFCL v4's memory and web search files beside the multi-turn ones,
 * sha256-checked against manifests/bfcl-v4-agentic.json (same commit), from a stand-in of the raw
 * file host on 127.0.0.1 serving the shared copies.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BFCL_AGENTIC_MANIFEST, BFCL_MANIFEST } from '../../src/envs/bfcl/data/locate.js';
import { AGENTIC_DATA, HAS_AGENTIC_DATA, reportMissingAgenticData } from '../support/agentic-data.js';
import { buildDist, seal } from '../support/cli.js';
import { DATA_DIR } from '../support/golden.js';

reportMissingAgenticData('test/agentic/pull.test.ts');

describe.skipIf(!HAS_AGENTIC_DATA)('seal data pull bfcl: the agentic files', () => {
  let server: Server;
  let baseUrl = '';
  let corrupt = '';
  beforeAll(async () => {
    await buildDist();
    server = createServer((req, res) => {
      const prefix = `/${BFCL_MANIFEST.commit}/${BFCL_MANIFEST.repoDataPath}/`;
      const url = req.url ?? '';
      const rel = decodeURIComponent(url.slice(prefix.length));
      const path = [join(DATA_DIR, rel), join(AGENTIC_DATA, rel)].find(
        (p) => url.startsWith(prefix) && existsSync(p),
      );
      if (!path) {
        res.writeHead(404).end('not found');
        return;
      }
      const body = readFileSync(path);
      res.writeHead(200).end(rel === corrupt ? Buffer.concat([body, Buffer.from('x')]) : body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  }, 120_000);
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('downloads and checks them with the multi-turn files, and verify reads them from there', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'seal-pull-agentic-'));
    // long_context.py is not in the shared copy; its converted form is, and the pull keeps it
    mkdirSync(join(dest, 'derived'));
    copyFileSync(
      join(DATA_DIR, 'derived', 'long_context_constants.json'),
      join(dest, 'derived', 'long_context_constants.json'),
    );
    corrupt = 'memory_prereq_conversation/memory_finance.json';
    let r = await seal(['data', 'pull', 'bfcl', '--dest', dest, '--base-url', baseUrl]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('memory_prereq_conversation/memory_finance.json');
    expect(r.stderr).toContain('does not match the manifest');
    expect(existsSync(join(dest, corrupt))).toBe(false);
    corrupt = '';
    r = await seal(['data', 'pull', 'bfcl', '--dest', dest, '--base-url', baseUrl]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('1 downloaded');
    for (const f of BFCL_AGENTIC_MANIFEST.files)
      expect(readFileSync(join(dest, f.path)).equals(readFileSync(join(AGENTIC_DATA, f.path)))).toBe(true);
    const results = join(dest, 'result.jsonl');
    writeFileSync(
      results,
      `${JSON.stringify({ id: 'memory_rec_sum_0-customer-0', result: [["{'answer': 'Michael'}"]] })}\n`,
    );
    r = await seal(['verify', '--results', results, '--data-dir', dest, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).memory).toBe(100);
  });
});
