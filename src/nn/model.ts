/**
 * A small decoder-only transformer (GPT-2 style: learned position embeddings, pre-LayerNorm,
 * causal multi-head attention, tanh-GELU MLP of width 4d, optional tied input/output embeddings) on
 * flat typed arrays, with a hand-written forward and backward pass (KV-cache decoding is decoding.ts).
 *
 * All parameters live in one flat array (`params`, laid out by config.ts); gradients use the same
 * layout, so optimisers, gradient clipping and serialisation work on one vector. The arithmetic is
 * an `Ops` object chosen from the dtype and kernels at construction: float32 models (training,
 * sampling) run the WebAssembly SIMD kernels, or for training the native ones (`withKernels`),
 * float64 ones (gradient checks) the reference loops those are tested against. The layers
 * themselves (layers.ts) are written once for training and decoding.
 */

import { opsFor } from './backends.js';
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
import { type BlockActs, type HeadActs, Layers, previousIds } from './layers.js';
import { type Arr, allocate, type DType, type Kernels, type Ops } from './ops.js';
import { decodeWeights, encodeWeights } from './weights-file.js';

export type { GptConfig, ParamLayout, ParamSpec } from './config.js';
export { paramLayout, validateConfig } from './config.js';
export { type Arr, allocate, type DType, type Kernels } from './ops.js';

interface LayerCache extends BlockActs {
  /** the rows attention read [P + T, 3D]: the prefix's, then these (`qkv` is a view of its end) */
  readonly attended: Arr;
  /** [H, T, stride >= P + T] probabilities (s <= P + t; see Ops.attentionStride); null without backward */
  readonly att: Arr | null;
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

export class Gpt {
  readonly config: GptConfig;
  readonly dtype: DType;
  /** the float32 kernels it runs (float64 models run the reference loops whatever this says) */
  readonly kernels: Kernels;
  readonly layout: ParamLayout;
  readonly params: Arr;
  /**
   * the layers over `params`, which decoding.ts runs too (the weights are the model's to change:
   * read-only to everyone else)
   */
  readonly net: Layers;
  private readonly ops: Ops;
  /** the tensors of `params` */
  private readonly w: Tensors;
  /** attention probabilities and keys/values kept from a forward pass to its backward pass */
  private readonly scratch: BufferPool;

  constructor(config: GptConfig, params?: Arr, dtype: DType = 'float32', kernels: Kernels = 'wasm') {
    this.config = { ...config };
    this.dtype = dtype;
    this.kernels = kernels;
    this.ops = opsFor(dtype, kernels);
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
    this.net = new Layers(this.config, this.ops, this.w);
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
    const grown = new Gpt(
      { ...this.config, previousTokenEmbedding: true },
      undefined,
      this.dtype,
      this.kernels,
    );
    copyByName(this.layout, this.params, grown.layout, grown.params);
    return grown;
  }

  get numParams(): number {
    return this.layout.size;
  }

  clone(dtype: DType = this.dtype): Gpt {
    const p = allocate(dtype, this.params.length);
    p.set(this.params);
    return new Gpt(this.config, p, dtype, this.kernels);
  }

  /**
   * this model on other kernels: the same weights (not a copy; what one changes, the other sees)
   * and its own scratch
   */
  withKernels(kernels: Kernels): Gpt {
    return kernels === this.kernels ? this : new Gpt(this.config, this.params, this.dtype, kernels);
  }

  /** a zeroed array shaped like the parameters (for gradients and optimiser state) */
  zerosLike(): Arr {
    return allocate(this.dtype, this.layout.size);
  }

  /**
   * Full causal forward over one sequence, or over the tokens that continue `prefix` (positions
   * after its own); keeps the activations for `backward`. The logits are those of `tokens`' rows.
   */
  forward(tokens: ArrayLike<number>, opts: ForwardOptions = {}): ForwardResult {
    const layers = this.forwardLayers(tokens, opts.prefix ?? null, opts.backward ?? true);
    const x = layers.layers.at(-1)!.out;
    const { logits, ...final } = this.net.head(
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
    this.net.checkTokens(tokens, P);
    const { nLayer, nHead, dModel: D } = this.config;
    const T = tokens.length;
    const tok = Int32Array.from(tokens);
    const before = prefix ? prefix.cache.tokens[P - 1]! : -1;
    let x = this.net.embed(
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
      const acts = this.net.newActs(T, x, attended.subarray(P * 3 * D));
      const att = backward ? this.scratch.take(nHead * T * this.ops.attentionStride(P + T)) : null;
      const c: LayerCache = { ...acts, attended, att };
      this.net.block(l, c, T, (y) => this.ops.attention(y, c.att, attended, shape));
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
    const T = cache.tokens.length;
    if (!cache.final) throw new Error('a prefix has no logits: its gradient comes with backwardPrefix');
    const g = this.claim(cache, grads);
    this.backwardLayers(cache, this.net.headBackward(cache.final, T, dlogits, g), g, null);
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
    const before = cache.prefix ? cache.prefix.cache.tokens[P - 1]! : -1;
    this.net.embedBackward(tok, P, previousIds(tok, before), dx, g);
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

/**
 * fn() with the weights of `models` held where the kernels read them (`Ops.pin`): a product over
 * them copies no weight (decoding runs every weight through a product per token), and the panel
 * kernel packs each once (a training step's sequences and a batch's prompts run them again and
 * again). The weights must not change until fn returns.
 */
export function withWeightsPinned<T>(models: readonly (Gpt | null)[], fn: () => T): T {
  const unpins = models.flatMap((m) => (m ? [m.net.ops.pin(m.params)] : []));
  try {
    return fn();
  } finally {
    for (const unpin of unpins) unpin();
  }
}

/** a[i] += b[i] for i < n */
function addInto(a: Arr, b: Arr, n: number): void {
  for (let i = 0; i < n; i++) a[i] = a[i]! + b[i]!;
}
