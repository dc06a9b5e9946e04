/**
 * The files a Tinker service's checkpoint archive holds, made for tests: a safetensors file
 * (an 8-byte header length, the JSON header, the tensors' bytes), a PEFT LoRA adapter of a tiny
 * model (two layers of width 8, q_proj and v_proj) whose values follow the weights state, and a
 * ustar archive of files (optionally gzipped), as `tar` writes one.
 */
import { gzipSync } from 'node:zlib';

export interface TestTensor {
  readonly name: string;
  readonly shape: readonly number[];
  /** float32 values, shape's product of them */
  readonly values: readonly number[];
}

/** a safetensors file of float32 tensors, in the given order */
export function safetensorsOf(tensors: readonly TestTensor[], metadata: Record<string, string> = {}): Buffer {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let at = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: 'F32', shape: t.shape, data_offsets: [at, at + t.values.length * 4] };
    at += t.values.length * 4;
  }
  // the format pads the header with spaces to a multiple of 8
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  const data = Buffer.alloc(at);
  let o = 0;
  for (const t of tensors) for (const v of t.values) o = data.writeFloatLE(v, o);
  return Buffer.concat([len, Buffer.from(json), data]);
}

export const TEST_ADAPTER_LAYERS = 2;
export const TEST_ADAPTER_WIDTH = 8;
export const TEST_ADAPTER_MODULES = ['q_proj', 'v_proj'] as const;

/** adapter_config.json and adapter_model.safetensors of a LoRA at `step` with the given lrs */
export function testAdapterFiles(w: {
  baseModel: string;
  rank: number;
  step: number;
  lrs: readonly number[];
}): { path: string; data: Buffer }[] {
  const config = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: w.baseModel,
    r: w.rank,
    lora_alpha: 32,
    lora_dropout: 0,
    bias: 'none',
    fan_in_fan_out: false,
    inference_mode: true,
    target_modules: [...TEST_ADAPTER_MODULES],
  };
  const scale = w.lrs.reduce((a, b) => a + b, 0);
  const tensors: TestTensor[] = [];
  for (let layer = 0; layer < TEST_ADAPTER_LAYERS; layer++)
    for (const m of TEST_ADAPTER_MODULES) {
      const stem = `base_model.model.model.layers.${layer}.self_attn.${m}`;
      const n = w.rank * TEST_ADAPTER_WIDTH;
      tensors.push({
        name: `${stem}.lora_A.weight`,
        shape: [w.rank, TEST_ADAPTER_WIDTH],
        values: Array.from({ length: n }, (_, i) => ((i * 7 + layer) % 13) / 13 - 0.5),
      });
      // B starts at zero, as a LoRA does, and moves with the steps taken
      tensors.push({
        name: `${stem}.lora_B.weight`,
        shape: [TEST_ADAPTER_WIDTH, w.rank],
        values: Array.from({ length: n }, (_, i) => scale * (((i * 5 + w.step) % 11) - 5)),
      });
    }
  return [
    { path: 'adapter_config.json', data: Buffer.from(`${JSON.stringify(config, null, 2)}\n`) },
    { path: 'adapter_model.safetensors', data: safetensorsOf(tensors, { format: 'pt' }) },
  ];
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/** a ustar archive of regular files (paths of 100 bytes or less), gzipped when asked */
export function tarOf(files: readonly { path: string; data: Uint8Array }[], gzip = false): Buffer {
  const blocks: Buffer[] = [];
  for (const f of files) {
    const h = Buffer.alloc(512);
    h.write(f.path, 0, 100, 'utf8');
    h.write(octal(0o644, 8), 100);
    h.write(octal(0, 8), 108);
    h.write(octal(0, 8), 116);
    h.write(octal(f.data.length, 12), 124);
    h.write(octal(0, 12), 136);
    h.write('        ', 148);
    h.write('0', 156);
    h.write('ustar\0', 257);
    h.write('00', 263);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(h, Buffer.from(f.data), Buffer.alloc((512 - (f.data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  const tar = Buffer.concat(blocks);
  return gzip ? gzipSync(tar) : tar;
}

/** one member of a hand-made tar: any type, link target, prefix, and a size field that may lie */
export interface TarEntry {
  readonly path: string;
  readonly data?: Uint8Array;
  /** the type flag: '0' a file (default), '1' a hard link, '2' a symlink, '3'/'4' devices, '5' a folder, '6' a FIFO, 'L' a GNU long name, 'x' a pax header */
  readonly type?: string;
  readonly linkname?: string;
  /** the ustar prefix field (the path's first part, for names over 100 bytes) */
  readonly prefix?: string;
  /** the size the header states, when it is not the data's */
  readonly size?: number;
}

/** one 512-byte ustar header, its checksum right */
function tarHeader(e: TarEntry, size: number): Buffer {
  const h = Buffer.alloc(512);
  h.write(e.path, 0, 100, 'utf8');
  h.write(octal(0o644, 8), 100);
  h.write(octal(0, 8), 108);
  h.write(octal(0, 8), 116);
  h.write(octal(size, 12), 124);
  h.write(octal(0, 12), 136);
  h.write('        ', 148);
  h.write(e.type ?? '0', 156);
  if (e.linkname) h.write(e.linkname, 157, 100, 'utf8');
  h.write('ustar\0', 257);
  h.write('00', 263);
  if (e.prefix) h.write(e.prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return h;
}

/** a tar of hand-made members, in order, as a hostile or careless writer might make one */
export function rawTarOf(entries: readonly TarEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const data = Buffer.from(e.data ?? new Uint8Array());
    blocks.push(tarHeader(e, e.size ?? data.length), data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

/** the members that give `path` to the next file: GNU's `L` record, or a pax `x` header */
export function longNameEntries(path: string, form: 'gnu' | 'pax'): TarEntry[] {
  if (form === 'gnu') return [{ path: '././@LongLink', type: 'L', data: Buffer.from(`${path}\0`) }];
  const body = ` path=${path}\n`;
  // a pax record's length counts its own digits
  let len = body.length + 1;
  while (`${len}${body}`.length !== len) len++;
  return [{ path: 'PaxHeader', type: 'x', data: Buffer.from(`${len}${body}`) }];
}

/** a safetensors file of raw tensors (any dtype and shape, any bytes), with extra bytes after them */
export function rawSafetensors(
  tensors: readonly { name: string; dtype: string; shape: readonly number[]; bytes: number }[],
  trailing = 0,
): Buffer {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let at = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [at, at + t.bytes] };
    at += t.bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  return Buffer.concat([len, Buffer.from(json), Buffer.alloc(at + trailing, 1)]);
}
