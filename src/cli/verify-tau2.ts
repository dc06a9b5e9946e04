/** `seal verify --suite tau2`: every conversation of a τ² results file scored again by seal's evaluator. */
import { readFileSync, statSync } from 'node:fs';
import { locateTau2Data } from '../envs/tau2/data.js';
import { verifyResults } from '../envs/tau2/results.js';
import { DOMAIN_LOADERS } from '../envs/tau2/runtime.js';
import { loadToolDocs } from '../envs/tau2/tool-docs.js';
import { TAU2_DOMAINS, type Tau2Domain } from '../envs/tau2/types.js';
import { markdownTable } from '../eval/table.js';
import { UsageError } from '../util/errors.js';
import { fileAccessError, writeJsonLines } from '../util/files.js';
import { checkOutPath } from './verify-out.js';

/** The `seal verify` flags this path reads (and the BFCL ones it refuses). */
interface VerifyConfig {
  readonly results?: string | undefined;
  readonly out?: string | undefined;
  readonly json?: true | undefined;
  readonly tau2Data?: string | undefined;
  readonly groundTruth?: true | undefined;
  readonly split?: string | undefined;
  readonly diagnose?: true | undefined;
  readonly dataDir?: string | undefined;
}

function refuseBfclFlags(flags: VerifyConfig): void {
  const bfclOnly = [
    ['groundTruth', '--ground-truth'],
    ['split', '--split'],
    ['diagnose', '--diagnose'],
    ['dataDir', '--data-dir'],
  ] as const;
  for (const [key, flag] of bfclOnly)
    if (flags[key] !== undefined)
      throw new UsageError(
        `${flag} is for BFCL result files; with --suite tau2 give --results FILE (and --tau2-data DIR for the data).`,
      );
}

export async function runTau2Verify(flags: VerifyConfig, print: (s: string) => void): Promise<void> {
  refuseBfclFlags(flags);
  if (!flags.results)
    throw new UsageError(
      "give --results FILE: a τ²-bench results file (the reference's, or a seal run's tau2_<domain>.json).",
    );
  const path = flags.results;
  try {
    if (!statSync(path).isFile())
      throw new UsageError(`--results ${path} is a folder; give a results file (JSON).`);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new UsageError(`results file not found: ${path}`);
    throw fileAccessError(e, 'read', path);
  }
  if (flags.out) checkOutPath(flags.out, [path]);
  const root = locateTau2Data(flags.tau2Data, '--tau2-data');
  const docs = loadToolDocs(root);
  // a file holds one domain: load only the one it names
  const loaded = new Map<string, Tau2Domain>();
  const domains: Partial<Record<string, Tau2Domain>> = {};
  for (const name of TAU2_DOMAINS)
    Object.defineProperty(domains, name, {
      enumerable: true,
      get: () => {
        if (!loaded.has(name)) loaded.set(name, DOMAIN_LOADERS[name](root, docs));
        return loaded.get(name);
      },
    });
  const verified = verifyResults(readFileSync(path, 'utf8'), domains, path);
  const m = verified.metrics;
  const changed = verified.simulations.filter(
    (s) => s.recorded_reward !== null && Math.abs(s.recorded_reward - s.reward) > 1e-6,
  );
  if (flags.out)
    writeJsonLines(
      flags.out,
      verified.simulations.map((s) => ({
        id: s.id,
        task_id: s.task_id,
        trial: s.trial,
        termination_reason: s.termination_reason,
        reward: s.reward,
        recorded_reward: s.recorded_reward,
        reward_info: s.reward_info,
      })),
    );
  const summary = {
    domain: verified.domain,
    simulations: m.num_simulations,
    tasks: m.num_tasks,
    average_reward: m.avg_reward,
    pass_hat_ks: m.pass_hat_ks,
    rewards_changed: changed.length,
  };
  if (flags.json) {
    print(JSON.stringify(summary));
    return;
  }
  const ks = Object.keys(m.pass_hat_ks).map(Number);
  print(
    markdownTable(
      ['domain', 'simulations', 'tasks', 'average reward', ...ks.map((k) => `pass^${k}`)],
      [
        [
          verified.domain,
          String(m.num_simulations),
          String(m.num_tasks),
          (100 * m.avg_reward).toFixed(2),
          ...ks.map((k) => (100 * m.pass_hat_ks[k]!).toFixed(2)),
        ],
      ],
    ),
  );
  if (changed.length > 0)
    print(
      `\n${changed.length} simulation(s) score differently from the reward the file records, e.g. ${changed[0]!.id} (task ${changed[0]!.task_id}): ${changed[0]!.recorded_reward} there, ${changed[0]!.reward} here`,
    );
  if (flags.out) print(`\nper-simulation rewards and breakdowns: ${flags.out}`);
}
