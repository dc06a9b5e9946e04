/** `seal eval`: flag parsing and output; the work is in eval/. */
import { availableParallelism } from 'node:os';
import { basename, resolve } from 'node:path';
import type { Command } from 'commander';
import type { ToolCallFormat } from '../agent/format.js';
import type { BfclData } from '../envs/bfcl/data/tasks.js';
import { loadSuite } from '../envs/suites.js';
import { abstentionText } from '../eval/abstention.js';
import { EVAL_SETTINGS, type EvalConfig } from '../eval/config.js';
import { type EvalRunConfig, runEval } from '../eval/run.js';
import { BASE_CHECKPOINT_DIR, CheckpointError, loadCheckpoint } from '../nn/checkpoint.js';
import { EMBEDDED_TOOL_FORMAT, EmbeddedPolicy } from '../policy/embedded/policy.js';
import { DerivedSeedPolicy, EmbeddedPolicyPool } from '../policy/embedded/pool.js';
import { OpenAiCompatiblePolicy } from '../policy/openai.js';
import type { Policy, SamplingOptions } from '../policy/policy.js';
import { UsageError } from '../util/errors.js';
import { tinkerEvalPolicy } from './eval-tinker.js';
import { addSettingOptions, parseUrlFlag } from './flags.js';
import { progressBar } from './progress.js';
import { splitIds } from './verify.js';

/** `seal eval` */
export function registerEval(program: Command): void {
  const cmd = program
    .command('eval')
    .description(
      'Evaluate a policy (a model served by an OpenAI-compatible server, or the embedded one) under the strict protocol',
    );
  addSettingOptions(cmd, EVAL_SETTINGS);
  cmd.action(async (opts: Record<string, unknown>) => {
    const config = EVAL_SETTINGS.ofFlags(opts);
    const print = (s: string) => console.log(s);
    const suite = config.suite;
    if (suite === 'tau2') {
      const { runTau2EvalCommand } = await import('./eval-tau2.js');
      await runTau2EvalCommand(config, print);
      return;
    }
    await runEvalCommand(loadSuite(suite, config.dataDir), { ...config, suite }, print);
  });
}

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

/** The policy `--policy` names, with the run-config fields naming it; `close` when it holds resources. */
export async function chooseEvalPolicy(flags: EvalConfig, concurrency: number) {
  return flags.policy === 'embedded'
    ? await embeddedPolicy(flags, concurrency)
    : flags.policy === 'tinker'
      ? await tinkerEvalPolicy(flags, concurrency)
      : serverPolicy(flags);
}

export async function runEvalCommand(
  data: BfclData,
  flags: EvalConfig & { suite: BfclData['suite'] },
  print: (s: string) => void,
): Promise<void> {
  const sampling = samplingOf(flags);
  const concurrency = flags.concurrency;
  const chosen = await chooseEvalPolicy(flags, concurrency);
  try {
    const ids = splitIds(data, flags.split);
    const tasks = data.tasks.filter((t) => ids.has(t.id));
    const config: EvalRunConfig = {
      suite: flags.suite,
      policy: flags.policy,
      model: chosen.model,
      ...(chosen.baseUrl !== undefined ? { baseUrl: chosen.baseUrl } : {}),
      format: chosen.format,
      split: flags.split,
      sampling,
      ...('renderer' in chosen ? { renderer: chosen.renderer, thinking: chosen.thinking } : {}),
      ...('extraBody' in chosen && chosen.extraBody ? { extraBody: chosen.extraBody } : {}),
    };
    const outcome = await runEval(data, tasks, chosen.policy, config, flags.out, {
      concurrency,
      progress: progressBar('eval'),
      ...(flags.force ? { force: true } : {}),
    });
    print(outcome.table);
    const held = Object.entries(outcome.abstention).map(
      ([category, count]) => `${category} ${abstentionText(count)}`,
    );
    if (held.length > 0) print(`\nturns with nothing to call answered without a call: ${held.join(', ')}`);
    print(`\n${outcome.ran} task(s) run, ${outcome.resumed} kept from before; results in ${flags.out}`);
  } finally {
    if ('close' in chosen) await chosen.close();
  }
}
