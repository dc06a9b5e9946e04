/**
 * Tinker's raw LoRA (as its checkpoint archive holds it) made into a PEFT adapter that vLLM
 * (`--lora-modules`), SGLang (`--lora-paths`) and PEFT load: module names mapped onto the base
 * model's own, stacked 3-D expert LoRAs split into one 2-D pair per expert, the parts of a module
 * the model fuses merged into one LoRA of their summed rank, and `adapter_config.json` completed.
 *
 * Pure: tensors and configs in, tensors and a config out. Every tensor is moved as bytes (a merge
 * only places rows and zero-fills), so any dtype converts unchanged.
 */
import { resolve } from 'node:path';
import { UserError } from '../../util/errors.js';
import { AdapterError, SAFETENSORS_DTYPES, type Tensor } from '../adapter.js';
import {
  detectFamily,
  expertCount,
  type FamilyProfile,
  familyOfPaths,
  nameSaysLanguageModelPrefix,
  tiesEmbeddings,
} from './families.js';

/** what the base model's folder tells: its config.json and its weights' names (and shapes, when read) */
export interface BaseModel {
  /** where it was read from, for messages */
  readonly source: string;
  readonly config: Readonly<Record<string, unknown>>;
  /** parameter name -> shape; undefined when the index names it but its shard was not there to read */
  readonly parameters: ReadonlyMap<string, readonly number[] | undefined>;
}

export interface ConvertInput {
  /** the raw adapter_model.safetensors's tensors */
  readonly tensors: readonly Tensor[];
  /** the raw adapter_config.json (Tinker's holds `r` and `lora_alpha` only) */
  readonly config: Readonly<Record<string, unknown>>;
  readonly baseModel?: BaseModel;
  /** the base model's name (a Hugging Face id), for the config and, without baseModel, the family */
  readonly baseModelName?: string;
}

/** adapter_config.json as PEFT writes it for a LoRA */
export interface PeftConfig {
  readonly peft_type: 'LORA';
  readonly task_type: 'CAUSAL_LM';
  readonly base_model_name_or_path: string | null;
  readonly r: number;
  readonly lora_alpha: number;
  readonly target_modules: readonly string[];
  /** rank (and alpha) of the modules whose LoRA is merged from parts: alpha / rank stays the config's */
  readonly rank_pattern: Readonly<Record<string, number>>;
  readonly alpha_pattern: Readonly<Record<string, number>>;
  readonly bias: 'none';
  readonly lora_dropout: 0;
  readonly fan_in_fan_out: false;
  readonly inference_mode: true;
  readonly init_lora_weights: true;
  readonly modules_to_save: null;
}

export interface PeftAdapter {
  readonly tensors: readonly Tensor[];
  readonly config: PeftConfig;
  readonly family: FamilyProfile;
  /** the names were found among the base model's own weights (a base model was given) */
  readonly checked: boolean;
  /** what was done beyond renaming: expanded experts, merges, skipped placeholders */
  readonly notes: readonly string[];
}

const PREFIX = 'base_model.model.';

interface Pair {
  /** the module path in Tinker's names, without `base_model.model.` */
  readonly path: string;
  readonly A: Tensor;
  readonly B: Tensor;
}

const elements = (shape: readonly number[]) => shape.reduce((a, d) => a * d, 1);
const shapeText = (t: Tensor) => `${t.dtype} [${t.shape.join(', ')}]`;
const isZero = (bytes: Uint8Array) => bytes.every((b) => b === 0);

/** the lora_A / lora_B tensors by module; anything else in the file is not Tinker's LoRA */
function pairsOf(tensors: readonly Tensor[]): Pair[] {
  const halves = new Map<string, { A?: Tensor; B?: Tensor }>();
  for (const t of tensors) {
    const m = /^(.+)\.lora_([AB])\.weight$/.exec(t.name);
    if (!m) throw new AdapterError(`the raw adapter holds ${t.name}, which is not a lora_A or lora_B weight`);
    const path = m[1]!.startsWith(PREFIX) ? m[1]!.slice(PREFIX.length) : m[1]!;
    const pair = halves.get(path) ?? {};
    if (pair[m[2] as 'A' | 'B'])
      throw new AdapterError(
        `the raw adapter holds ${path}'s lora_${m[2]} twice (with and without ${PREFIX})`,
      );
    pair[m[2] as 'A' | 'B'] = t;
    halves.set(path, pair);
  }
  if (halves.size === 0) throw new AdapterError('the raw adapter holds no lora_A / lora_B tensors');
  return [...halves.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, { A, B }]) => {
      if (!A || !B)
        throw new AdapterError(
          `the raw adapter has ${path}'s lora_${A ? 'A' : 'B'} without its lora_${A ? 'B' : 'A'}`,
        );
      return { path, A, B };
    });
}

function positiveRank(config: Readonly<Record<string, unknown>>): { r: number; alpha: number } {
  const r = config.r;
  const alpha = config.lora_alpha;
  if (!Number.isSafeInteger(r) || (r as number) < 1)
    throw new AdapterError(
      `the raw adapter_config.json's "r" (the LoRA rank) must be a whole number >= 1, got ${JSON.stringify(r)}`,
    );
  if (typeof alpha !== 'number' || !(alpha > 0))
    throw new AdapterError(
      `the raw adapter_config.json's "lora_alpha" must be a number > 0, got ${JSON.stringify(alpha)}`,
    );
  return { r: r as number, alpha };
}

/** a name the base model's weights hold; a compressed-tensors checkpoint's `X.weight_packed` counts as `X.weight` */
function lookup(base: BaseModel, name: string): { found: boolean; shape?: readonly number[] } {
  for (const n of [name, name.endsWith('.weight') ? `${name}_packed` : undefined]) {
    if (n === undefined || !base.parameters.has(n)) continue;
    const shape = base.parameters.get(n);
    // a packed weight's shape is not the layer's
    return n === name && shape ? { found: true, shape } : { found: true };
  }
  return { found: false };
}

/** values an MXFP4 block holds: each is 16 bytes of 4-bit values sharing one scale */
const MXFP4_BLOCK = 32;

/**
 * A fused expert weight kept in MXFP4, as the released gpt-oss checkpoints keep theirs:
 * `NAME_blocks` [experts, rows, blocks, 16] bytes and `NAME_scales` [experts, rows, blocks], so the
 * weight is [experts, rows, blocks · 32]. Undefined when the model has no such pair; the numbers
 * are undefined where the shards were not there to read.
 */
function mxfp4Experts(
  base: BaseModel,
  name: string,
): { experts?: number; rows?: number; inputs?: number } | undefined {
  const blocks = `${name}_blocks`;
  const scales = `${name}_scales`;
  if (!base.parameters.has(blocks) || !base.parameters.has(scales)) return undefined;
  const b = base.parameters.get(blocks);
  const sc = base.parameters.get(scales);
  if (!b) return {};
  const [experts, rows, count, bytes] = b as [number, number, number, number];
  if (
    b.length !== 4 ||
    bytes !== MXFP4_BLOCK / 2 ||
    (sc && (sc.length !== 3 || sc[0] !== experts || sc[1] !== rows || sc[2] !== count))
  )
    throw new UserError(
      `the base model's ${blocks} [${b.join(', ')}] and ${scales} [${sc?.join(', ') ?? '?'}] are not MXFP4 blocks and scales ([experts, rows, blocks, ${MXFP4_BLOCK / 2}] and [experts, rows, blocks]): give --base-model-dir the model's folder as released.`,
    );
  return { experts, rows, inputs: count * MXFP4_BLOCK };
}

/** a slice of the outer dimension of a stacked tensor, as bytes */
function outerSlice(t: Tensor, i: number): Uint8Array {
  const size = elements(t.shape.slice(1)) * SAFETENSORS_DTYPES[t.dtype]!;
  return t.data.subarray(i * size, (i + 1) * size);
}

/**
 * The raw adapter as a PEFT adapter. Bad raw tensors (halves that do not pair, ranks that differ
 * from the config's, expert stacks whose counts disagree) are AdapterErrors; a base model whose
 * weights do not hold what the adapter trains, or a family this does not convert, a UserError.
 */
export function convertToPeft(input: ConvertInput): PeftAdapter {
  const { r, alpha } = positiveRank(input.config);
  const pairs = pairsOf(input.tensors);
  const base = input.baseModel;
  const rawName = input.config.base_model_name_or_path;
  const nonEmpty = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const baseName = input.baseModelName ?? nonEmpty(rawName);
  const notes: string[] = [];
  let family = detectFamily(base?.config, baseName);
  // without the model's weights to check against, the adapter's own names must not be another
  // family's: converted by the wrong family's rules, vLLM would not load what it adapts
  const told = base ? undefined : familyOfPaths(pairs.map((p) => p.path));
  if (told && told.family.id !== family.id) {
    if (baseName !== undefined)
      throw new UserError(
        `the adapter's module ${told.evidence} is named as ${told.family.label} models name theirs, but the base model ${baseName} is converted by the ${family.label} rules: give --base-model the model it was trained on, or --base-model-dir its folder.`,
      );
    family = told.family;
    notes.push(`the family told by the adapter's own module names (${told.evidence})`);
  }
  const names = base ? [...base.parameters.keys()] : [];
  const lmPrefix = base
    ? names.some((n) => n.startsWith('model.language_model.'))
    : family.languageModelPrefix || nameSaysLanguageModelPrefix(baseName);
  // Tinker's unembed_tokens is the output head, or the embedding a model ties it to; only the
  // model tells which (config.json's tie_word_embeddings, else whether its weights hold an lm_head)
  const trainsHead = pairs.some(
    (p) => p.path === 'model.unembed_tokens' || p.path.startsWith('model.unembed_tokens.'),
  );
  if (trainsHead && !base)
    throw new UserError(
      "the adapter trains the output head (Tinker's model.unembed_tokens), which is lm_head, or embed_tokens in a model that ties the two (Qwen3 0.6B to 4B, Llama 3.2 1B and 3B); only the model's config.json (tie_word_embeddings) tells which: give --base-model-dir the base model's folder (its config.json with model.safetensors.index.json is enough).",
    );
  const tied = base
    ? (tiesEmbeddings(base.config) ??
      !names.some((n) => n === 'lm_head.weight' || n.endsWith('.lm_head.weight')))
    : false;
  const experts = base ? expertCount(base.config) : undefined;
  // what vLLM and PEFT read as the base model: the name the user or the checkpoint gave, else
  // the name the folder's config.json keeps, else the folder itself (vllm serve takes a path)
  const servedBase =
    baseName ?? (base ? (nonEmpty(base.config._name_or_path) ?? resolve(base.source)) : undefined);

  /** Tinker's module path as the model (and vLLM) names it */
  const servingPath = (path: string): string => {
    let p = path;
    if (p === 'model.unembed_tokens' || p.startsWith('model.unembed_tokens.'))
      p = p.replace('model.unembed_tokens', tied ? 'model.embed_tokens' : 'lm_head');
    else if (p.startsWith('model.lm_head')) p = p.slice('model.'.length);
    if (lmPrefix && p.startsWith('model.') && !p.startsWith('model.language_model.'))
      p = `model.language_model.${p.slice('model.'.length)}`;
    return p
      .split('.')
      .map((s) => family.segmentRenames[s] ?? s)
      .join('.');
  };
  /** where the base model's checkpoint keeps a serving path's weight */
  const checkpointName = (path: string): string =>
    family.checkpointRoot && path.startsWith('model.')
      ? `${family.checkpointRoot}.${path.slice('model.'.length)}.weight`
      : `${path}.weight`;
  const notInModel = (raw: string, mapped: string) =>
    new UserError(
      `the adapter's ${raw} maps to ${mapped}, which the base model's weights (${base!.source}) do not hold: give --base-model-dir the model the adapter was trained on (or leave it out to convert by the ${family.label} rules alone).`,
    );

  const out = new Map<string, { A: Tensor; B: Tensor }>();
  const add = (module: string, A: Omit<Tensor, 'name'>, B: Omit<Tensor, 'name'>) => {
    if (out.has(module))
      throw new AdapterError(
        `two of the adapter's LoRAs map to ${module}; the raw adapter is not one this conversion knows`,
      );
    out.set(module, {
      A: { ...A, name: `${PREFIX}${module}.lora_A.weight` },
      B: { ...B, name: `${PREFIX}${module}.lora_B.weight` },
    });
  };
  const fusedOf = new Map(family.fused.flatMap((f) => f.components.map((c) => [c, f] as const)));
  const pending = new Map<string, { fused: (typeof family.fused)[number]; parts: Map<string, Pair> }>();
  let expanded = 0;
  let skippedExperts = 0;

  for (const pair of pairs) {
    const { path, A, B } = pair;
    const mapped = servingPath(path);
    const segments = mapped.split('.');
    const leaf = segments.at(-1)!;
    const parent = segments.slice(0, -1).join('.');
    const stacked =
      A.shape.length === 3 || B.shape.length === 3 || elements(A.shape) === 0 || elements(B.shape) === 0;
    if (segments.at(-2) === 'experts' && stacked) {
      // a projection the model lacks comes as empty (or all-zero) tensors: nothing to serve
      if ((elements(A.shape) === 0 && elements(B.shape) === 0) || (isZero(A.data) && isZero(B.data))) {
        notes.push(`skipped ${path} (an empty placeholder: the model has no such projection)`);
        continue;
      }
      if (A.shape.length !== 3 || B.shape.length !== 3)
        throw new AdapterError(
          `the raw adapter's ${path} has lora_A ${shapeText(A)} and lora_B ${shapeText(B)}; an expert LoRA is two 3-D stacks`,
        );
      const proj = family.expertProjections[leaf];
      if (proj === undefined)
        throw new AdapterError(
          `the raw adapter's ${path} is an expert projection ${leaf} that ${family.label} models do not have (they have ${Object.keys(family.expertProjections).join(', ')})`,
        );
      const [ea, ra, inA] = A.shape as [number, number, number];
      const [eb, outB, rb] = B.shape as [number, number, number];
      if (ra !== r || rb !== r)
        throw new AdapterError(
          `the raw adapter's ${path} has lora_A ${shapeText(A)} and lora_B ${shapeText(B)}, not of rank ${r} (adapter_config.json's "r")`,
        );
      // Tinker shares one half across the experts (a stack of 1) and stacks the other
      if (ea !== eb && ea !== 1 && eb !== 1)
        throw new AdapterError(
          `the raw adapter's ${path} stacks ${ea} experts in lora_A and ${eb} in lora_B`,
        );
      const count = Math.max(ea, eb);
      if (count === 1 && (experts === undefined || experts !== 1))
        throw new AdapterError(
          `the raw adapter's ${path} stacks one expert in both lora_A and lora_B; it says nothing of how many experts there are`,
        );
      if (experts !== undefined && count !== experts)
        throw new AdapterError(
          `the raw adapter's ${path} stacks ${count} experts, but the base model's config.json (${base!.source}) says ${experts}: the adapter was not trained on this model`,
        );
      const expertsPath = parent;
      if (base) {
        const fusedTarget = `${checkpointName(expertsPath).replace(/\.weight$/, '')}.${proj === 'down_proj' ? 'down_proj' : 'gate_up_proj'}`;
        const fused = lookup(base, fusedTarget);
        if (fused.found && fused.shape && fused.shape[0] !== count)
          throw new AdapterError(
            `the raw adapter's ${path} stacks ${count} experts, but the base model's ${fusedTarget} holds ${fused.shape[0]}`,
          );
        const packed = fused.found ? undefined : mxfp4Experts(base, fusedTarget);
        if (packed) {
          // gate and up share the fused weight's rows; down has them alone
          const rows = proj === 'down_proj' ? outB : 2 * outB;
          if (packed.experts !== undefined && packed.experts !== count)
            throw new AdapterError(
              `the raw adapter's ${path} stacks ${count} experts, but the base model's ${fusedTarget}_blocks holds ${packed.experts}`,
            );
          if (packed.rows !== undefined && (packed.rows !== rows || packed.inputs !== inA))
            throw new UserError(
              `the adapter's ${path} is a LoRA of [${outB}, ${inA}] expert weights (${rows} rows in ${fusedTarget}), but the base model's MXFP4 ${fusedTarget}_blocks hold [${packed.rows}, ${packed.inputs}]: give --base-model-dir the model the adapter was trained on.`,
            );
        }
        if (!fused.found && !packed)
          for (let i = 0; i < count; i++) {
            const name = checkpointName(`${expertsPath}.${i}.${proj}`);
            const found = lookup(base, name);
            if (!found.found) throw notInModel(path, name);
            if (found.shape && (found.shape[0] !== outB || found.shape[1] !== inA))
              throw new UserError(
                `the adapter's ${path} is a LoRA of a [${outB}, ${inA}] weight, but the base model's ${name} is [${found.shape.join(', ')}]: give --base-model-dir the model the adapter was trained on.`,
              );
          }
      }
      for (let i = 0; i < count; i++) {
        const a = outerSlice(A, ea === 1 ? 0 : i);
        const b = outerSlice(B, eb === 1 ? 0 : i);
        if (isZero(a) && isZero(b)) {
          skippedExperts++;
          continue;
        }
        add(
          `${expertsPath}.${i}.${proj}`,
          { dtype: A.dtype, shape: [ra, inA], data: a },
          { dtype: B.dtype, shape: [outB, rb], data: b },
        );
      }
      expanded++;
      continue;
    }
    if (A.shape.length !== 2 || B.shape.length !== 2)
      throw new AdapterError(
        `the raw adapter's ${path} has lora_A ${shapeText(A)} and lora_B ${shapeText(B)}, which are not a LoRA pair's shapes ([r, in] and [out, r])`,
      );
    if (A.shape[0] !== r || B.shape[1] !== r)
      throw new AdapterError(
        `the raw adapter's ${path} has lora_A ${shapeText(A)} and lora_B ${shapeText(B)}, not of rank ${r} (adapter_config.json's "r")`,
      );
    const fused = fusedOf.get(leaf);
    const fuse =
      fused !== undefined &&
      (base
        ? lookup(base, checkpointName(`${parent}.${fused.target}`)).found &&
          !lookup(base, checkpointName(mapped)).found
        : family.fusedAlways);
    if (fuse) {
      if (!base)
        throw new UserError(
          `${family.label} models keep ${fused.components.join(' and ')} in one ${fused.target} weight whose size only the model tells: give --base-model-dir the base model's folder (its config.json and model.safetensors.index.json with the shards).`,
        );
      const key = `${parent}.${fused.target}`;
      const group = pending.get(key) ?? { fused, parts: new Map<string, Pair>() };
      group.parts.set(leaf, pair);
      pending.set(key, group);
      continue;
    }
    if (base) {
      const name = checkpointName(mapped);
      const found = lookup(base, name);
      if (!found.found) throw notInModel(path, name);
      if (found.shape?.length === 2 && (found.shape[0] !== B.shape[0] || found.shape[1] !== A.shape[1]))
        throw new UserError(
          `the adapter's ${path} is a LoRA of a [${B.shape[0]}, ${A.shape[1]}] weight, but the base model's ${name} is [${found.shape.join(', ')}]: give --base-model-dir the model the adapter was trained on.`,
        );
    }
    add(mapped, A, B);
  }
  if (expanded > 0)
    notes.push(
      `split ${expanded} stacked expert LoRA(s) into one pair per expert${skippedExperts > 0 ? ` (${skippedExperts} expert slice(s) all zero, left out: the same as no LoRA)` : ''}`,
    );

  const rankPattern: Record<string, number> = {};
  const alphaPattern: Record<string, number> = {};
  for (const [key, { fused, parts }] of pending) {
    const missing = fused.components.filter((c) => !parts.has(c));
    if (missing.length > 0)
      throw new AdapterError(
        `the raw adapter trains ${[...parts.keys()].join(', ')} of ${key} but not ${missing.join(', ')}; the merged ${fused.target} needs all of them`,
      );
    const comps = fused.components.map((c) => parts.get(c)!);
    const target = checkpointName(key);
    const shape = lookup(base!, target).shape;
    if (shape?.length !== 2)
      throw new UserError(
        `merging into ${target} needs its shape, which ${base!.source} does not tell (its shard's header was not there to read): put the model's .safetensors files in the folder.`,
      );
    const [fusedOut, fusedIn] = shape as [number, number];
    const aType = comps[0]!.A.dtype;
    const bType = comps[0]!.B.dtype;
    if (comps.some((c) => c.A.dtype !== aType || c.B.dtype !== bType))
      throw new AdapterError(`the raw adapter's parts of ${key} differ in dtype; they cannot be merged`);
    if (comps.some((c) => c.A.shape[1] !== fusedIn))
      throw new UserError(
        `the adapter's parts of ${key} read ${comps.map((c) => c.A.shape[1]).join(', ')} inputs, but the base model's ${target} reads ${fusedIn}: give --base-model-dir the model the adapter was trained on.`,
      );
    const rows = comps.reduce((a, c) => a + c.B.shape[0]!, 0);
    if (rows > fusedOut)
      throw new UserError(
        `the adapter's parts of ${key} write ${rows} rows, more than the base model's ${target} holds (${fusedOut}): give --base-model-dir the model the adapter was trained on.`,
      );
    // A: the parts' rows stacked (rank after rank); B: each part's block on its own rows and rank
    // columns, zero elsewhere, so B·A gives each part's update on its rows and nothing across them
    const rank = comps.reduce((a, c) => a + c.A.shape[0]!, 0);
    const width = SAFETENSORS_DTYPES[bType]!;
    const merged = new Uint8Array(fusedOut * rank * width);
    let row = 0;
    let col = 0;
    for (const c of comps) {
      const [out, cr] = c.B.shape as [number, number];
      for (let j = 0; j < out; j++)
        merged.set(c.B.data.subarray(j * cr * width, (j + 1) * cr * width), ((row + j) * rank + col) * width);
      row += out;
      col += cr;
    }
    const stackedA = new Uint8Array(comps.reduce((a, c) => a + c.A.data.length, 0));
    let at = 0;
    for (const c of comps) {
      stackedA.set(c.A.data, at);
      at += c.A.data.length;
    }
    add(
      key,
      { dtype: aType, shape: [rank, fusedIn], data: stackedA },
      { dtype: bType, shape: [fusedOut, rank], data: merged },
    );
    rankPattern[fused.target] = rank;
    alphaPattern[fused.target] = (alpha * rank) / r;
  }
  if (pending.size > 0)
    notes.push(
      `merged ${[...new Set([...pending.values()].map((g) => `${g.fused.components.join('+')} into ${g.fused.target}`))].join(', ')} (${pending.size} module(s); rank and alpha in rank_pattern / alpha_pattern)`,
    );
  if (out.size === 0)
    throw new AdapterError(
      'the raw adapter holds no LoRA with any weight in it (all its tensors are empty placeholders)',
    );

  const modules = [...out.keys()].sort();
  const tensors = modules.flatMap((m) => [out.get(m)!.A, out.get(m)!.B]);
  const targets = [...new Set(modules.map((m) => m.split('.').at(-1)!))].sort();
  return {
    tensors,
    config: {
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      base_model_name_or_path: servedBase ?? null,
      r,
      lora_alpha: alpha,
      target_modules: targets,
      rank_pattern: rankPattern,
      alpha_pattern: alphaPattern,
      bias: 'none',
      lora_dropout: 0,
      fan_in_fan_out: false,
      inference_mode: true,
      init_lora_weights: true,
      modules_to_save: null,
    },
    family,
    checked: base !== undefined,
    notes,
  };
}
