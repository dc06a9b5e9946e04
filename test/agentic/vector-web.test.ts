/**
 * memory_vector against a stand-in embeddings server, and web search against a stand-in of the
 * search provider and of web pages (all on 127.0.0.1), as the executor runs them: call strings in,
 * the reference's result strings out. The web cache is then replayed with the stand-ins gone.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerEmbedder } from '../../src/envs/bfcl/agentic/embeddings.js';
import { Web } from '../../src/envs/bfcl/agentic/web.js';
import type { ClassName } from '../../src/envs/bfcl/apis/api.js';
import { configureVectorEmbedder, type MemoryVectorInstance } from '../../src/envs/bfcl/apis/memoryVector.js';
import { configureWebSearch } from '../../src/envs/bfcl/apis/webSearch.js';
import { TaskEnvironment } from '../../src/envs/bfcl/executor.js';
import { parsePyJson } from '../../src/envs/py/json.js';
import type { PyDict } from '../../src/envs/py/values.js';
import { type StandIns, startStandIns } from '../support/agentic-standins.js';

const env = (cls: ClassName, config: object = {}) =>
  new TaskEnvironment({
    taskId: 't',
    involvedClasses: [cls],
    initialConfig: parsePyJson(JSON.stringify({ [cls]: config })) as PyDict,
    longContext: false,
  });

let s: StandIns;
beforeAll(async () => {
  s = await startStandIns();
});
afterAll(async () => {
  configureVectorEmbedder(undefined);
  configureWebSearch(undefined);
  await s.close();
});

describe('MemoryAPI_vector', () => {
  it('retrieves the nearest texts by inner product of normalised embeddings, ties in index order', () => {
    const embedder = new ServerEmbedder({ baseUrl: `${s.base}/v1`, model: 'all-MiniLM-L6-v2' });
    configureVectorEmbedder(embedder);
    const e = env('MemoryAPI_vector');
    expect(e.execute("core_memory_add(text='My name is Michael')")).toBe('{"id": 0}');
    expect(e.execute("core_memory_add(text='I live in Seattle')")).toBe('{"id": 1}');
    expect(e.execute("core_memory_add(text='Oat milk coffee, please')")).toBe('{"id": 2}');
    expect(e.execute("core_memory_add(text='Seattle again')")).toBe('{"id": 3}');
    const top = JSON.parse(e.execute("core_memory_retrieve(query='coffee?', top_k=2)")) as {
      result: { id: number; similarity_score: number; text: string }[];
    };
    expect(top.result.map((r) => r.id)).toEqual([2, 0]); // 0 and 1 and 3 tie below 2; 0 is first in the index
    expect(top.result[0]!.similarity_score).toBeCloseTo(1, 6);
    expect(top.result[1]!.similarity_score).toBeCloseTo(0.2, 6); // [0.5] . [1, 0.5] / |..| = 0.25/1.118/1
    // an update moves the entry to the end of the index: the tie now goes to id 1
    expect(e.execute("core_memory_update(vec_id=0, new_text='Michael here')")).toBe(
      '{"status": "ID 0 updated."}',
    );
    const seattle = JSON.parse(e.execute("core_memory_retrieve(query='where? seattle', top_k=10)")) as {
      result: { id: number }[];
    };
    expect(seattle.result.map((r) => r.id)).toEqual([1, 3, 2, 0]);
    expect(e.execute('core_memory_remove(vec_id=7)')).toBe('{"error": "ID 7 not present in store."}');
    expect(e.execute(`core_memory_add(text='${'x'.repeat(301)}')`)).toBe(
      '{"error": "Entry length exceeds maximum length of 300 characters."}',
    );
    // the snapshot is the reference's file shape, and a new instance loads it
    const snap = (e.instances.get('MemoryAPI_vector') as MemoryVectorInstance).snapshot();
    const again = env('MemoryAPI_vector', {
      snapshot: JSON.parse(JSON.stringify(Object.fromEntries(toObj(snap)))),
    });
    expect(again.execute('core_memory_retrieve_all()')).toBe(e.execute('core_memory_retrieve_all()'));
    expect(again.execute("core_memory_add(text='next')")).toBe('{"id": 4}');
  });
});

/** a PyDict as plain JSON-able entries */
function toObj(d: PyDict): [string, unknown][] {
  return [...d].map(([k, v]) => [
    String(k),
    v instanceof Map ? Object.fromEntries(toObj(v)) : typeof v === 'bigint' ? Number(v) : v,
  ]);
}

describe('WebSearchAPI', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'seal-web-cache-'));
  let online: { base: string; noSnippet: string; truncate: string; raw: string; missing: string };

  it('searches with and without snippets and fetches pages in each mode, recording them', async () => {
    configureWebSearch(new Web({ searchUrl: s.base, apiKey: 'test-key', cacheDir }));
    const base = env('WebSearchAPI', { show_snippet: true });
    const noSnippet = env('WebSearchAPI', { show_snippet: false });
    const q = "search_engine_query(keywords='Yonsei president', max_results=2)";
    online = {
      base: base.execute(q),
      noSnippet: noSnippet.execute(q),
      truncate: base.execute(`fetch_url_content(url='${s.base}/page/1', mode='truncate')`),
      raw: base.execute(`fetch_url_content(url='${s.base}/page/1')`),
      missing: base.execute(`fetch_url_content(url='${s.base}/missing', mode='raw')`),
    };
    expect(online.base).toBe(
      `[{'title': 'Result for Yonsei president', 'href': '${s.base}/page/1', 'body': 'Dong-Sup Yoon is president (wt-wt)'}, {'title': 'Second', 'href': '${s.base}/missing', 'body': 'nothing here'}]`,
    );
    expect(online.noSnippet).toBe(
      `[{'title': 'Result for Yonsei president', 'href': '${s.base}/page/1'}, {'title': 'Second', 'href': '${s.base}/missing'}]`,
    );
    expect(JSON.parse(online.truncate)).toEqual({
      content: 'Yonsei\nYonsei University\nPresident:\nDong-Sup Yoon\n& others \u2014 2024',
    });
    expect(JSON.parse(online.raw).content).toContain('<script>var x = 1;</script>');
    expect(JSON.parse(online.missing)).toEqual({
      error: `An error occurred while fetching ${s.base}/missing: 404 Client Error: Not Found for url: ${s.base}/missing`,
    });
    expect(base.execute("fetch_url_content(url='ftp://x')")).toBe(
      'Error during execution: Invalid URL: ftp://x',
    );
    // one search for both variants and one fetch for both modes: the cache holds what the
    // provider and the page returned, not what the tool made of it
    expect(await s.searches()).toBe(1);
    expect(readdirSync(cacheDir).length).toBe(3);
    // a wrong key is the provider's error, as the reference reports it
    configureWebSearch(new Web({ searchUrl: s.base, apiKey: 'wrong' }));
    expect(env('WebSearchAPI').execute(q)).toBe(
      '{"error": "Failed to retrieve the search results from server. Please try again later."}',
    );
  });

  it('repeats offline from its cache, and says what the cache lacks', async () => {
    await s.close();
    const web = new Web({ cacheDir, offline: true });
    configureWebSearch(web);
    const base = env('WebSearchAPI', { show_snippet: true });
    const noSnippet = env('WebSearchAPI', { show_snippet: false });
    const q = "search_engine_query(keywords='Yonsei president', max_results=2)";
    expect(base.execute(q)).toBe(online.base);
    expect(noSnippet.execute(q)).toBe(online.noSnippet);
    expect(base.execute(`fetch_url_content(url='${s.base}/page/1', mode='truncate')`)).toBe(online.truncate);
    expect(base.execute(`fetch_url_content(url='${s.base}/missing', mode='raw')`)).toBe(online.missing);
    expect(base.execute("search_engine_query(keywords='something else')")).toContain('not in the web cache');
    expect(web.counts).toEqual({ hits: 4, fetched: 0, misses: 1 });
  });
});
