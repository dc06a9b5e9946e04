/**
 * The float32 backend: matrix products, attention and GELU in the WebAssembly SIMD kernels of
 * ./kernels; the row-wise LayerNorm and bias sums, a small share of the work, in the reference loops.
 */
import { attendCachedF32, attentionBackwardF32, attentionForwardF32 } from './kernels/attention.js';
import { gemmF32 } from './kernels/gemm.js';
import { geluBackwardF32, geluF32 } from './kernels/pointwise.js';
import type { Ops } from './ops.js';
import { colSumAcc, layerNorm, layerNormBackward } from './reference-ops.js';

export const simdOps: Ops<Float32Array> = {
  dtype: 'float32',
  alloc: (n) => new Float32Array(n),
  matmul: (out, a, w, bias, s) => gemmF32('NN', out, a, w, s, { bias }),
  matmulNT: (out, a, w, s) => gemmF32('NT', out, a, w, s, { rowwise: s.rowwise ?? false }),
  matmulTNAcc: (g, a, d, s) => gemmF32('TN', g, a, d, { m: s.k, k: s.m, n: s.n }, { accumulate: true }),
  colSumAcc,
  layerNorm,
  layerNormBackward,
  gelu: geluF32,
  geluBackward: geluBackwardF32,
  attention: attentionForwardF32,
  attentionBackward: attentionBackwardF32,
  attendCached: attendCachedF32,
};
