/**
 * The linear memory of the WebAssembly kernels (module.ts), in floats. Operands are copied in for
 * a call, into one scratch area that every call reuses (`regions`); only what kernels read again
 * and again across calls lives there between them, in resident blocks below the scratch area:
 * a sequence's keys and values (`residentAlloc`), and pinned arrays (`pinF32`), the weights that
 * decoding runs through a product for every token.
 */
import { Pins } from '../pins.js';
import { memory } from './module.js';

let heapView = new Float32Array(memory.buffer);
/** 64 KiB pages a 32-bit WebAssembly memory can have */
const MAX_PAGES = 65536;
/** floats of linear memory below the scratch area, held by resident blocks (see residentAlloc) */
let residentTop = 0;
/** free ranges below residentTop, sorted by offset, never adjacent */
const freeRanges: { at: number; size: number }[] = [];

/**
 * grows linear memory to at least `floats` floats (by an eighth at least, so that a slowly rising
 * top does not grow it page by page: every growth replaces the buffer and its views), and
 * refreshes the view
 */
function reserve(floats: number): void {
  const have = memory.buffer.byteLength;
  const bytes = floats * 4;
  if (have < bytes) {
    const pages = have / 65536;
    const need = Math.ceil((bytes - have) / 65536);
    try {
      memory.grow(Math.max(need, Math.min(pages >>> 3, MAX_PAGES - pages)));
    } catch {
      throw new RangeError(
        `the WebAssembly kernels' memory (${pages >>> 4} MB, at most ${MAX_PAGES >>> 4} MB) cannot grow by ${Math.ceil(need / 16)} MB more: sample fewer sequences at once (maxBatch), keep a smaller prefix cache (prefixCache.maxTokens), or train on shorter sequences`,
      );
    }
  }
  if (heapView.buffer !== memory.buffer) heapView = new Float32Array(memory.buffer);
}

/**
 * Lays out regions of the given float counts (16-byte aligned) in linear memory, above the
 * resident blocks, growing it if needed, and returns their float offsets. The memory is reused by
 * every call: regions are only valid until the next `regions` call, and views of the old buffer
 * die when memory grows.
 */
export function regions<const S extends readonly number[]>(
  ...sizes: S
): { -readonly [K in keyof S]: number } {
  const offs: number[] = [];
  let end = residentTop;
  for (const n of sizes) {
    offs.push(end);
    end += (n + 3) & ~3;
  }
  reserve(end);
  return offs as { -readonly [K in keyof S]: number };
}

// --- resident blocks -----------------------------------------------------------------------------
// What outlives a kernel call and is read by kernels again and again (a sequence's keys and
// values) lives in linear memory below the scratch area, so that no call copies it in: blocks in
// [0, residentTop), scratch from residentTop up. Scratch holds nothing between calls, so a new
// block may take its place. First fit over a list of free ranges kept sorted and merged; a free
// range that reaches the top gives its memory back to the scratch area.

const blockSize = (floats: number) => Math.max(4, (floats + 3) & ~3);

/** float offset of a new block of `floats` floats (16-byte aligned, contents undefined) */
export function residentAlloc(floats: number): number {
  const size = blockSize(floats);
  for (let i = 0; i < freeRanges.length; i++) {
    const r = freeRanges[i]!;
    if (r.size < size) continue;
    const at = r.at;
    if (r.size === size) freeRanges.splice(i, 1);
    else {
      r.at += size;
      r.size -= size;
    }
    return at;
  }
  reserve(residentTop + size); // throws, changing nothing, when memory cannot grow
  const at = residentTop;
  residentTop += size;
  return at;
}

/** returns the block at `at` of `floats` floats (as allocated) */
export function residentFree(at: number, floats: number): void {
  const size = blockSize(floats);
  let i = 0;
  while (i < freeRanges.length && freeRanges[i]!.at < at) i++;
  freeRanges.splice(i, 0, { at, size });
  const next = freeRanges[i + 1];
  if (next && at + size === next.at) {
    freeRanges[i]!.size += next.size;
    freeRanges.splice(i + 1, 1);
  }
  const prev = freeRanges[i - 1];
  if (prev && prev.at + prev.size === at) {
    prev.size += freeRanges[i]!.size;
    freeRanges.splice(i, 1);
  }
  const last = freeRanges[freeRanges.length - 1];
  if (last && last.at + last.size === residentTop) {
    residentTop = last.at;
    freeRanges.pop();
  }
}

// --- pinned arrays ------------------------------------------------------------------------------
// Decoding runs every weight matrix through a product for each token it samples, a few rows at a
// time, and copying the matrix in cost about as much as the product. A pinned array is copied into
// a resident block once; a product whose operand is a view of it reads the block instead.

export interface Pin {
  readonly array: Float32Array;
  readonly at: number;
  /**
   * B operands of panel products over views of the array, packed on first use and kept until
   * the pin goes (a weight passes the same packing in every product: each sequence of a training
   * step, each prefill of a batch), by layout, offset and shape; each a resident block
   */
  readonly packed: Map<string, { readonly at: number; readonly floats: number }>;
}
const pins = new Pins<Pin>(
  (array) => {
    const pin = { array, at: residentAlloc(array.length), packed: new Map() };
    heapView.set(array, pin.at);
    return pin;
  },
  (pin) => {
    residentFree(pin.at, pin.array.length);
    for (const p of pin.packed.values()) residentFree(p.at, p.floats);
  },
);

/**
 * Keeps a copy of `array` in linear memory, read by every product whose operand lies in it, until
 * the returned function is called (pins of the same array nest). The caller must not change the
 * array meanwhile: the products would read the copy.
 */
export function pinF32(array: Float32Array): () => void {
  return pins.hold(array);
}

/** the pin x is a view of, and the float offset of x's copy, or null */
export function pinOf(x: Float32Array): { readonly pin: Pin; readonly at: number } | null {
  for (const p of pins.held) {
    const from = p.array.byteOffset;
    if (
      x.buffer === p.array.buffer &&
      x.byteOffset >= from &&
      x.byteOffset + x.byteLength <= from + p.array.byteLength
    )
      return { pin: p, at: p.at + (x.byteOffset - from) / 4 };
  }
  return null;
}

/** the float offset of x's copy when x is a view of a pinned array, else -1 */
export function pinnedAt(x: Float32Array): number {
  return pinOf(x)?.at ?? -1;
}

/** floats held by resident blocks and free ranges between them (for tests and benchmarks) */
export function residentFloats(): { top: number; free: number } {
  return { top: residentTop, free: freeRanges.reduce((s, r) => s + r.size, 0) };
}

/** the current view of linear memory (refetch after every `regions` call) */
export function heap(): Float32Array {
  return heapView;
}
