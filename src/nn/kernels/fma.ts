/**
 * Whether the matrix kernels use fused multiply-add (WebAssembly relaxed SIMD's f32x4.relaxed_madd,
 * one FMA instruction where the CPU has it): about 1.5x the multiply-then-add kernels here, where
 * the add's latency, not the arithmetic units, bounds the inner loop.
 *
 * Node 22 and later validate relaxed SIMD as they come; Node 20's V8 has it behind a flag, which
 * takes effect for modules compiled after it is set, so it is set here, before the kernels are
 * built, when the probe does not validate without it. `SEAL_WASM_FMA=0` keeps the separate multiply
 * and add (a fused product-sum rounds once, so results move at rounding level with it). Either way
 * the choice is made once per process and every thread makes the same one, so a seed still gives
 * the same samples and updates on one machine.
 */
import { setFlagsFromString } from 'node:v8';
import { assemble, Fn, Simd, V128 } from './asm.js';

const wasm = (globalThis as unknown as { WebAssembly: { validate(bytes: Uint8Array): boolean } }).WebAssembly;

function probe(): boolean {
  const f = new Fn('madd', [V128, V128, V128], [V128]);
  f.get(0).get(1).get(2).simd(Simd.f32x4RelaxedMadd);
  return wasm.validate(assemble([f], 1));
}

function detect(): boolean {
  if (process.env.SEAL_WASM_FMA === '0') return false;
  if (probe()) return true;
  setFlagsFromString('--experimental-wasm-relaxed-simd');
  return probe();
}

export const FUSED: boolean = detect();
