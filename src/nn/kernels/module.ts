/**
 * The one WebAssembly module of the float32 kernels: the matrix kernels of gemm-code.ts and the
 * elementwise and row-wise ones of vmath.ts and vnorm.ts, assembled and instantiated once, when
 * this file is first imported, with fused multiply-adds where the runtime allows them (fma.ts).
 * Exports its linear memory (managed by heap.ts) and its functions as they are called: byte
 * pointers and element strides or counts.
 */
import { assemble } from './asm.js';
import { FUSED } from './fma.js';
import {
  buildCopy,
  buildPack,
  buildPanel,
  buildSdotnt,
  buildSgemm,
  buildTranspose,
  TILE_ROWS,
  TILE_VECS,
} from './gemm-code.js';
import { buildVmath } from './vmath.js';
import { buildVnorm } from './vnorm.js';

export type Kernel = (...args: number[]) => void;

/** the slice of the WebAssembly JS API used here (the project's TypeScript libs do not declare it) */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

const { WebAssembly: wasm } = globalThis as unknown as { WebAssembly: WasmApi };
const instance = new wasm.Instance(
  new wasm.Module(
    assemble(
      [
        buildSgemm(TILE_ROWS, TILE_VECS, FUSED),
        buildSdotnt(FUSED),
        buildTranspose(),
        buildCopy(),
        buildPack(4),
        buildPack(8),
        buildPanel(FUSED),
        ...buildVmath(FUSED),
        ...buildVnorm(FUSED),
      ],
      16,
    ),
  ),
  {},
);
export const memory = instance.exports.memory as WasmMemory;
export const sgemmRaw = instance.exports.sgemm as Kernel;
export const sdotntRaw = instance.exports.sdotnt as Kernel;
export const transposeRaw = instance.exports.transpose as Kernel;
export const copyRaw = instance.exports.copy as Kernel;
export const pack4 = instance.exports.pack4 as Kernel;
export const pack8 = instance.exports.pack8 as Kernel;
export const panel = instance.exports.panel as Kernel;

/** the elementwise and row-wise kernels of vmath.ts and vnorm.ts (byte pointers, element counts) */
export const vmath = instance.exports as unknown as {
  rowmax(x: number, n: number): number;
  expsum(x: number, n: number, shift: number, scale: number, write: number): number;
  axpy(y: number, x: number, n: number, alpha: number): void;
  gelu(out: number, u: number, n: number): void;
  geluBackward(dg: number, u: number, n: number): void;
  softmaxCausal(s: number, T: number, ld: number, scale: number, offset: number): void;
  softmaxCausalBackward(p: number, d: number, T: number, ld: number, scale: number, offset: number): void;
  layerNorm(
    out: number,
    x: number,
    mean: number,
    rstd: number,
    g: number,
    b: number,
    rows: number,
    D: number,
  ): void;
  layerNormBackward(
    dx: number,
    dh: number,
    x: number,
    mean: number,
    rstd: number,
    g: number,
    dg: number,
    db: number,
    rows: number,
    D: number,
  ): void;
  colSum(g: number, d: number, rows: number, n: number): void;
};
