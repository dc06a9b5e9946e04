/**
 * Sentence embeddings for the memory_vector backend: the reference embeds with
 * all-MiniLM-L6-v2 (sentence-transformers, L2-normalised, float32). seal asks any
 * OpenAI-compatible `/v1/embeddings` server for them (one serving that model gives the reference's
 * vectors).
 * Requests are synchronous (sync-http.ts). Texts already embedded are kept, so reloading a
 * scenario's memory asks only for new texts.
 */
import { SyncHttp } from './sync-http.js';

export interface Embedder {
  /** One L2-normalised float32 vector per text, in order. Throws when the server cannot answer. */
  embed(texts: readonly string[]): Float32Array[];
}

export interface EmbeddingsServer {
  /** the server's OpenAI-style base URL, e.g. http://127.0.0.1:8000/v1 */
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKey?: string;
  /** per request; default 120 s */
  readonly timeoutMs?: number;
}

/** Embeddings from an OpenAI-compatible server, answered synchronously. */
export class ServerEmbedder implements Embedder {
  private readonly http = new SyncHttp();
  private readonly cache = new Map<string, Float32Array>();

  constructor(private readonly server: EmbeddingsServer) {}

  embed(texts: readonly string[]): Float32Array[] {
    const missing = [...new Set(texts.filter((t) => !this.cache.has(t)))];
    if (missing.length > 0) {
      const where = `embeddings server ${this.server.baseUrl}`;
      const res = this.http.request({
        url: `${this.server.baseUrl.replace(/\/+$/, '')}/embeddings`,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.server.apiKey ? { authorization: `Bearer ${this.server.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: this.server.model, input: missing }),
        timeoutMs: this.server.timeoutMs ?? 120_000,
      });
      if (res.status !== 200) throw new Error(`${where}: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
      const data = (JSON.parse(res.body) as { data?: { index: number; embedding: number[] }[] }).data;
      if (!Array.isArray(data) || data.length !== missing.length)
        throw new Error(`${where}: expected ${missing.length} embeddings in "data"`);
      const rows = [...data].sort((a, b) => a.index - b.index);
      for (const [i, t] of missing.entries()) this.cache.set(t, normalise(rows[i]!.embedding));
    }
    return texts.map((t) => this.cache.get(t)!);
  }

  close(): Promise<number> {
    return this.http.close();
  }
}

/** L2 normalisation in float32, as sentence-transformers' `normalize_embeddings=True`. */
export function normalise(v: readonly number[]): Float32Array {
  const out = Float32Array.from(v);
  let sum = 0;
  for (const x of out) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i] = out[i]! / norm;
  return out;
}
