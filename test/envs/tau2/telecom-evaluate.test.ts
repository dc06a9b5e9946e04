/**
 * The gold conversation of every telecom task, played live (each gold call answered by a running
 * environment, the user's calls on the phone, the agent's on the carrier's records) and scored by
 * seal's evaluator as the reference scores it: reward 1. And the same conversation without the
 * user's fix on the phone scores 0.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTelecom } from '../../../src/envs/tau2/domains/telecom/environment.js';
import { evaluateSimulation } from '../../../src/envs/tau2/evaluator/evaluate.js';
import { NO_TOOL_DOCS } from '../../../src/envs/tau2/tool-docs.js';
import type { Tau2Action, Tau2Domain, Tau2Message, Tau2Task } from '../../../src/envs/tau2/types.js';

const ROOT = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'tau2', 'v0.2.0');
const present = existsSync(join(ROOT, 'data', 'tau2', 'domains', 'telecom', 'tasks.json'));
if (!present)
  console.warn(
    `telecom evaluation tests skipped: no τ² data at ${ROOT} (data/tau2/domains/telecom); run \`seal data pull tau2\` and link its folder there`,
  );

/** The conversation an agent and a user who do exactly the gold actions would have. */
function goldConversation(domain: Tau2Domain, task: Tau2Task, actions: readonly Tau2Action[]): Tau2Message[] {
  const env = domain.makeEnvironment();
  const init = task.initial_state;
  for (const call of init?.initialization_actions ?? []) env.runFunction(call);
  env.syncTools();
  const messages: Tau2Message[] = [
    { role: 'assistant', content: 'Hi! How can I help you today?', tool_calls: null },
    { role: 'user', content: 'My phone has a problem.', tool_calls: null },
  ];
  actions.forEach((a, i) => {
    const call = { id: `call_${i}`, name: a.name, arguments: a.arguments, requestor: a.requestor };
    messages.push({ role: a.requestor, content: null, tool_calls: [call] });
    const r = env.respond(call);
    messages.push({ role: 'tool', id: call.id, content: r.content, requestor: a.requestor, error: r.error });
  });
  messages.push({ role: 'user', content: 'It works now, thanks. ###STOP###', tool_calls: null });
  return messages;
}

describe.skipIf(!present)('telecom: gold conversations through the evaluator', () => {
  const domain = present ? loadTelecom(ROOT, NO_TOOL_DOCS) : undefined;

  it('every task scores 1', () => {
    const below: string[] = [];
    for (const task of domain!.tasks) {
      const messages = goldConversation(domain!, task, task.evaluation_criteria?.actions ?? []);
      const score = evaluateSimulation(domain!, task, { termination_reason: 'user_stop', messages });
      if (score.reward !== 1) below.push(`${task.id}: ${JSON.stringify(score.reward_breakdown)}`);
    }
    expect(below).toEqual([]);
  });

  it("a task whose fix is on the phone scores 0 when the user's action is left out", () => {
    const task = domain!.tasks.find((t) =>
      (t.evaluation_criteria?.actions ?? []).some(
        (a) => a.requestor === 'user' && a.name === 'toggle_airplane_mode',
      ),
    )!;
    const agentOnly = (task.evaluation_criteria?.actions ?? []).filter((a) => a.requestor !== 'user');
    const messages = goldConversation(domain!, task, agentOnly);
    const score = evaluateSimulation(domain!, task, { termination_reason: 'user_stop', messages });
    expect(score.reward).toBe(0);
    expect(score.reward_breakdown?.ENV_ASSERTION).toBe(0);
  });
});
