/**
 * The model families' chat formats by the cookbook's renderer names, and which one a base model
 * uses by default (the first the cookbook's model table recommends for it).
 */
import { UserError } from '../../util/errors.js';
import type { ChatFamily } from './family.js';

/** what a family may need besides the messages */
export interface FamilyOptions {
  /** the date a family writes into its system message (gpt-oss), `YYYY-MM-DD`; default today */
  readonly today?: string;
  /** the tokenizer's bos_token, for the families that start with it (role_colon) */
  readonly bosToken?: string;
  /** the tokenizer's eos_token, for the families that accept it as an end (role_colon) */
  readonly eosToken?: string;
}

export type FamilyFactory = (options: FamilyOptions) => ChatFamily;

export const RENDERER_NAMES = [
  'role_colon',
  'llama3',
  'qwen3',
  'qwen3_disable_thinking',
  'qwen3_instruct',
  'qwen3_5',
  'qwen3_5_disable_thinking',
  'deepseekv3',
  'deepseekv3_thinking',
  'gpt_oss_no_sysprompt',
  'gpt_oss_low_reasoning',
  'gpt_oss_medium_reasoning',
  'gpt_oss_high_reasoning',
  'kimi_k2',
  'kimi_k25',
  'kimi_k25_disable_thinking',
  'nemotron3',
  'nemotron3_disable_thinking',
] as const;
export type RendererName = (typeof RENDERER_NAMES)[number];

/** filled in by the family modules' registrations (families/all.ts imports them all) */
const FACTORIES = new Map<RendererName, FamilyFactory>();

export function registerFamily(name: RendererName, factory: FamilyFactory): void {
  FACTORIES.set(name, factory);
}

export function isRendererName(name: string): name is RendererName {
  return (RENDERER_NAMES as readonly string[]).includes(name);
}

/** the names whose module exists in this build */
export function availableRenderers(): RendererName[] {
  return RENDERER_NAMES.filter((n) => FACTORIES.has(n));
}

export function chatFamily(name: string, options: FamilyOptions = {}): ChatFamily {
  if (!isRendererName(name))
    throw new UserError(`unknown renderer ${JSON.stringify(name)}: one of ${RENDERER_NAMES.join(', ')}`);
  const factory = FACTORIES.get(name);
  if (!factory)
    throw new UserError(
      `renderer ${name} is not built yet; available: ${availableRenderers().join(', ') || 'none'}`,
    );
  return factory(options);
}

/**
 * The cookbook's model table, by model name without its organisation: the recommended renderer
 * first. Base models (no chat post-training) use role_colon.
 */
const MODEL_RENDERERS: readonly (readonly [RegExp, RendererName])[] = [
  [/^Llama-3\.[13]-\d+B-Instruct$/, 'llama3'],
  [/^Llama-3\.\d-\d+B$/, 'role_colon'],
  [/^Qwen3(\.\d)?-[\w.-]*-Base$/, 'role_colon'],
  [/^Qwen3-[\w-]*-Instruct-2507$/, 'qwen3_instruct'],
  [/^Qwen3\.[56]-/, 'qwen3_5'],
  [/^Qwen3-\d+B(-A\d+B)?$/, 'qwen3'],
  [/^DeepSeek-V3\.1-Base$/, 'role_colon'],
  [/^DeepSeek-V3\.1$/, 'deepseekv3'],
  [/^gpt-oss-\d+b$/, 'gpt_oss_no_sysprompt'],
  [/^Kimi-K2-Thinking$/, 'kimi_k2'],
  [/^Kimi-K2\.5$/, 'kimi_k25'],
  [/^NVIDIA-Nemotron-3-(Nano|Super)-/, 'nemotron3'],
];

/**
 * The renderer a base model uses when none is named: `org/Model` or Tinker's `org/Model/variant`
 * (a `:checkpoint` suffix is ignored); undefined for a model the table does not know.
 */
export function defaultRendererFor(baseModel: string): RendererName | undefined {
  const [, model] = baseModel.split(':', 1)[0]!.split('/');
  if (model === undefined) return undefined;
  return MODEL_RENDERERS.find(([re]) => re.test(model))?.[1];
}
