/**
 * A LoRA adapter folder as vLLM (`--enable-lora --lora-modules NAME=DIR`) and PEFT load it:
 * `adapter_config.json` (`peft_type` LORA, `r`, `lora_alpha`, `target_modules`,
 * `base_model_name_or_path`, ...) beside `adapter_model.safetensors`, whose tensors come in pairs,
 * `<module>.lora_A.weight` [r, in] and `<module>.lora_B.weight` [out, r] (3-D, one slice per
 * expert, in Tinker's own form of an MoE adapter). `checkLoraAdapter` reads the config and the
 * safetensors header (never the weights themselves) and says what is wrong, or what the folder
 * holds.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import type { TarFile } from '../util/tar.js';

export const ADAPTER_CONFIG_FILE = 'adapter_config.json';
export const ADAPTER_WEIGHTS_FILE = 'adapter_model.safetensors';

/** A folder that is not a usable adapter: what is wrong with it, in one sentence. */
export class AdapterError extends Error {
  override name = 'AdapterError';
}

/** bytes per element of each safetensors dtype */
export const SAFETENSORS_DTYPES: Readonly<Record<string, number>> = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E4M3: 1,
  F8_E5M2: 1,
  U16: 2,
  I16: 2,
  F16: 2,
  BF16: 2,
  U32: 4,
  I32: 4,
  F32: 4,
  U64: 8,
  I64: 8,
  F64: 8,
};

export interface TensorInfo {
  readonly name: string;
  readonly dtype: string;
  readonly shape: readonly number[];
  /** byte range in the data after the header */
  readonly offsets: readonly [number, number];
}

export interface SafetensorsHeader {
  readonly tensors: readonly TensorInfo[];
  readonly metadata: Readonly<Record<string, string>>;
}

/** the header's JSON is at most this long (the format's own limit is 100 MB) */
const MAX_HEADER_BYTES = 100_000_000;

/**
 * A safetensors header's JSON checked against the data it describes (`dataLen` bytes): every
 * tensor's byte range matches its dtype and shape, and the ranges tile the data without gaps or
 * overlaps. `label` names the file in the messages.
 */
export function parseSafetensorsHeader(
  headerBytes: Uint8Array,
  dataLen: number,
  label: string,
): SafetensorsHeader {
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(headerBytes).toString('utf8'));
  } catch {
    throw new AdapterError(`${label} is not a safetensors file (its header is not JSON)`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header))
    throw new AdapterError(`${label}: the safetensors header is not a JSON object`);
  const tensors: TensorInfo[] = [];
  let metadata: Record<string, string> = {};
  for (const [name, v] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') {
      metadata = v as Record<string, string>;
      continue;
    }
    const t = v as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    const width = typeof t.dtype === 'string' ? SAFETENSORS_DTYPES[t.dtype] : undefined;
    const shape = t.shape;
    const offsets = t.data_offsets;
    if (
      width === undefined ||
      !Array.isArray(shape) ||
      !shape.every((d) => Number.isSafeInteger(d) && d >= 0) ||
      !Array.isArray(offsets) ||
      offsets.length !== 2 ||
      !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)
    )
      throw new AdapterError(
        typeof t.dtype === 'string' && width === undefined
          ? `${label}: tensor ${name} has dtype ${JSON.stringify(t.dtype)}, which is not a safetensors dtype (${Object.keys(SAFETENSORS_DTYPES).join(', ')})`
          : `${label}: tensor ${name} has no valid dtype, shape and data_offsets`,
      );
    const [begin, end] = offsets as [number, number];
    const elements = (shape as number[]).reduce((a, d) => a * d, 1);
    if (end < begin || end - begin !== elements * width || end > dataLen)
      throw new AdapterError(
        `${label}: tensor ${name} (${t.dtype} [${(shape as number[]).join(', ')}]) does not match its byte range ${begin}-${end} of ${dataLen}`,
      );
    tensors.push({ name, dtype: t.dtype as string, shape: shape as number[], offsets: [begin, end] });
  }
  const sorted = [...tensors].sort((a, b) => a.offsets[0] - b.offsets[0]);
  let at = 0;
  for (const t of sorted) {
    if (t.offsets[0] !== at)
      throw new AdapterError(`${label}: the tensors' byte ranges leave a gap or overlap at ${t.name}`);
    at = t.offsets[1];
  }
  if (at !== dataLen)
    throw new AdapterError(`${label}: the tensors end at byte ${at} of the data, which holds ${dataLen}`);
  return { tensors, metadata };
}

/** the header length a safetensors file states, checked to fit a file of `size` bytes */
function headerLength(lenBytes: Uint8Array, size: number, label: string): number {
  if (size < 8) throw new AdapterError(`${label} is too short to be a safetensors file`);
  const headerLen = Number(Buffer.from(lenBytes).readBigUInt64LE(0));
  if (headerLen < 2 || headerLen > MAX_HEADER_BYTES || 8 + headerLen > size)
    throw new AdapterError(
      `${label} is not a safetensors file (its header length ${headerLen} does not fit)`,
    );
  return headerLen;
}

/**
 * The header of a safetensors file, checked against the file (parseSafetensorsHeader), and the
 * data ends where the file does. Reads the header only, never the weights.
 */
export function readSafetensorsHeader(path: string): SafetensorsHeader {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const lenBytes = Buffer.alloc(8);
    if (size >= 8) readSync(fd, lenBytes, 0, 8, 0);
    const headerLen = headerLength(lenBytes, size, path);
    const headerBytes = Buffer.alloc(headerLen);
    readSync(fd, headerBytes, 0, headerLen, 8);
    return parseSafetensorsHeader(headerBytes, size - 8 - headerLen, path);
  } finally {
    closeSync(fd);
  }
}

/** one tensor with its bytes (little-endian, row-major, as safetensors stores them) */
export interface Tensor {
  readonly name: string;
  readonly dtype: string;
  readonly shape: readonly number[];
  readonly data: Uint8Array;
}

/** a whole safetensors file held in memory: its tensors (views into `bytes`) and metadata */
export function parseSafetensors(
  bytes: Uint8Array,
  label: string,
): { tensors: Tensor[]; metadata: Readonly<Record<string, string>> } {
  const headerLen = headerLength(bytes.subarray(0, 8), bytes.length, label);
  const header = parseSafetensorsHeader(
    bytes.subarray(8, 8 + headerLen),
    bytes.length - 8 - headerLen,
    label,
  );
  const data = bytes.subarray(8 + headerLen);
  return {
    tensors: header.tensors.map((t) => ({
      name: t.name,
      dtype: t.dtype,
      shape: t.shape,
      data: data.subarray(t.offsets[0], t.offsets[1]),
    })),
    metadata: header.metadata,
  };
}

/**
 * A safetensors file of the tensors, in the order given: the 8-byte little-endian header length,
 * the JSON header (padded with spaces to a multiple of 8, as the reference writer does, so the data
 * starts aligned), then the bytes.
 */
export function writeSafetensors(
  tensors: readonly Tensor[],
  metadata: Readonly<Record<string, string>> = {},
): Buffer {
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let at = 0;
  for (const t of tensors) {
    const width = SAFETENSORS_DTYPES[t.dtype];
    const elements = t.shape.reduce((a, d) => a * d, 1);
    if (width === undefined || elements * width !== t.data.length)
      throw new Error(
        `tensor ${t.name} (${t.dtype} [${t.shape.join(', ')}]) does not hold ${t.data.length} bytes`,
      );
    if (t.name in header) throw new Error(`tensor ${t.name} is written twice`);
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [at, at + t.data.length] };
    at += t.data.length;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((Buffer.byteLength(json) + 8) % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  return Buffer.concat([len, Buffer.from(json), ...tensors.map((t) => t.data)]);
}

export interface AdapterSummary {
  readonly dir: string;
  readonly baseModel?: string;
  readonly rank: number;
  /** the largest rank of any module: `r`, or a merged module's from `rank_pattern` */
  readonly maxRank: number;
  readonly alpha: number;
  readonly targetModules: readonly string[] | string;
  /** the modules the tensors adapt (the last name before `.lora_A`) */
  readonly modules: readonly string[];
  /** lora_A/lora_B pairs */
  readonly pairs: number;
  readonly dtypes: readonly string[];
  readonly tensors: readonly TensorInfo[];
  /** things vLLM may refuse that do not make the folder unreadable */
  readonly warnings: readonly string[];
}

/** the module name a LoRA tensor adapts, and which half it is */
function loraPart(name: string): { module: string; half: 'A' | 'B' } | undefined {
  const m = /^(.*)\.lora_([AB])(?:\.[^.]+)?\.weight$/.exec(name);
  return m ? { module: m[1]!, half: m[2] as 'A' | 'B' } : undefined;
}

/** `adapter_config.json` and the safetensors header of `dir`, checked as one LoRA adapter */
export function checkLoraAdapter(dir: string): AdapterSummary {
  const configPath = join(dir, ADAPTER_CONFIG_FILE);
  const weightsPath = join(dir, ADAPTER_WEIGHTS_FILE);
  for (const p of [configPath, weightsPath])
    if (!existsSync(p)) throw new AdapterError(`${dir} holds no ${p.slice(dir.length + 1)}`);
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
  } catch {
    throw new AdapterError(`${configPath} is not JSON`);
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    throw new AdapterError(`${configPath} is not a JSON object`);
  const rank = config.r;
  const alpha = config.lora_alpha;
  if (!Number.isSafeInteger(rank) || (rank as number) < 1)
    throw new AdapterError(
      `${configPath}: "r" (the LoRA rank) must be a whole number >= 1, got ${JSON.stringify(rank)}`,
    );
  if (typeof alpha !== 'number' || !(alpha > 0))
    throw new AdapterError(`${configPath}: "lora_alpha" must be a number > 0, got ${JSON.stringify(alpha)}`);
  if (config.peft_type !== undefined && config.peft_type !== 'LORA')
    throw new AdapterError(`${configPath}: "peft_type" is ${JSON.stringify(config.peft_type)}, not "LORA"`);
  const targets = config.target_modules;
  const targetList =
    Array.isArray(targets) && targets.every((t) => typeof t === 'string') ? (targets as string[]) : undefined;
  if (!(targetList && targetList.length > 0) && !(typeof targets === 'string' && targets !== ''))
    throw new AdapterError(
      `${configPath}: "target_modules" must name the adapted modules, got ${JSON.stringify(targets)}`,
    );
  const base = config.base_model_name_or_path;
  if (base !== undefined && base !== null && typeof base !== 'string')
    throw new AdapterError(`${configPath}: "base_model_name_or_path" must be a string`);
  const rankPattern = (config.rank_pattern ?? {}) as Record<string, number>;

  const header = readSafetensorsHeader(weightsPath);
  const warnings: string[] = [];
  if (config.peft_type === undefined)
    warnings.push(`${ADAPTER_CONFIG_FILE} does not say "peft_type": "LORA"`);
  if (typeof base !== 'string' || base === '')
    warnings.push(
      `${ADAPTER_CONFIG_FILE} names no base_model_name_or_path: serve it on the model it was trained from`,
    );
  const halves = new Map<string, { A?: TensorInfo; B?: TensorInfo }>();
  const other: string[] = [];
  for (const t of header.tensors) {
    const part = loraPart(t.name);
    if (!part) {
      other.push(t.name);
      continue;
    }
    const pair = halves.get(part.module) ?? {};
    pair[part.half] = t;
    halves.set(part.module, pair);
  }
  if (halves.size === 0) throw new AdapterError(`${weightsPath} holds no lora_A / lora_B tensors`);
  const leaves = new Set<string>();
  for (const [module, { A, B }] of halves) {
    if (!A || !B)
      throw new AdapterError(
        `${weightsPath}: ${module} has lora_${A ? 'A' : 'B'} without lora_${A ? 'B' : 'A'}`,
      );
    const leaf = module.split('.').at(-1)!;
    leaves.add(leaf);
    const r = rankPattern[leaf] ?? (rank as number);
    // [r, in] and [out, r]; an expert stack adds a leading dimension to both
    const expert = A.shape.length === 3 && B.shape.length === 3;
    if (!(A.shape.length === 2 && B.shape.length === 2) && !(expert && A.shape[0] === B.shape[0]))
      throw new AdapterError(
        `${weightsPath}: ${module}'s lora_A [${A.shape.join(', ')}] and lora_B [${B.shape.join(', ')}] are not a LoRA pair's shapes`,
      );
    const rA = A.shape.at(-2)!;
    const rB = B.shape.at(-1)!;
    if (rA !== r || rB !== r)
      throw new AdapterError(
        `${weightsPath}: ${module}'s lora_A [${A.shape.join(', ')}] and lora_B [${B.shape.join(', ')}] are not of rank ${r} (adapter_config.json's "r")`,
      );
  }
  if (other.length > 0)
    warnings.push(
      `the weights also hold ${other.length} tensor(s) that are not LoRA halves (${other.slice(0, 3).join(', ')})`,
    );
  if (targetList) {
    const missing = [...leaves].filter((l) => !targetList.includes(l));
    if (missing.length > 0)
      warnings.push(`the weights adapt ${missing.join(', ')}, which "target_modules" does not list`);
  }
  const names = [...halves.keys()];
  if (!names.every((n) => n.startsWith('base_model.model.')))
    warnings.push(
      "the tensor names are not PEFT's (base_model.model.<module>): convert them to the Hugging Face model's names before serving (the Tinker cookbook's build_lora_adapter does)",
    );
  return {
    dir,
    ...(typeof base === 'string' && base !== '' ? { baseModel: base } : {}),
    rank: rank as number,
    maxRank: Math.max(rank as number, ...Object.values(rankPattern).filter((v) => Number.isSafeInteger(v))),
    alpha,
    targetModules: targetList ?? (targets as string),
    modules: [...leaves].sort(),
    pairs: halves.size,
    dtypes: [...new Set(header.tensors.map((t) => t.dtype))].sort(),
    tensors: header.tensors,
    warnings,
  };
}

/**
 * An archive's files written under `out` (a new or empty folder); answers the folder that holds
 * `adapter_config.json`: `out` itself, or the one folder inside it an archive put the files in.
 */
export function unpackAdapter(files: readonly TarFile[], out: string): string {
  const configs = files.filter(
    (f) => f.path === ADAPTER_CONFIG_FILE || f.path.endsWith(`/${ADAPTER_CONFIG_FILE}`),
  );
  if (configs.length !== 1)
    throw new AdapterError(
      `the archive holds ${configs.length === 0 ? 'no' : `${configs.length}`} ${ADAPTER_CONFIG_FILE} (files: ${files
        .map((f) => f.path)
        .slice(0, 8)
        .join(', ')}); it is not one LoRA adapter`,
    );
  // a path that is a file and a folder's name too (`a`, `a/b`), or twice a file, is no adapter
  const seen = new Set<string>();
  const folders = new Set<string>();
  for (const f of files) {
    const parts = f.path.split('/');
    for (let i = 1; i < parts.length; i++) folders.add(parts.slice(0, i).join('/'));
    if (seen.has(f.path))
      throw new AdapterError(`the archive holds ${f.path} twice; it is not one LoRA adapter`);
    seen.add(f.path);
  }
  const clash = [...seen].find((p) => folders.has(p));
  if (clash !== undefined)
    throw new AdapterError(
      `the archive holds ${clash} as a file and as a folder; it is not one LoRA adapter`,
    );
  for (const f of files) {
    const path = join(out, f.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, f.data);
  }
  return join(out, dirname(configs[0]!.path));
}
