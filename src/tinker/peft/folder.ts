/**
 * The conversion's edges: reading a raw adapter folder and a base model's folder, writing the
 * PEFT adapter folder. The mapping itself is convert.ts's, on what these read.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../util/errors.js';
import {
  ADAPTER_CONFIG_FILE,
  ADAPTER_WEIGHTS_FILE,
  AdapterError,
  parseSafetensors,
  readSafetensorsHeader,
  type Tensor,
  writeSafetensors,
} from '../adapter.js';
import type { BaseModel, PeftAdapter } from './convert.js';

const INDEX_FILE = 'model.safetensors.index.json';
const SINGLE_FILE = 'model.safetensors';

function jsonObject(path: string, what: (detail: string) => Error): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw what(`is not JSON (${(e as Error).message})`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw what('is not a JSON object');
  return v as Record<string, unknown>;
}

/** a raw adapter folder's config and tensors (the whole safetensors file is read: an adapter is small) */
export function readRawAdapter(dir: string): { config: Record<string, unknown>; tensors: Tensor[] } {
  const configPath = join(dir, ADAPTER_CONFIG_FILE);
  const weightsPath = join(dir, ADAPTER_WEIGHTS_FILE);
  for (const p of [configPath, weightsPath])
    if (!existsSync(p)) throw new AdapterError(`${dir} holds no ${p.slice(dir.length + 1)}`);
  const config = jsonObject(configPath, (d) => new AdapterError(`${configPath} ${d}`));
  return { config, tensors: parseSafetensors(readFileSync(weightsPath), weightsPath).tensors };
}

/**
 * A base model's folder as the conversion needs it: config.json, and its weights' names from
 * model.safetensors.index.json (whose shards' headers give the shapes, where the shards are there)
 * or a single model.safetensors. Only headers are read, never the weights.
 */
export function readBaseModelDir(dir: string): BaseModel {
  const bad = (what: string) =>
    new UserError(
      `--base-model-dir ${dir} ${what}; give the base model's folder as downloaded from Hugging Face (config.json with model.safetensors.index.json or model.safetensors).`,
    );
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw bad('is not a folder');
  const configPath = join(dir, 'config.json');
  if (!existsSync(configPath)) throw bad('holds no config.json');
  const config = jsonObject(configPath, (d) => bad(`has a config.json that ${d}`));
  const parameters = new Map<string, readonly number[] | undefined>();
  const readShard = (file: string) => {
    try {
      for (const t of readSafetensorsHeader(join(dir, file)).tensors) parameters.set(t.name, t.shape);
    } catch (e) {
      throw bad(`has a ${file} that cannot be read (${(e as Error).message})`);
    }
  };
  const indexPath = join(dir, INDEX_FILE);
  if (existsSync(indexPath)) {
    const index = jsonObject(indexPath, (d) => bad(`has a ${INDEX_FILE} that ${d}`));
    const map = index.weight_map;
    if (typeof map !== 'object' || map === null || Array.isArray(map))
      throw bad(`has a ${INDEX_FILE} without a "weight_map"`);
    const shards = new Set<string>();
    for (const [name, file] of Object.entries(map as Record<string, unknown>)) {
      if (typeof file !== 'string' || file.includes('/') || file.includes('\\') || file.startsWith('.'))
        throw bad(`has a ${INDEX_FILE} whose weight_map names ${JSON.stringify(file)} for ${name}`);
      parameters.set(name, undefined);
      shards.add(file);
    }
    // the shapes, where the shards are there (a folder of config and index alone still checks names)
    for (const file of shards) if (existsSync(join(dir, file))) readShard(file);
  } else if (existsSync(join(dir, SINGLE_FILE))) readShard(SINGLE_FILE);
  else throw bad(`holds neither ${INDEX_FILE} nor ${SINGLE_FILE}`);
  return { source: dir, config, parameters };
}

/** adapter_config.json and adapter_model.safetensors of the converted adapter, into `dir` */
export function writePeftAdapter(dir: string, adapter: PeftAdapter): void {
  writeFileSync(join(dir, ADAPTER_WEIGHTS_FILE), writeSafetensors(adapter.tensors, { format: 'pt' }));
  writeFileSync(join(dir, ADAPTER_CONFIG_FILE), `${JSON.stringify(adapter.config, null, 2)}\n`);
}
