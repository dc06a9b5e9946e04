/**
 * `seal checkpoints convert` as a user runs it: the real binary on raw adapter folders shaped like
 * the service's archives (test/support/raw-lora.ts), with and without the base model's folder.
 * gpt-oss's adapter is told by its own names without a base model and refused under another
 * family's name; the released gpt-oss (MXFP4 experts) is a base model it checks against; the
 * output head needs the model's config.json; a base model folder is used (names checked, a
 * mismatch refused, its path the base_model_name_or_path); `--max-lora-rank` is one vLLM takes.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSafetensors, type Tensor } from '../../src/tinker/adapter.js';
import { buildDist, seal } from '../support/cli.js';
import {
  baseModelDir,
  DENSE,
  denseParams,
  GPT_OSS_CONFIG,
  gptOssMxfp4,
  HIDDEN,
  pair,
  rawAdapterFiles,
  rawConfig,
  rawDense,
  rawMoe,
  removeScratch,
  scratch,
  VOCAB,
} from '../support/raw-lora.js';

afterAll(removeScratch);

const QWEN3 = { architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', hidden_size: HIDDEN };

/** a raw adapter folder as a download keeps it in raw/ */
function rawDir(tensors: readonly Tensor[], config: Record<string, unknown> = rawConfig()): string {
  const dir = scratch('raw');
  for (const f of rawAdapterFiles(tensors, config)) writeFileSync(join(dir, f.path), f.data);
  return dir;
}

/** `seal checkpoints convert RAW --out OUT ...`: the result and where it wrote */
async function convert(raw: string, ...flags: string[]) {
  const out = join(scratch('box'), 'adapter');
  const r = await seal(['checkpoints', 'convert', raw, '--out', out, ...flags]);
  return { ...r, out };
}

const tensorNames = (out: string) =>
  parseSafetensors(readFileSync(join(out, 'adapter_model.safetensors')), 'x').tensors.map((t) => t.name);
const adapterConfig = (out: string) => JSON.parse(readFileSync(join(out, 'adapter_config.json'), 'utf8'));

/** refused as the user's to fix (exit 2) in one sentence, nothing written */
function expectUsage(r: Awaited<ReturnType<typeof convert>>, message: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(existsSync(r.out)).toBe(false);
}

describe('seal checkpoints convert', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    await buildDist();
  }, 300_000);

  it("converts gpt-oss's adapter by its own names without a base model; refuses it under another family's name", async () => {
    const raw = rawDir(rawMoe('attn'));
    const alone = await convert(raw);
    expect(alone.code, alone.stderr).toBe(0);
    expect(alone.stdout).toMatch(/converted by the gpt-oss rules alone; names NOT checked/);
    expect(alone.stdout).toMatch(
      /the family told by the adapter's own module names \(model\.layers\.0\.attn\./,
    );
    const names = tensorNames(alone.out);
    expect(names).toContain('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight');
    expect(names.filter((n) => n.includes('.attn.'))).toEqual([]);

    expectUsage(
      await convert(raw, '--base-model', 'Qwen/Qwen3-30B-A3B'),
      /named as gpt-oss models name theirs, but the base model Qwen\/Qwen3-30B-A3B is converted by the Qwen3 \/ Llama \(standard names\) rules: give --base-model the model it was trained on, or --base-model-dir its folder/,
    );
  });

  it('checks gpt-oss as released (MXFP4 experts), and names the folder as the base model', async () => {
    const { raw, params } = gptOssMxfp4();
    const model = baseModelDir(GPT_OSS_CONFIG, params);
    const r = await convert(rawDir(raw), '--base-model-dir', model);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/converted by the gpt-oss rules; names checked against the weights of /);
    expect(r.stdout).toContain(`base model: ${resolve(model)}`);
    expect(r.stdout).toContain(`vllm serve ${resolve(model)} --enable-lora`);
    expect(adapterConfig(r.out).base_model_name_or_path).toBe(resolve(model));
    expect(tensorNames(r.out)).toContain(
      'base_model.model.model.layers.1.mlp.experts.2.up_proj.lora_B.weight',
    );

    // the name given wins over the folder
    const named = await convert(rawDir(raw), '--base-model-dir', model, '--base-model', 'openai/gpt-oss-20b');
    expect(named.code, named.stderr).toBe(0);
    expect(adapterConfig(named.out).base_model_name_or_path).toBe('openai/gpt-oss-20b');
  });

  it("maps the output head only by the model's config.json: refused without the folder, embed_tokens where it ties them", async () => {
    const raw = rawDir(rawDense());
    expectUsage(
      await convert(raw, '--base-model', 'Qwen/Qwen3-0.6B'),
      /trains the output head .* only the model's config\.json \(tie_word_embeddings\) tells which: give --base-model-dir the base model's folder/,
    );
    const tied = baseModelDir({ ...QWEN3, tie_word_embeddings: true }, denseParams());
    const r = await convert(raw, '--base-model-dir', tied, '--base-model', 'Qwen/Qwen3-0.6B');
    expect(r.code, r.stderr).toBe(0);
    const names = tensorNames(r.out);
    expect(names).toContain('base_model.model.model.embed_tokens.lora_A.weight');
    expect(names.filter((n) => n.includes('lm_head'))).toEqual([]);
  });

  it('checks the names against the base model folder it is given, and refuses one that does not hold them', async () => {
    const dense = baseModelDir(QWEN3, denseParams());
    const ok = await convert(rawDir(rawDense()), '--base-model-dir', dense);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/names checked against the weights of /);
    // an MoE adapter against a dense model: its experts are not there
    expectUsage(
      await convert(rawDir(rawMoe()), '--base-model-dir', dense),
      /maps to model\.layers\.0\.mlp\.experts\.0\.gate_proj\.weight, which the base model's weights .* do not hold/,
    );
  });

  it('prints a --max-lora-rank vLLM takes: the largest rank (a merged one) rounded up, none above 512', async () => {
    // Phi-3-like: q/k/v and gate/up merged, rank 3·4 = 12 for qkv_proj
    const r4: Tensor[] = [];
    for (let l = 0; l < 2; l++)
      for (const [m, [o, i]] of Object.entries(DENSE))
        r4.push(...pair(`model.layers.${l}.${m}`, o, i, 'F32', 4));
    r4.push(...pair('model.unembed_tokens', VOCAB, HIDDEN, 'F32', 4));
    const params = denseParams();
    for (let l = 0; l < 2; l++) {
      for (const m of ['q_proj', 'k_proj', 'v_proj'])
        delete params[`model.layers.${l}.self_attn.${m}.weight`];
      for (const m of ['gate_proj', 'up_proj']) delete params[`model.layers.${l}.mlp.${m}.weight`];
      params[`model.layers.${l}.self_attn.qkv_proj.weight`] = [16, 8];
      params[`model.layers.${l}.mlp.gate_up_proj.weight`] = [24, 8];
    }
    const phi3 = baseModelDir({ architectures: ['Phi3ForCausalLM'], model_type: 'phi3' }, params);
    const merged = await convert(rawDir(r4, { r: 4, lora_alpha: 8 }), '--base-model-dir', phi3);
    expect(merged.code, merged.stderr).toBe(0);
    expect(merged.stdout).toMatch(/LoRA rank 4, alpha 8/);
    expect(merged.stdout).toContain('--max-lora-rank 16 ');

    const ranked = async (r: number) => {
      const c = await convert(
        rawDir(pair('model.layers.0.self_attn.q_proj', 8, 8, 'F32', r), { r, lora_alpha: 32 }),
        '--base-model',
        'Qwen/Qwen3-8B',
      );
      expect(c.code, c.stderr).toBe(0);
      return c.stdout;
    };
    expect(await ranked(1)).toContain('--max-lora-rank 1 ');
    expect(await ranked(8)).toContain('--max-lora-rank 8 ');
    expect(await ranked(33)).toContain('--max-lora-rank 64 ');
    expect(await ranked(300)).toContain('--max-lora-rank 320 ');
    const above = await ranked(600);
    expect(above).not.toContain('vllm serve');
    expect(above).toContain("(not vLLM: it serves LoRA ranks up to 512, and this adapter's largest is 600)");
    expect(above).toContain('python -m sglang.launch_server');
  });
});
