/**
 * WebSearchAPI (`web_search.py` in BFCL v4): `search_engine_query` (the provider's DuckDuckGo
 * results: title, link and, unless the task is web_search_no_snippet, the snippet) and
 * `fetch_url_content` (a page raw, as text, or as Markdown). What they reach goes through
 * agentic/web.ts (the provider, the user's key, the record/replay cache), set with
 * `configureWebSearch`. `initial_config.WebSearchAPI.show_snippet` is false for the no-snippet
 * variant, as the reference sets it.
 */
import { KeyError_, PyException, ValueError_ } from '../../py/errors.js';
import { str } from '../../py/format.js';
import { dictOf, type PyDict, type PyValue } from '../../py/values.js';
import { htmlToMarkdown, htmlToText } from '../agentic/html.js';
import { SyncHttp } from '../agentic/sync-http.js';
import type { Web } from '../agentic/web.js';
import type { ApiClass, BfclApi, ScenarioContext } from './api.js';
import { opt, req } from './api.js';

let web: Web | undefined;

/** Set where every WebSearchAPI instance created afterwards searches and fetches. */
export function configureWebSearch(w: Web | undefined): void {
  web = w;
}

function needWeb(): Web {
  if (!web)
    throw new PyException(
      'RuntimeError',
      'web search is not configured: seal needs SERPAPI_API_KEY or a web cache',
    );
  return web;
}

/** The reference retries a rate-limited query with doubling back-off; seal gives up after 6 tries. */
const RATE_LIMIT_TRIES = 6;

export class WebSearchInstance implements BfclApi {
  readonly className = 'WebSearchAPI' as const;
  showSnippet = true;

  loadScenario(config: PyDict, _ctx: ScenarioContext): void {
    const v = config.get('show_snippet');
    if (typeof v === 'boolean') this.showSnippet = v;
  }

  publicState(): ReadonlyMap<string, PyValue> {
    return new Map<string, PyValue>([['show_snippet', this.showSnippet]]);
  }

  search(keywords: PyValue, maxResults: PyValue, region: PyValue): PyValue {
    const w = needWeb();
    let body: Record<string, unknown> | undefined;
    let backoff = 2;
    for (let attempt = 1; ; attempt++) {
      const f = w.search(str(keywords), str(region));
      if ('error' in f) return dictOf({ error: f.error });
      try {
        body = JSON.parse(f.response.body) as Record<string, unknown>;
      } catch {
        body = { error: `HTTP ${f.response.status}` };
      }
      const limited = f.response.status === 429 || String(body.error ?? '').includes('429');
      if (!limited) break;
      if (attempt >= RATE_LIMIT_TRIES || w.options.offline)
        return dictOf({ error: String(body.error ?? '429') });
      SyncHttp.sleep((backoff + Math.random() * backoff) * 1000);
      backoff = Math.min(backoff * 2, 120);
    }
    const organic = body.organic_results;
    if (!Array.isArray(organic))
      return dictOf({ error: 'Failed to retrieve the search results from server. Please try again later.' });
    const n = maxResults === null ? organic.length : Number(maxResults);
    const rows = organic.slice(0, n < 0 ? Math.max(0, organic.length + n) : n) as Record<string, unknown>[];
    return rows.map((r) => {
      const field = (k: string): PyValue => {
        if (!(k in r)) throw KeyError_(`'${k}'`);
        return r[k] as PyValue;
      };
      return this.showSnippet
        ? dictOf({ title: field('title'), href: field('link'), body: field('snippet') })
        : dictOf({ title: field('title'), href: field('link') });
    });
  }

  fetch(url: PyValue, mode: PyValue): PyValue {
    const u = str(url);
    if (!/^https?:\/\//.test(u)) throw ValueError_(`Invalid URL: ${u}`);
    const failed = (why: string) => dictOf({ error: `An error occurred while fetching ${u}: ${why}` });
    const f = needWeb().page(u);
    if ('error' in f) return failed(f.error);
    const r = f.response;
    if (r.status >= 400 && r.status < 600)
      return failed(
        `${r.status} ${r.status < 500 ? 'Client' : 'Server'} Error: ${r.statusText} for url: ${r.url}`,
      );
    if (mode === 'raw') return dictOf({ content: r.body });
    if (mode === 'markdown') return dictOf({ content: htmlToMarkdown(r.body) });
    if (mode === 'truncate') return dictOf({ content: htmlToText(r.body) });
    return failed(`Unsupported mode: ${str(mode)}`);
  }
}

export const webSearch: ApiClass<WebSearchInstance> = {
  className: 'WebSearchAPI',
  stateless: false,
  create: () => new WebSearchInstance(),
  methods: {
    search_engine_query: {
      params: [req('keywords'), opt('max_results'), opt('region')],
      run: (s, a) => s.search(a[0]!, a[1] === undefined ? 10n : a[1], a[2] === undefined ? 'wt-wt' : a[2]),
    },
    fetch_url_content: {
      params: [req('url'), opt('mode')],
      run: (s, a) => s.fetch(a[0]!, a[1] === undefined ? 'raw' : a[1]),
    },
  },
};
