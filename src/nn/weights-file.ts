/**
 * The model weights file: magic, header length, JSON header (config, parameter count, free-form
 * meta), float32 little-endian weights, and the sha256 of everything before it, so that a corrupt or
 * truncated file is refused rather than loaded.
 */
import { createHash } from 'node:crypto';
import { type GptConfig, paramLayout } from './config.js';
import { type Arr, allocate, type DType } from './ops.js';

const MAGIC = new TextEncoder().encode('SEALGPT\u0001');

export function encodeWeights(config: GptConfig, params: Arr, meta: Record<string, unknown>): Uint8Array {
  const size = params.length;
  const header = JSON.stringify({
    format: 'seal-embedded-gpt',
    version: 1,
    config,
    dtype: 'float32',
    numParams: size,
    meta,
  });
  const hb = new TextEncoder().encode(header);
  const pre = MAGIC.length + 4 + hb.length;
  // the weights start 4-byte aligned, so a reader can view them in place
  const pad = (4 - (pre % 4)) % 4;
  const payloadOff = pre + pad;
  const total = payloadOff + size * 4 + 32;
  const buf = new Uint8Array(total);
  buf.set(MAGIC, 0);
  new DataView(buf.buffer).setUint32(MAGIC.length, hb.length + pad, true);
  buf.set(hb, MAGIC.length + 4);
  buf.fill(0x20, pre, payloadOff); // pad the JSON with spaces
  const w = new DataView(buf.buffer, payloadOff, size * 4);
  for (let i = 0; i < size; i++) w.setFloat32(i * 4, params[i]!, true);
  const digest = createHash('sha256')
    .update(buf.subarray(0, total - 32))
    .digest();
  buf.set(digest, total - 32);
  return buf;
}

export function decodeWeights(
  data: Uint8Array,
  dtype: DType,
): { config: GptConfig; params: Arr; meta: Record<string, unknown> } {
  const fail = (why: string): never => {
    throw new Error(`cannot load embedded model weights: ${why}`);
  };
  if (data.length < MAGIC.length + 4 + 32) fail('file too short');
  for (let i = 0; i < MAGIC.length; i++)
    if (data[i] !== MAGIC[i]) fail('not a seal embedded model file (bad magic)');
  const digest = createHash('sha256')
    .update(data.subarray(0, data.length - 32))
    .digest();
  const stored = data.subarray(data.length - 32);
  if (!Buffer.from(stored).equals(digest)) {
    fail(
      `checksum mismatch (the file is corrupt or truncated): stored sha256 ${Buffer.from(stored).toString('hex')}, computed ${digest.toString('hex')}`,
    );
  }
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const hl = view.getUint32(MAGIC.length, true);
  const payloadOff = MAGIC.length + 4 + hl;
  if (payloadOff > data.length - 32) fail('header length out of range');
  let header: {
    format?: unknown;
    version?: unknown;
    config?: GptConfig;
    numParams?: unknown;
    meta?: unknown;
  };
  try {
    header = JSON.parse(new TextDecoder().decode(data.subarray(MAGIC.length + 4, payloadOff)));
  } catch {
    return fail('unreadable header');
  }
  if (header.format !== 'seal-embedded-gpt' || header.version !== 1) fail('unsupported format or version');
  const config = header.config;
  if (!config) return fail('header has no config');
  const layout = paramLayout(config);
  if (header.numParams !== layout.size) fail('parameter count does not match the config');
  if (data.length - 32 - payloadOff !== layout.size * 4) fail('payload size does not match the config');
  const params = allocate(dtype, layout.size);
  const pv = new DataView(data.buffer, data.byteOffset + payloadOff, layout.size * 4);
  for (let i = 0; i < layout.size; i++) params[i] = pv.getFloat32(i * 4, true);
  const meta = (typeof header.meta === 'object' && header.meta !== null ? header.meta : {}) as Record<
    string,
    unknown
  >;
  return { config, params, meta };
}
