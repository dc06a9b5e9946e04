// The evaluator on the real retail and airline tasks: a conversation that makes every gold call and
// says every required piece of information scores 1 on every task, and the alterations the evaluator
// must catch are caught on real data. Needs the v0.2.0 data in ../shared/tau2/v0.2.0.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonDumps } from '../../src/envs/py/format.js';
import { parsePyJson } from '../../src/envs/py/json.js';
import type { PyDict } from '../../src/envs/py/values.js';
import { loadAirlineDomain } from '../../src/envs/tau2/domains/airline/index.js';
import { loadRetailDomain } from '../../src/envs/tau2/domains/retail/index.js';
import { evaluateSimulation } from '../../src/envs/tau2/evaluator/evaluate.js';
import { setState, Tau2ReplayError } from '../../src/envs/tau2/evaluator/replay.js';
import {
  dumpMessage,
  dumpResults,
  dumpTask,
  parseResults,
  verifyResults,
} from '../../src/envs/tau2/results.js';
import { NO_TOOL_DOCS } from '../../src/envs/tau2/tool-docs.js';
import type { Tau2Action, Tau2Domain, Tau2Message, Tau2Task } from '../../src/envs/tau2/types.js';

const ROOT = resolve(join(import.meta.dirname, '..', '..', '..', 'shared', 'tau2', 'v0.2.0'));
const HAS_DATA = existsSync(join(ROOT, 'data', 'tau2', 'domains'));
if (!HAS_DATA)
  console.warn(`tau2 evaluator (real tasks): skipped, no τ² data at ${ROOT} (the v0.2.0 data/tau2 folder)`);

/** The gold actions as a conversation: each call answered by a live environment, then the information said. */
function goldConversation(
  domain: Tau2Domain,
  task: Tau2Task,
  edit: (actions: readonly Tau2Action[]) => readonly Tau2Action[] = (a) => a,
  say = (task.evaluation_criteria?.communicate_info ?? []).join(' and '),
): Tau2Message[] {
  const env = domain.makeEnvironment();
  setState(env, task.initial_state, []);
  const messages: Tau2Message[] = [
    { role: 'assistant', content: 'Hi! How can I help you today?', tool_calls: null },
  ];
  messages.push({ role: 'user', content: 'I need help.', tool_calls: null });
  edit(task.evaluation_criteria?.actions ?? []).forEach((a, i) => {
    const call = { id: `call_${i}`, name: a.name, arguments: a.arguments, requestor: a.requestor };
    messages.push({ role: a.requestor, content: null, tool_calls: [call] });
    const r = env.respond(call);
    messages.push({ role: 'tool', id: call.id, content: r.content, requestor: a.requestor, error: r.error });
  });
  messages.push({ role: 'assistant', content: say || 'Done.', tool_calls: null });
  messages.push({ role: 'user', content: '###STOP###', tool_calls: null });
  return messages;
}

const score = (domain: Tau2Domain, task: Tau2Task, messages: Tau2Message[]) =>
  evaluateSimulation(domain, task, { termination_reason: 'user_stop', messages });

// one test a task: a domain takes about 100 s on two loaded cores (three environments and two
// database texts of about 1.5 MB a task), past one test's time limit
for (const [name, load, count] of [
  ['retail', loadRetailDomain, 114],
  ['airline', loadAirlineDomain, 50],
] as const) {
  const domain = HAS_DATA ? load(ROOT, NO_TOOL_DOCS) : undefined;
  describe.skipIf(!HAS_DATA)(`tau2 ${name}: the gold conversation`, () => {
    it(`covers the ${count} tasks`, () => {
      expect(domain!.tasks).toHaveLength(count);
    });
    it.each(domain?.tasks.map((t) => [t.id, t] as const) ?? [])('scores 1 on task %s', (_id, task) => {
      const r = score(domain!, task, goldConversation(domain!, task));
      // every retail and airline task has the default basis
      expect(r.reward_breakdown).toEqual({ DB: 1, COMMUNICATE: 1 });
      expect(r.reward).toBe(1);
    });
  });
}

describe.skipIf(!HAS_DATA)('tau2 retail: alterations on a real task', () => {
  // task 38: look up the user and the order, cancel it ("no longer needed"); say "camera" and "481.50"
  const domain = HAS_DATA ? loadRetailDomain(ROOT, NO_TOOL_DOCS) : undefined;
  const task = domain?.tasks.find((t) => t.id === '38');

  it('fails the database check when the cancellation reason changes', () => {
    const changed = goldConversation(domain!, task!, (actions) =>
      actions.map((a) =>
        a.name === 'cancel_pending_order'
          ? {
              ...a,
              arguments: parsePyJson(`{"order_id": "#W9348897", "reason": "ordered by mistake"}`) as PyDict,
            }
          : a,
      ),
    );
    const r = score(domain!, task!, changed);
    expect(r.reward_breakdown).toEqual({ DB: 0, COMMUNICATE: 1 });
    expect(r.reward).toBe(0);
  });

  it('keeps 1 with an extra read-only call', () => {
    const extra = goldConversation(domain!, task!, (actions) => [
      { action_id: 'extra', requestor: 'assistant', name: 'list_all_product_types', arguments: new Map() },
      ...actions,
    ]);
    expect(score(domain!, task!, extra).reward).toBe(1);
  });

  it('fails when a required piece of information is not said', () => {
    const r = score(
      domain!,
      task!,
      goldConversation(domain!, task!, undefined, 'Your camera order is cancelled.'),
    );
    expect(r.reward_breakdown).toEqual({ DB: 1, COMMUNICATE: 0 });
    // case aside, both pieces said in one message
    expect(
      score(domain!, task!, goldConversation(domain!, task!, undefined, 'Camera: $481.50 back.')).reward,
    ).toBe(1);
  });

  it('refuses a conversation whose recorded tool result was edited', () => {
    const messages = goldConversation(domain!, task!);
    const i = messages.findIndex((m) => m.role === 'tool' && m.content?.includes('481.5'));
    expect(i).toBeGreaterThan(0);
    const tampered = messages.map((m, j) =>
      j === i && m.role === 'tool' ? { ...m, content: m.content!.replace('481.5', '418.5') } : m,
    );
    expect(() => score(domain!, task!, tampered)).toThrow(Tau2ReplayError);
  });
});

describe.skipIf(!HAS_DATA)('tau2 retail: a results file of real conversations', () => {
  it('writes the tasks and conversations so they read back the same, and verifies them', () => {
    const domain = loadRetailDomain(ROOT, NO_TOOL_DOCS);
    const tasks = domain.tasks.slice(0, 3);
    const simulations = tasks.flatMap((task, i) =>
      [0, 1].map((trial) => ({
        id: `sim-${i}-${trial}`,
        task_id: task.id,
        timestamp: null,
        start_time: '2026-12-07T10:00:00',
        end_time: '2026-12-07T10:01:00',
        duration: 60,
        termination_reason: 'user_stop' as const,
        agent_cost: null,
        user_cost: null,
        reward_info: null,
        // the second trial of the third task never says what it must
        messages: goldConversation(domain, task, undefined, i === 2 && trial === 1 ? 'Bye.' : undefined),
        trial,
        seed: 300,
      })),
    );
    const info = {
      git_commit: '',
      num_trials: 2,
      max_steps: 200,
      max_errors: 10,
      user_info: {
        implementation: 'user_simulator',
        llm: null,
        llm_args: null,
        global_simulation_guidelines: null,
      },
      agent_info: { implementation: 'llm_agent', llm: null, llm_args: null },
      environment_info: { domain_name: 'retail', policy: '', tool_defs: null },
      seed: 300,
    };
    const dir = mkdtempSync(join(tmpdir(), 'tau2-real-results-'));
    const file = join(dir, 'results.json');
    writeFileSync(file, dumpResults({ timestamp: null, info, tasks, simulations }));
    const text = readFileSync(file, 'utf8');
    const read = parseResults(text, file);
    // the file states the defaults tasks.json leaves out (ticket, env_assertions: null)
    const asWritten = (t: Tau2Task) => jsonDumps(dumpTask(t));
    expect(read.tasks.map(asWritten)).toEqual(tasks.map(asWritten));
    const messagesAsWritten = (ms: readonly Tau2Message[]) => jsonDumps(ms.map(dumpMessage));
    expect(read.simulations.map((s) => messagesAsWritten(s.messages))).toEqual(
      simulations.map((s) => messagesAsWritten(s.messages)),
    );
    const v = verifyResults(text, { retail: domain }, file);
    expect(v.simulations.map((s) => s.reward)).toEqual([1, 1, 1, 1, 1, 0]);
    expect(v.metrics.pass_hat_ks).toEqual({ 1: 5 / 6, 2: 2 / 3 });
  });
});
