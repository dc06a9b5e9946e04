/**
 * What the web search tools reach: the search provider the reference uses (SerpAPI's DuckDuckGo
 * engine, the user's key from `SERPAPI_API_KEY`) and web pages, through a record/replay cache.
 *
 * The cache is a folder with one JSON file per request (the provider's raw answer, or the page as
 * fetched, or the network error), named by a hash of the request without the key. A run with a
 * cache records what it fetched; a run with `offline` set answers only from the cache, so a run
 * repeats without network and two models can be compared on the same pages. A request the cache
 * does not hold is then answered with an error the model sees.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../../../util/files.js';
import { type HttpResponse, SyncHttp } from './sync-http.js';

export const SERPAPI_KEY_ENV = 'SERPAPI_API_KEY';
export const DEFAULT_SEARCH_URL = 'https://serpapi.com';

export interface WebOptions {
  /** the provider's base URL (SerpAPI, or a stand-in speaking its protocol) */
  readonly searchUrl?: string;
  readonly apiKey?: string;
  /** record/replay folder */
  readonly cacheDir?: string;
  /** answer only from the cache */
  readonly offline?: boolean;
}

export type Fetched = { readonly response: HttpResponse } | { readonly error: string };

/** A browser's headers, as the reference sends them (they avoid some 403s). */
const PAGE_HEADERS: Record<string, string> = {
  'User-Agent':
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/112.0.0.0 Safari/537.36',
  Accept:
    'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7',
  'Accept-Language': 'en-US,en;q=0.9',
  Referer: 'https://www.google.com/',
};

export class Web {
  private http: SyncHttp | undefined;
  /** requests answered from the cache, fetched, and missed offline */
  readonly counts = { hits: 0, fetched: 0, misses: 0 };

  constructor(readonly options: WebOptions) {}

  private cached(key: object, fetch: () => Fetched): Fetched {
    const dir = this.options.cacheDir;
    const hash = createHash('sha256').update(JSON.stringify(key)).digest('hex').slice(0, 32);
    const path = dir ? join(dir, `${hash}.json`) : undefined;
    if (path && existsSync(path)) {
      this.counts.hits++;
      return (JSON.parse(readFileSync(path, 'utf8')) as { fetched: Fetched }).fetched;
    }
    if (this.options.offline) {
      this.counts.misses++;
      return { error: `not in the web cache (offline run): ${JSON.stringify(key)}` };
    }
    const fetched = fetch();
    this.counts.fetched++;
    if (path) {
      mkdirSync(dir!, { recursive: true });
      writeAtomic(path, `${JSON.stringify({ request: key, fetched })}\n`);
    }
    return fetched;
  }

  private get(url: string, headers: Record<string, string>, timeoutMs: number): Fetched {
    this.http ??= new SyncHttp();
    try {
      return { response: this.http.request({ url, headers, timeoutMs }) };
    } catch (e) {
      return { error: e instanceof Error ? e.message : String(e) };
    }
  }

  /** The provider's answer to a DuckDuckGo query (`engine=duckduckgo`, `q`, `kl`). */
  search(q: string, kl: string): Fetched {
    return this.cached({ kind: 'search', engine: 'duckduckgo', q, kl }, () => {
      const base = (this.options.searchUrl ?? DEFAULT_SEARCH_URL).replace(/\/+$/, '');
      const params = new URLSearchParams({ engine: 'duckduckgo', q, kl, api_key: this.options.apiKey ?? '' });
      return this.get(`${base}/search.json?${params}`, {}, 60_000);
    });
  }

  /** A page as the reference's `requests.get(url, headers, timeout=20)` fetches it. */
  page(url: string): Fetched {
    return this.cached({ kind: 'page', url }, () => this.get(url, PAGE_HEADERS, 20_000));
  }

  close(): void {
    void this.http?.close();
    this.http = undefined;
  }
}
