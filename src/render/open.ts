/**
 * Which renderer a Tinker run, an evaluation or `seal render` uses, and opening it: a model
 * family's chat format by the cookbook's name (families/), or the model's own Hugging Face chat
 * template. `auto` takes the family the cookbook's model table recommends for the base model, and
 * the Hugging Face template for a model the table does not know.
 */
import { z } from 'zod';
import { UserError } from '../util/errors.js';
import './families/all.js';
import {
  availableRenderers,
  chatFamily,
  defaultRendererFor,
  type FamilyOptions,
  RENDERER_NAMES,
  type RendererName,
} from './families/index.js';
import { FamilyRenderer, pieceEncoderOf } from './family-renderer.js';
import { HfRenderer, type HfTokenizerFiles, readTokenizerFiles, tokenText } from './hf-renderer.js';
import { locateTokenizer, type TokenizerSource } from './locate.js';
import type { Renderer } from './renderer.js';

/** the model's own chat template (tokenizer_config.json's chat_template), rendered as transformers does */
export const HF_TEMPLATE = 'hf_template';

export const RENDERER_CHOICES = ['auto', HF_TEMPLATE, ...RENDERER_NAMES] as const;
export type RendererChoice = (typeof RENDERER_CHOICES)[number];
export type ResolvedRenderer = RendererName | typeof HF_TEMPLATE;

/** the `renderer` setting, one wording for train, eval and render */
export const rendererSetting = (prefix = '') =>
  z
    .enum(RENDERER_CHOICES)
    .default('auto')
    .describe(
      `${prefix}the chat format, by the Tinker cookbook's renderer names (auto: the cookbook's choice for the base model, else hf_template: the model's own Hugging Face chat template)`,
    );

/** the renderer `choice` means for `baseModel` (auto: the cookbook's recommendation, if built) */
export function resolveRenderer(choice: RendererChoice, baseModel: string | undefined): ResolvedRenderer {
  if (choice !== 'auto') return choice;
  const recommended = baseModel === undefined ? undefined : defaultRendererFor(baseModel);
  return recommended !== undefined && availableRenderers().includes(recommended) ? recommended : HF_TEMPLATE;
}

/** bos/eos of a model folder's tokenizer_config.json, for the families that write or read them */
function familyOptionsOf({ config }: HfTokenizerFiles, today?: string): FamilyOptions {
  const bosToken = tokenText(config.bos_token);
  const eosToken = tokenText(config.eos_token);
  return {
    ...(today !== undefined ? { today } : {}),
    ...(bosToken !== undefined ? { bosToken } : {}),
    ...(eosToken !== undefined ? { eosToken } : {}),
  };
}

export interface OpenedRenderer {
  readonly renderer: Renderer;
  /** the renderer's name as resolved (a family's, or hf_template) */
  readonly resolved: ResolvedRenderer;
  /** the tokenizer folder read */
  readonly dir: string;
  /** its files, read once */
  readonly files: HfTokenizerFiles;
}

/** the renderer of `choice` on the tokenizer files `source` locates (a UserError saying what to do) */
export function openRenderer(
  choice: RendererChoice,
  source: TokenizerSource,
  options: { readonly today?: string } = {},
): OpenedRenderer {
  const resolved = resolveRenderer(choice, source.baseModel);
  const dir = locateTokenizer(source);
  const files = readTokenizerFiles(dir);
  if (resolved === HF_TEMPLATE) return { renderer: new HfRenderer(files, dir), resolved, dir, files };
  const family = chatFamily(resolved, familyOptionsOf(files, options.today));
  return {
    renderer: new FamilyRenderer(family, pieceEncoderOf(files), `${resolved} on ${dir}`),
    resolved,
    dir,
    files,
  };
}

/** a family's renderer (not the HF template), or a UserError naming the ones there are */
export function familyOnly(name: ResolvedRenderer, what: string): RendererName {
  if (name === HF_TEMPLATE)
    throw new UserError(
      `${what} needs a family renderer (--renderer NAME: ${availableRenderers().join(', ')})`,
    );
  return name;
}
