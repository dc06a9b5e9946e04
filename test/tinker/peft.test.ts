/**
 * The PEFT conversion of Tinker's raw LoRA (src/tinker/peft) on raw adapters shaped like the
 * service's for the families it trains, against base model folders written here: names become the
 * base model's own parameters under base_model.model., expert stacks split per expert with the
 * right bytes, fused parts merged (block-diagonal B, checked by its product with A), the config
 * completed; and bad input ends in one sentence.
 */
import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AdapterError, parseSafetensors, type Tensor, writeSafetensors } from '../../src/tinker/adapter.js';
import { convertToPeft, readBaseModelDir } from '../../src/tinker/peft/index.js';
import { UserError } from '../../src/util/errors.js';
import {
  ALPHA,
  baseModelDir,
  DENSE,
  denseParams,
  EXPERT_MLP,
  EXPERTS,
  expertPair,
  f32,
  GPT_OSS_CONFIG,
  gptOssMxfp4,
  gptOssParams,
  HIDDEN,
  MXFP4_HIDDEN,
  MXFP4_INTER,
  moeParams,
  pair,
  R,
  rawConfig,
  rawDense,
  rawMoe,
  removeScratch,
  scratch,
  tensor,
} from '../support/raw-lora.js';

afterAll(removeScratch);

const P = 'base_model.model.';
const byName = (ts: readonly Tensor[]) => new Map(ts.map((t) => [t.name, t]));
const bytes = (t: Tensor | undefined) => Buffer.from(t!.data);
/** the module names of the converted tensors, each with both halves */
function modulesOf(ts: readonly Tensor[]): string[] {
  const mods = new Set(ts.map((t) => /^base_model\.model\.(.+)\.lora_[AB]\.weight$/.exec(t.name)![1]!));
  for (const m of mods) {
    expect(ts.some((t) => t.name === `${P}${m}.lora_A.weight`)).toBe(true);
    expect(ts.some((t) => t.name === `${P}${m}.lora_B.weight`)).toBe(true);
  }
  return [...mods].sort();
}
/** rows × cols matrix product of row-major float arrays */
function matmul(a: number[], b: number[], rows: number, inner: number, cols: number): number[] {
  const out = new Array<number>(rows * cols).fill(0);
  for (let i = 0; i < rows; i++)
    for (let k = 0; k < inner; k++)
      for (let j = 0; j < cols; j++) out[i * cols + j]! += a[i * inner + k]! * b[k * cols + j]!;
  return out;
}

const QWEN3 = { architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', hidden_size: HIDDEN };

describe('dense (Qwen3-8B-like, Llama-like)', () => {
  it("maps every module onto the base model's own parameter names, bytes unchanged", () => {
    const raw = rawDense();
    const base = readBaseModelDir(baseModelDir(QWEN3, denseParams()));
    const peft = convertToPeft({
      tensors: raw,
      config: rawConfig(),
      baseModel: base,
      baseModelName: 'Qwen/Qwen3-8B',
    });
    expect(peft.checked).toBe(true);
    expect(peft.family.id).toBe('default');
    const mods = modulesOf(peft.tensors);
    expect(mods).toHaveLength(2 * 7 + 1);
    for (const m of mods) expect(base.parameters.has(`${m}.weight`), m).toBe(true);
    expect(mods).toContain('lm_head');
    const out = byName(peft.tensors);
    const inRaw = byName(raw);
    for (let l = 0; l < 2; l++)
      for (const [m, [o, i]] of Object.entries(DENSE)) {
        const a = out.get(`${P}model.layers.${l}.${m}.lora_A.weight`)!;
        const b = out.get(`${P}model.layers.${l}.${m}.lora_B.weight`)!;
        expect(a.shape).toEqual([R, i]);
        expect(b.shape).toEqual([o, R]);
        expect(bytes(a)).toEqual(bytes(inRaw.get(`${P}model.layers.${l}.${m}.lora_A.weight`)));
        expect(bytes(b)).toEqual(bytes(inRaw.get(`${P}model.layers.${l}.${m}.lora_B.weight`)));
      }
    expect(bytes(out.get(`${P}lm_head.lora_B.weight`))).toEqual(
      bytes(inRaw.get(`${P}model.unembed_tokens.lora_B.weight`)),
    );
    expect(peft.config).toEqual({
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      base_model_name_or_path: 'Qwen/Qwen3-8B',
      r: R,
      lora_alpha: ALPHA,
      target_modules: [
        'down_proj',
        'gate_proj',
        'k_proj',
        'lm_head',
        'o_proj',
        'q_proj',
        'up_proj',
        'v_proj',
      ],
      rank_pattern: {},
      alpha_pattern: {},
      bias: 'none',
      lora_dropout: 0,
      fan_in_fan_out: false,
      inference_mode: true,
      init_lora_weights: true,
      modules_to_save: null,
    });
  });

  it('maps the output head onto embed_tokens for a model that ties them (no lm_head), and keeps BF16 and F16 as bytes', () => {
    for (const dtype of ['BF16', 'F16']) {
      const raw = rawDense(dtype);
      const base = readBaseModelDir(
        baseModelDir({ architectures: ['LlamaForCausalLM'], model_type: 'llama' }, denseParams(true)),
      );
      const peft = convertToPeft({ tensors: raw, config: rawConfig(), baseModel: base });
      const out = byName(peft.tensors);
      expect(out.has(`${P}model.embed_tokens.lora_A.weight`)).toBe(true);
      expect(out.has(`${P}lm_head.lora_A.weight`)).toBe(false);
      expect(new Set(peft.tensors.map((t) => t.dtype))).toEqual(new Set([dtype]));
      expect(bytes(out.get(`${P}model.embed_tokens.lora_A.weight`))).toEqual(
        bytes(byName(raw).get(`${P}model.unembed_tokens.lora_A.weight`)),
      );
    }
  });

  it('converts by the family rules alone without a base model, and says the names were not checked', () => {
    const withoutHead = rawDense().filter((t) => !t.name.includes('unembed_tokens'));
    const peft = convertToPeft({
      tensors: withoutHead,
      config: { ...rawConfig(), base_model_name_or_path: 'meta-llama/Llama-3.1-8B' },
    });
    expect(peft.checked).toBe(false);
    expect(peft.config.base_model_name_or_path).toBe('meta-llama/Llama-3.1-8B');
    expect(modulesOf(peft.tensors)).toContain('model.layers.1.mlp.down_proj');
  });

  it('refuses an output head without the base model: only its config.json tells lm_head from a tied embed_tokens', () => {
    for (const baseModelName of [undefined, 'Qwen/Qwen3-8B', 'meta-llama/Llama-3.2-1B']) {
      const convert = () =>
        convertToPeft({
          tensors: rawDense(),
          config: rawConfig(),
          ...(baseModelName ? { baseModelName } : {}),
        });
      expect(convert).toThrow(UserError);
      expect(convert).toThrow(
        /trains the output head \(Tinker's model\.unembed_tokens\).*only the model's config\.json \(tie_word_embeddings\) tells which: give --base-model-dir/,
      );
    }
  });

  it("maps the output head by the config's tie_word_embeddings, over what the weights hold", () => {
    const head = (config: Record<string, unknown>, tied: boolean) => {
      const base = readBaseModelDir(baseModelDir(config, denseParams(tied)));
      const mods = modulesOf(
        convertToPeft({ tensors: rawDense(), config: rawConfig(), baseModel: base }).tensors,
      );
      return mods.filter((m) => m === 'lm_head' || m.endsWith('embed_tokens'));
    };
    // Qwen3-0.6B-like: tied, though its weights also hold an lm_head
    expect(head({ ...QWEN3, tie_word_embeddings: true }, false)).toEqual(['model.embed_tokens']);
    expect(head({ ...QWEN3, tie_word_embeddings: false }, false)).toEqual(['lm_head']);
    // a vision model says it in text_config
    expect(head({ ...QWEN3, text_config: { tie_word_embeddings: true } }, false)).toEqual([
      'model.embed_tokens',
    ]);
    // no word in the config: the weights tell (no lm_head: tied)
    expect(head(QWEN3, true)).toEqual(['model.embed_tokens']);
    // untied by its config, but no lm_head among the weights: not this model
    expect(() => head({ ...QWEN3, tie_word_embeddings: false }, true)).toThrow(
      /maps to lm_head\.weight, which the base model's weights .* do not hold/,
    );
  });

  it('writes base_model_name_or_path: the name given, else the folder config.json names, else the folder', () => {
    const dir = baseModelDir(QWEN3, denseParams());
    const named = (baseModelName?: string, config: Record<string, unknown> = rawConfig(), folder = dir) =>
      convertToPeft({
        tensors: rawDense(),
        config,
        baseModel: readBaseModelDir(folder),
        ...(baseModelName ? { baseModelName } : {}),
      }).config.base_model_name_or_path;
    expect(named('Qwen/Qwen3-8B')).toBe('Qwen/Qwen3-8B');
    expect(named(undefined, { ...rawConfig(), base_model_name_or_path: 'Qwen/Qwen3-8B-Base' })).toBe(
      'Qwen/Qwen3-8B-Base',
    );
    expect(named()).toBe(resolve(dir));
    expect(
      named(
        undefined,
        rawConfig(),
        baseModelDir({ ...QWEN3, _name_or_path: 'Qwen/Qwen3-4B' }, denseParams()),
      ),
    ).toBe('Qwen/Qwen3-4B');
  });

  it("refuses a base model whose weight is another shape than the adapter's LoRA", () => {
    const params = denseParams();
    params['model.layers.1.mlp.down_proj.weight'] = [8, 16];
    const base = readBaseModelDir(baseModelDir(QWEN3, params));
    const convert = () => convertToPeft({ tensors: rawDense(), config: rawConfig(), baseModel: base });
    expect(convert).toThrow(UserError);
    expect(convert).toThrow(
      /model\.layers\.1\.mlp\.down_proj is a LoRA of a \[8, 12\] weight, but the base model's model\.layers\.1\.mlp\.down_proj\.weight is \[8, 16\]/,
    );
  });

  it('puts a Qwen3.5 model by name under model.language_model., its split in_proj_q/k/v kept apart', () => {
    const raw = [
      ...pair('model.layers.0.linear_attn.in_proj_q', 4, 8),
      ...pair('model.layers.0.linear_attn.in_proj_k', 4, 8),
    ];
    const peft = convertToPeft({ tensors: raw, config: rawConfig(), baseModelName: 'Qwen/Qwen3.5-4B' });
    expect(peft.family.id).toBe('qwen3_5');
    expect(modulesOf(peft.tensors)).toEqual([
      'model.language_model.layers.0.linear_attn.in_proj_k',
      'model.language_model.layers.0.linear_attn.in_proj_q',
    ]);
  });
  it("finds a vision model's text weights under model.language_model., and a compressed-tensors weight_packed as the weight", () => {
    const params: Record<string, number[]> = {};
    for (const [name, shape] of Object.entries(denseParams()))
      params[name.startsWith('model.') ? `model.language_model.${name.slice('model.'.length)}` : name] =
        shape;
    // a packed (quantized) projection: the name counts, its packed shape is not compared
    delete params['model.language_model.layers.0.mlp.down_proj.weight'];
    params['model.language_model.layers.0.mlp.down_proj.weight_packed'] = [8, 3];
    const base = readBaseModelDir(
      baseModelDir({ architectures: ['Qwen3VLForConditionalGeneration'], model_type: 'qwen3_vl' }, params),
    );
    const peft = convertToPeft({ tensors: rawDense(), config: rawConfig(), baseModel: base });
    const mods = modulesOf(peft.tensors);
    expect(mods).toContain('model.language_model.layers.0.mlp.down_proj');
    expect(mods).toContain('lm_head');
    for (const m of mods)
      expect(base.parameters.has(`${m}.weight`) || base.parameters.has(`${m}.weight_packed`), m).toBe(true);
  });
});

describe('MoE (Qwen3-30B-A3B-like, gpt-oss-like)', () => {
  const QWEN3_MOE = { architectures: ['Qwen3MoeForCausalLM'], model_type: 'qwen3_moe', num_experts: EXPERTS };

  it("splits the 3-D expert stacks into one pair per expert, named as the model's experts", () => {
    const raw = rawMoe();
    const base = readBaseModelDir(baseModelDir(QWEN3_MOE, moeParams()));
    const peft = convertToPeft({
      tensors: raw,
      config: rawConfig(),
      baseModel: base,
      baseModelName: 'Qwen/Qwen3-30B-A3B',
    });
    const mods = modulesOf(peft.tensors);
    expect(mods).toHaveLength(2 * (2 + 3 * EXPERTS));
    for (const m of mods) expect(base.parameters.has(`${m}.weight`), m).toBe(true);
    expect(peft.config.target_modules).toEqual(['down_proj', 'gate_proj', 'q_proj', 'up_proj', 'v_proj']);
    const out = byName(peft.tensors);
    const inRaw = byName(raw);
    const slice = (t: Tensor, i: number) => {
      const size = t.data.length / t.shape[0]!;
      return Buffer.from(t.data.subarray(i * size, (i + 1) * size));
    };
    for (let l = 0; l < 2; l++)
      for (const [w, proj] of [
        ['w1', 'gate_proj'],
        ['w3', 'up_proj'],
        ['w2', 'down_proj'],
      ] as const) {
        const rawA = inRaw.get(`${P}model.layers.${l}.mlp.experts.${w}.lora_A.weight`)!;
        const rawB = inRaw.get(`${P}model.layers.${l}.mlp.experts.${w}.lora_B.weight`)!;
        const [o, i] = EXPERT_MLP[proj];
        for (let e = 0; e < EXPERTS; e++) {
          const a = out.get(`${P}model.layers.${l}.mlp.experts.${e}.${proj}.lora_A.weight`)!;
          const b = out.get(`${P}model.layers.${l}.mlp.experts.${e}.${proj}.lora_B.weight`)!;
          expect(a.shape).toEqual([R, i]);
          expect(b.shape).toEqual([o, R]);
          // the shared half (a stack of 1) is every expert's; the stacked one is the expert's own
          expect(bytes(a)).toEqual(slice(rawA, rawA.shape[0] === 1 ? 0 : e));
          expect(bytes(b)).toEqual(slice(rawB, rawB.shape[0] === 1 ? 0 : e));
        }
      }
  });

  it('skips empty expert placeholders and all-zero experts', () => {
    const zero = (t: Tensor): Tensor => ({ ...t, data: new Uint8Array(t.data.length) });
    const [w1A, w1B] = expertPair('model.layers.0.mlp.experts.w1', 6, 8, 'A');
    // expert 1 untouched: its B slice all zero, and A too (A stacked per expert here)
    const a = tensor(w1A!.name, [EXPERTS, R, 8]);
    const aData = new Uint8Array(a.data);
    aData.fill(0, R * 8 * 4, 2 * R * 8 * 4);
    const bData = new Uint8Array(w1B!.data);
    bData.fill(0, 6 * R * 4, 2 * 6 * R * 4);
    const raw = [
      { ...a, data: aData },
      { ...w1B!, data: bData },
      tensor(`${P}model.layers.0.mlp.experts.w3.lora_A.weight`, [0]),
      tensor(`${P}model.layers.0.mlp.experts.w3.lora_B.weight`, [0]),
      ...expertPair('model.layers.0.mlp.experts.w2', 8, 6, 'B').map(zero),
    ];
    const peft = convertToPeft({ tensors: raw, config: rawConfig(), baseModelName: 'Qwen/Qwen3-30B-A3B' });
    expect(modulesOf(peft.tensors)).toEqual([
      'model.layers.0.mlp.experts.0.gate_proj',
      'model.layers.0.mlp.experts.2.gate_proj',
    ]);
    expect(peft.notes.join('\n')).toMatch(
      /skipped model\.layers\.0\.mlp\.experts\.w3 \(an empty placeholder/,
    );
    expect(peft.notes.join('\n')).toMatch(/1 expert slice\(s\) all zero, left out/);
  });

  it('gpt-oss: attn becomes self_attn, the experts split per expert over its fused 3-D weights', () => {
    const base = readBaseModelDir(
      baseModelDir(
        { architectures: ['GptOssForCausalLM'], model_type: 'gpt_oss', num_local_experts: EXPERTS },
        gptOssParams(),
      ),
    );
    const peft = convertToPeft({ tensors: rawMoe('attn'), config: rawConfig(), baseModel: base });
    expect(peft.family.id).toBe('gpt_oss');
    const mods = modulesOf(peft.tensors);
    expect(mods.filter((m) => m.includes('attn'))).toEqual([
      'model.layers.0.self_attn.q_proj',
      'model.layers.0.self_attn.v_proj',
      'model.layers.1.self_attn.q_proj',
      'model.layers.1.self_attn.v_proj',
    ]);
    for (const m of mods.filter((m) => m.includes('attn')))
      expect(base.parameters.has(`${m}.weight`)).toBe(true);
    for (let e = 0; e < EXPERTS; e++)
      for (const proj of ['gate_proj', 'up_proj', 'down_proj'])
        expect(mods).toContain(`model.layers.1.mlp.experts.${e}.${proj}`);
    // the same by its name alone
    const byNameOnly = convertToPeft({
      tensors: rawMoe('attn'),
      config: rawConfig(),
      baseModelName: 'openai/gpt-oss-20b',
    });
    expect(modulesOf(byNameOnly.tensors)).toEqual(mods);
  });

  it("gpt-oss without a base model or its name: told by the adapter's attn, never converted by another family's names", () => {
    const peft = convertToPeft({ tensors: rawMoe('attn'), config: rawConfig() });
    expect(peft.family.id).toBe('gpt_oss');
    expect(peft.checked).toBe(false);
    const mods = modulesOf(peft.tensors);
    expect(mods).toContain('model.layers.0.self_attn.q_proj');
    expect(mods.some((m) => /\.attn\./.test(m))).toBe(false);
    expect(peft.notes.join('\n')).toMatch(
      /the family told by the adapter's own module names \(model\.layers\.0\.attn\./,
    );
    // a name that says another family: refused, not converted by that family's names
    const convert = () =>
      convertToPeft({ tensors: rawMoe('attn'), config: rawConfig(), baseModelName: 'Qwen/Qwen3-30B-A3B' });
    expect(convert).toThrow(UserError);
    expect(convert).toThrow(
      /model\.layers\.0\.attn\.q_proj is named as gpt-oss models name theirs, but the base model Qwen\/Qwen3-30B-A3B is converted by the Qwen3 \/ Llama \(standard names\) rules: give --base-model/,
    );
    // the standard names tell nothing: the name's family stands
    expect(convertToPeft({ tensors: rawMoe(), config: rawConfig() }).family.id).toBe('default');
  });

  it('gpt-oss as released: its MXFP4 expert blocks and scales stand for the experts, their shapes checked', () => {
    const { raw, params } = gptOssMxfp4();
    const base = readBaseModelDir(baseModelDir(GPT_OSS_CONFIG, params));
    const peft = convertToPeft({ tensors: raw, config: rawConfig(), baseModel: base });
    expect(peft.family.id).toBe('gpt_oss');
    expect(peft.checked).toBe(true);
    const mods = modulesOf(peft.tensors);
    expect(mods).toHaveLength(2 * (1 + 3 * EXPERTS));
    for (let e = 0; e < EXPERTS; e++)
      for (const proj of ['gate_proj', 'up_proj', 'down_proj'])
        expect(mods).toContain(`model.layers.0.mlp.experts.${e}.${proj}`);
    const A = byName(peft.tensors).get(`${P}model.layers.1.mlp.experts.2.down_proj.lora_A.weight`)!;
    expect(A.shape).toEqual([R, MXFP4_INTER]);

    // blocks of another expert count, width or height, scales that do not match, blocks alone
    const refused: [Record<string, number[]>, RegExp][] = [
      [
        {
          'model.layers.0.mlp.experts.down_proj_blocks': [4, MXFP4_HIDDEN, 2, 16],
          'model.layers.0.mlp.experts.down_proj_scales': [4, MXFP4_HIDDEN, 2],
        },
        /stacks 3 experts, but the base model's model\.layers\.0\.mlp\.experts\.down_proj_blocks holds 4/,
      ],
      [
        {
          'model.layers.0.mlp.experts.down_proj_blocks': [3, MXFP4_HIDDEN, 4, 16],
          'model.layers.0.mlp.experts.down_proj_scales': [3, MXFP4_HIDDEN, 4],
        },
        /experts\.w2 is a LoRA of \[32, 64\] expert weights \(32 rows in .*\), but the base model's MXFP4 .*down_proj_blocks hold \[32, 128\]/,
      ],
      [
        {
          'model.layers.1.mlp.experts.gate_up_proj_blocks': [3, MXFP4_INTER, 1, 16],
          'model.layers.1.mlp.experts.gate_up_proj_scales': [3, MXFP4_INTER, 1],
        },
        /experts\.w1 is a LoRA of \[64, 32\] expert weights \(128 rows in .*\), but .* hold \[64, 32\]/,
      ],
      [
        { 'model.layers.0.mlp.experts.down_proj_scales': [3, MXFP4_HIDDEN, 3] },
        /down_proj_blocks \[3, 32, 2, 16\] and .*down_proj_scales \[3, 32, 3\] are not MXFP4 blocks and scales/,
      ],
    ];
    const config = { ...GPT_OSS_CONFIG, num_local_experts: undefined };
    for (const [change, message] of refused) {
      const folder = baseModelDir(config, { ...params, ...change });
      expect(() =>
        convertToPeft({ tensors: raw, config: rawConfig(), baseModel: readBaseModelDir(folder) }),
      ).toThrow(message);
    }
    const alone = { ...params };
    delete alone['model.layers.0.mlp.experts.gate_up_proj_scales'];
    expect(() =>
      convertToPeft({
        tensors: raw,
        config: rawConfig(),
        baseModel: readBaseModelDir(baseModelDir(GPT_OSS_CONFIG, alone)),
      }),
    ).toThrow(/maps to model\.layers\.0\.mlp\.experts\.0\.gate_proj\.weight, which the base model's weights/);
  });

  it("checks the expert count under each name configs give it, and against a fused weight's", () => {
    const stacks4 = rawMoe('self_attn', 4);
    const refuse = (config: Record<string, unknown>, params = moeParams(), tensors = stacks4) =>
      expect(() =>
        convertToPeft({
          tensors,
          config: rawConfig(),
          baseModel: readBaseModelDir(baseModelDir(config, params)),
        }),
      ).toThrow(/stacks 4 experts, but the base model's (config\.json .* says 3|.* holds 3)/);
    refuse({ architectures: ['Qwen3MoeForCausalLM'], num_experts: EXPERTS });
    refuse({ architectures: ['MixtralForCausalLM'], num_local_experts: EXPERTS });
    refuse({ architectures: ['DeepseekV3ForCausalLM'], model_type: 'kimi_k2', n_routed_experts: EXPERTS });
    refuse({ architectures: ['Ernie4_5_MoeForCausalLM'], moe_num_experts: EXPERTS });
    refuse({ architectures: ['Qwen3VLMoeForConditionalGeneration'], text_config: { num_experts: EXPERTS } });
    // no count in the config: the fused 3-D weight's first dimension tells it
    const gptOss = { architectures: ['GptOssForCausalLM'], model_type: 'gpt_oss' };
    refuse(gptOss, gptOssParams(), rawMoe('attn', 4));
    // and the per-expert weights' shapes are the LoRA's
    const params = moeParams();
    params['model.layers.1.mlp.experts.2.up_proj.weight'] = [7, 8];
    expect(() =>
      convertToPeft({
        tensors: rawMoe(),
        config: rawConfig(),
        baseModel: readBaseModelDir(
          baseModelDir({ architectures: ['Qwen3MoeForCausalLM'], num_experts: EXPERTS }, params),
        ),
      }),
    ).toThrow(
      /experts\.w3 is a LoRA of a \[6, 8\] weight, but the base model's model\.layers\.1\.mlp\.experts\.2\.up_proj\.weight is \[7, 8\]/,
    );
  });
});

describe('fused projections merged', () => {
  it("Phi-3-like qkv_proj and gate_up_proj: A's stacked, B block-diagonal, rank_pattern and alpha_pattern", () => {
    const params = denseParams();
    for (let l = 0; l < 2; l++) {
      for (const m of ['q_proj', 'k_proj', 'v_proj'])
        delete params[`model.layers.${l}.self_attn.${m}.weight`];
      for (const m of ['gate_proj', 'up_proj']) delete params[`model.layers.${l}.mlp.${m}.weight`];
      params[`model.layers.${l}.self_attn.qkv_proj.weight`] = [16, 8];
      params[`model.layers.${l}.mlp.gate_up_proj.weight`] = [24, 8];
    }
    const raw = rawDense();
    const base = readBaseModelDir(
      baseModelDir({ architectures: ['Phi3ForCausalLM'], model_type: 'phi3' }, params),
    );
    const peft = convertToPeft({ tensors: raw, config: rawConfig(), baseModel: base });
    const mods = modulesOf(peft.tensors);
    for (const m of mods) expect(base.parameters.has(`${m}.weight`), m).toBe(true);
    expect(peft.config.target_modules).toEqual([
      'down_proj',
      'gate_up_proj',
      'lm_head',
      'o_proj',
      'qkv_proj',
    ]);
    expect(peft.config.rank_pattern).toEqual({ qkv_proj: 3 * R, gate_up_proj: 2 * R });
    expect(peft.config.alpha_pattern).toEqual({
      qkv_proj: (ALPHA * 3 * R) / R,
      gate_up_proj: (ALPHA * 2 * R) / R,
    });
    const out = byName(peft.tensors);
    const inRaw = byName(raw);
    for (const [fused, parts, rows] of [
      ['self_attn.qkv_proj', ['self_attn.q_proj', 'self_attn.k_proj', 'self_attn.v_proj'], 16],
      ['mlp.gate_up_proj', ['mlp.gate_proj', 'mlp.up_proj'], 24],
    ] as const) {
      const A = out.get(`${P}model.layers.1.${fused}.lora_A.weight`)!;
      const B = out.get(`${P}model.layers.1.${fused}.lora_B.weight`)!;
      const rank = parts.length * R;
      expect(A.shape).toEqual([rank, HIDDEN]);
      expect(B.shape).toEqual([rows, rank]);
      expect(bytes(A)).toEqual(
        Buffer.concat(parts.map((p) => bytes(inRaw.get(`${P}model.layers.1.${p}.lora_A.weight`)))),
      );
      // B·A is each part's own B·A on its rows: the blocks off the diagonal are zero
      const merged = matmul(f32(B), f32(A), rows, rank, HIDDEN);
      let row = 0;
      for (const p of parts) {
        const a = inRaw.get(`${P}model.layers.1.${p}.lora_A.weight`)!;
        const b = inRaw.get(`${P}model.layers.1.${p}.lora_B.weight`)!;
        const own = matmul(f32(b), f32(a), b.shape[0]!, R, HIDDEN);
        expect(merged.slice(row * HIDDEN, (row + b.shape[0]!) * HIDDEN)).toEqual(own);
        row += b.shape[0]!;
      }
      const bv = f32(B);
      parts.forEach((p, k) => {
        const rowsOf = inRaw.get(`${P}model.layers.1.${p}.lora_B.weight`)!.shape[0]!;
        const start = parts
          .slice(0, k)
          .reduce((s, q) => s + inRaw.get(`${P}model.layers.1.${q}.lora_B.weight`)!.shape[0]!, 0);
        for (let j = 0; j < rows; j++)
          for (let c = 0; c < rank; c++) {
            const inBlock = j >= start && j < start + rowsOf && c >= k * R && c < (k + 1) * R;
            if (!inBlock && c >= k * R && c < (k + 1) * R) expect(bv[j * rank + c]).toBe(0);
          }
      });
    }
  });

  it('Nemotron-like: gate_proj and x_proj merged into the Mamba in_proj (its extra rows zero), experts w1/w2 as up/down, w3 empty', () => {
    const params: Record<string, number[]> = {
      'backbone.embeddings.weight': [16, 8],
      'lm_head.weight': [16, 8],
      'backbone.layers.0.mixer.in_proj.weight': [8 + 8 + 4, 8],
      'backbone.layers.0.mixer.out_proj.weight': [8, 8],
    };
    for (let e = 0; e < EXPERTS; e++) {
      params[`backbone.layers.1.mixer.experts.${e}.up_proj.weight`] = [6, 8];
      params[`backbone.layers.1.mixer.experts.${e}.down_proj.weight`] = [8, 6];
    }
    const raw = [
      ...pair('model.layers.0.mixer.gate_proj', 8, 8),
      ...pair('model.layers.0.mixer.x_proj', 8, 8),
      ...pair('model.layers.0.mixer.out_proj', 8, 8),
      ...expertPair('model.layers.1.mixer.experts.w1', 6, 8, 'A'),
      ...expertPair('model.layers.1.mixer.experts.w2', 8, 6, 'B'),
      tensor(`${P}model.layers.1.mixer.experts.w3.lora_A.weight`, [0]),
      tensor(`${P}model.layers.1.mixer.experts.w3.lora_B.weight`, [0]),
    ];
    const config = {
      architectures: ['NemotronHForCausalLM'],
      model_type: 'nemotron_h',
      n_routed_experts: EXPERTS,
    };
    const base = readBaseModelDir(baseModelDir(config, params));
    const peft = convertToPeft({ tensors: raw, config: rawConfig(), baseModel: base });
    expect(peft.family.id).toBe('nemotron');
    const mods = modulesOf(peft.tensors);
    // written under model. (vLLM renames backbone. on load), found in the checkpoint under backbone.
    for (const m of mods)
      expect(base.parameters.has(`backbone.${m.slice('model.'.length)}.weight`), m).toBe(true);
    expect(mods).toContain('model.layers.0.mixer.in_proj');
    expect(mods.filter((m) => m.includes('experts'))).toHaveLength(2 * EXPERTS);
    expect(peft.config.rank_pattern).toEqual({ in_proj: 2 * R });
    expect(peft.config.alpha_pattern).toEqual({ in_proj: 2 * ALPHA });
    const B = byName(peft.tensors).get(`${P}model.layers.0.mixer.in_proj.lora_B.weight`)!;
    expect(B.shape).toEqual([20, 2 * R]);
    const bv = f32(B);
    const gateB = f32(byName(raw).get(`${P}model.layers.0.mixer.gate_proj.lora_B.weight`)!);
    const xB = f32(byName(raw).get(`${P}model.layers.0.mixer.x_proj.lora_B.weight`)!);
    for (let j = 0; j < 20; j++)
      for (let c = 0; c < 2 * R; c++) {
        const want =
          j < 8 && c < R ? gateB[j * R + c] : j >= 8 && j < 16 && c >= R ? xB[(j - 8) * R + c - R] : 0;
        expect(bv[j * 2 * R + c], `${j},${c}`).toBe(want);
      }
    // without the model the in_proj's size is unknown: the user is told what to give
    expect(() =>
      convertToPeft({
        tensors: raw,
        config: rawConfig(),
        baseModelName: 'nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B',
      }),
    ).toThrow(
      /keep gate_proj and x_proj in one in_proj weight whose size only the model tells: give --base-model-dir/,
    );
  });
});

describe('bad input: one sentence', () => {
  const QWEN3_MOE = { architectures: ['Qwen3MoeForCausalLM'], model_type: 'qwen3_moe', num_experts: EXPERTS };

  it('refuses halves of different ranks, or of another rank than the config', () => {
    const [a] = pair('model.layers.0.self_attn.q_proj', 8, 8);
    const b = tensor(`${P}model.layers.0.self_attn.q_proj.lora_B.weight`, [8, R + 1]);
    expect(() => convertToPeft({ tensors: [a!, b], config: rawConfig() })).toThrow(AdapterError);
    expect(() => convertToPeft({ tensors: [a!, b], config: rawConfig() })).toThrow(
      /not of rank 2 \(adapter_config\.json's "r"\)/,
    );
    expect(() => convertToPeft({ tensors: [a!], config: rawConfig() })).toThrow(/lora_A without its lora_B/);
    expect(() => convertToPeft({ tensors: pair('x.y', 4, 4), config: { r: 0, lora_alpha: 1 } })).toThrow(
      /"r" \(the LoRA rank\)/,
    );
  });

  it("refuses an expert stack whose count is not the model's", () => {
    const base = readBaseModelDir(baseModelDir(QWEN3_MOE, moeParams()));
    const convert = () =>
      convertToPeft({ tensors: rawMoe('self_attn', 4), config: rawConfig(), baseModel: base });
    expect(convert).toThrow(AdapterError);
    expect(convert).toThrow(
      /stacks 4 experts, but the base model's config\.json \(.*\) says 3: the adapter was not trained on this model/,
    );
    const [a, b] = expertPair('model.layers.0.mlp.experts.w1', 6, 8, 'A');
    expect(() =>
      convertToPeft({
        tensors: [{ ...a!, shape: [2, R, 8], data: new Uint8Array(2 * R * 8 * 4).fill(1) }, b!],
        config: rawConfig(),
      }),
    ).toThrow(/stacks 2 experts in lora_A and 3 in lora_B/);
  });

  it('refuses names the base model does not hold, and families it does not convert', () => {
    const base = readBaseModelDir(baseModelDir(QWEN3, denseParams()));
    const convert = () => convertToPeft({ tensors: rawMoe(), config: rawConfig(), baseModel: base });
    expect(convert).toThrow(UserError);
    expect(convert).toThrow(
      /maps to model\.layers\.0\.mlp\.experts\.0\.gate_proj\.weight, which the base model's weights \(.*\) do not hold: give --base-model-dir the model/,
    );
    expect(() =>
      convertToPeft({ tensors: rawDense(), config: rawConfig(), baseModelName: 'deepseek-ai/DeepSeek-V3.1' }),
    ).toThrow(/DeepSeek V3 \/ V3\.1 LoRAs are not served by vLLM or SGLang as adapters/);
    expect(() => convertToPeft({ tensors: [tensor('model.norm.weight', [8])], config: rawConfig() })).toThrow(
      /not a lora_A or lora_B weight/,
    );
  });

  it('refuses a safetensors file with a dtype it does not know, and a base folder without its files', () => {
    const file = writeSafetensors(pair('model.layers.0.self_attn.q_proj', 8, 8));
    const text = file.toString('latin1').replace('"F32"', '"Q40"');
    expect(() => parseSafetensors(Buffer.from(text, 'latin1'), 'raw/adapter_model.safetensors')).toThrow(
      /tensor .* has dtype "Q40", which is not a safetensors dtype/,
    );
    expect(() => readBaseModelDir(scratch('empty'))).toThrow(
      /holds no config\.json; give the base model's folder/,
    );
  });

  it('round-trips through the writer: what it writes parses back the same', () => {
    const ts = rawDense('BF16');
    const back = parseSafetensors(writeSafetensors(ts, { format: 'pt' }), 'x');
    expect(back.metadata).toEqual({ format: 'pt' });
    expect(back.tensors.map((t) => [t.name, t.dtype, t.shape, Buffer.from(t.data)])).toEqual(
      ts.map((t) => [t.name, t.dtype, t.shape, Buffer.from(t.data)]),
    );
  });
});
