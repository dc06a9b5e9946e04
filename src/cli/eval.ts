/** `seal eval`: flag parsing and output; the work is in eval/. */
import { availableParallelism } from 'node:os';
import { basename, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { TOOL_CALL_FORMATS, type ToolCallFormat } from '../agent/format.js';
import { type BfclData, SUITES, type SuiteName } from '../envs/bfcl/data/tasks.js';
import { loadSuite } from '../envs/suites.js';
import { type EvalRunConfig, runEval } from '../eval/run.js';
import { BASE_CHECKPOINT_DIR, CheckpointError, loadCheckpoint } from '../policy/embedded/checkpoint.js';
import { EMBEDDED_TOOL_FORMAT, EmbeddedPolicy } from '../policy/embedded/policy.js';
import { DerivedSeedPolicy, EmbeddedPolicyPool } from '../policy/embedded/pool.js';
import { OpenAiCompatiblePolicy } from '../policy/openai.js';
import type { Policy, SamplingOptions } from '../policy/policy.js';
import { UsageError } from '../util/errors.js';
import { tinkerEvalPolicy } from './eval-tinker.js';
import { dataDirOption, LIMITS, optionalNumberFlag, parseNumberFlag, parseUrlFlag } from './flags.js';
import { progressBar } from './progress.js';
import { splitIds } from './verify.js';

/** `seal eval` */
export function registerEval(program: Command): void {
  program
    .command('eval')
    .description(
      'Evaluate a policy (a model served by an OpenAI-compatible server, or the embedded one) under the strict protocol',
    )
    .addOption(
      new Option('--suite <name>', 'task suite: bfcl, or the built-in synthetic mini suite')
        .choices([...SUITES])
        .default('bfcl'),
    )
    .option('--split <split>', 'test, train, all, or comma-separated task ids', 'test')
    .addOption(
      new Option(
        '--policy <kind>',
        'server: an OpenAI-compatible model server; embedded: the built-in small model; tinker: sampling on a Tinker service',
      )
        .choices(['server', 'embedded', 'tinker'])
        .default('server'),
    )
    .option(
      '--model <name>',
      'server: the model name as the server knows it; embedded: a checkpoint directory (default: the shipped base); tinker: a base model, a tinker://.../sampler_weights/... path, or a seal train --learner tinker checkpoint directory',
    )
    .option(
      '--tokenizer <dir>',
      "tinker: a Hugging Face folder with the model's tokenizer.json and chat template",
    )
    .option('--base-model <name>', 'tinker: the base model whose tokenizer a tinker:// path needs')
    .addOption(
      new Option('--thinking <mode>', "tinker: the chat template's enable_thinking (as the run trained)")
        .choices(['template', 'on', 'off'])
        .default('template'),
    )
    .option(
      '--base-url <url>',
      'OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (default: $OPENAI_BASE_URL); tinker: the Tinker service (default: $TINKER_BASE_URL, else the hosted one)',
    )
    .option('--api-key-env <var>', 'environment variable holding the API key', 'OPENAI_API_KEY')
    .addOption(
      new Option(
        '--format <format>',
        'tool-call format (default: native for a server, compact for embedded)',
      ).choices([...TOOL_CALL_FORMATS]),
    )
    .option('--concurrency <n>', 'tasks in flight at once', '8')
    .option('--temperature <t>', 'sampling temperature', '0')
    .option('--top-p <p>', 'nucleus sampling')
    .option('--max-tokens <n>', 'completion length limit per step')
    .option('--seed <n>', 'sampling seed, when the server supports it')
    .option('--stop <text...>', 'stop sequences')
    .option('--extra-body <json>', 'extra request fields, e.g. \'{"return_token_ids": true}\' for vLLM')
    .option('--logprobs', 'ask for token logprobs and keep them in the trajectories')
    .option('--timeout <seconds>', 'per-request timeout', '300')
    .option('--retries <n>', 'retries on 429, 5xx, timeouts and network errors', '3')
    .requiredOption('--out <dir>', 'run folder; rerunning into it resumes')
    .addOption(dataDirOption())
    .action(async (opts: EvalFlags & { dataDir?: string }) => {
      const data = loadSuite(opts.suite, opts.dataDir);
      await runEvalCommand(data, opts, (s) => console.log(s));
    });
}

export type PolicyKind = 'server' | 'embedded' | 'tinker';

export interface EvalFlags {
  readonly suite: SuiteName;
  readonly split: string;
  readonly policy: PolicyKind;
  /** server: the model name; embedded: a checkpoint directory (default: the shipped base) */
  readonly model?: string;
  /** default: native for a server, compact for the embedded policy */
  readonly format?: ToolCallFormat;
  readonly baseUrl?: string;
  readonly apiKeyEnv: string;
  readonly concurrency: string;
  readonly temperature: string;
  readonly topP?: string;
  readonly maxTokens?: string;
  readonly seed?: string;
  readonly stop?: string[];
  readonly extraBody?: string;
  readonly logprobs?: boolean;
  readonly timeout: string;
  readonly retries: string;
  readonly out: string;
  /** tinker: the tokenizer folder, and the base model a tinker:// path was trained from */
  readonly tokenizer?: string;
  readonly baseModel?: string;
  readonly thinking?: 'template' | 'on' | 'off';
}

/** The policy and the run-config fields naming it. */
function serverPolicy(flags: EvalFlags): {
  policy: Policy;
  model: string;
  baseUrl: string;
  format: ToolCallFormat;
} {
  if (!flags.model)
    throw new UsageError('give --model NAME (the model as the server knows it), or --policy embedded.');
  const baseUrl = flags.baseUrl ?? process.env.OPENAI_BASE_URL;
  if (!baseUrl)
    throw new UsageError(
      'give --base-url URL (the OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1) or set OPENAI_BASE_URL.',
    );
  parseUrlFlag(flags.baseUrl ? '--base-url' : 'OPENAI_BASE_URL', baseUrl, 'http://127.0.0.1:8000/v1');
  let extraBody: Record<string, unknown> | undefined;
  if (flags.extraBody) {
    try {
      extraBody = JSON.parse(flags.extraBody) as Record<string, unknown>;
    } catch {
      throw new UsageError(
        `--extra-body must be a JSON object, e.g. '{"return_token_ids": true}'; got ${flags.extraBody}`,
      );
    }
    if (typeof extraBody !== 'object' || extraBody === null || Array.isArray(extraBody)) {
      throw new UsageError('--extra-body must be a JSON object');
    }
  }
  const apiKey = process.env[flags.apiKeyEnv];
  const policy = new OpenAiCompatiblePolicy({
    baseUrl,
    model: flags.model,
    ...(apiKey ? { apiKey } : {}),
    ...(extraBody ? { extraBody } : {}),
    ...(flags.logprobs ? { returnLogprobs: true } : {}),
    timeoutMs: parseNumberFlag('--timeout', flags.timeout, LIMITS.timeoutSeconds) * 1000,
    maxRetries: parseNumberFlag('--retries', flags.retries, LIMITS.retries),
  });
  return { policy, model: flags.model, baseUrl, format: flags.format ?? 'native' };
}

/**
 * The embedded policy on min(concurrency, cores) threads, or in process for one. Either way a
 * request without a seed is seeded from its messages, so results do not depend on the thread count.
 */
async function embeddedPolicy(
  flags: EvalFlags,
  concurrency: number,
): Promise<{
  policy: Policy;
  model: string;
  baseUrl?: undefined;
  format: ToolCallFormat;
  close: () => Promise<void>;
}> {
  if (flags.baseUrl || flags.extraBody)
    throw new UsageError(
      '--base-url and --extra-body are for a model server; the embedded policy runs in process.',
    );
  const format = flags.format ?? EMBEDDED_TOOL_FORMAT;
  if (format === 'native')
    throw new UsageError(
      `the embedded policy writes its calls in text; use --format ${EMBEDDED_TOOL_FORMAT} (what it was trained on).`,
    );
  const dir = flags.model ?? BASE_CHECKPOINT_DIR;
  // loaded here too: it checks the checkpoint with the usual errors and names the run
  const { model, tokenizer, config } = loadCheckpoint(dir);
  const name = `embedded:${basename(resolve(dir))}@${config.modelSha256.slice(0, 12)}`;
  const workers = Math.min(concurrency, availableParallelism());
  if (workers <= 1)
    return {
      policy: new DerivedSeedPolicy(new EmbeddedPolicy(model, tokenizer, { name })),
      model: name,
      format,
      close: async () => {},
    };
  const pool = await EmbeddedPolicyPool.start(dir, { name, workers });
  if (pool.modelSha256 !== config.modelSha256) {
    await pool.close();
    throw new CheckpointError(`${dir} changed while it was loading; try again once it is written`);
  }
  return { policy: pool, model: name, format, close: () => pool.close() };
}

export async function runEvalCommand(
  data: BfclData,
  flags: EvalFlags,
  print: (s: string) => void,
): Promise<void> {
  const sampling: SamplingOptions = {
    temperature: parseNumberFlag('--temperature', flags.temperature, LIMITS.temperature),
    ...(flags.topP !== undefined ? { topP: optionalNumberFlag('--top-p', flags.topP, LIMITS.topP)! } : {}),
    ...(flags.maxTokens !== undefined
      ? { maxTokens: optionalNumberFlag('--max-tokens', flags.maxTokens, LIMITS.maxTokens)! }
      : {}),
    ...(flags.seed !== undefined ? { seed: optionalNumberFlag('--seed', flags.seed, LIMITS.seed)! } : {}),
    ...(flags.stop?.length ? { stop: flags.stop } : {}),
  };
  const concurrency = parseNumberFlag('--concurrency', flags.concurrency, LIMITS.concurrency);
  const chosen =
    flags.policy === 'embedded'
      ? await embeddedPolicy(flags, concurrency)
      : flags.policy === 'tinker'
        ? await tinkerEvalPolicy(flags, concurrency)
        : serverPolicy(flags);
  try {
    const ids = splitIds(data, flags.split);
    const tasks = data.tasks.filter((t) => ids.has(t.id));
    const config: EvalRunConfig = {
      suite: flags.suite,
      model: chosen.model,
      ...(chosen.baseUrl !== undefined ? { baseUrl: chosen.baseUrl } : {}),
      format: chosen.format,
      split: flags.split,
      sampling,
    };
    const outcome = await runEval(data, tasks, chosen.policy, config, flags.out, {
      concurrency,
      progress: progressBar('eval'),
    });
    print(outcome.table);
    print(`\n${outcome.ran} task(s) run, ${outcome.resumed} kept from before; results in ${flags.out}`);
  } finally {
    if ('close' in chosen) await chosen.close();
  }
}
