/** The policy `seal eval` evaluates, as its flags name it, and the sampling its requests carry. */
import { availableParallelism } from 'node:os';
import { basename, resolve } from 'node:path';
import type { ToolCallFormat } from '../agent/format.js';
import type { EvalConfig } from '../eval/config.js';
import { BASE_CHECKPOINT_DIR, CheckpointError, loadCheckpoint } from '../nn/checkpoint.js';
import { EMBEDDED_TOOL_FORMAT, EmbeddedPolicy } from '../policy/embedded/policy.js';
import { DerivedSeedPolicy, EmbeddedPolicyPool } from '../policy/embedded/pool.js';
import { OpenAiCompatiblePolicy } from '../policy/openai.js';
import type { Policy, SamplingOptions } from '../policy/policy.js';
import { UsageError } from '../util/errors.js';
import { tinkerEvalPolicy } from './eval-tinker.js';
import { parseUrlFlag } from './flags.js';

/** The policy and the run-config fields naming it. */
function serverPolicy(flags: EvalConfig): {
  policy: Policy;
  model: string;
  baseUrl: string;
  format: ToolCallFormat;
  extraBody?: Record<string, unknown>;
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
    timeoutMs: flags.timeout * 1000,
    maxRetries: flags.retries,
  });
  return {
    policy,
    model: flags.model,
    baseUrl,
    format: flags.format ?? 'native',
    ...(extraBody ? { extraBody } : {}),
  };
}

/**
 * The embedded policy on min(concurrency, cores) threads, or in process for one. Either way a
 * request without a seed is seeded from its messages, so results do not depend on the thread count.
 */
async function embeddedPolicy(
  flags: EvalConfig,
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

/** The sampling every request of an evaluation carries, from the flags. */
export function samplingOf(flags: EvalConfig): SamplingOptions {
  return {
    temperature: flags.temperature,
    ...(flags.topP !== undefined ? { topP: flags.topP } : {}),
    ...(flags.maxTokens !== undefined ? { maxTokens: flags.maxTokens } : {}),
    ...(flags.seed !== undefined ? { seed: flags.seed } : {}),
    ...(flags.stop?.length ? { stop: flags.stop } : {}),
  };
}

/**
 * What a run record says of the policy, for every suite's evaluation: its kind, the model, where it
 * was reached, the tool-call format, the sampling, a Tinker policy's chat format and thinking
 * choice, and a server's extra request fields (a resume with any of them changed is refused).
 */
export function policyRecord(
  flags: EvalConfig,
  chosen: Awaited<ReturnType<typeof chooseEvalPolicy>>,
): {
  policy: string;
  model: string;
  baseUrl?: string;
  format: ToolCallFormat;
  sampling: SamplingOptions;
  renderer?: string;
  thinking?: string;
  extraBody?: Record<string, unknown>;
} {
  return {
    policy: flags.policy,
    model: chosen.model,
    ...(chosen.baseUrl !== undefined ? { baseUrl: chosen.baseUrl } : {}),
    format: chosen.format,
    sampling: samplingOf(flags),
    ...('renderer' in chosen ? { renderer: chosen.renderer, thinking: chosen.thinking } : {}),
    ...('extraBody' in chosen && chosen.extraBody ? { extraBody: chosen.extraBody } : {}),
  };
}

/** The policy `--policy` names, with the run-config fields naming it; `close` when it holds resources. */
export async function chooseEvalPolicy(flags: EvalConfig, concurrency: number) {
  return flags.policy === 'embedded'
    ? await embeddedPolicy(flags, concurrency)
    : flags.policy === 'tinker'
      ? await tinkerEvalPolicy(flags, concurrency)
      : serverPolicy(flags);
}
