/**
 * Stand-ins on 127.0.0.1 for what BFCL's agentic tools reach outside this machine: an
 * OpenAI-compatible `/v1/embeddings` server, the search provider (SerpAPI's `/search.json` with
 * the DuckDuckGo engine) and web pages. They run on a worker thread, because the tools call them
 * synchronously and would otherwise wait on the thread that has to answer.
 *
 * Embeddings: [count of "coffee", of "seattle", of "michael", 0.5], unnormalised (seal
 * normalises, as the reference's encoder does), so the nearest neighbours are plain to see.
 */
import { Worker } from 'node:worker_threads';

const SERVER = `
const { parentPort } = require('node:worker_threads');
const http = require('node:http');
let searches = 0;
const count = (t, w) => t.toLowerCase().split(w).length - 1;
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  const send = (status, type, body) => { res.writeHead(status, { 'content-type': type }); res.end(body); };
  if (req.method === 'POST' && url.pathname === '/v1/embeddings') {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const { input } = JSON.parse(body);
      const data = input.map((t, index) => ({ object: 'embedding', index, embedding: [count(t, 'coffee'), count(t, 'seattle'), count(t, 'michael'), 0.5] }));
      send(200, 'application/json', JSON.stringify({ object: 'list', data, model: 'all-MiniLM-L6-v2' }));
    });
    return;
  }
  if (url.pathname === '/search.json') {
    searches++;
    if (url.searchParams.get('api_key') !== 'test-key') return send(401, 'application/json', JSON.stringify({ error: 'Invalid API key.' }));
    if (url.searchParams.get('engine') !== 'duckduckgo') return send(400, 'application/json', JSON.stringify({ error: 'engine' }));
    const base = 'http://127.0.0.1:' + server.address().port;
    const q = url.searchParams.get('q');
    return send(200, 'application/json', JSON.stringify({
      search_metadata: { status: 'Success' },
      organic_results: [
        { position: 1, title: 'Result for ' + q, link: base + '/page/1', snippet: 'Dong-Sup Yoon is president (' + url.searchParams.get('kl') + ')' },
        { position: 2, title: 'Second', link: base + '/missing', snippet: 'nothing here' },
        { position: 3, title: 'Third', link: base + '/page/1', snippet: 'third' },
      ],
    }));
  }
  if (url.pathname === '/page/1')
    return send(200, 'text/html; charset=utf-8', '<!doctype html><html><head><title>Yonsei</title><style>p{color:red}</style></head><body><script>var x = 1;</script><h1>Yonsei University</h1><!-- a comment --><p>President: <b>Dong-Sup Yoon</b> &amp; others &#8212; 2024</p>\\n  <p>  </p></body></html>');
  send(404, 'text/plain', 'no');
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => { if (m === 'searches') parentPort.postMessage({ searches }); });
`;

export interface StandIns {
  readonly base: string;
  /** how many search requests reached the provider stand-in */
  searches(): Promise<number>;
  close(): Promise<void>;
}

export async function startStandIns(): Promise<StandIns> {
  const worker = new Worker(SERVER, { eval: true });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', (m: { port: number }) => resolve(m.port));
    worker.once('error', reject);
  });
  return {
    base: `http://127.0.0.1:${port}`,
    searches: () =>
      new Promise((resolve) => {
        worker.once('message', (m: { searches: number }) => resolve(m.searches));
        worker.postMessage('searches');
      }),
    close: async () => {
      await worker.terminate();
    },
  };
}
