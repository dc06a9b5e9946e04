/**
 * `seal train --learner tinker`: the renderer of the base model, the connection to the service,
 * the learner, the run record's learner entry, and `--dry-run` (what one round would send and its
 * token count, from the renderer alone: no key, no network).
 */
import { createHash } from 'node:crypto';
import { basename, resolve } from 'node:path';
import { formatAdapter } from '../agent/formats/index.js';
import { rollout } from '../bfcl/rollout.js';
import type { BfclData, BfclTask } from '../envs/bfcl/data/tasks.js';
import { TinkerLearner } from '../learner/tinker/learner.js';
import type { CompletionRequest, Policy } from '../policy/policy.js';
import { promptIdsOf } from '../policy/tinker.js';
import { HfRenderer } from '../render/hf-renderer.js';
import { type OpenedRenderer, openRenderer } from '../render/open.js';
import type { Renderer } from '../render/renderer.js';
import { trainingContext } from '../seal/interface.js';
import { TinkerClient } from '../tinker/client.js';
import { retryLine } from '../tinker/http.js';
import { loraLearningRate } from '../tinker/lora-lr.js';
import type { TrainConfig } from './config.js';
import { toolFormat } from './config.js';
import { initialTrainState, methodSwitches } from './loop.js';
import type { TinkerLearnerRecord } from './record.js';
import { roundTasks } from './tasks.js';

/** the base model's renderer (--renderer) on its tokenizer: `--tokenizer DIR`, else the local Hugging Face cache */
export function tinkerRenderer(c: TrainConfig): OpenedRenderer {
  return openRenderer(c.renderer, { tokenizer: c.tokenizer, baseModel: c.baseModel });
}

/** what the renderer renders with: the tokenizer, and the template or the family's name */
function rendererSha(r: OpenedRenderer): string {
  return createHash('sha256')
    .update(JSON.stringify(r.files.tokenizer))
    .update(
      r.renderer instanceof HfRenderer
        ? (r.files.chatTemplate ?? String(r.files.config.chat_template ?? ''))
        : `family ${r.resolved}`,
    )
    .digest('hex');
}

/** the template's enable_thinking, when the config sets it (runs recorded before the key: unset) */
export function thinkingOf(c: Pick<TrainConfig, 'thinking'>): { enableThinking?: boolean } {
  return c.thinking === 'on'
    ? { enableThinking: true }
    : c.thinking === 'off'
      ? { enableThinking: false }
      : {};
}

export function klChoice(c: TrainConfig): TinkerLearnerRecord['kl'] {
  return c.klCoef > 0
    ? {
        on: true,
        reason: `klCoef ${c.klCoef}: base logprobs from a ${c.baseModel} sampling session, one prefill per training sequence`,
      }
    : { on: false, reason: 'klCoef 0: no KL term, no base-model session' };
}

/** where the run's learning rate came from, for the run record */
export function lrChoice(c: TrainConfig): NonNullable<TinkerLearnerRecord['lr']> {
  const rule = loraLearningRate(c.baseModel!);
  if (!rule.calibrated) return { value: c.lr, source: `given or seal's default (${rule.reason})` };
  if (rule.lr === c.lr) return { value: c.lr, source: `rule: ${rule.rule}` };
  return { value: c.lr, source: `given (the LoRA rule would give ${rule.lr.toPrecision(3)})` };
}

export async function openTinker(
  c: TrainConfig,
  log: (line: string) => void,
  resumeFrom?: string,
): Promise<{ learner: TinkerLearner; record: TinkerLearnerRecord }> {
  const opened = tinkerRenderer(c);
  const renderer = opened.renderer;
  const client = await TinkerClient.connect({
    ...(c.baseUrl !== undefined ? { baseUrl: c.baseUrl } : {}),
    wire: c.wire,
    retry: { maxRetries: c.retries },
    onWarning: (m) => log(`tinker: ${m}`),
    onRetry: (e) => log(`tinker: ${retryLine(e)}`),
  });
  try {
    const kl = klChoice(c);
    const learner = await TinkerLearner.open(
      {
        client,
        renderer,
        baseModel: c.baseModel!,
        loraRank: c.loraRank,
        seed: c.seed,
        klToBase: kl.on,
        maxInFlight: c.maxInFlight,
        ...(c.checkpointTtl > 0 ? { ttlSeconds: c.checkpointTtl } : {}),
        ...thinkingOf(c),
        log,
      },
      resumeFrom,
    );
    log(
      `tinker: model ${learner.modelId} (LoRA rank ${c.loraRank} on ${c.baseModel}) at ${client.baseUrl}, ${resumeFrom ? `continuing from ${resumeFrom}` : 'new'}; KL ${kl.reason}`,
    );
    return {
      learner,
      record: {
        kind: 'tinker',
        service: client.baseUrl,
        baseModel: c.baseModel!,
        loraRank: c.loraRank,
        wire: { asked: c.wire, used: client.wire },
        tokenizer: { name: basename(resolve(opened.dir)), sha256: rendererSha(opened) },
        renderer: opened.resolved,
        format: toolFormat(c),
        kl,
        lr: lrChoice(c),
      },
    };
  } catch (e) {
    client.close();
    throw e;
  }
}

class FirstRequest extends Error {
  constructor(readonly request: CompletionRequest) {
    super('first request taken');
  }
}

/**
 * The prompt ids of a task's first step in round 1, exactly as a rollout would send them (the
 * environment's first observation, the method's starting interface): a rollout whose policy stops
 * it at its first request.
 */
async function firstPrompt(
  c: TrainConfig,
  data: BfclData,
  task: BfclTask,
  renderer: Renderer,
): Promise<readonly number[]> {
  const taker: Policy = {
    name: 'dry-run',
    complete: async (request) => {
      throw new FirstRequest(request);
    },
  };
  const iface = methodSwitches(c.method).interface ? initialTrainState(c).interface : undefined;
  try {
    await rollout(task, data, taker, {
      format: formatAdapter(toolFormat(c)),
      sampling: { temperature: c.temperature, maxTokens: c.maxTokens },
      ...(iface ? { trainingInterface: { ctx: trainingContext('seal train --dry-run'), state: iface } } : {}),
    });
  } catch (e) {
    if (!(e instanceof FirstRequest)) throw e;
    return promptIdsOf(renderer, e.request, thinkingOf(c).enableThinking);
  }
  throw new Error(`task ${task.id} made no request`);
}

/** characters of a first prompt's start (the system prompt, where the tools are declared) a dry run prints */
export const EXCERPT_HEAD = 400;
/** and of its end (the user's request and the generation prompt) */
export const EXCERPT_TAIL = 800;

/**
 * A first prompt shortened for the dry run: its start and its end, as lines. A BFCL prompt is
 * some 6k tokens, most of them tool schemas; what a user checks before paying is how the prompt
 * begins, that the request is there, and how the assistant's turn is opened.
 */
export function promptExcerpt(text: string): string[] {
  if (text.length <= EXCERPT_HEAD + EXCERPT_TAIL + 100) return text.split('\n');
  const left = text.length - EXCERPT_HEAD - EXCERPT_TAIL;
  return [
    ...text.slice(0, EXCERPT_HEAD).split('\n'),
    `[... ${left} characters left out ...]`,
    ...text.slice(-EXCERPT_TAIL).split('\n'),
  ];
}

/** one round's requests and tokens, as far as they are known before sampling */
export interface RoundPlan {
  readonly lines: readonly string[];
  readonly promptTokens: number;
  readonly maxSampledTokens: number;
}

/**
 * What round 1 would send: its tasks' first prompts rendered as the sampler would see them (the
 * round's interface at its start), and an upper bound on what is sampled and trained. Turns after
 * the first grow the prompt with tool results the environment writes, so the count is a floor for
 * the prompts and a ceiling for the samples (every step at maxTokens).
 */
export async function planRound(c: TrainConfig, data: BfclData): Promise<RoundPlan> {
  const { renderer, resolved } = tinkerRenderer(c);
  const trainTasks = data.split.train.map((id) => data.byId.get(id)!).filter(Boolean);
  const tasks = roundTasks(trainTasks, c.seed, 1, c.tasksPerRound);
  let promptTokens = 0;
  let maxSampled = 0;
  const perTask: string[] = [];
  for (const task of tasks) {
    const ids = await firstPrompt(c, data, task, renderer);
    const turns = task.question.length;
    promptTokens += ids.length * c.groupSize;
    maxSampled += turns * c.maxSteps * c.maxTokens * c.groupSize;
    perTask.push(
      `  ${task.id}: first prompt ${ids.length} tokens, ${turns} turn(s)`,
      ...promptExcerpt(renderer.decode(ids)).map((l) => `    | ${l}`),
    );
  }
  const rollouts = tasks.length * c.groupSize;
  const lines = [
    `dry run: one round of --learner tinker on ${c.baseModel} (LoRA rank ${c.loraRank}, renderer ${resolved}), nothing sent`,
    `requests, in order:`,
    `  create_model (first round) or load_weights (resume), then save_weights_for_sampler (ephemeral sampler)`,
    `  asample x >= ${(rollouts * tasks.reduce((s, t) => s + t.question.length, 0)) / Math.max(1, tasks.length)} (${rollouts} rollouts of ${tasks.length} tasks x G ${c.groupSize}, one per step; at most ${c.maxSteps} steps per turn; ${c.maxInFlight} in flight)`,
    ...(c.klCoef > 0
      ? [`  asample with prompt_logprobs x one per training sequence (KL to the base, klCoef ${c.klCoef})`]
      : []),
    `  forward_backward (ppo, clip ${1 - c.clipEps}..${1 + c.clipEps}) in chunks within the server's limits, x ${c.passes} pass(es)`,
    `  optim_step (Adam, lr ${c.lr.toPrecision(3)}: ${lrChoice(c).source}) x ${c.passes}`,
    `  save_weights + save_weights_for_sampler (the round's checkpoint)`,
    ...(c.validateEvery === 1 && c.validationTasks > 0
      ? [`  asample for validation: ${c.validationTasks} tasks, greedy`]
      : []),
    `tasks of round 1, each with its first prompt as the model reads it (the middle left out; seal render shows it whole):`,
    ...perTask,
    `tokens: first prompts ${promptTokens} (G x each task's first prompt; later steps re-send the growing chat, a prefix the service may cache)`,
    `        sampled at most ${maxSampled} (every step at maxTokens ${c.maxTokens})`,
    `        trained (forward_backward) at most ${promptTokens + maxSampled} read${c.klCoef > 0 ? `, and as many again prefilled on the base for the KL` : ''}`,
  ];
  return { lines, promptTokens, maxSampledTokens: maxSampled };
}
