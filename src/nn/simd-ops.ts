/**
 * The float32 backend: every kernel in WebAssembly SIMD (./kernels). With fused multiply-add off
 * (SEAL_WASM_FMA=0, see kernels/fma.ts) LayerNorm keeps the double-precision reference loops it
 * ran before fused kernels existed.
 */
import {
  attendCachedF32,
  attendCachedRowsF32,
  attentionBackwardF32,
  attentionForwardF32,
  attentionStrideF32,
  kvAllocF32,
  kvFreeF32,
  kvShareF32,
  kvWriteF32,
} from './kernels/attention.js';
import { FUSED } from './kernels/fma.js';
import { gemmF32 } from './kernels/gemm.js';
import { pinF32 } from './kernels/heap.js';
import {
  colSumAccF32,
  geluBackwardF32,
  geluF32,
  layerNormBackwardF32,
  layerNormF32,
  softmaxWeightsF32,
} from './kernels/pointwise.js';
import type { Ops } from './ops.js';
import { layerNorm, layerNormBackward } from './reference-ops.js';

export const simdOps: Ops<Float32Array> = {
  dtype: 'float32',
  alloc: (n) => new Float32Array(n),
  matmul: (out, a, w, bias, s) => gemmF32('NN', out, a, w, s, { bias }),
  matmulNT: (out, a, w, s) => gemmF32('NT', out, a, w, s, { rowwise: s.rowwise ?? false }),
  matmulTNAcc: (g, a, d, s) => gemmF32('TN', g, a, d, { m: s.k, k: s.m, n: s.n }, { accumulate: true }),
  colSumAcc: colSumAccF32,
  layerNorm: FUSED ? layerNormF32 : layerNorm,
  layerNormBackward: FUSED ? layerNormBackwardF32 : layerNormBackward,
  gelu: geluF32,
  geluBackward: geluBackwardF32,
  softmaxWeights: softmaxWeightsF32,
  attentionStride: attentionStrideF32,
  attention: attentionForwardF32,
  attentionBackward: attentionBackwardF32,
  attendCached: attendCachedF32,
  attendCachedRows: attendCachedRowsF32,
  kvAlloc: kvAllocF32,
  kvWrite: kvWriteF32,
  kvShare: kvShareF32,
  kvFree: kvFreeF32,
  pin: pinF32,
};
