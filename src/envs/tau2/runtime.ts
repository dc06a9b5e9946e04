/**
 * What a τ² run needs, found and loaded in one place: the domains by name, the user guidelines,
 * the tool docs, the scorer, and the reference's results files written from a run's episodes.
 */
import { writeAtomic } from '../../util/files.js';
import type { Verdict } from '../suite.js';
import { loadAirlineDomain } from './domains/airline/index.js';
import { loadRetailDomain } from './domains/retail/index.js';
import { loadTelecomDomain } from './domains/telecom/index.js';
import type { Tau2Simulation } from './episode.js';
import { evaluateSimulation } from './evaluator/evaluate.js';
import { isSuccessful } from './evaluator/metrics.js';
import type { RewardInfo } from './evaluator/reward.js';
import { dumpResults, parseSimulation, type Tau2Results } from './results.js';
import { loadToolDocs } from './tool-docs.js';
import type { Tau2Domain, Tau2DomainLoader, Tau2DomainName, Tau2Task, ToolDocs } from './types.js';
import { loadUserGuidelines } from './user.js';

/** The domains seal plays, by name. */
export const DOMAIN_LOADERS: Readonly<Record<Tau2DomainName, Tau2DomainLoader>> = {
  retail: loadRetailDomain,
  airline: loadAirlineDomain,
  telecom: loadTelecomDomain,
};

export interface Tau2Runtime {
  readonly root: string;
  readonly domains: readonly Tau2Domain[];
  readonly guidelines: { readonly plain: string; readonly withTools: string };
  readonly docs: ToolDocs;
}

/** The chosen domains from a data root (checked by `locateTau2Data`), with the tool docs the root holds. */
export function loadTau2Runtime(
  root: string,
  names: readonly Tau2DomainName[],
  docs: ToolDocs = loadToolDocs(root),
): Tau2Runtime {
  return {
    root,
    domains: names.map((name) => DOMAIN_LOADERS[name](root, docs)),
    guidelines: { plain: loadUserGuidelines(root, false), withTools: loadUserGuidelines(root, true) },
    docs,
  };
}

/** The reference's score of a finished simulation, as the suite interface's verdict. */
export function scoreTau2Simulation(domain: Tau2Domain, task: Tau2Task, simulation: Tau2Simulation): Verdict {
  const info: RewardInfo = evaluateSimulation(domain, task, simulation);
  return { reward: info.reward, solved: isSuccessful(info.reward), detail: info };
}

/** What `writeTau2Results` reads of a finished episode (an `eval/episodes.ts` row). */
export interface Tau2EpisodeRecord {
  readonly group: string;
  readonly trial: number;
  readonly seed: number;
  readonly record: unknown;
}

export interface Tau2RunDescription {
  readonly model: string;
  readonly userModel: string;
  readonly trials: number;
  readonly maxSteps: number;
  readonly seed: number;
  readonly temperature: number;
}

/**
 * Each domain's conversations as the reference's results file (`tau2_<domain>.json`): the run's
 * info, the tasks played, and every simulation with its reward info, so the reference's own tools
 * read a seal run.
 */
export function writeTau2Results(
  rows: readonly Tau2EpisodeRecord[],
  runtime: Tau2Runtime,
  run: Tau2RunDescription,
  path: (domain: string) => string,
): void {
  for (const domain of runtime.domains) {
    const mine = rows.filter((r) => r.group === domain.name);
    if (mine.length === 0) continue;
    const simulations = mine.map((r) => ({
      ...parseSimulation(String(r.record), `the ${domain.name} record of trial ${r.trial}`),
      trial: r.trial,
      seed: r.seed,
    }));
    const played = new Set(simulations.map((s) => s.task_id));
    // one environment for what the run's info states of the domain (a fresh one copies the database)
    const env = domain.makeEnvironment();
    const results: Tau2Results = {
      timestamp: null,
      info: {
        git_commit: '',
        num_trials: run.trials,
        max_steps: run.maxSteps,
        max_errors: 10,
        user_info: {
          implementation: 'user_simulator',
          llm: run.userModel,
          llm_args: new Map([['temperature', 0]]),
          global_simulation_guidelines:
            env.userTools().length > 0 ? runtime.guidelines.withTools : runtime.guidelines.plain,
        },
        agent_info: {
          implementation: 'llm_agent',
          llm: run.model,
          llm_args: new Map([['temperature', run.temperature]]),
        },
        environment_info: {
          domain_name: domain.name,
          policy: env.policy,
          tool_defs: null,
        },
        seed: run.seed,
      },
      tasks: domain.tasks.filter((t) => played.has(t.id)),
      simulations,
    };
    writeAtomic(path(domain.name), `${dumpResults(results)}\n`);
  }
}
