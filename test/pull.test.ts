// @module-tag bfcl-data
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BFCL_MANIFEST } from '../src/envs/bfcl/data/locate.js';
import { longContextModuleToJson, pullBfcl } from '../src/envs/bfcl/data/pull.js';
import { loadBfclData, loadLongContextConstants } from '../src/envs/bfcl/data/tasks.js';
import { repr } from '../src/envs/py/format.js';
import { pyEquals } from '../src/envs/py/values.js';
import { DATA_DIR } from './support/golden.js';

// A stand-in for the public raw-file host, speaking HTTP on loopback and serving the shared copy.
describe('seal data pull bfcl', () => {
  let server: Server;
  let baseUrl = '';
  const hits: string[] = [];
  let corrupt = false;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = req.url ?? '';
      hits.push(url);
      const prefix = `/${BFCL_MANIFEST.commit}/${BFCL_MANIFEST.repoDataPath}/`;
      if (!url.startsWith(prefix)) {
        res.writeHead(404).end('not found');
        return;
      }
      const path = join(DATA_DIR, decodeURIComponent(url.slice(prefix.length)));
      if (!existsSync(path)) {
        res.writeHead(404).end('not found');
        return;
      }
      const body = readFileSync(path);
      res
        .writeHead(200)
        .end(corrupt && url.endsWith('math_api.json') ? Buffer.concat([body, Buffer.from('x')]) : body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const addr = server.address() as { port: number };
    baseUrl = `http://127.0.0.1:${addr.port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('downloads every pinned file, checks sha256, keeps good files and reports the rest', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'seal-pull-'));
    corrupt = true;
    const first = await pullBfcl({ dest, baseUrl });
    expect(first.failed.map((f) => f.path).sort()).toEqual([
      'derived/long_context_constants.json',
      'multi_turn_func_doc/math_api.json',
    ]);
    expect(first.failed[0]!.reason).toMatch(/sha256|HTTP 404/);
    expect(existsSync(join(dest, 'multi_turn_func_doc', 'math_api.json'))).toBe(false);
    expect(first.downloaded).toHaveLength(BFCL_MANIFEST.files.length - 1);

    corrupt = false;
    hits.length = 0;
    const second = await pullBfcl({ dest, baseUrl });
    expect(second.downloaded).toEqual(['multi_turn_func_doc/math_api.json']);
    expect(hits.filter((h) => h.endsWith('.json'))).toHaveLength(1);
    for (const f of BFCL_MANIFEST.files) {
      expect(
        createHash('sha256')
          .update(readFileSync(join(dest, f.path)))
          .digest('hex'),
      ).toBe(f.sha256);
    }
    const data = loadBfclData(dest);
    expect(data.tasks).toHaveLength(800);
    expect(data.split.train).toHaveLength(400);
  });

  it('reports an unreachable host by name', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'seal-pull-dead-'));
    const r = await pullBfcl({ dest, baseUrl: 'http://127.0.0.1:9', timeoutMs: 2000 });
    expect(r.failed.length).toBe(BFCL_MANIFEST.files.length + 1);
    expect(r.failed[0]!.reason).toContain('cannot reach http://127.0.0.1:9/');
  });

  it('turns the literal constants of long_context.py into the loader form, without executing it', () => {
    // Build a Python module from the shared JSON export with our repr, then convert it back.
    const constants = loadLongContextConstants(DATA_DIR);
    const module = [...constants]
      .map(([k, v]) => `${k} = ${repr(v).replace(/Ellipsis\]$/, '...]')}\n`)
      .join('\n');
    const dir = mkdtempSync(join(tmpdir(), 'seal-lc-'));
    const json = longContextModuleToJson(module);
    mkdirSync(join(dir, 'derived'));
    writeFileSync(join(dir, 'derived', 'long_context_constants.json'), json);
    const back = loadLongContextConstants(dir);
    expect([...back.keys()]).toEqual([...constants.keys()]);
    for (const [k, v] of constants) expect(pyEquals(back.get(k)!, v), k).toBe(true);
    expect(repr(back.get('WATCH_LIST_EXTENSION')!).endsWith('Ellipsis]')).toBe(true);
  });
});
