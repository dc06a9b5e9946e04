/**
 * BM25+ as the reference's memory_kv backend ranks keys: `rank_bm25.BM25Plus` (k1 1.5, b 0.75,
 * delta 1) over `text.replace("_", " ").lower().split()`, the scores summed per query token in
 * query order with the library's exact operation order (so the doubles are numpy's), then a
 * stable sort by score, highest first, ties in the order of the keys.
 */
import { ZeroDivisionError_ } from '../../py/errors.js';
import { splitWhitespace } from '../../py/text.js';

const K1 = 1.5;
const B = 0.75;
const DELTA = 1;

export const bm25Tokens = (text: string): string[] =>
  splitWhitespace(text.replaceAll('_', ' ').toLowerCase());

/** `BM25Plus(tokenized_corpus).get_scores(tokenized_query)`. */
export function bm25PlusScores(corpus: readonly (readonly string[])[], query: readonly string[]): number[] {
  // rank_bm25 divides by the corpus size for the average length: an empty corpus raises.
  if (corpus.length === 0) throw ZeroDivisionError_('division by zero');
  const docFreqs = corpus.map((doc) => {
    const f = new Map<string, number>();
    for (const w of doc) f.set(w, (f.get(w) ?? 0) + 1);
    return f;
  });
  const nd = new Map<string, number>();
  for (const f of docFreqs) for (const w of f.keys()) nd.set(w, (nd.get(w) ?? 0) + 1);
  const avgdl = corpus.reduce((s, d) => s + d.length, 0) / corpus.length;
  const idf = new Map<string, number>();
  for (const [w, n] of nd) idf.set(w, Math.log((corpus.length + 1) / n));
  const scores = corpus.map(() => 0);
  for (const q of query) {
    const qIdf = idf.get(q) ?? 0;
    for (let i = 0; i < corpus.length; i++) {
      const tf = docFreqs[i]!.get(q) ?? 0;
      const dl = corpus[i]!.length;
      scores[i]! += qIdf * (DELTA + (tf * (K1 + 1)) / (K1 * (1 - B + (B * dl) / avgdl) + tf));
    }
  }
  return scores;
}

/** The reference's `_similarity_search`: [score, text] pairs, best first, ties in corpus order. */
export function bm25Rank(query: string, corpus: readonly string[]): [number, string][] {
  const scores = bm25PlusScores(corpus.map(bm25Tokens), bm25Tokens(query));
  return corpus.map((text, i) => [scores[i]!, text] as [number, string]).sort((a, b) => b[0] - a[0]);
}
