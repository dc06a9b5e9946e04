/**
 * Every telecom task's gold path through seal's environment: the task's initial state, its gold
 * actions (the user's on the phone, the agent's on the carrier's database), then its environment
 * assertions, each of which must hold. This is what makes the gold conversation score reward 1 on
 * ENV_ASSERTION in the reference's evaluator.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repr } from '../../../src/envs/py/format.js';
import type { PyValue } from '../../../src/envs/py/values.js';
import { loadTelecom, loadTelecomSmallTasks } from '../../../src/envs/tau2/domains/telecom/environment.js';
import { NO_TOOL_DOCS } from '../../../src/envs/tau2/tool-docs.js';
import type { Tau2Domain, Tau2Task } from '../../../src/envs/tau2/types.js';

export const TAU2_ROOT = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'tau2', 'v0.2.0');
const present = existsSync(join(TAU2_ROOT, 'data', 'tau2', 'domains', 'telecom', 'tasks.json'));
if (!present)
  console.warn(
    `telecom gold tests skipped: no τ² data at ${TAU2_ROOT} (data/tau2/domains/telecom); run \`seal data pull tau2\` and link its folder there`,
  );

interface Outcome {
  readonly errors: string[];
  readonly failed: string[];
}

function replay(domain: Tau2Domain, task: Tau2Task): Outcome {
  const env = domain.makeEnvironment();
  const init = task.initial_state;
  if (init?.initialization_data?.agent_data) env.updateDb('assistant', init.initialization_data.agent_data);
  if (init?.initialization_data?.user_data) env.updateDb('user', init.initialization_data.user_data);
  for (const call of init?.initialization_actions ?? []) env.runFunction(call);
  const errors: string[] = [];
  for (const a of task.evaluation_criteria?.actions ?? []) {
    const r = env.respond({ id: a.action_id, name: a.name, arguments: a.arguments, requestor: a.requestor });
    if (r.error) errors.push(`${a.name}: ${r.content}`);
  }
  const failed: string[] = [];
  for (const assertion of task.evaluation_criteria?.env_assertions ?? []) {
    const got: PyValue = env.runFunction(assertion);
    if (typeof got !== 'boolean' || got !== assertion.assert_value)
      failed.push(`${assertion.func_name}(${repr(assertion.arguments)}) gave ${repr(got)}`);
  }
  return { errors, failed };
}

describe.skipIf(!present)('telecom: gold actions satisfy every environment assertion', () => {
  const domain = present ? loadTelecom(TAU2_ROOT, NO_TOOL_DOCS) : undefined;

  it('loads the 114 tasks and the policy as the reference assembles it', () => {
    expect(domain!.tasks).toHaveLength(114);
    const policy = domain!.makeEnvironment().policy;
    expect(policy.startsWith('<main_policy>\n# Telecom Agent Policy\n')).toBe(true);
    expect(policy).toContain('\n</main_policy>\n<tech_support_policy>\n');
    expect(policy.endsWith('\n</tech_support_policy>')).toBe(true);
  });

  it('environments start from the same databases, untouched by earlier episodes', () => {
    const first = domain!.makeEnvironment();
    const before = [first.dbText('assistant'), first.dbText('user')];
    first.runFunction({ env_type: 'user', func_name: 'break_vpn', arguments: new Map() });
    first.respond({
      id: 'x',
      name: 'enable_roaming',
      arguments: new Map([
        ['customer_id', 'C1001'],
        ['line_id', 'L1001'],
      ]),
      requestor: 'assistant',
    });
    const second = domain!.makeEnvironment();
    expect([second.dbText('assistant'), second.dbText('user')]).toEqual(before);
  });

  it('tasks.json: every task', () => {
    const bad: string[] = [];
    for (const task of domain!.tasks) {
      const { errors, failed } = replay(domain!, task);
      if (errors.length || failed.length) bad.push(`${task.id}: ${[...errors, ...failed].join('; ')}`);
    }
    expect(bad).toEqual([]);
  });

  it('tasks_small.json: every task', () => {
    const small = loadTelecomSmallTasks(TAU2_ROOT);
    expect(small.length).toBeGreaterThan(0);
    const bad: string[] = [];
    for (const task of small) {
      const { errors, failed } = replay(domain!, task);
      if (errors.length || failed.length) bad.push(`${task.id}: ${[...errors, ...failed].join('; ')}`);
    }
    expect(bad).toEqual([]);
  });

  it('without its gold writes, every task that has some fails an assertion (the check is not vacuous)', () => {
    const kinds = domain!.makeEnvironment();
    const unfixed: string[] = [];
    let withWrites = 0;
    for (const task of domain!.tasks) {
      const actions = task.evaluation_criteria?.actions ?? [];
      if (!actions.some((a) => kinds.toolKind(a.requestor, a.name) === 'write')) continue;
      withWrites++;
      const bare = { ...task, evaluation_criteria: { ...task.evaluation_criteria!, actions: [] } };
      if (replay(domain!, bare).failed.length === 0) unfixed.push(task.id);
    }
    expect(withWrites).toBeGreaterThan(90);
    expect(unfixed).toEqual([]);
  });
});
