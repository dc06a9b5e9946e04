/**
 * Tinker's raw LoRA as its checkpoint archive holds it, for tests of the PEFT conversion: tensors
 * named `base_model.model.<Tinker's module>.lora_A/B.weight`, expert LoRAs as 3-D stacks (one half
 * shared across experts as a stack of 1, the way the service writes them), a config of `r` and
 * `lora_alpha` only; and base model folders (config.json, the index, one shard) of tiny models
 * shaped like the families Tinker trains: hidden 8, 2 layers, 3 experts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SAFETENSORS_DTYPES, type Tensor, writeSafetensors } from '../../src/tinker/adapter.js';

export const R = 2;
export const ALPHA = 32;
export const HIDDEN = 8;
export const EXPERTS = 3;

let seed = 7;
/** values that are never all zero, different from tensor to tensor */
function values(n: number): number[] {
  return Array.from({ length: n }, () => {
    seed = (seed * 48271) % 2147483647;
    return ((seed % 997) + 1) / 1000;
  });
}

/** a tensor of the given dtype; F32 holds `vals` (or fresh values), others bytes that are not zero */
export function tensor(
  name: string,
  shape: readonly number[],
  dtype = 'F32',
  vals?: readonly number[],
): Tensor {
  const n = shape.reduce((a, d) => a * d, 1);
  if (dtype === 'F32')
    return { name, dtype, shape, data: new Uint8Array(new Float32Array(vals ?? values(n)).buffer) };
  const width = SAFETENSORS_DTYPES[dtype]!;
  const data = new Uint8Array(n * width);
  for (let i = 0; i < data.length; i++) data[i] = ((i * 37 + seed++) % 251) + 1;
  return { name, dtype, shape, data };
}

export const f32 = (t: { data: Uint8Array }) =>
  Array.from(new Float32Array(t.data.buffer.slice(t.data.byteOffset, t.data.byteOffset + t.data.length)));

const P = 'base_model.model.';
/** a 2-D pair of Tinker's for the module at `path` of a [out, inp] weight */
export function pair(path: string, out: number, inp: number, dtype = 'F32', r = R): Tensor[] {
  return [
    tensor(`${P}${path}.lora_A.weight`, [r, inp], dtype),
    tensor(`${P}${path}.lora_B.weight`, [out, r], dtype),
  ];
}

/** Tinker's 3-D expert pair: which half is shared (a stack of 1) as the service writes it */
export function expertPair(
  path: string,
  out: number,
  inp: number,
  shared: 'A' | 'B',
  experts = EXPERTS,
): Tensor[] {
  return [
    tensor(`${P}${path}.lora_A.weight`, [shared === 'A' ? 1 : experts, R, inp]),
    tensor(`${P}${path}.lora_B.weight`, [shared === 'B' ? 1 : experts, out, R]),
  ];
}

export const rawConfig = () => ({ lora_alpha: ALPHA, r: R });

/** the dense layers of a Qwen3-8B-like model: [out, in] of each projection */
export const DENSE = {
  'self_attn.q_proj': [8, 8],
  'self_attn.k_proj': [4, 8],
  'self_attn.v_proj': [4, 8],
  'self_attn.o_proj': [8, 8],
  'mlp.gate_proj': [12, 8],
  'mlp.up_proj': [12, 8],
  'mlp.down_proj': [8, 12],
} as const satisfies Record<string, readonly [number, number]>;
export const VOCAB = 16;

/** a Qwen3-8B-like raw adapter: every projection of 2 layers, and the output head (Tinker's unembed_tokens) */
export function rawDense(dtype = 'F32'): Tensor[] {
  const out: Tensor[] = [];
  for (let l = 0; l < 2; l++)
    for (const [m, [o, i]] of Object.entries(DENSE)) out.push(...pair(`model.layers.${l}.${m}`, o, i, dtype));
  out.push(...pair('model.unembed_tokens', VOCAB, HIDDEN, dtype));
  return out;
}

/** a Qwen3-8B-like model's weights; `tied` leaves out lm_head (Llama-3.2-1B-like) */
export function denseParams(tied = false): Record<string, number[]> {
  const p: Record<string, number[]> = {
    'model.embed_tokens.weight': [VOCAB, HIDDEN],
    'model.norm.weight': [HIDDEN],
  };
  if (!tied) p['lm_head.weight'] = [VOCAB, HIDDEN];
  for (let l = 0; l < 2; l++) {
    for (const [m, shape] of Object.entries(DENSE)) p[`model.layers.${l}.${m}.weight`] = [...shape];
    p[`model.layers.${l}.input_layernorm.weight`] = [HIDDEN];
  }
  return p;
}

/** the expert MLP: [out, in] of each expert's projections */
export const EXPERT_MLP = { gate_proj: [6, 8], up_proj: [6, 8], down_proj: [8, 6] } as const;

/** a Qwen3-30B-A3B-like raw adapter: attention q/v and the experts' w1/w3 (A shared) and w2 (B shared) */
export function rawMoe(attn = 'self_attn', experts = EXPERTS): Tensor[] {
  const out: Tensor[] = [];
  for (let l = 0; l < 2; l++) {
    out.push(
      ...pair(`model.layers.${l}.${attn}.q_proj`, 8, 8),
      ...pair(`model.layers.${l}.${attn}.v_proj`, 4, 8),
    );
    const e = `model.layers.${l}.mlp.experts`;
    out.push(
      ...expertPair(`${e}.w1`, 6, 8, 'A', experts),
      ...expertPair(`${e}.w3`, 6, 8, 'A', experts),
      ...expertPair(`${e}.w2`, 8, 6, 'B', experts),
    );
  }
  return out;
}

export function moeParams(): Record<string, number[]> {
  const p: Record<string, number[]> = {
    'model.embed_tokens.weight': [VOCAB, HIDDEN],
    'lm_head.weight': [VOCAB, HIDDEN],
  };
  for (let l = 0; l < 2; l++) {
    p[`model.layers.${l}.self_attn.q_proj.weight`] = [8, 8];
    p[`model.layers.${l}.self_attn.v_proj.weight`] = [4, 8];
    p[`model.layers.${l}.mlp.gate.weight`] = [EXPERTS, HIDDEN];
    for (let e = 0; e < EXPERTS; e++)
      for (const [m, shape] of Object.entries(EXPERT_MLP))
        p[`model.layers.${l}.mlp.experts.${e}.${m}.weight`] = [...shape];
  }
  return p;
}

/** gpt-oss keeps its experts fused in 3-D weights: gate_up_proj [E, hidden, 2·inter], down_proj [E, inter, hidden] */
export function gptOssParams(): Record<string, number[]> {
  const p: Record<string, number[]> = {
    'model.embed_tokens.weight': [VOCAB, HIDDEN],
    'lm_head.weight': [VOCAB, HIDDEN],
  };
  for (let l = 0; l < 2; l++) {
    p[`model.layers.${l}.self_attn.q_proj.weight`] = [8, 8];
    p[`model.layers.${l}.self_attn.v_proj.weight`] = [4, 8];
    p[`model.layers.${l}.self_attn.sinks`] = [2];
    p[`model.layers.${l}.mlp.router.weight`] = [EXPERTS, HIDDEN];
    p[`model.layers.${l}.mlp.experts.gate_up_proj`] = [EXPERTS, HIDDEN, 12];
    p[`model.layers.${l}.mlp.experts.down_proj`] = [EXPERTS, 6, HIDDEN];
  }
  return p;
}

/**
 * gpt-oss as released: its experts in MXFP4 (`_blocks` [E, rows, in/32, 16] bytes, `_scales`
 * [E, rows, in/32]); the attention stays a plain weight. A block holds 32 inputs, so this model is
 * wider than the others: hidden 32, the experts' intermediate 64. `raw` is Tinker's adapter of it.
 */
export const MXFP4_HIDDEN = 32;
export const MXFP4_INTER = 64;
export function gptOssMxfp4(experts = EXPERTS): { raw: Tensor[]; params: Record<string, number[]> } {
  const [h, i] = [MXFP4_HIDDEN, MXFP4_INTER];
  const raw: Tensor[] = [];
  const params: Record<string, number[]> = {
    'model.embed_tokens.weight': [VOCAB, h],
    'lm_head.weight': [VOCAB, h],
  };
  for (let l = 0; l < 2; l++) {
    const e = `model.layers.${l}.mlp.experts`;
    raw.push(
      ...pair(`model.layers.${l}.attn.q_proj`, h, h),
      ...expertPair(`${e}.w1`, i, h, 'A', experts),
      ...expertPair(`${e}.w3`, i, h, 'A', experts),
      ...expertPair(`${e}.w2`, h, i, 'B', experts),
    );
    params[`model.layers.${l}.self_attn.q_proj.weight`] = [h, h];
    params[`model.layers.${l}.self_attn.sinks`] = [2];
    params[`model.layers.${l}.mlp.router.weight`] = [EXPERTS, h];
    params[`${e}.gate_up_proj_blocks`] = [EXPERTS, 2 * i, h / 32, 16];
    params[`${e}.gate_up_proj_scales`] = [EXPERTS, 2 * i, h / 32];
    params[`${e}.gate_up_proj_bias`] = [EXPERTS, 2 * i];
    params[`${e}.down_proj_blocks`] = [EXPERTS, h, i / 32, 16];
    params[`${e}.down_proj_scales`] = [EXPERTS, h, i / 32];
    params[`${e}.down_proj_bias`] = [EXPERTS, h];
  }
  return { raw, params };
}

export const GPT_OSS_CONFIG = {
  architectures: ['GptOssForCausalLM'],
  model_type: 'gpt_oss',
  num_local_experts: EXPERTS,
  tie_word_embeddings: false,
  quantization_config: { quant_method: 'mxfp4' },
};

let dirs = 0;
const root = mkdtempSync(join(tmpdir(), 'seal-peft-'));
/** the folders scratch() and baseModelDir() made, removed (a test file's afterAll) */
export const removeScratch = () => rmSync(root, { recursive: true, force: true });
export const scratch = (name: string) => {
  const d = join(root, `${name}-${dirs++}`);
  mkdirSync(d, { recursive: true });
  return d;
};

/**
 * A base model folder: config.json, model.safetensors.index.json and its one shard (zeros), as a
 * Hugging Face download holds them; `shard: false` writes the index alone
 */
export function baseModelDir(
  config: Record<string, unknown>,
  params: Record<string, number[]>,
  shard = true,
): string {
  const dir = scratch('base');
  const file = 'model-00001-of-00001.safetensors';
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  writeFileSync(
    join(dir, 'model.safetensors.index.json'),
    JSON.stringify({
      metadata: {},
      weight_map: Object.fromEntries(Object.keys(params).map((n) => [n, file])),
    }),
  );
  if (shard)
    writeFileSync(
      join(dir, file),
      writeSafetensors(
        Object.entries(params).map(([name, shape]) => ({
          name,
          dtype: 'BF16',
          shape,
          data: new Uint8Array(shape.reduce((a, d) => a * d, 1) * 2),
        })),
      ),
    );
  return dir;
}

/** adapter_config.json and adapter_model.safetensors of a raw adapter, as archive members */
export function rawAdapterFiles(tensors: readonly Tensor[], config: Record<string, unknown> = rawConfig()) {
  return [
    { path: 'adapter_config.json', data: Buffer.from(JSON.stringify(config)) },
    { path: 'adapter_model.safetensors', data: writeSafetensors(tensors) },
  ];
}
