/**
 * `seal eval --policy tinker`: the strict evaluation of a base model or a trained checkpoint through
 * a Tinker sampling session. `--model` is a base model name, a `tinker://.../sampler_weights/...`
 * path, or a checkpoint directory of `seal train --learner tinker` (its `tinker.json` names both).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TOOL_CALL_FORMATS, type ToolCallFormat } from '../agent/format.js';
import type { EvalConfig as EvalFlags } from '../eval/config.js';
import { readTinkerCheckpoint, TINKER_CHECKPOINT_FILE } from '../learner/tinker/learner.js';
import type { Policy } from '../policy/policy.js';
import { TinkerPolicy } from '../policy/tinker.js';
import { openRenderer, RENDERER_CHOICES, type RendererChoice, resolveRenderer } from '../render/open.js';
import { TinkerClient } from '../tinker/client.js';
import { retryLine } from '../tinker/http.js';
import { checkRendererChoice, nativeByDefault } from '../train/config.js';
import { UsageError } from '../util/errors.js';

/**
 * How the run that saved a checkpoint folder rendered, from its run.json (the folder is
 * RUN/checkpoints/round-N): its renderer and tool format, when recorded.
 */
function trainedRendering(checkpointDir: string): { renderer?: RendererChoice; format?: ToolCallFormat } {
  const path = join(checkpointDir, '..', '..', 'run.json');
  if (!existsSync(path)) return {};
  try {
    const learner = (
      JSON.parse(readFileSync(path, 'utf8')) as { learner?: { renderer?: string; format?: string } }
    ).learner;
    const renderer = (RENDERER_CHOICES as readonly string[]).includes(learner?.renderer ?? '')
      ? (learner!.renderer as RendererChoice)
      : undefined;
    const format = (TOOL_CALL_FORMATS as readonly string[]).includes(learner?.format ?? '')
      ? (learner!.format as ToolCallFormat)
      : undefined;
    return { ...(renderer ? { renderer } : {}), ...(format ? { format } : {}) };
  } catch {
    return {};
  }
}

/** what to sample from, the base model whose tokenizer renders for it, and how its run rendered */
function sourceOf(flags: EvalFlags): {
  sampler: { baseModel: string } | { modelPath: string };
  base?: string;
  trained?: { renderer?: RendererChoice; format?: ToolCallFormat };
} {
  const model = flags.model;
  if (!model)
    throw new UsageError(
      'give --model: a base model (e.g. Qwen/Qwen3-8B), a tinker:// sampler path, or a seal train --learner tinker checkpoint folder',
    );
  if (existsSync(join(model, TINKER_CHECKPOINT_FILE))) {
    const saved = readTinkerCheckpoint(model);
    return { sampler: { modelPath: saved.sampler }, base: saved.baseModel, trained: trainedRendering(model) };
  }
  if (model.startsWith('tinker://')) {
    if (!model.includes('/sampler_weights/'))
      throw new UsageError(
        `${model} is not sampler weights; give the tinker://.../sampler_weights/... path (tinker.json's "sampler")`,
      );
    return { sampler: { modelPath: model }, ...(flags.baseModel ? { base: flags.baseModel } : {}) };
  }
  return { sampler: { baseModel: model }, base: model };
}

export async function tinkerEvalPolicy(
  flags: EvalFlags,
  concurrency: number,
): Promise<{
  policy: Policy;
  model: string;
  baseUrl: string;
  format: ToolCallFormat;
  renderer: string;
  thinking: string;
  close: () => Promise<void>;
}> {
  const source = sourceOf(flags);
  // a checkpoint of a run is evaluated as the run rendered it, unless the flags say otherwise
  const rendererChoice =
    flags.renderer === 'auto' && source.trained?.renderer ? source.trained.renderer : flags.renderer;
  // as seal train chooses: the family's own tool form, or tools as text for hf_template and role_colon
  const format =
    flags.format ??
    source.trained?.format ??
    (nativeByDefault(resolveRenderer(rendererChoice, source.base)) ? 'native' : 'hermes');
  if (format === 'compact')
    throw new UsageError(
      "compact is the embedded policy's format; use --format hermes or native with --policy tinker",
    );
  if (flags.extraBody) throw new UsageError('--extra-body is for an OpenAI-compatible server');
  if (source.base === undefined && flags.tokenizer === undefined)
    throw new UsageError(
      'a tinker:// path does not name its base model: give --base-model NAME (its tokenizer is looked up) or --tokenizer DIR',
    );
  checkRendererChoice({ ...flags, renderer: rendererChoice, baseModel: source.base }, format);
  const { renderer, resolved } = openRenderer(rendererChoice, {
    tokenizer: flags.tokenizer,
    baseModel: source.base,
  });
  const client = await TinkerClient.connect({
    ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
    retry: { maxRetries: flags.retries },
    onRetry: (e) => console.error(`tinker: ${retryLine(e)}`),
  });
  try {
    const sampler = await client.createSamplingClient(source.sampler);
    const name = 'modelPath' in source.sampler ? source.sampler.modelPath : source.sampler.baseModel;
    const policy = new TinkerPolicy(sampler, renderer, {
      name,
      maxInFlight: concurrency,
      ...(flags.thinking === 'on' || flags.thinking === 'off'
        ? { enableThinking: flags.thinking === 'on' }
        : {}),
    });
    return {
      policy,
      model: name,
      baseUrl: client.baseUrl,
      format,
      // recorded in run.json: both change what the model reads, so a resume must keep them
      renderer: resolved,
      thinking: flags.thinking,
      close: async () => client.close(),
    };
  } catch (e) {
    client.close();
    throw e;
  }
}
