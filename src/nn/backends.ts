/**
 * The one place a backend is chosen: the float64 reference loops, the WebAssembly SIMD kernels
 * or the native ones, from a model's dtype and kernels, and a user's `kernels` setting resolved
 * on this machine. ops.ts declares what a backend is; the backends import it, and only this file
 * imports them all.
 */
import { UserError } from '../util/errors.js';
import { NATIVE_INSTALL_HINT, nativeOps } from './native-ops.js';
import type { DType, Kernels, Ops } from './ops.js';
import { referenceOps } from './reference-ops.js';
import { simdOps } from './simd-ops.js';

/** a user's choices of kernels (the `kernels` setting): `auto` is native when onnxruntime-node loads, else wasm */
export const KERNELS_CHOICES = ['auto', 'wasm', 'native'] as const;
export type KernelsChoice = (typeof KERNELS_CHOICES)[number];

/** the help of every command's kernels setting */
export const KERNELS_HELP = `float32 kernels of training: native (onnxruntime-node's matrix products, when installed: ${NATIVE_INSTALL_HINT}), wasm (WebAssembly SIMD, always there), or auto (native when it loads); they round differently, so a seed's updates differ at rounding level between them. Sampling always runs wasm`;

export function opsFor(dtype: DType, kernels: Kernels = 'wasm'): Ops {
  if (dtype === 'float64') return referenceOps;
  if (kernels === 'wasm') return simdOps;
  const native = nativeOps();
  if (typeof native === 'string') throw new Error(`the native kernels are unavailable: ${native}`);
  return native.ops;
}

/**
 * The kernels a choice comes to on this machine, and what to record of them. `native` when
 * onnxruntime-node cannot be used is an error that says why and how to install it.
 */
export function resolveKernels(choice: KernelsChoice): { readonly kernels: Kernels; readonly label: string } {
  if (choice === 'wasm') return { kernels: 'wasm', label: 'wasm' };
  const native = nativeOps();
  if (typeof native !== 'string')
    return { kernels: 'native', label: `native (onnxruntime-node ${native.version})` };
  if (choice === 'auto') return { kernels: 'wasm', label: 'wasm' };
  throw new UserError(`--kernels native: ${native}; or use --kernels wasm`);
}
