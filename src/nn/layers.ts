/**
 * The arithmetic of the model over its weights, written once for training (model.ts) and decoding
 * (decoding.ts): the embedding, one transformer layer, and the output head; and the embedding's
 * and the head's backward passes, beside their forward ones (the layers' is model.ts's).
 */
import type { GptConfig, Tensors } from './config.js';
import type { Arr, Ops } from './ops.js';

/**
 * A block's activations over its rows: input x; LN1 (mean1, rstd1, h1); qkv [rows, 3D]; attention
 * output y; x1 = x + attention; LN2 (mean2, rstd2, h2); MLP pre-activation u and g = GELU(u)
 * [rows, 4D]; output out
 */
export type BlockActs = Readonly<
  Record<
    'x' | 'mean1' | 'rstd1' | 'h1' | 'qkv' | 'y' | 'x1' | 'mean2' | 'rstd2' | 'h2' | 'u' | 'g' | 'out',
    Arr
  >
>;

/** the final LayerNorm's activations, and the rows of them the output projection read */
export interface HeadActs {
  readonly x: Arr;
  readonly mean: Arr;
  readonly rstd: Arr;
  readonly h: Arr;
  /** the rows whose logits were computed (null: all), and their h [rows, D] */
  readonly rows: Int32Array | null;
  readonly projected: Arr;
}

export class Layers {
  constructor(
    readonly config: GptConfig,
    readonly ops: Ops,
    /** the tensors of the model's parameters */
    readonly w: Tensors,
  ) {}

  /** throws unless `tokens` are ids of the vocabulary that fit the context after `start` positions */
  checkTokens(tokens: ArrayLike<number>, start: number): void {
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
  embed(tokens: ArrayLike<number>, positions: ArrayLike<number>, previous: ArrayLike<number>): Arr {
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

  /**
   * `embed`'s backward for tokens at positions [start, start + n) from dx [n, D], their inputs'
   * gradient: ADDS into the embeddings' (and the previous-token map's) gradients in `g`
   */
  embedBackward(
    tokens: ArrayLike<number>,
    start: number,
    previous: ArrayLike<number>,
    dx: Arr,
    g: Tensors,
  ): void {
    const D = this.config.dModel;
    const n = tokens.length;
    for (let t = 0; t < n; t++) {
      const [e, p] = [tokens[t]! * D, (start + t) * D];
      for (let k = 0; k < D; k++) {
        g.wte[e + k] = g.wte[e + k]! + dx[t * D + k]!;
        g.wpe[p + k] = g.wpe[p + k]! + dx[t * D + k]!;
      }
    }
    const prev = this.w.prev;
    if (!prev || !g.prev) return;
    // x[t] += wte[previous[t]] @ prev: the map's gradient, then the previous tokens' embedding rows
    this.ops.matmulTNAcc(g.prev, this.previousEmbeddings(previous), dx, { m: n, k: D, n: D });
    const de = this.ops.alloc(n * D);
    this.ops.matmulNT(de, dx, prev, { m: n, k: D, n: D });
    for (let t = 0; t < n; t++) {
      if (previous[t]! < 0) continue;
      const e = previous[t]! * D;
      for (let k = 0; k < D; k++) g.wte[e + k] = g.wte[e + k]! + de[t * D + k]!;
    }
  }

  /** the token embeddings of `previous` as rows [n, D]; a row whose id is -1 (none) stays zero */
  previousEmbeddings(previous: ArrayLike<number>): Arr {
    const D = this.config.dModel;
    const out = this.ops.alloc(previous.length * D);
    for (let t = 0; t < previous.length; t++) {
      const id = previous[t]!;
      if (id >= 0) out.set(this.w.wte.subarray(id * D, (id + 1) * D), t * D);
    }
    return out;
  }

  /** fresh activations for `rows` rows whose input is x (and whose qkv is `qkv` when given) */
  newActs(rows: number, x: Arr, qkv?: Arr): BlockActs {
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
  block(l: number, a: BlockActs, rows: number, attend: (y: Arr, qkv: Arr) => void): void {
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
  head(x: Arr, n: number, rowwise: boolean, picked: Int32Array | null = null): HeadActs & { logits: Arr } {
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
   * `head`'s backward over its n rows from dlogits (of the rows it projected, [rows, vocab]): ADDS
   * into the output projection's and the final LayerNorm's gradients in `g`, and returns the
   * gradient at the head's input x [n, D]
   */
  headBackward(f: HeadActs, n: number, dlogits: Arr, g: Tensors): Arr {
    const { dModel: D, vocabSize: V } = this.config;
    const [ops, w] = [this.ops, this.w];
    const R = f.rows ? f.rows.length : n;
    const dh = ops.alloc(R * D);
    if (w.head && g.head) {
      ops.matmulNT(dh, dlogits, w.head, { m: R, k: V, n: D });
      ops.matmulTNAcc(g.head, f.projected, dlogits, { m: R, k: D, n: V });
    } else {
      ops.matmul(dh, dlogits, w.wte, null, { m: R, k: V, n: D });
      ops.matmulTNAcc(g.wte, dlogits, f.projected, { m: R, k: V, n: D });
    }
    let dhAll = dh;
    if (f.rows) {
      dhAll = ops.alloc(n * D);
      for (const [j, r] of f.rows.entries()) dhAll.set(dh.subarray(j * D, (j + 1) * D), r * D);
    }
    const dx = ops.alloc(n * D);
    ops.layerNormBackward(dx, dhAll, f.x, f.mean, f.rstd, w.lnfg, g.lnfg, g.lnfb, n);
    return dx;
  }
}

/** the id before each of `tokens` (`before` for the first: -1 at the start of a sequence) */
export function previousIds(tokens: ArrayLike<number>, before: number): Int32Array {
  return Int32Array.from(tokens, (_, t) => (t > 0 ? tokens[t - 1]! : before));
}
