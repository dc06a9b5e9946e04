/**
 * The arithmetic a model runs on, as one interface, so that the model is written once and a backend
 * is one object: the float64 reference kernels (reference-ops.ts, plain JavaScript, what the
 * gradient checks differentiate), the float32 WebAssembly SIMD kernels (simd-ops.ts, what sampling
 * and by default training run) and the float32 native ones (native-ops.ts: onnxruntime's matrix
 * products, the rest WebAssembly; training only, when installed), both tested against the
 * reference. A model takes its object once, from its dtype and kernels (backends.ts, the one
 * place a backend is chosen), so no kernel call asks what type its arrays are. This file declares
 * only: it imports no backend, so each backend can import it.
 *
 * Matrices are row-major and dense: every operand is a view starting at its first element (a
 * weight is `params.subarray(offset, ...)`). No kernel allocates its outputs; the caller owns them.
 */
export type DType = 'float32' | 'float64';
export type Arr = Float32Array | Float64Array;

/**
 * the kernels of a float32 model: WebAssembly SIMD (always there: sampling, and training by
 * default) or native (onnxruntime-node's products when it is installed: native-ops.ts). Float64
 * models always run the reference loops.
 */
export type Kernels = 'wasm' | 'native';
/** a matrix product's sizes: out [m, n] from an [m, k] operand and a [k, n] one */
export interface MatShape {
  readonly m: number;
  readonly k: number;
  readonly n: number;
}

/**
 * causal multi-head attention over t positions of width d (head width d / heads), after `past`
 * earlier positions (default 0) whose keys and values are also attended to: the rows of a shared
 * prompt, computed once for every sequence that continues it
 */
export interface AttentionShape {
  readonly t: number;
  readonly d: number;
  readonly heads: number;
  readonly past?: number;
}

/** attention of n new positions after `cached` earlier ones held in a KV cache */
export interface CachedAttentionShape {
  readonly n: number;
  readonly cached: number;
  readonly d: number;
  readonly heads: number;
}

/**
 * Room for the keys and values of `rows` positions in every layer of one sequence, kept where the
 * backend's attention reads them: plain arrays for the reference kernels, linear memory for the
 * WebAssembly ones (so decoding a token copies no earlier key or value). Only its ops read it.
 */
export interface KvBlock {
  readonly rows: number;
}

export interface Ops<A extends Arr = Arr> {
  readonly dtype: DType;
  /** a zeroed array of n elements */
  alloc(n: number): A;
  /** out = a @ w (+ bias): a [m, k], w [k, n] */
  matmul(out: A, a: A, w: A, bias: A | null, s: MatShape): void;
  /**
   * out = a @ w^T: a [m, k], w [n, k]. `rowwise`: each row summed exactly as if it ran alone, so a
   * sequence decoded in a batch gets the logits it gets decoded by itself.
   */
  matmulNT(out: A, a: A, w: A, s: MatShape & { readonly rowwise?: boolean }): void;
  /** g += a^T @ d: a [m, k], d [m, n], g [k, n] (weight gradients) */
  matmulTNAcc(g: A, a: A, d: A, s: MatShape): void;
  /** g[j] += sum over rows of d[row, j], d [rows, g.length] (bias gradients) */
  colSumAcc(g: A, d: A, rows: number): void;
  /** out = LayerNorm(x) * gain + bias row by row (width gain.length), keeping each row's mean and 1/std */
  layerNorm(out: A, x: A, mean: A, rstd: A, gain: A, bias: A, rows: number): void;
  /** dx += the input gradient of `layerNorm` given dh; dgain, dbias accumulate */
  layerNormBackward(dx: A, dh: A, x: A, mean: A, rstd: A, gain: A, dgain: A, dbias: A, rows: number): void;
  /** out = tanh-GELU(u) elementwise over n (out may be u) */
  gelu(out: A, u: A, n: number): void;
  /** dg *= GELU'(u) elementwise over n */
  geluBackward(dg: A, u: A, n: number): void;
  /**
   * out[j] = exp((x[j] - max x) * scale) for j < x.length: the weights of softmax(x * scale),
   * unnormalised (what sampling draws a token from); returns their sum
   */
  softmaxWeights(out: A, x: A, scale: number): number;
  /** the row stride of `attention`'s probabilities for `keys` positions: keys, or more (padding) */
  attentionStride(keys: number): number;
  /**
   * y [t, d] = causal softmax(q k^T / sqrt(d / heads)) v per head, from qkv [past + t, 3d] (q | k | v,
   * heads side by side; the queries of the past rows are not read); att [heads, t,
   * attentionStride(past + t)] keeps the probabilities (zero after each row's own position); null
   * when no backward pass follows
   */
  attention(y: A, att: A | null, qkv: A, s: AttentionShape): void;
  /**
   * dqkv [past + t, 3d] = the gradient of `attention` given dy and its att (overwritten, not added);
   * the past rows get their key and value gradients and a zero query gradient
   */
  attentionBackward(dqkv: A, dy: A, att: A, qkv: A, s: AttentionShape): void;
  /**
   * y [n, d] for n new positions (queries in qkv [n, 3d]) over the keys and values of positions
   * [0, cached + n) of `layer` in `kv`, the new ones already written there
   */
  attendCached(y: A, qkv: A, kv: KvBlock, layer: number, s: CachedAttentionShape): void;
  /**
   * y [B, d] for one new position of each of B blocks (row b of qkv [B, 3d] at position
   * `positions[b]` of `kvs[b]`, already written there): `attendCached` row by row, with its bits;
   * a backend may attend to positions that rows share (forks of one prompt) for all of them at once
   */
  attendCachedRows(
    y: A,
    qkv: A,
    kvs: readonly KvBlock[],
    positions: ArrayLike<number>,
    layer: number,
    s: { readonly d: number; readonly heads: number },
  ): void;
  /** a block for `rows` positions of `layers` layers of width d (contents undefined) */
  kvAlloc(layers: number, rows: number, d: number): KvBlock;
  /** position `pos` of `layer`: the key and value parts of row `row` of qkv [, 3d] */
  kvWrite(kv: KvBlock, layer: number, pos: number, qkv: A, row: number): void;
  /**
   * a block for `rows` positions whose first n (n <= rows) hold `src`'s, read where `src` holds
   * them when the backend can (they never change: a block only grows), copied otherwise; the
   * block cannot write them
   */
  kvShare(src: KvBlock, n: number, rows: number): KvBlock;
  /** gives the block's memory back; it must not be used again (a block never freed is freed once unreachable) */
  kvFree(kv: KvBlock): void;
  /**
   * Holds a copy of `params` where the kernels read their operands, until the returned function
   * is called, so that products reading weights (views of it) do not copy them in each time:
   * decoding runs every weight through a product per token. `params` must not change meanwhile.
   * A no-op for a backend that reads arrays where they are.
   */
  pin(params: A): () => void;
}

export function allocate(dtype: DType, n: number): Arr {
  return dtype === 'float64' ? new Float64Array(n) : new Float32Array(n);
}
