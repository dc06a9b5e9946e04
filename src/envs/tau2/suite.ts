/**
 * τ²-bench behind the one suite interface: the selected domains' tasks, each played as a
 * `Tau2Episode` against a fresh environment and the simulated user, scored by the reference's
 * evaluator. The domains, the evaluator and the user model are passed in, so the suite is the
 * same whether they are the real ones or a test's.
 */
import type { Episode, Suite, SuiteTask, UserModel, Verdict } from '../suite.js';
import { Tau2Episode, type Tau2Simulation } from './episode.js';
import { computeMetrics } from './evaluator/metrics.js';
import type { Tau2Domain, Tau2DomainName, Tau2Task } from './types.js';
import { userSystemPrompt } from './user.js';

/**
 * seal's framing of the agent's job (the reference's agent prompt is its own harness's; this one
 * says the same in seal's words): act for the company under its policy, one kind of message at a
 * time.
 */
export function agentFraming(policy: string): string {
  return [
    '<instructions>',
    'You are a customer service agent. Help the user within the rules of the <policy> below.',
    'Each of your messages does one of two things: it answers the user, or it calls tools. Never both at once.',
    'Follow the policy at every step, and use only the tools you are given.',
    '</instructions>',
    '<policy>',
    policy,
    '</policy>',
  ].join('\n');
}

export interface Tau2SuiteOptions {
  readonly domains: readonly Tau2Domain[];
  readonly user: UserModel;
  /** the user guidelines: without tools (retail, airline) and with tools (telecom) */
  readonly guidelines: { readonly plain: string; readonly withTools: string };
  /** the reference's scorer */
  readonly evaluate: (domain: Tau2Domain, task: Tau2Task, simulation: Tau2Simulation) => Verdict;
  /** task ids to keep per domain (all when absent) */
  readonly taskFilter?: (domain: Tau2DomainName, task: Tau2Task) => boolean;
  readonly maxSteps?: number;
  readonly clock?: () => Date;
}

export interface Tau2Suite extends Suite {
  /** the task a suite task id names (`retail/0`) */
  task(id: string): { domain: Tau2Domain; task: Tau2Task };
}

/** A τ² task's id in the suite: its domain and its own id (ids repeat across domains). */
export const tau2TaskId = (domain: Tau2DomainName, taskId: string) => `${domain}/${taskId}`;

export function tau2Suite(options: Tau2SuiteOptions): Tau2Suite {
  const byId = new Map<string, { domain: Tau2Domain; task: Tau2Task }>();
  const tasks: SuiteTask[] = [];
  for (const domain of options.domains)
    for (const task of domain.tasks) {
      if (options.taskFilter && !options.taskFilter(domain.name, task)) continue;
      const id = tau2TaskId(domain.name, task.id);
      byId.set(id, { domain, task });
      tasks.push({ id, group: domain.name });
    }
  const find = (id: string) => {
    const found = byId.get(id);
    if (!found) throw new Error(`no τ² task ${id}`);
    return found;
  };
  return {
    name: 'tau2',
    groups: options.domains.map((d) => d.name),
    tasks,
    task: find,
    summarise(group, episodes, trials) {
      const domain = options.domains.find((d) => d.name === group);
      const m = computeMetrics(
        episodes.map((e) => ({ task_id: find(e.taskId).task.id, reward: e.reward })),
        trials,
        domain?.tasks ?? [],
      );
      return {
        averageReward: m.avg_reward,
        passHatK: Array.from({ length: trials }, (_, i) => m.pass_hat_ks[i + 1] ?? 0),
      };
    },
    episode(id, { seed }): Episode {
      const { domain, task } = find(id);
      const env = domain.makeEnvironment();
      const withTools = env.userTools().length > 0;
      return new Tau2Episode(task, env, {
        user: options.user,
        userSystemPrompt: userSystemPrompt(
          withTools ? options.guidelines.withTools : options.guidelines.plain,
          task.user_scenario,
        ),
        framing: agentFraming(env.policy),
        evaluate: (simulation) => options.evaluate(domain, task, simulation),
        ...(seed !== undefined ? { seed } : {}),
        ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
        ...(options.clock ? { clock: options.clock } : {}),
      });
    },
  };
}
