/**
 * zstd for forward_backward bodies. Node 20 has no zstd of its own, so this is a WebAssembly build
 * of the reference library (`@bokuweb/zstd-wasm`). Its module is one instance per process and
 * costs a file read and a compile (about 250 KB), so it is loaded at the first use and only once:
 * a client that never sees `proto_compress_fwdbwd` never loads it.
 */

type ZstdModule = typeof import('@bokuweb/zstd-wasm');

/** zstd's own default: on forward_backward bodies it already takes most of what higher levels do (docs/benchmarks.md) */
export const ZSTD_LEVEL = 3;

let loading: Promise<ZstdModule> | undefined;

function zstd(): Promise<ZstdModule> {
  loading ??= (async () => {
    const mod = await import('@bokuweb/zstd-wasm');
    await mod.init();
    return mod;
  })().catch((e: unknown) => {
    // a failed load may be tried again (the next request), not remembered for good
    loading = undefined;
    throw e;
  });
  return loading;
}

/** one zstd frame holding `bytes`, its size stated in the frame header */
export async function zstdCompress(bytes: Uint8Array, level = ZSTD_LEVEL): Promise<Uint8Array> {
  return (await zstd()).compress(bytes, level);
}

/**
 * What a zstd frame holds. The frame must state its size (as `zstdCompress`'s do); a frame that
 * claims more than `maxBytes` is refused before anything is allocated for it.
 */
export async function zstdDecompress(frame: Uint8Array, maxBytes = 1 << 30): Promise<Uint8Array> {
  const mod = await zstd();
  const size = zstdFrameContentSize(frame);
  if (size === undefined) throw new Error('the zstd frame does not state its size');
  if (size > maxBytes) throw new Error(`the zstd frame holds ${size} bytes, over the limit of ${maxBytes}`);
  return mod.decompress(frame, { defaultHeapSize: Math.max(1, size) });
}

/**
 * The content size in a zstd frame header (RFC 8878 §3.1.1.1), or undefined when the header does
 * not give it or is not a zstd frame header.
 */
export function zstdFrameContentSize(frame: Uint8Array): number | undefined {
  const magic = 0xfd2fb528;
  if (frame.length < 6) return undefined;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  if (view.getUint32(0, true) !== magic) return undefined;
  const descriptor = frame[4]!;
  const fcsFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  const dictIdFlag = descriptor & 3;
  if (fcsFlag === 0 && !singleSegment) return undefined;
  const at = 5 + (singleSegment ? 0 : 1) + [0, 1, 2, 4][dictIdFlag]!;
  const width = [singleSegment ? 1 : 0, 2, 4, 8][fcsFlag]!;
  if (frame.length < at + width) return undefined;
  switch (width) {
    case 1:
      return view.getUint8(at);
    case 2:
      return view.getUint16(at, true) + 256;
    case 4:
      return view.getUint32(at, true);
    default:
      return Number(view.getBigUint64(at, true));
  }
}
