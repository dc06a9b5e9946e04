/**
 * A small decoder-only transformer (GPT-2 style: learned position embeddings, pre-LayerNorm,
 * causal multi-head attention, tanh-GELU MLP of width 4d, optional tied input/output embeddings) on
 * flat typed arrays, with a hand-written forward and backward pass and KV-cache decoding.
 *
 * All parameters live in one flat array (`params`, laid out by config.ts); gradients use the same
 * layout, so optimisers, gradient clipping and serialisation work on one vector. The arithmetic is
 * an `Ops` object chosen from the dtype at construction: float32 models (training, sampling) run
 * the WebAssembly SIMD kernels, float64 ones (gradient checks) the reference loops those are tested
 * against. One `block` function is the transformer layer of training, prefill and batched decoding.
 */

import { BufferPool } from './buffer-pool.js';
import {
  copyByName,
  type GptConfig,
  initParams,
  type ParamLayout,
  paramLayout,
  type Tensors,
  tensorViews,
} from './config.js';
import { type Arr, allocate, type DType, type KvBlock, type Ops, opsFor } from './ops.js';
import { decodeWeights, encodeWeights } from './weights-file.js';

export type { GptConfig, ParamLayout, ParamSpec } from './config.js';
export { paramLayout, validateConfig } from './config.js';
export { type Arr, allocate, type DType } from './ops.js';

/**
 * A block's activations over its rows: input x; LN1 (mean1, rstd1, h1); qkv [rows, 3D]; attention
 * output y; x1 = x + attention; LN2 (mean2, rstd2, h2); MLP pre-activation u and g = GELU(u)
 * [rows, 4D]; output out
 */
type BlockActs = Readonly<
  Record<
    'x' | 'mean1' | 'rstd1' | 'h1' | 'qkv' | 'y' | 'x1' | 'mean2' | 'rstd2' | 'h2' | 'u' | 'g' | 'out',
    Arr
  >
>;

interface LayerCache extends BlockActs {
  /** the rows attention read [P + T, 3D]: the prefix's, then these (`qkv` is a view of its end) */
  readonly attended: Arr;
  /** [H, T, stride >= P + T] probabilities (s <= P + t; see Ops.attentionStride); null without backward */
  readonly att: Arr | null;
}

/** the final LayerNorm's activations, and the rows of them the output projection read */
interface HeadActs {
  readonly x: Arr;
  readonly mean: Arr;
  readonly rstd: Arr;
  readonly h: Arr;
  /** the rows whose logits were computed (null: all), and their h [rows, D] */
  readonly rows: Int32Array | null;
  readonly projected: Arr;
}

export interface ForwardOptions {
  /** the prompt the tokens continue (see `Prefix`) */
  readonly prefix?: Prefix;
  /**
   * the rows whose logits are wanted, ascending (default all): only they go through the output
   * projection, which costs as much as a layer when the vocabulary is 8 times the width. The
   * logits come packed, one row per entry.
   */
  readonly rows?: ArrayLike<number>;
  /**
   * false when no backward pass will follow (a reference model's logprobs, a score): the pass then
   * keeps no attention probabilities, the largest of its activations. Default true
   */
  readonly backward?: boolean;
}

/** the activations of one sequence, kept for the backward pass */
export interface ForwardCache {
  /** the tokens of this pass, at positions [P, P + T) after the prefix's P */
  readonly tokens: Int32Array;
  readonly prefix: Prefix | null;
  readonly layers: readonly LayerCache[];
  /** null for a prefix, whose logits nothing reads */
  readonly final: HeadActs | null;
  /** its backward pass has run, and handed its scratch arrays back for reuse */
  spent: boolean;
}

/**
 * A prompt's activations, computed once for the several sequences that continue it (`forward(rest,
 * prefix)`): a group of rollouts of one task share their first prompt. Their backward passes add
 * the gradient of its keys and values into `dqkv`, and `backwardPrefix` carries the sum through
 * the prompt, so the group's gradient is the one of its full sequences, summed in another order.
 */
export interface Prefix {
  readonly cache: ForwardCache;
  /** per layer, the summed gradient of the prompt rows' qkv [P, 3D] (the query parts stay zero) */
  readonly dqkv: readonly Arr[];
}

export interface ForwardResult {
  /** [T, vocab] row-major, or [rows, vocab] for the rows asked for */
  readonly logits: Arr;
  readonly cache: ForwardCache;
}

/**
 * keys and values of every layer for positions [0, length) of one sequence, for incremental
 * decoding; room for `block.rows` positions. Its memory goes back with `Gpt.freeKv`.
 */
export interface KvCache {
  readonly block: KvBlock;
  length: number;
  /** the token at position length - 1 (-1 while empty), for the previous-token map */
  last: number;
}

export class Gpt {
  readonly config: GptConfig;
  readonly dtype: DType;
  readonly layout: ParamLayout;
  readonly params: Arr;
  private readonly ops: Ops;
  /** the tensors of `params` */
  private readonly w: Tensors;
  /** attention probabilities and keys/values kept from a forward pass to its backward pass */
  private readonly scratch: BufferPool;

  constructor(config: GptConfig, params?: Arr, dtype: DType = 'float32') {
    this.config = { ...config };
    this.dtype = dtype;
    this.ops = opsFor(dtype);
    this.layout = paramLayout(config);
    if (params) {
      if (params.length !== this.layout.size) {
        throw new Error(`parameter count mismatch: expected ${this.layout.size}, got ${params.length}`);
      }
      const want = dtype === 'float64' ? Float64Array : Float32Array;
      this.params = params instanceof want ? params : allocate(dtype, params.length);
      if (this.params !== params) this.params.set(params);
    } else {
      this.params = allocate(dtype, this.layout.size);
    }
    this.w = tensorViews(this.layout, this.params);
    this.scratch = new BufferPool((n) => this.ops.alloc(n));
  }

  static init(config: GptConfig, seed: number, dtype: DType = 'float32'): Gpt {
    const m = new Gpt(config, undefined, dtype);
    initParams(m.layout, config.nLayer, m.params, seed);
    return m;
  }

  /**
   * This model with the previous-token map added at zero, so it computes exactly what this one does
   * until training moves the map (continuing a checkpoint that lacks it).
   */
  withPreviousTokenEmbedding(): Gpt {
    if (this.layout.prev >= 0) return this.clone();
    const grown = new Gpt({ ...this.config, previousTokenEmbedding: true }, undefined, this.dtype);
    copyByName(this.layout, this.params, grown.layout, grown.params);
    return grown;
  }

  get numParams(): number {
    return this.layout.size;
  }

  clone(dtype: DType = this.dtype): Gpt {
    const p = allocate(dtype, this.params.length);
    p.set(this.params);
    return new Gpt(this.config, p, dtype);
  }

  /** a zeroed array shaped like the parameters (for gradients and optimiser state) */
  zerosLike(): Arr {
    return allocate(this.dtype, this.layout.size);
  }

  private checkTokens(tokens: ArrayLike<number>, start: number): void {
    const { vocabSize, contextLength } = this.config;
    if (tokens.length === 0) throw new Error('empty token sequence');
    if (start + tokens.length > contextLength) {
      throw new Error(`sequence of ${start + tokens.length} tokens exceeds the context of ${contextLength}`);
    }
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      if (!Number.isInteger(t) || t < 0 || t >= vocabSize) throw new Error(`token id ${t} out of range`);
    }
  }

  /** the block inputs [n, D]: token + position embedding (+ the previous token's, mapped) */
  private embed(tokens: ArrayLike<number>, positions: ArrayLike<number>, previous: ArrayLike<number>): Arr {
    const D = this.config.dModel;
    const { wte, wpe, prev } = this.w;
    const n = tokens.length;
    const x = this.ops.alloc(n * D);
    for (let t = 0; t < n; t++) {
      const e = tokens[t]! * D;
      const p = positions[t]! * D;
      for (let k = 0; k < D; k++) x[t * D + k] = wte[e + k]! + wpe[p + k]!;
    }
    if (prev) {
      const add = this.ops.alloc(n * D);
      this.ops.matmul(add, this.previousEmbeddings(previous), prev, null, { m: n, k: D, n: D });
      for (let i = 0; i < n * D; i++) x[i] = x[i]! + add[i]!;
    }
    return x;
  }

  /** the token embeddings of `previous` as rows [n, D]; a row whose id is -1 (none) stays zero */
  private previousEmbeddings(previous: ArrayLike<number>): Arr {
    const D = this.config.dModel;
    const out = this.ops.alloc(previous.length * D);
    for (let t = 0; t < previous.length; t++) {
      const id = previous[t]!;
      if (id >= 0) out.set(this.w.wte.subarray(id * D, (id + 1) * D), t * D);
    }
    return out;
  }

  private newActs(rows: number, x: Arr, qkv?: Arr): BlockActs {
    const D = this.config.dModel;
    const a = (width: number) => this.ops.alloc(rows * width);
    const [h1, y, x1, h2, out] = [a(D), a(D), a(D), a(D), a(D)];
    return {
      x,
      mean1: a(1),
      rstd1: a(1),
      h1,
      qkv: qkv ?? a(3 * D),
      y,
      x1,
      mean2: a(1),
      rstd2: a(1),
      h2,
      u: a(4 * D),
      g: a(4 * D),
      out,
    };
  }

  /**
   * Layer `l` over `rows` positions: x1 = x + attn(LN1(x)) Wo + bo, out = x1 +
   * GELU(LN2(x1) W1 + b1) W2 + b2. `attend` turns qkv into y: causal self-attention over the rows
   * in training, attention over KV caches in decoding.
   */
  private block(l: number, a: BlockActs, rows: number, attend: (y: Arr, qkv: Arr) => void): void {
    const ops = this.ops;
    const w = this.w.layers[l]!;
    const D = this.config.dModel;
    ops.layerNorm(a.h1, a.x, a.mean1, a.rstd1, w.ln1g, w.ln1b, rows);
    ops.matmul(a.qkv, a.h1, w.wqkv, w.bqkv, { m: rows, k: D, n: 3 * D });
    attend(a.y, a.qkv);
    ops.matmul(a.x1, a.y, w.wo, w.bo, { m: rows, k: D, n: D });
    for (let i = 0; i < rows * D; i++) a.x1[i] = a.x1[i]! + a.x[i]!;
    ops.layerNorm(a.h2, a.x1, a.mean2, a.rstd2, w.ln2g, w.ln2b, rows);
    ops.matmul(a.u, a.h2, w.w1, w.b1, { m: rows, k: D, n: 4 * D });
    ops.gelu(a.g, a.u, rows * 4 * D);
    ops.matmul(a.out, a.g, w.w2, w.b2, { m: rows, k: 4 * D, n: D });
    for (let i = 0; i < rows * D; i++) a.out[i] = a.out[i]! + a.x1[i]!;
  }

  /**
   * The final LayerNorm over n rows of x and the logits of `picked` of them (default all), packed
   * [picked, vocab]; `projected` is what the output projection read. `rowwise`: see `Ops.matmulNT`.
   */
  private head(
    x: Arr,
    n: number,
    rowwise: boolean,
    picked: Int32Array | null = null,
  ): HeadActs & { logits: Arr } {
    const { dModel: D, vocabSize: V } = this.config;
    const [ops, w] = [this.ops, this.w];
    const [mean, rstd, h] = [ops.alloc(n), ops.alloc(n), ops.alloc(n * D)];
    ops.layerNorm(h, x, mean, rstd, w.lnfg, w.lnfb, n);
    let projected = h;
    if (picked) {
      projected = ops.alloc(picked.length * D);
      for (const [j, r] of picked.entries()) {
        if (!(r >= 0 && r < n) || (j > 0 && r <= picked[j - 1]!))
          throw new Error(`logit rows must ascend within [0, ${n}); got ${r}`);
        projected.set(h.subarray(r * D, (r + 1) * D), j * D);
      }
    }
    const rows = picked ? picked.length : n;
    const logits = ops.alloc(rows * V);
    if (w.head) ops.matmul(logits, projected, w.head, null, { m: rows, k: D, n: V });
    else ops.matmulNT(logits, projected, w.wte, { m: rows, k: D, n: V, rowwise });
    return { x, mean, rstd, h, rows: picked, projected, logits };
  }

  /**
   * Full causal forward over one sequence, or over the tokens that continue `prefix` (positions
   * after its own); keeps the activations for `backward`. The logits are those of `tokens`' rows.
   */
  forward(tokens: ArrayLike<number>, opts: ForwardOptions = {}): ForwardResult {
    const layers = this.forwardLayers(tokens, opts.prefix ?? null, opts.backward ?? true);
    const x = layers.layers.at(-1)!.out;
    const { logits, ...final } = this.head(
      x,
      layers.tokens.length,
      false,
      opts.rows ? Int32Array.from(opts.rows) : null,
    );
    return { logits, cache: { ...layers, final } };
  }

  /**
   * the layers over a prompt that several sequences continue (see `Prefix`); no logits. `backward`:
   * as in `ForwardOptions`
   */
  prefix(tokens: ArrayLike<number>, opts: { readonly backward?: boolean } = {}): Prefix {
    const cache = this.forwardLayers(tokens, null, opts.backward ?? true);
    const rows = 3 * this.config.dModel * cache.tokens.length;
    return { cache, dqkv: cache.layers.map(() => this.ops.alloc(rows)) };
  }

  private forwardLayers(tokens: ArrayLike<number>, prefix: Prefix | null, backward: boolean): ForwardCache {
    const P = prefix?.cache.tokens.length ?? 0;
    if (prefix?.cache.prefix) throw new Error('a prefix cannot itself continue a prefix');
    this.checkTokens(tokens, P);
    const { nLayer, nHead, dModel: D } = this.config;
    const T = tokens.length;
    const tok = Int32Array.from(tokens);
    const before = prefix ? prefix.cache.tokens[P - 1]! : -1;
    let x = this.embed(
      tok,
      Int32Array.from(tok, (_, t) => P + t),
      previousIds(tok, before),
    );
    const layers: LayerCache[] = [];
    const shape = { t: T, d: D, heads: nHead, past: P };
    for (let l = 0; l < nLayer; l++) {
      // both written whole before they are read; without a backward pass to give them back, they
      // are not the pool's
      const rows = (P + T) * 3 * D;
      const attended = backward ? this.scratch.take(rows) : this.ops.alloc(rows);
      if (prefix) attended.set(prefix.cache.layers[l]!.attended.subarray(0, P * 3 * D));
      const acts = this.newActs(T, x, attended.subarray(P * 3 * D));
      const att = backward ? this.scratch.take(nHead * T * this.ops.attentionStride(P + T)) : null;
      const c: LayerCache = { ...acts, attended, att };
      this.block(l, c, T, (y) => this.ops.attention(y, c.att, attended, shape));
      layers.push(c);
      x = c.out;
    }
    return { tokens: tok, prefix, layers, final: null, spent: !backward };
  }

  /**
   * backward from dLoss/dlogits (shaped as `forward` returned the logits); gradients are ADDED into
   * `grads` (same layout as params), and, for a sequence that continues a prefix, its keys' and
   * values' into the prefix's `dqkv`
   */
  backward(cache: ForwardCache, dlogits: Arr, grads: Arr): void {
    const { dModel: D, vocabSize: V } = this.config;
    const T = cache.tokens.length;
    const [ops, w] = [this.ops, this.w];
    if (!cache.final) throw new Error('a prefix has no logits: its gradient comes with backwardPrefix');
    const g = this.claim(cache, grads);
    const f = cache.final;
    const R = f.rows ? f.rows.length : T;
    const dh = ops.alloc(R * D);
    if (w.head && g.head) {
      ops.matmulNT(dh, dlogits, w.head, { m: R, k: V, n: D });
      ops.matmulTNAcc(g.head, f.projected, dlogits, { m: R, k: D, n: V });
    } else {
      ops.matmul(dh, dlogits, w.wte, null, { m: R, k: V, n: D });
      ops.matmulTNAcc(g.wte, dlogits, f.projected, { m: R, k: V, n: D });
    }
    let dhf = dh;
    if (f.rows) {
      dhf = ops.alloc(T * D);
      for (const [j, r] of f.rows.entries()) dhf.set(dh.subarray(j * D, (j + 1) * D), r * D);
    }
    const dx = ops.alloc(T * D);
    ops.layerNormBackward(dx, dhf, f.x, f.mean, f.rstd, w.lnfg, g.lnfg, g.lnfb, T);
    this.backwardLayers(cache, dx, g, null);
  }

  /**
   * The backward pass through a prefix once every sequence continuing it has had its own: from
   * the summed gradient of its keys and values (its logits were never used); ADDS into `grads`.
   */
  backwardPrefix(prefix: Prefix, grads: Arr): void {
    const g = this.claim(prefix.cache, grads);
    const dx = this.ops.alloc(prefix.cache.tokens.length * this.config.dModel);
    this.backwardLayers(prefix.cache, dx, g, prefix.dqkv);
  }

  /**
   * the tensors of `grads` for the one backward pass of `cache`, checked before anything is added
   * into them
   */
  private claim(cache: ForwardCache, grads: Arr): Tensors {
    if (grads.length !== this.layout.size) throw new Error('gradient buffer has the wrong size');
    if (cache.spent)
      throw new Error('a forward pass goes back once, and only if it kept its activations (backward: true)');
    cache.spent = true;
    return tensorViews(this.layout, grads);
  }

  /**
   * The layers' backward pass from dx [T, D], the gradient at the last layer's output, then the
   * embeddings'. `injected`: per layer, a gradient of qkv from outside (a prefix's continuations);
   * dx is then zero at the top, so the top layer's MLP and attention pass nothing down and are
   * skipped.
   */
  private backwardLayers(cache: ForwardCache, dx: Arr, g: Tensors, injected: readonly Arr[] | null): void {
    const { nHead, dModel: D } = this.config;
    const T = cache.tokens.length;
    const P = cache.prefix?.cache.tokens.length ?? 0;
    const [ops, w] = [this.ops, this.w];
    const [dg, dh, dy, dAttended] = [
      ops.alloc(T * 4 * D),
      ops.alloc(T * D),
      ops.alloc(T * D),
      this.scratch.take((P + T) * 3 * D),
    ];
    const dqkv = dAttended.subarray(P * 3 * D);
    const top = cache.layers.length - 1;
    for (let l = top; l >= 0; l--) {
      const [c, wl, gl] = [cache.layers[l]!, w.layers[l]!, g.layers[l]!];
      if (injected && l === top) {
        dqkv.set(injected[l]!);
        this.scratch.give(c.att!);
      } else {
        // out = x1 + GELU(h2 W1 + b1) W2 + b2
        ops.colSumAcc(gl.b2, dx, T);
        ops.matmulTNAcc(gl.w2, c.g, dx, { m: T, k: 4 * D, n: D });
        ops.matmulNT(dg, dx, wl.w2, { m: T, k: D, n: 4 * D });
        ops.geluBackward(dg, c.u, T * 4 * D);
        ops.colSumAcc(gl.b1, dg, T);
        ops.matmulTNAcc(gl.w1, c.h2, dg, { m: T, k: D, n: 4 * D });
        ops.matmulNT(dh, dg, wl.w1, { m: T, k: 4 * D, n: D });
        ops.layerNormBackward(dx, dh, c.x1, c.mean2, c.rstd2, wl.ln2g, gl.ln2g, gl.ln2b, T);
        // x1 = x + attn(h1) Wo + bo
        ops.colSumAcc(gl.bo, dx, T);
        ops.matmulTNAcc(gl.wo, c.y, dx, { m: T, k: D, n: D });
        ops.matmulNT(dy, dx, wl.wo, { m: T, k: D, n: D });
        ops.attentionBackward(dAttended, dy, c.att!, c.attended, { t: T, d: D, heads: nHead, past: P });
        this.scratch.give(c.att!);
        if (cache.prefix) addInto(cache.prefix.dqkv[l]!, dAttended, P * 3 * D);
        if (injected) addInto(dqkv, injected[l]!, T * 3 * D);
      }
      ops.colSumAcc(gl.bqkv, dqkv, T);
      ops.matmulTNAcc(gl.wqkv, c.h1, dqkv, { m: T, k: D, n: 3 * D });
      ops.matmulNT(dh, dqkv, wl.wqkv, { m: T, k: 3 * D, n: D });
      ops.layerNormBackward(dx, dh, c.x, c.mean1, c.rstd1, wl.ln1g, gl.ln1g, gl.ln1b, T);
      // a prefix's keys and values were read by every continuation's forward pass, all done now
      this.scratch.give(c.attended);
    }
    this.scratch.give(dAttended);
    const tok = cache.tokens;
    for (let t = 0; t < T; t++) {
      const [e, p] = [tok[t]! * D, (P + t) * D];
      for (let k = 0; k < D; k++) {
        g.wte[e + k] = g.wte[e + k]! + dx[t * D + k]!;
        g.wpe[p + k] = g.wpe[p + k]! + dx[t * D + k]!;
      }
    }
    if (w.prev && g.prev) {
      // x[t] += wte[tok[t-1]] @ prev: the map's gradient, then the previous tokens' embedding rows
      const previous = previousIds(tok, cache.prefix ? cache.prefix.cache.tokens[P - 1]! : -1);
      ops.matmulTNAcc(g.prev, this.previousEmbeddings(previous), dx, { m: T, k: D, n: D });
      const de = ops.alloc(T * D);
      ops.matmulNT(de, dx, w.prev, { m: T, k: D, n: D });
      for (let t = 0; t < T; t++) {
        if (previous[t]! < 0) continue;
        const e = previous[t]! * D;
        for (let k = 0; k < D; k++) g.wte[e + k] = g.wte[e + k]! + de[t * D + k]!;
      }
    }
  }

  /** an empty cache with room for `rows` positions (default: the context) */
  newKvCache(rows = this.config.contextLength): KvCache {
    const { nLayer, dModel } = this.config;
    return { block: this.ops.kvAlloc(nLayer, rows, dModel), length: 0, last: -1 };
  }

  /**
   * a cache holding the first n positions of `from` (n <= from.length), whose token at n - 1 is
   * `last` (-1 when n is 0), with room for `rows`
   */
  copyKvCache(from: KvCache, n: number, last: number, rows = this.config.contextLength): KvCache {
    if (n > from.length || n > rows)
      throw new Error(`cannot copy ${n} of ${from.length} positions into ${rows}`);
    const kv = this.newKvCache(rows);
    this.ops.kvCopy(kv.block, from.block, n);
    kv.length = n;
    kv.last = n > 0 ? last : -1;
    return kv;
  }

  /** gives a cache's memory back (it must not be used again) */
  freeKv(kv: KvCache): void {
    this.ops.kvFree(kv.block);
  }

  /**
   * The layers over `rows` new positions, row r belonging to `kvs[r]` at `positions[r]`: each
   * layer's keys and values go into the caches, then `attend` reads them. Returns the last layer's
   * output; buffers pass from layer to layer, since no backward pass needs them.
   */
  private decode(
    x: Arr,
    kvs: readonly KvCache[],
    positions: ArrayLike<number>,
    attend: (l: number, y: Arr, qkv: Arr) => void,
  ): Arr {
    const rows = kvs.length;
    for (let r = 0; r < rows; r++) {
      const room = kvs[r]!.block.rows;
      if (positions[r]! >= room) throw new Error(`position ${positions[r]} is past the KV cache's ${room}`);
    }
    let acts = this.newActs(rows, x);
    for (let l = 0; l < this.config.nLayer; l++) {
      this.block(l, acts, rows, (y, qkv) => {
        for (let r = 0; r < rows; r++) this.ops.kvWrite(kvs[r]!.block, l, positions[r]!, qkv, r);
        attend(l, y, qkv);
      });
      acts = { ...acts, x: acts.out, out: acts.x };
    }
    return acts.x;
  }

  /**
   * Incremental forward: appends `tokens` at positions [kv.length, kv.length + n) using the cached
   * keys and values, and returns the logits of the last new position ([vocab]) or of all new
   * positions ([n, vocab]) when `allLogits`.
   */
  step(kv: KvCache, tokens: ArrayLike<number>, allLogits = false): Arr {
    this.checkTokens(tokens, kv.length);
    const { nHead, dModel: D } = this.config;
    const n = tokens.length;
    const cached = kv.length;
    const positions = Int32Array.from({ length: n }, (_, t) => cached + t);
    const x0 = this.embed(tokens, positions, previousIds(tokens, kv.last));
    const shape = { n, cached, d: D, heads: nHead };
    const x = this.decode(x0, new Array<KvCache>(n).fill(kv), positions, (l, y, qkv) =>
      this.ops.attendCached(y, qkv, kv.block, l, shape),
    );
    kv.length = cached + n;
    kv.last = tokens[n - 1]!;
    const rows = allLogits ? n : 1;
    return this.head(x.subarray((n - rows) * D), rows, false).logits;
  }

  /**
   * Batched decoding: appends one token to each of several sequences (each with its own cache and
   * position) and returns their next-token logits [B, vocab]. The projections run as one B-row
   * matmul, so decoding a group of samples together is much faster than one at a time.
   */
  stepBatch(kvs: readonly KvCache[], tokens: readonly number[]): Arr {
    const B = kvs.length;
    if (tokens.length !== B) throw new Error('stepBatch: one token per cache');
    for (let b = 0; b < B; b++) this.checkTokens([tokens[b]!], kvs[b]!.length);
    const { nHead: heads, dModel: d } = this.config;
    const positions = Int32Array.from(kvs, (kv) => kv.length);
    const previous = Int32Array.from(kvs, (kv) => kv.last);
    const x0 = this.embed(tokens, positions, previous);
    const x = this.decode(x0, kvs, positions, (l, y, qkv) => {
      for (const [b, kv] of kvs.entries()) {
        const shape = { n: 1, cached: positions[b]!, d, heads };
        this.ops.attendCached(y.subarray(b * d), qkv.subarray(b * 3 * d), kv.block, l, shape);
      }
    });
    for (const [b, kv] of kvs.entries()) {
      kv.length++;
      kv.last = tokens[b]!;
    }
    // rowwise: the logits of a sequence decoded in a batch are those `step` gives it alone
    return this.head(x, B, true).logits;
  }

  /** the weights file (weights-file.ts), with `meta` in its header */
  serialize(meta: Record<string, unknown> = {}): Uint8Array {
    return encodeWeights(this.config, this.params, meta);
  }

  static deserialize(
    data: Uint8Array,
    dtype: DType = 'float32',
  ): { model: Gpt; meta: Record<string, unknown> } {
    const { config, params, meta } = decodeWeights(data, dtype);
    return { model: new Gpt(config, params, dtype), meta };
  }
}

/** a[i] += b[i] for i < n */
function addInto(a: Arr, b: Arr, n: number): void {
  for (let i = 0; i < n; i++) a[i] = a[i]! + b[i]!;
}

/** the id before each of `tokens` (`before` for the first: -1 at the start of a sequence) */
function previousIds(tokens: ArrayLike<number>, before: number): Int32Array {
  return Int32Array.from(tokens, (_, t) => (t > 0 ? tokens[t - 1]! : before));
}
