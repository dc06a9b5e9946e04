/** `seal eval --suite tau2`: τ²-bench played by the chosen policy against a simulated user. */

import { join } from 'node:path';
import { formatAdapter } from '../agent/formats/index.js';
import { userModelFrom } from '../agent/user-model.js';
import { PyRandom } from '../envs/py/random.js';
import { locateTau2Data } from '../envs/tau2/data.js';
import { loadTau2Runtime, scoreTau2Simulation, writeTau2Results } from '../envs/tau2/runtime.js';
import { tau2Suite } from '../envs/tau2/suite.js';
import { TAU2_DOMAINS, type Tau2DomainName } from '../envs/tau2/types.js';
import type { EvalConfig } from '../eval/config.js';
import { type EpisodeEvalConfig, runEpisodes } from '../eval/episodes.js';
import { OpenAiCompatiblePolicy } from '../policy/openai.js';
import { UsageError } from '../util/errors.js';
import { chooseEvalPolicy, policyRecord } from './eval-policy.js';
import { commaList, parseUrlFlag } from './flags.js';
import { progressBar } from './progress.js';

/** The reference's trial seeds: `random.seed(seed)`, then one `randint(0, 1000000)` per trial. */
export function trialSeeds(seed: number, trials: number): number[] {
  const rng = new PyRandom(seed);
  return Array.from({ length: trials }, () => Number(rng.randint(0, 1_000_000)));
}

/** The flags that are BFCL's alone, refused with τ² so that nobody believes they did something. */
function refuseBfclFlags(flags: EvalConfig): void {
  if (flags.dataDir) throw new UsageError('--data-dir is the BFCL data; for tau2 give --tau2-data DIR.');
  if (flags.categories)
    throw new UsageError('--categories picks BFCL categories; for tau2 pick domains with --domain.');
  if (flags.split !== 'test' && flags.split !== 'all' && !flags.split.includes('/'))
    throw new UsageError(
      `--split ${flags.split}: τ² has one set of tasks; use test (or all), or task ids such as retail/0,airline/3.`,
    );
}

export async function runTau2EvalCommand(flags: EvalConfig, print: (s: string) => void): Promise<void> {
  refuseBfclFlags(flags);
  if (!flags.userModel)
    throw new UsageError(
      'give --user-model NAME: the model that plays the τ² user (e.g. gpt-4.1, as the reference uses).',
    );
  const userBaseUrl = flags.userBaseUrl ?? flags.baseUrl ?? process.env.OPENAI_BASE_URL;
  if (!userBaseUrl)
    throw new UsageError(
      'give --user-base-url URL: the OpenAI-compatible server of the user model (or --base-url for both).',
    );
  parseUrlFlag(
    flags.userBaseUrl ? '--user-base-url' : '--base-url',
    userBaseUrl,
    'https://api.openai.com/v1',
  );
  const root = locateTau2Data(flags.tau2Data, '--tau2-data');
  const names: Tau2DomainName[] = flags.domain === 'all' ? [...TAU2_DOMAINS] : [flags.domain];
  const runtime = loadTau2Runtime(root, names);
  const userKey = process.env[flags.userApiKeyEnv];
  const userPolicy = new OpenAiCompatiblePolicy({
    baseUrl: userBaseUrl,
    model: flags.userModel,
    ...(userKey ? { apiKey: userKey } : {}),
    timeoutMs: flags.timeout * 1000,
    maxRetries: flags.retries,
  });
  const wanted =
    flags.split === 'test' || flags.split === 'all' ? undefined : new Set(commaList(flags.split));
  const suite = tau2Suite({
    domains: runtime.domains,
    user: userModelFrom(userPolicy, { temperature: 0 }),
    guidelines: runtime.guidelines,
    evaluate: scoreTau2Simulation,
    maxSteps: flags.maxSteps,
    ...(wanted ? { taskFilter: (d, t) => wanted.has(`${d}/${t.id}`) } : {}),
  });
  if (wanted) {
    const known = new Set(suite.tasks.map((t) => t.id));
    const bad = [...wanted].filter((id) => !known.has(id));
    if (bad.length > 0)
      throw new UsageError(
        `--split: no τ² task ${bad.slice(0, 3).join(', ')} in ${names.join(', ')}; ids look like retail/0.`,
      );
  }
  const chosen = await chooseEvalPolicy(flags, flags.concurrency);
  try {
    const seed = flags.seed ?? 300;
    const config: EpisodeEvalConfig = {
      suite: 'tau2',
      ...policyRecord(flags, chosen),
      groups: names,
      split: flags.split,
      trials: flags.trials,
      seed,
      counterpart: {
        userModel: flags.userModel,
        userTemperature: 0,
        maxSteps: flags.maxSteps,
        toolDocs: runtime.docs.available,
      },
    };
    const outcome = await runEpisodes(
      suite,
      suite.tasks.map((t) => t.id),
      chosen.policy,
      config,
      flags.out,
      {
        concurrency: flags.concurrency,
        format: formatAdapter(chosen.format),
        progress: progressBar('eval'),
        seeds: trialSeeds(seed, flags.trials),
        writeRecords: (rows, dir) =>
          writeTau2Results(
            rows,
            runtime,
            {
              model: chosen.model,
              userModel: flags.userModel!,
              trials: flags.trials,
              maxSteps: flags.maxSteps,
              seed,
              temperature: flags.temperature,
            },
            (domain) => join(dir, `tau2_${domain}.json`),
          ),
        ...(flags.force ? { force: true } : {}),
      },
    );
    print(outcome.table);
    if (!runtime.docs.available)
      print(
        '\nthe tools were described by their names only: the reference source files `seal data pull tau2` brings were not found',
      );
    print(`\n${outcome.ran} simulation(s) run, ${outcome.resumed} kept from before; results in ${flags.out}`);
  } finally {
    if ('close' in chosen) await chosen.close();
  }
}
