/**
 * Incremental decoding with KV caches: a prompt's positions run once (`step` over several tokens),
 * then one token at a time, alone (`step`) or for several sequences together (`stepBatch`, one
 * B-row product per projection). No backward pass follows, so buffers pass from layer to layer.
 */
import { previousIds } from './layers.js';
import type { Arr, Gpt } from './model.js';
import type { KvBlock } from './ops.js';

/**
 * keys and values of every layer for positions [0, length) of one sequence; room for `block.rows`
 * positions. Its memory goes back with `freeKv`.
 */
export interface KvCache {
  readonly block: KvBlock;
  length: number;
  /** the token at position length - 1 (-1 while empty), for the previous-token map */
  last: number;
}

/** an empty cache with room for `rows` positions (default: the context) */
export function newKvCache(model: Gpt, rows = model.config.contextLength): KvCache {
  const { nLayer, dModel } = model.config;
  return { block: model.net.ops.kvAlloc(nLayer, rows, dModel), length: 0, last: -1 };
}

/**
 * a cache holding the first n positions of `from` (n <= from.length), whose token at n - 1 is
 * `last` (-1 when n is 0), with room for `rows`: a fork that reads those positions where `from`
 * holds them (`Ops.kvShare`), so the rollouts of a group keep one copy of their prompt. Either
 * cache can go on (each writes only past n) or be freed first.
 */
export function forkKvCache(
  model: Gpt,
  from: KvCache,
  n: number,
  last: number,
  rows = model.config.contextLength,
): KvCache {
  if (n > from.length || n > rows)
    throw new Error(`cannot fork ${n} of ${from.length} positions into ${rows}`);
  return { block: model.net.ops.kvShare(from.block, n, rows), length: n, last: n > 0 ? last : -1 };
}

/** gives a cache's memory back (it must not be used again) */
export function freeKv(model: Gpt, kv: KvCache): void {
  model.net.ops.kvFree(kv.block);
}

/**
 * The layers over `rows` new positions from their inputs x, row r belonging to `kvs[r]` at
 * `positions[r]`: each layer's keys and values go into the caches, then `attend` reads them.
 * Returns the last layer's output.
 */
function decode(
  model: Gpt,
  x: Arr,
  kvs: readonly KvCache[],
  positions: ArrayLike<number>,
  attend: (l: number, y: Arr, qkv: Arr) => void,
): Arr {
  const net = model.net;
  const rows = kvs.length;
  for (let r = 0; r < rows; r++) {
    const room = kvs[r]!.block.rows;
    if (positions[r]! >= room) throw new Error(`position ${positions[r]} is past the KV cache's ${room}`);
  }
  let acts = net.newActs(rows, x);
  for (let l = 0; l < model.config.nLayer; l++) {
    net.block(l, acts, rows, (y, qkv) => {
      for (let r = 0; r < rows; r++) net.ops.kvWrite(kvs[r]!.block, l, positions[r]!, qkv, r);
      attend(l, y, qkv);
    });
    acts = { ...acts, x: acts.out, out: acts.x };
  }
  return acts.x;
}

/**
 * Appends `tokens` at positions [kv.length, kv.length + n) using the cached keys and values, and
 * returns the logits of the last new position ([vocab]) or of all new positions ([n, vocab]) when
 * `allLogits`.
 */
export function step(model: Gpt, kv: KvCache, tokens: ArrayLike<number>, allLogits = false): Arr {
  const net = model.net;
  net.checkTokens(tokens, kv.length);
  const { nHead, dModel: D } = model.config;
  const n = tokens.length;
  const cached = kv.length;
  const positions = Int32Array.from({ length: n }, (_, t) => cached + t);
  const x0 = net.embed(tokens, positions, previousIds(tokens, kv.last));
  const shape = { n, cached, d: D, heads: nHead };
  const x = decode(model, x0, new Array<KvCache>(n).fill(kv), positions, (l, y, qkv) =>
    net.ops.attendCached(y, qkv, kv.block, l, shape),
  );
  kv.length = cached + n;
  kv.last = tokens[n - 1]!;
  const rows = allLogits ? n : 1;
  return net.head(x.subarray((n - rows) * D), rows, false).logits;
}

/**
 * Appends one token to each of several sequences (each with its own cache and position) and
 * returns their next-token logits [B, vocab]. The projections run as one B-row product, so
 * decoding a group of samples together is much faster than one at a time, and each sequence gets
 * the logits `step` gives it alone.
 */
export function stepBatch(model: Gpt, kvs: readonly KvCache[], tokens: readonly number[]): Arr {
  const net = model.net;
  const B = kvs.length;
  if (tokens.length !== B) throw new Error('stepBatch: one token per cache');
  for (let b = 0; b < B; b++) net.checkTokens([tokens[b]!], kvs[b]!.length);
  const { nHead: heads, dModel: d } = model.config;
  const positions = Int32Array.from(kvs, (kv) => kv.length);
  const previous = Int32Array.from(kvs, (kv) => kv.last);
  const x0 = net.embed(tokens, positions, previous);
  const blocks = kvs.map((kv) => kv.block);
  const x = decode(model, x0, kvs, positions, (l, y, qkv) =>
    net.ops.attendCachedRows(y, qkv, blocks, positions, l, { d, heads }),
  );
  for (const [b, kv] of kvs.entries()) {
    kv.length++;
    kv.last = tokens[b]!;
  }
  return net.head(x, B, true).logits;
}
