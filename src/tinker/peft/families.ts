/**
 * How Tinker's names for a LoRA's modules differ from a model family's own (its Hugging Face
 * checkpoint, which vLLM and PEFT load): one profile per family, chosen from the base model's
 * `config.json` when the user gives the model's folder, else from the base model's name. The rules
 * follow the Tinker cookbook's merge profiles (its `weights/_merge_*.py`), rewritten here.
 */
import { UserError } from '../../util/errors.js';

export type FamilyId = 'default' | 'gpt_oss' | 'nemotron' | 'qwen3_5';

/** a module the model keeps as one weight where Tinker trains its parts as separate LoRAs */
export interface FusedProjection {
  readonly target: string;
  /** in the order their rows sit in the fused weight */
  readonly components: readonly string[];
}

export interface FamilyProfile {
  readonly id: FamilyId;
  /** the family's name in what the user reads */
  readonly label: string;
  /** whole-segment renames from Tinker's module path to the model's (gpt-oss: attn -> self_attn) */
  readonly segmentRenames: Readonly<Record<string, string>>;
  /**
   * Tinker's expert projections (w1, w2, w3, stacked 3-D) to the model's per-expert module names;
   * one missing here may only come as an empty placeholder (Nemotron has no gate projection)
   */
  readonly expertProjections: Readonly<Record<string, string>>;
  /** fused modules: merged only where the base model's weights hold the target and not the parts */
  readonly fused: readonly FusedProjection[];
  /**
   * the family's checkpoints always hold the fused targets (Nemotron's Mamba in_proj), whose
   * extra rows only the base model's shapes tell: merging needs --base-model-dir
   */
  readonly fusedAlways: boolean;
  /**
   * the checkpoint's root where Tinker (and vLLM, which renames on load) says `model.`: the names
   * are checked against the checkpoint under this root but written under `model.`
   */
  readonly checkpointRoot?: string;
  /** all the family's models keep their text weights under `model.language_model.` (vision models) */
  readonly languageModelPrefix: boolean;
}

/** Tinker's w1/w2/w3 as the gated MLP of most MoE models names its experts' projections */
const GATED_EXPERTS = { w1: 'gate_proj', w2: 'down_proj', w3: 'up_proj' } as const;

/**
 * Models that keep q/k/v or gate/up as one weight (`qkv_proj`, `gate_up_proj`, as Phi-3 does);
 * merged only where the base model's own weights show it, so Qwen3 and Llama are not touched
 */
const DENSE_FUSED: readonly FusedProjection[] = [
  { target: 'qkv_proj', components: ['q_proj', 'k_proj', 'v_proj'] },
  { target: 'gate_up_proj', components: ['gate_proj', 'up_proj'] },
];

export const FAMILIES: Readonly<Record<FamilyId, FamilyProfile>> = {
  default: {
    id: 'default',
    label: 'Qwen3 / Llama (standard names)',
    segmentRenames: {},
    expertProjections: GATED_EXPERTS,
    fused: DENSE_FUSED,
    fusedAlways: false,
    languageModelPrefix: false,
  },
  gpt_oss: {
    id: 'gpt_oss',
    label: 'gpt-oss',
    // Tinker says layers.N.attn where the checkpoint says layers.N.self_attn
    segmentRenames: { attn: 'self_attn' },
    // the checkpoint fuses its experts' gate and up (interleaved) in one 3-D weight, but vLLM's MoE
    // LoRA takes them per expert and per projection, so they stay apart here
    expertProjections: GATED_EXPERTS,
    fused: [],
    fusedAlways: false,
    languageModelPrefix: false,
  },
  nemotron: {
    id: 'nemotron',
    label: 'Nemotron-H (Nemotron 3)',
    segmentRenames: {},
    // the experts have an up and a down projection only; Tinker's w3 comes empty
    expertProjections: { w1: 'up_proj', w2: 'down_proj' },
    // the Mamba mixer's in_proj holds gate, x, and then B, C and dt rows Tinker does not train
    fused: [{ target: 'in_proj', components: ['gate_proj', 'x_proj'] }],
    fusedAlways: true,
    checkpointRoot: 'backbone',
    languageModelPrefix: false,
  },
  qwen3_5: {
    id: 'qwen3_5',
    label: 'Qwen3.5 / Qwen3.6',
    segmentRenames: {},
    expertProjections: GATED_EXPERTS,
    // in_proj_q/k/v stay separate LoRAs over the fused in_proj_qkv, as the cookbook's adapters do
    fused: [],
    fusedAlways: false,
    languageModelPrefix: true,
  },
};

/** families Tinker trains whose LoRA is not converted here, and why */
const UNSUPPORTED: readonly { test: (type: string, name: string) => boolean; why: string }[] = [
  {
    test: (type, name) => type === 'deepseek_v3' || /deepseek-v3/i.test(name),
    why: 'DeepSeek V3 / V3.1 LoRAs are not served by vLLM or SGLang as adapters (merge the LoRA into the model instead)',
  },
  {
    test: (type, name) => type === 'kimi_k25' || /kimi-k2\.5/i.test(name),
    why: 'Kimi K2.5 keeps its text weights under language_model.model., which this conversion does not map yet',
  },
];

function architectures(config: Readonly<Record<string, unknown>>): string[] {
  const a = config.architectures;
  return Array.isArray(a) ? a.filter((x): x is string => typeof x === 'string') : [];
}

/**
 * The family of a base model: from its config.json (`architectures`, `model_type`) when given,
 * else from its name (a Hugging Face id such as Qwen/Qwen3-8B). A family this conversion does not
 * handle is the user's to know: a UserError saying so and what to do instead.
 */
export function detectFamily(
  config: Readonly<Record<string, unknown>> | undefined,
  name: string | undefined,
): FamilyProfile {
  const type = typeof config?.model_type === 'string' ? config.model_type : '';
  const n = name ?? '';
  for (const u of UNSUPPORTED)
    if (u.test(type, config ? '' : n))
      throw new UserError(`${u.why}; keep the raw adapter (seal checkpoints download --raw).`);
  if (config) {
    const archs = architectures(config);
    if (archs.some((a) => a.includes('GptOss'))) return FAMILIES.gpt_oss;
    if (archs.some((a) => a.includes('NemotronH'))) return FAMILIES.nemotron;
    if (type === 'qwen3_5' || type === 'qwen3_5_moe') return FAMILIES.qwen3_5;
    return FAMILIES.default;
  }
  if (/gpt-oss/i.test(n)) return FAMILIES.gpt_oss;
  if (/nemotron/i.test(n)) return FAMILIES.nemotron;
  if (/qwen3\.[56]/i.test(n)) return FAMILIES.qwen3_5;
  return FAMILIES.default;
}

/**
 * Tinker's module names that only one family has, right under a layer: gpt-oss's `attn` (where the
 * others say `self_attn`), Nemotron-H's `mixer`, Qwen3.5's `linear_attn`. Without a base model these
 * tell the family; the standard names (`self_attn`, `mlp`) tell nothing.
 */
const FAMILY_SEGMENTS: Readonly<Record<string, FamilyProfile>> = {
  attn: FAMILIES.gpt_oss,
  mixer: FAMILIES.nemotron,
  linear_attn: FAMILIES.qwen3_5,
};

/** the family a raw adapter's own module paths show, with the path that shows it */
export function familyOfPaths(
  paths: readonly string[],
): { family: FamilyProfile; evidence: string } | undefined {
  for (const path of paths) {
    const segment = /^model\.layers\.\d+\.([a-z_]+)\./.exec(path)?.[1];
    const family = segment === undefined ? undefined : FAMILY_SEGMENTS[segment];
    if (family) return { family, evidence: path };
  }
  return undefined;
}

/** whether the model ties its output head to the input embedding, as its config.json says (a vision model's in text_config) */
export function tiesEmbeddings(config: Readonly<Record<string, unknown>>): boolean | undefined {
  for (const c of [config, config.text_config as Record<string, unknown> | undefined])
    if (c && typeof c === 'object' && typeof c.tie_word_embeddings === 'boolean')
      return c.tie_word_embeddings;
  return undefined;
}

/** Vision-language models of the default family keep their text weights under model.language_model. */
export function nameSaysLanguageModelPrefix(name: string | undefined): boolean {
  return /qwen3-vl/i.test(name ?? '');
}

/** how many routed experts a config says the model has (a vision model's in text_config) */
export function expertCount(config: Readonly<Record<string, unknown>>): number | undefined {
  for (const c of [config, config.text_config as Record<string, unknown> | undefined])
    if (c && typeof c === 'object')
      for (const key of ['num_experts', 'num_local_experts', 'n_routed_experts', 'moe_num_experts']) {
        const v = c[key];
        if (Number.isSafeInteger(v) && (v as number) > 0) return v as number;
      }
  return undefined;
}
