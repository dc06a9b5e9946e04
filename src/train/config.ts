/**
 * The configuration of `seal train`, declared once: every key with its type, bounds, default and
 * help lives in one zod schema, and the YAML file, the command-line flags, the validation, the
 * defaults, the recorded overrides and the `--help` text are all derived from it (util/settings.ts).
 *
 * Defaults follow docs/method.md (sections 6 and 7) except where the embedded default run needs
 * otherwise (docs/commands/train.md lists them and what was measured): rounds, tasks per round, learning
 * rate, temperature, steps per turn, a validation subset, failed-turns credit, rollout-mean and
 * the supervised anchor.
 */

import { z } from 'zod';
import type { ToolCallFormat } from '../agent/format.js';
import { CATEGORIES, SUITES } from '../envs/bfcl/data/tasks.js';
import { KERNELS_CHOICES, KERNELS_HELP } from '../nn/backends.js';
import {
  HF_TEMPLATE,
  type RendererChoice,
  type ResolvedRenderer,
  rendererSetting,
  resolveRenderer,
} from '../render/open.js';
import { loraLearningRate } from '../tinker/lora-lr.js';
import { interfaceModeSetting, suiteSetting, TEMPERATURE_MAX } from '../util/fragments.js';
import { type Layer, readConfigFile, Settings, SettingsError } from '../util/settings.js';
import { METHODS } from './record.js';
import { TRACKERS } from './track/track.js';

export const LEARNERS = ['embedded', 'tinker'] as const;

const int = (min: number, max: number) => z.number().int().min(min).max(max);
const num = (min: number, max: number) => z.number().min(min).max(max);

export const TRAIN_SCHEMA = z
  .object({
    method: z
      .enum(METHODS)
      .default('seal')
      .describe('seal, or an ablation: vanilla, no-env, no-reweight, no-closed-loop'),
    seed: int(0, 2 ** 31 - 1)
      .default(1)
      .describe('seeds task order, sampling and the validation subset'),
    suite: suiteSetting(SUITES, 'mini'),
    checkpoint: z.string().min(1).optional().meta({
      description: 'embedded base checkpoint directory (default: the shipped base)',
      placeholder: 'dir',
    }),
    rounds: int(1, 100_000).default(12).describe('training rounds'),
    tasksPerRound: int(1, 4096).default(8).describe('training tasks per round (B)'),
    groupSize: int(2, 64).default(8).describe('rollouts per task (G)'),
    revisit: num(0, 1)
      .default(0)
      .describe(
        "share of a round's tasks drawn again from earlier tasks whose last group had some but not all rollouts succeed (beyond the paper; 0: every task fresh)",
      ),
    // above 0 (util/fragments.ts says why the range is what it is): GRPO needs a group's rollouts to differ
    temperature: num(0.05, TEMPERATURE_MAX)
      .default(0.7)
      .describe('sampling temperature of training rollouts'),
    maxTokens: int(8, 1024).default(128).describe('completion tokens per step'),
    maxSteps: int(1, 20)
      .default(5)
      .describe(
        'steps per user turn in training rollouts, calls and retries after a parse error alike; a step beyond them that still calls quits the task (BFCL: 20, which evaluation keeps; turns the embedded policy passes take at most 4)',
      ),
    lr: num(0, 1).default(1e-4).describe('Adam learning rate'),
    lossAgg: z
      .enum(['token-mean', 'rollout-mean'])
      .default('rollout-mean')
      .describe(
        'token-mean: every trained token of the batch weighs the same (DAPO); rollout-mean: every rollout weighs the same (the GRPO paper)',
      ),
    passes: int(1, 16)
      .default(1)
      .describe("learner passes over a round's batch (each a forward-backward and an optimiser step)"),
    anchorCoef: num(0, 100)
      .default(1)
      .describe(
        'supervised anchor (PPO-ptx, beyond the paper): coefficient of the cross-entropy on demonstrations of freshly generated training tasks, one step of it every round, added to the policy-gradient update where there is one (0: off; mini suite only, off by default on others)',
      ),
    policyGradient: z
      .boolean()
      .default(true)
      .describe(
        'false: the policy-gradient term is left out of every update and only the supervised anchor trains (rollouts are still sampled and recorded): the control a claim of learning from reward needs',
      ),
    anchorDemos: int(1, 256)
      .default(8)
      .describe("demonstrations in each round's step of the supervised anchor"),
    anchorCategories: z
      .array(z.enum(CATEGORIES))
      .min(1)
      .default([...CATEGORIES])
      .describe(
        "the categories the anchor's demonstrations come from (e.g. all but the one a run means reward to change, so that the anchor holds the others without teaching that one directly)",
      ),
    trainPool: z.string().min(1).optional().meta({
      description:
        'a file of training-split task ids, one a line (# starts a comment), to train on instead of the whole training split',
      placeholder: 'file',
    }),
    clipEps: num(0, 1).default(0.2).describe('PPO ratio clip'),
    klCoef: num(0, 10).default(0.001).describe('k3 KL-to-reference coefficient'),
    maxGradNorm: num(0, 1e6).default(1).describe('global gradient-norm clip'),
    credit: z
      .enum(['rollout', 'failed-turns', 'diagnosed-turns'])
      .default('failed-turns')
      .describe(
        "rollout: every step takes its rollout's advantage (the paper); failed-turns: a failed rollout's negative advantage only on the turns diagnosed as failures; diagnosed-turns: also a successful rollout's positive advantage only on the turns diagnosed as passing",
      ),
    wMin: num(0.01, 100).default(0.5).describe('lower clip of the rollout weight w_j'),
    wMax: num(0.01, 100).default(2).describe('upper clip of the rollout weight w_j'),
    weightMode: z
      .enum(['all', 'positive', 'negative'])
      .default('all')
      .describe('which advantages w_j scales'),
    budget: z
      .boolean()
      .default(true)
      .describe("renormalise the weights of a round's nonzero-advantage rollouts to mean 1"),
    schemaCues: interfaceModeSetting('schema cues'),
    errorFeedback: interfaceModeSetting('error feedback'),
    guidelines: interfaceModeSetting('capability guidelines'),
    interfaceShare: num(0, 1)
      .default(1)
      .describe(
        "interface: share of each group's rollouts that see the training interface, the rest the original environment (beyond the paper; 1: every rollout, as the paper). Below 1 a group sets the interface's successes beside the unaided policy's failures on the same task, and the failure profile keeps measuring the unaided policy while a guideline is on",
      ),
    guidedUpdate: z
      .boolean()
      .default(false)
      .describe(
        "beyond the paper: a rollout sampled under the interface also trains the prompt the original environment shows for the same actions, its sampling logprobs the sampler's under the interface (the learner's ratio is then the importance ratio of the policy without the interface over the sampler with it, clipped as PPO clips); false: the paper's update",
      ),
    guidedRatioFloor: num(0, 1)
      .default(0)
      .describe(
        "guided update: the least ratio a copied token starts at (where the importance ratio is lower, its sampling logprob becomes the current policy's on the original prompt minus ln(floor)); 0: the importance ratio alone; 1: no correction where the unaided policy is less likely, the guided actions trained as if it had sampled them (embedded learner)",
      ),
    guidedCoef: num(0, 100)
      .default(1)
      .describe(
        "guided update: the scale of the original-prompt copy's advantages (1: as the rollout's own)",
      ),
    maxGuidelines: int(0, 8)
      .default(3)
      .describe('interface: at most this many capability guidelines at once (the top by pressure)'),
    validateEvery: int(0, 100_000)
      .default(4)
      .describe('strict validation every k rounds on the validation subset (0: never)'),
    validationTasks: int(0, 100_000)
      .default(40)
      .describe(
        'validation subset: this many tasks of the development split (never the test split; on suites without one, held-out training tasks), the same share per category',
      ),
    evalStart: z
      .boolean()
      .default(true)
      .describe('strict evaluation of the start policy on the full test split'),
    evalFinal: z
      .boolean()
      .default(true)
      .describe('strict evaluation of the final policy on the full test split'),
    gradientWorkers: int(1, 64).default(2).describe('gradient worker threads'),
    kernels: z.enum(KERNELS_CHOICES).default('auto').describe(KERNELS_HELP),
    samplerWorkers: int(1, 64).default(2).describe('sampler threads'),
    learner: z
      .enum(LEARNERS)
      .default('embedded')
      .describe('embedded: the built-in small model; tinker: a Tinker-API service (hosted Tinker, or SkyRL)'),
    format: z
      .enum(['auto', 'compact', 'hermes', 'native'])
      .default('auto')
      .describe(
        "tool-call format of rollouts (auto: compact for embedded; for tinker native with a model family's renderer, hermes with hf_template or role_colon; native: tools declared and calls read in the renderer's own form; hermes: tools as text in the system prompt, calls as <tool_call> blocks in the text)",
      ),
    baseModel: z.string().min(1).optional().meta({
      description: 'tinker: the base model to train a LoRA of, e.g. Qwen/Qwen3-8B',
      placeholder: 'name',
    }),
    loraRank: int(1, 1024).default(32).describe('tinker: LoRA rank'),
    baseUrl: z.string().min(1).optional().meta({
      description: 'tinker: the service URL (default: $TINKER_BASE_URL, else the hosted service)',
      placeholder: 'url',
    }),
    wire: z
      .enum(['auto', 'json', 'proto'])
      .default('auto')
      .describe('tinker: wire form of forward_backward (auto: protobuf, JSON when refused)'),
    tokenizer: z.string().min(1).optional().meta({
      description:
        "tinker: a Hugging Face model folder with the base model's tokenizer.json and chat template (default: the local Hugging Face cache)",
      placeholder: 'dir',
    }),
    renderer: rendererSetting('tinker: '),
    thinking: z
      .enum(['template', 'on', 'off'])
      .default('template')
      .describe(
        "tinker: the chat template's enable_thinking (Qwen3): template leaves it to the template's default",
      ),
    maxInFlight: int(1, 4096)
      .default(64)
      .describe('tinker: sampling requests in flight at once (later ones wait)'),
    checkpointTtl: int(0, 10 * 365 * 86_400)
      .default(7 * 86_400)
      .describe(
        "tinker: seconds a round checkpoint lives on the service unless it is kept (every saveEvery rounds and the last); a resume needs the last round's, so resume within this time (0: every checkpoint kept)",
      ),
    saveEvery: int(1, 1_000_000)
      .default(10)
      .describe(
        'tinker: keep every n-th round checkpoint on the service without expiry (the last one always)',
      ),
    maxStepsOffPolicy: int(0, 1_000_000)
      .default(0)
      .describe(
        "tinker: 0 samples each round from the weights it trains; N >= passes samples the next round while this one trains, from weights `passes` steps old (the sampler's logprobs correct for it)",
      ),
    pricePrefill: num(0, 1e6)
      .default(0)
      .describe(
        "USD per million prompt and KL-prefill tokens, from the service's price list for the base model: each round's cost is estimated from the prices given (0: none)",
      ),
    priceSample: num(0, 1e6).default(0).describe('USD per million sampled tokens (see --price-prefill)'),
    priceTrain: num(0, 1e6)
      .default(0)
      .describe('USD per million tokens a training pass reads (see --price-prefill)'),
    track: z
      .array(z.enum(TRACKERS))
      .default([])
      .describe(
        "experiment trackers each round's numbers are also sent to: wandb (WANDB_API_KEY, WANDB_PROJECT, WANDB_ENTITY, WANDB_MODE, WANDB_BASE_URL), mlflow (MLFLOW_TRACKING_URI, MLFLOW_EXPERIMENT_NAME, MLFLOW_TRACKING_TOKEN); a tracker that fails is warned about once and the run goes on",
      ),
    retries: int(0, 100)
      .default(10)
      .describe(
        'tinker: tries after the first for a request with no usable answer (connection failures, 408, 429, 5xx), each shown on stderr; 10 as the SDK',
      ),
  })
  .strict();

export type TrainConfig = z.infer<typeof TRAIN_SCHEMA>;
export type TrainKey = keyof TrainConfig;

/** flags, validation and defaults of the schema; a flag's range is checked with the file's values */
export const TRAIN_SETTINGS = new Settings(TRAIN_SCHEMA, 'schema');
export const TRAIN_KEYS = TRAIN_SETTINGS.keys;

/** the defaults: the config of `seal train` with no file and no flags */
export const TRAIN_DEFAULTS: TrainConfig = TRAIN_SETTINGS.defaults;

function loraDefaultLr(baseModel: string | undefined): { lr?: number } {
  if (baseModel === undefined) return {};
  const rule = loraLearningRate(baseModel);
  return rule.calibrated ? { lr: rule.lr } : {};
}

/**
 * The configuration from a YAML file (optional) and flag overrides, validated; `overrides` holds
 * every key the user set, file or flag, for the run record.
 */
export function resolveConfig(
  file: string | undefined,
  flags: Partial<Record<TrainKey, unknown>>,
): { config: TrainConfig; overrides: Partial<TrainConfig> } {
  const layers: Layer[] = [];
  if (file !== undefined) layers.push({ source: file, values: readConfigFile(file) });
  layers.push({ source: 'flags', values: flags, flags: true });
  const resolved = TRAIN_SETTINGS.resolve(layers);
  const { overrides } = resolved;
  const tinker = resolved.config.learner === 'tinker';
  // the anchor's demonstrations are generated mini tasks in the embedded policy's format: its
  // default applies to that suite and learner only. Tinker's losses read the model's logprobs at
  // temperature 1, so its rollouts are sampled at 1 unless the user says otherwise (refused below)
  const config = {
    ...resolved.config,
    ...((resolved.config.suite !== 'mini' || tinker) && overrides.anchorCoef === undefined
      ? { anchorCoef: 0 }
      : {}),
    ...(tinker && overrides.temperature === undefined ? { temperature: 1 } : {}),
    // a LoRA needs a far larger rate than the default: the cookbook's calibrated rule where it has one
    ...(tinker && overrides.lr === undefined ? loraDefaultLr(resolved.config.baseModel) : {}),
    // a real model's tool calls are JSON that 128 tokens can cut short; the sampler stops at the
    // end of the turn anyway, so the cap only bounds a runaway completion
    ...(tinker && overrides.maxTokens === undefined ? { maxTokens: 1024 } : {}),
  };
  checkTrainConfig(config);
  return { config, overrides };
}

/** what the schema cannot say about one key alone (also checked on a recorded config, at resume) */
export function checkTrainConfig(config: TrainConfig): void {
  if (config.learner === 'tinker') checkTinkerConfig(config);
  else if (config.format === 'hermes' || config.format === 'native')
    throw new SettingsError(
      `format ${config.format} is for a model with a chat template (learner tinker); the embedded policy reads and writes compact`,
    );
  if (config.wMin > config.wMax)
    throw new SettingsError(`wMin (${config.wMin}) must not exceed wMax (${config.wMax})`);
  if (config.anchorCoef > 0 && config.suite !== 'mini')
    throw new SettingsError(
      `anchorCoef needs the mini suite (its demonstrations are generated mini tasks); set anchorCoef: 0 with suite ${config.suite}`,
    );
  if (config.maxStepsOffPolicy > 0 && config.learner !== 'tinker')
    throw new SettingsError(
      'maxStepsOffPolicy needs learner tinker (the embedded learner trains on the cores that sample); drop it or set learner tinker',
    );
  if (config.maxStepsOffPolicy > 0 && config.maxStepsOffPolicy < config.passes)
    throw new SettingsError(
      `maxStepsOffPolicy ${config.maxStepsOffPolicy} is below passes ${config.passes}: a round sampled while the one before it trains is ${config.passes} steps behind; set maxStepsOffPolicy to at least ${config.passes}, or 0`,
    );
  if (config.guidedRatioFloor > 0 && config.learner === 'tinker')
    throw new SettingsError(
      "guidedRatioFloor reads the current weights' logprobs on the original prompts, which the embedded learner gives; with learner tinker set guidedRatioFloor 0 (the importance ratio alone)",
    );
  if (!config.policyGradient && config.anchorCoef === 0)
    throw new SettingsError(
      'policyGradient false with anchorCoef 0 leaves nothing to train; set an anchorCoef above 0 (the supervised control), or lr 0 to sample a frozen policy',
    );
}

/** what `--learner tinker` needs and refuses, said before anything is sent */
function checkTinkerConfig(c: TrainConfig): void {
  if (c.baseModel === undefined)
    throw new SettingsError('learner tinker needs baseModel (--base-model NAME, e.g. Qwen/Qwen3-8B)');
  if (c.temperature !== 1)
    throw new SettingsError(
      `learner tinker trains on the model's logprobs at temperature 1, so rollouts are sampled at 1; drop temperature ${c.temperature}`,
    );
  if (c.anchorCoef > 0)
    throw new SettingsError(
      "anchorCoef needs the embedded learner (its demonstrations are in the embedded policy's compact format); set anchorCoef: 0 with learner tinker",
    );
  if (c.format === 'compact')
    throw new SettingsError(
      "format compact is the embedded policy's; use hermes or native with learner tinker",
    );
  if (c.checkpoint !== undefined)
    throw new SettingsError('checkpoint is an embedded checkpoint; learner tinker starts from baseModel');
  checkRendererChoice(c, toolFormat(c));
}

/**
 * What a family renderer cannot do, said before anything runs: the Hugging Face template's thinking
 * switch (a family has its *_disable_thinking variant instead), and native tool calls in
 * role_colon, which has no tool-call convention.
 */
export function checkRendererChoice(
  c: {
    readonly renderer: RendererChoice;
    readonly baseModel?: string | undefined;
    readonly thinking: string;
  },
  format: string,
): void {
  const resolved = resolveRenderer(c.renderer, c.baseModel);
  if (resolved === HF_TEMPLATE) return;
  if (c.thinking !== 'template')
    throw new SettingsError(
      `thinking ${c.thinking} is the Hugging Face template's switch; the ${resolved} renderer has none: leave thinking unset, and choose a *_disable_thinking renderer to turn thinking off (or renderer hf_template)`,
    );
  if (resolved === 'role_colon' && format === 'native')
    throw new SettingsError(
      'renderer role_colon (a base model) has no tool-call convention: use format hermes, which writes the tools into the system prompt',
    );
}

/** the tool-call format rollouts and validation use */
export function toolFormat(
  c: Pick<TrainConfig, 'format' | 'learner'> & Partial<Pick<TrainConfig, 'renderer' | 'baseModel'>>,
): ToolCallFormat {
  if (c.format !== 'auto' && c.format !== undefined) return c.format;
  if (c.learner !== 'tinker') return 'compact';
  return nativeByDefault(resolveRenderer(c.renderer ?? 'auto', c.baseModel)) ? 'native' : 'hermes';
}

/**
 * A model family's renderer declares tools and reads calls in the form the family was post-trained
 * on, so rollouts use it (native); the Hugging Face template and role_colon (a base model, no
 * tool-call convention) get the tools as text in the system prompt (hermes).
 */
export function nativeByDefault(renderer: ResolvedRenderer): boolean {
  return renderer !== HF_TEMPLATE && renderer !== 'role_colon';
}
