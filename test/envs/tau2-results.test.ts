// τ² v0.2.0's results file: read as the reference writes it, written back so it reads the same,
// and every conversation in it scored again (`verifyResults`), refusing a tampered one.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Tau2ReplayError } from '../../src/envs/tau2/evaluator/replay.js';
import { dumpResults, parseResults, Tau2ResultsError, verifyResults } from '../../src/envs/tau2/results.js';
import { toyDomain } from '../support/tau2-toy.js';

const TASK = `{
      "id": "deposit",
      "description": {"purpose": null, "relevant_policies": null, "notes": null},
      "user_scenario": {"persona": null, "instructions": {"domain": "retail", "reason_for_call": "deposit", "known_info": null, "unknown_info": null, "task_instructions": "be brief"}},
      "ticket": null,
      "initial_state": null,
      "evaluation_criteria": {
        "actions": [{"action_id": "a1", "requestor": "assistant", "name": "deposit", "arguments": {"account_id": "A", "amount": 60}, "info": null, "compare_args": null}],
        "env_assertions": null,
        "communicate_info": ["160"],
        "nl_assertions": null,
        "reward_basis": ["DB", "COMMUNICATE"]
      }
    }`;

/** A conversation as the reference's run saves it (`SimulationRun.model_dump()`). */
function simulation(
  id: string,
  trial: number,
  opts: { amount?: string; result?: string; say?: string; reason?: string } = {},
) {
  const amount = opts.amount ?? '60';
  const result = opts.result ?? '{"account_id": "A", "balance": 160}';
  const ts = '"2025-06-01T10:00:00.000000"';
  return `{
      "id": "${id}",
      "task_id": "deposit",
      "timestamp": ${ts},
      "start_time": ${ts},
      "end_time": ${ts},
      "duration": 12.5,
      "termination_reason": "${opts.reason ?? 'user_stop'}",
      "agent_cost": 0.01,
      "user_cost": 0.002,
      "reward_info": {"reward": 1.0, "db_check": {"db_match": true, "db_reward": 1.0}, "env_assertions": [], "action_checks": [], "nl_assertions": null, "communicate_checks": [], "reward_basis": ["DB", "COMMUNICATE"], "reward_breakdown": {"DB": 1.0, "COMMUNICATE": 1.0}, "info": {"env": null, "nl": null, "communicate": null, "action": null}},
      "messages": [
        {"role": "assistant", "content": "Hi! How can I help you today?", "tool_calls": null, "turn_idx": 0, "timestamp": ${ts}, "cost": 0.0, "usage": null, "raw_data": null},
        {"role": "user", "content": "Put 60 into account A.", "tool_calls": null, "turn_idx": 1, "timestamp": ${ts}, "cost": 0.001, "usage": {"completion_tokens": 7, "prompt_tokens": 100}, "raw_data": null},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "name": "deposit", "arguments": {"account_id": "A", "amount": ${amount}}, "requestor": "assistant"}], "turn_idx": 2, "timestamp": ${ts}, "cost": 0.004, "usage": null, "raw_data": null},
        {"id": "call_1", "role": "tool", "content": ${JSON.stringify(result)}, "requestor": "assistant", "error": false, "turn_idx": 3, "timestamp": ${ts}},
        {"role": "assistant", "content": ${JSON.stringify(opts.say ?? 'Your balance is now 160.')}, "tool_calls": null, "turn_idx": 4, "timestamp": ${ts}, "cost": 0.003, "usage": null, "raw_data": null},
        {"role": "user", "content": "###STOP###", "tool_calls": null, "turn_idx": 5, "timestamp": ${ts}, "cost": 0.001, "usage": null, "raw_data": null}
      ],
      "trial": ${trial},
      "seed": 300
    }`;
}

function results(simulations: string[], numTrials = 3): string {
  return `{
  "timestamp": "2025-06-01T10:00:00.000000",
  "info": {
    "git_commit": "f8de30c2",
    "num_trials": ${numTrials},
    "max_steps": 200,
    "max_errors": 10,
    "user_info": {"implementation": "user_simulator", "llm": "gpt-4.1", "llm_args": {"temperature": 0.0}, "global_simulation_guidelines": "be a user"},
    "agent_info": {"implementation": "llm_agent", "llm": "some-model", "llm_args": {"temperature": 0.0}},
    "environment_info": {"domain_name": "retail", "policy": "Be a good bank.", "tool_defs": null},
    "seed": 300
  },
  "tasks": [${TASK}],
  "simulations": [${simulations.join(',')}]
}`;
}

const domains = { retail: toyDomain() };
const threeTrials = results([
  simulation('s0', 0),
  simulation('s1', 1, { amount: '61', result: '{"account_id": "A", "balance": 161}' }),
  simulation('s2', 2, { say: 'Done, 1,60.' }),
]);

describe('verifyResults', () => {
  it('scores every conversation again and computes the metrics', () => {
    const v = verifyResults(threeTrials, domains);
    expect(v.domain).toBe('retail');
    expect(v.simulations.map((s) => [s.id, s.reward, s.recorded_reward])).toEqual([
      ['s0', 1, 1],
      ['s1', 0, 1], // a changed write argument: the database differs from the gold one
      ['s2', 1, 1], // "1,60" is "160" once commas are removed
    ]);
    expect(v.simulations[1]!.reward_info.reward_breakdown).toEqual({ DB: 0, COMMUNICATE: 1 });
    expect(v.metrics.avg_reward).toBe(2 / 3);
    expect(v.metrics.pass_hat_ks).toEqual({ 1: 2 / 3, 2: 1 / 3, 3: 0 });
    expect(v.metrics.avg_agent_cost).toBe(0.01);
    expect(v.results.simulations[1]!.reward_info?.reward).toBe(0);
  });

  it('scores a premature end 0 even when the conversation did the task', () => {
    const v = verifyResults(results([simulation('s0', 0, { reason: 'max_steps' })], 1), domains);
    expect(v.simulations[0]!.reward).toBe(0);
    expect(v.simulations[0]!.reward_info.info).toEqual({
      note: 'Simulation terminated prematurely. Termination reason: TerminationReason.MAX_STEPS',
    });
  });

  it('refuses a file with a tampered tool result, naming the conversation', () => {
    const tampered = results([
      simulation('s0', 0),
      simulation('s1', 1, { result: '{"account_id": "A", "balance": 999}' }),
    ]);
    expect(() => verifyResults(tampered, domains)).toThrow(Tau2ReplayError);
    expect(() => verifyResults(tampered, domains)).toThrow(
      /conversation s1 \(task "deposit", trial 1\) cannot be replayed: message 3: the recorded result of deposit/,
    );
  });

  it('says which domain is missing', () => {
    expect(() => verifyResults(threeTrials, {})).toThrow(
      /of the domain "retail", which seal cannot score here/,
    );
    const solo = threeTrials
      .replace('"implementation": "llm_agent"', '"implementation": "llm_agent_solo"')
      .replace('"implementation": "user_simulator"', '"implementation": "dummy_user"');
    expect(() => verifyResults(solo, domains)).toThrow(/solo-mode run/);
  });
});

describe('the results file', () => {
  it('keeps tool-call arguments as Python values', () => {
    const r = parseResults(results([simulation('s0', 0, { amount: '60.0' })]));
    const call = r.simulations[0]!.messages.flatMap((m) =>
      m.role === 'assistant' ? (m.tool_calls ?? []) : [],
    )[0]!;
    expect(call.arguments.get('amount')).toBe(60);
    expect(typeof call.arguments.get('amount')).toBe('number');
    expect(parseResults(threeTrials).simulations[0]!.messages[2]).toMatchObject({
      tool_calls: [{ name: 'deposit' }],
    });
    const int = parseResults(threeTrials).simulations[0]!.messages;
    expect(int[2]!.role === 'assistant' && int[2]!.tool_calls![0]!.arguments.get('amount')).toBe(60n);
  });

  it('reads back what it writes, floats as floats, and writes what it reads', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tau2-results-'));
    const first = parseResults(results([simulation('s0', 0, { amount: '60.0' })]));
    const file = join(dir, 'results.json');
    writeFileSync(file, dumpResults(first));
    const text = readFileSync(file, 'utf8');
    const again = parseResults(text, file);
    expect(dumpResults(again)).toBe(text);
    expect(again.simulations[0]!.messages).toEqual(first.simulations[0]!.messages);
    expect(again.tasks).toEqual(first.tasks);
    expect(text).toContain('"amount": 60.0');
    expect(text).toContain('"reward": 1.0');
    expect(text).toContain('"duration": 12.5');
    expect(text).toContain('"trial": 0,');
    expect(text).toContain('"temperature": 0.0');
    expect(text).toContain('"termination_reason": "user_stop"');
  });

  it('fills the defaults the reference fills and ignores fields it does not know', () => {
    const lean = results([simulation('s0', 0)])
      .replace('"requestor": "assistant", "error": false, ', '')
      .replace('"seed": 300\n    }', '"seed": 300, "extra": 1\n    }');
    const r = parseResults(lean);
    expect(r.simulations[0]!.messages[3]).toMatchObject({
      role: 'tool',
      requestor: 'assistant',
      error: false,
    });
    expect(verifyResults(lean, domains).simulations[0]!.reward).toBe(1);
  });

  it('names what is wrong and where', () => {
    const bad = (text: string) => () => parseResults(text, 'r.json');
    expect(bad('{"info": ')).toThrow(/r.json is not valid JSON/);
    expect(bad('[]')).toThrow(Tau2ResultsError);
    expect(bad('{"info": {}, "tasks": []}')).toThrow(/no "simulations"/);
    const one = results([simulation('s0', 0)]);
    expect(bad(one.replace('"termination_reason": "user_stop"', '"termination_reason": "timeout"'))).toThrow(
      /r.json: simulations\[0\].termination_reason: expected one of v0.2.0's termination reasons \(user_stop, agent_stop, max_steps, too_many_errors\) or seal's agent_error, found the string "timeout"/,
    );
    expect(
      bad(
        one.replace(
          '"arguments": {"account_id": "A", "amount": 60}, "requestor"',
          '"arguments": "{}", "requestor"',
        ),
      ),
    ).toThrow(
      /simulations\[0\].messages\[2\].tool_calls\[0\].arguments: expected an object, found the string "\{\}"/,
    );
    expect(bad(one.replace('"duration": 12.5,', ''))).toThrow(
      /simulations\[0\].duration: missing \(it is required\)/,
    );
    expect(bad(one.replace('"role": "tool"', '"role": "robot"'))).toThrow(
      /simulations\[0\].messages\[3\].role: expected "system", "assistant", "user" or "tool"/,
    );
    expect(bad(one.replace('"num_trials": 3', '"num_trials": 2.5'))).toThrow(
      /info.num_trials: expected an integer/,
    );
  });
});
