// The τ² v0.2.0 evaluator on a toy domain that keeps the Tau2Domain contract: each part failing
// where the reference's fails, and the parts combined by the task's reward basis.
import { describe, expect, it } from 'vitest';
import { compareWithToolCall } from '../../src/envs/tau2/evaluator/actions.js';
import { evaluateSimulation } from '../../src/envs/tau2/evaluator/evaluate.js';
import { Tau2ReplayError } from '../../src/envs/tau2/evaluator/replay.js';
import type { TerminationReason } from '../../src/envs/tau2/evaluator/reward.js';
import type { Tau2Message, Tau2Task } from '../../src/envs/tau2/types.js';
import { py, record, type Turn, toyDomain, toyTask } from '../support/tau2-toy.js';

const domain = toyDomain();

/** Gold: look up A, deposit 60 into A; tell the user the new balance 1,160 (the initial state sets 1100). */
const DEPOSIT = toyTask(
  'deposit',
  `{"actions": [
     {"action_id": "a0", "name": "get_balance", "arguments": {"account_id": "A"}},
     {"action_id": "a1", "name": "deposit", "arguments": {"account_id": "A", "amount": 60}}],
    "communicate_info": ["1160"]}`,
  '{"initialization_actions": [{"env_type": "assistant", "func_name": "set_balance", "arguments": {"account_id": "A", "balance": 1100}}]}',
);

const GOLD_TURNS: Turn[] = [
  { calls: [['get_balance', '{"account_id": "A"}']] },
  { calls: [['deposit', '{"account_id": "A", "amount": 60}']] },
  { say: 'Done: your balance is now $1,160.' },
];

function score(
  task: Tau2Task,
  turns: readonly Turn[],
  reason: TerminationReason = 'agent_stop',
  messages?: Tau2Message[],
) {
  return evaluateSimulation(domain, task, {
    termination_reason: reason,
    messages: messages ?? record(domain, task, turns),
  });
}

describe('the combined reward', () => {
  it('scores the gold conversation 1 with the reference breakdown', () => {
    const r = score(DEPOSIT, GOLD_TURNS);
    expect(r.reward).toBe(1);
    expect(r.db_check).toEqual({ db_match: true, db_reward: 1 });
    expect(r.reward_basis).toEqual(['DB', 'COMMUNICATE']);
    expect(r.reward_breakdown).toEqual({ DB: 1, COMMUNICATE: 1 });
    expect(Object.keys(r.reward_breakdown!)).toEqual(['DB', 'COMMUNICATE']);
    expect(r.env_assertions).toEqual([]);
    expect(r.action_checks?.map((c) => c.action_match)).toEqual([true, true]);
    expect(r.nl_assertions).toBeNull();
    expect(r.communicate_checks).toEqual([
      {
        info: '1160',
        met: true,
        justification:
          "Information '1160' communicated in the message:\n 'Done: your balance is now $1,160.'",
      },
    ]);
    expect(r.info).toEqual({ env: null, nl: null, communicate: null, action: null });
  });

  it('fails the database check when a write argument changes', () => {
    const r = score(DEPOSIT, [
      { calls: [['deposit', '{"account_id": "A", "amount": 61}']] },
      { say: 'Your balance is 1160.' },
    ]);
    expect(r.db_check).toEqual({ db_match: false, db_reward: 0 });
    expect(r.reward_breakdown).toEqual({ DB: 0, COMMUNICATE: 1 });
    expect(r.reward).toBe(0);
  });

  it('fails the database check when the write goes to another account', () => {
    const r = score(DEPOSIT, [
      { calls: [['deposit', '{"account_id": "B", "amount": 60}']] },
      { say: '1160' },
    ]);
    expect(r.reward).toBe(0);
  });

  it('keeps 1 with an extra read-only call, and without the gold read (the database is what counts)', () => {
    const extra = score(DEPOSIT, [
      { calls: [['get_balance', '{"account_id": "B"}']] },
      ...GOLD_TURNS,
      { calls: [['get_balance', '{"account_id": "A"}']] },
    ]);
    expect(extra.reward).toBe(1);
    const noRead = score(DEPOSIT, GOLD_TURNS.slice(1));
    expect(noRead.reward).toBe(1);
    // the action check sees the missing read, but ACTION is not in this task's basis
    expect(noRead.action_checks?.map((c) => c.action_match)).toEqual([false, true]);
  });

  it('compares the databases as texts: a float amount leaves a float balance, 1160.0, which is not 1160', () => {
    const r = score(DEPOSIT, [
      { calls: [['deposit', '{"account_id": "A", "amount": 60.0}']] },
      { say: '1160' },
    ]);
    // the stored balance is the float 1160.0, which the database text writes differently from 1160
    expect(r.db_check?.db_match).toBe(false);
  });

  it('fails a task whose basis holds COMMUNICATE when the information is never said', () => {
    const r = score(DEPOSIT, GOLD_TURNS.slice(0, 2).concat({ say: 'All done.' }));
    expect(r.reward).toBe(0);
    expect(r.reward_breakdown).toEqual({ DB: 1, COMMUNICATE: 0 });
    expect(r.communicate_checks).toEqual([
      { info: '1160', met: false, justification: "Information '1160' not communicated." },
    ]);
  });

  it('looks for the information only in the agent text, case-insensitively, with commas removed', () => {
    const task = toyTask(
      'say',
      '{"actions": [], "communicate_info": ["Gold Card", "1160"], "reward_basis": ["COMMUNICATE"]}',
    );
    expect(score(task, [{ say: 'your GOLD CARD balance: 1,160' }]).reward).toBe(1);
    // the user saying it, or the agent saying it in a tool argument, does not count
    expect(score(task, [{ say: 'gold card 1160', role: 'user' }]).reward).toBe(0);
    expect(score(task, [{ say: 'gold card' }, { say: '1 160' }]).reward).toBe(0);
    expect(score(task, [{ say: 'gold card' }, { say: '1160' }]).reward).toBe(1);
  });

  it('skips messages that are only whitespace (Python strip), which would otherwise hold a space', () => {
    const task = toyTask(
      'space',
      '{"actions": [], "communicate_info": [" "], "reward_basis": ["COMMUNICATE"]}',
    );
    expect(score(task, [{ say: ' \n\u2003 ' }]).reward).toBe(0);
    expect(score(task, [{ say: ' \u001c ' }]).reward).toBe(0);
    expect(score(task, [{ say: 'a b' }]).reward).toBe(1);
  });

  it('ignores a missing communication when the basis does not hold COMMUNICATE', () => {
    const task = toyTask(
      'db-only',
      `{"actions": [{"action_id": "a1", "name": "deposit", "arguments": {"account_id": "A", "amount": 60}}],
        "communicate_info": ["1160"], "reward_basis": ["DB"]}`,
    );
    const r = score(task, [{ calls: [['deposit', '{"account_id": "A", "amount": 60}']] }]);
    expect(r.reward).toBe(1);
    expect(r.reward_breakdown).toEqual({ DB: 1 });
    expect(r.communicate_checks?.[0]?.met).toBe(false);
  });

  it('multiplies ACTION in when the basis holds it', () => {
    const task = toyTask(
      'actions',
      `{"actions": [{"action_id": "a0", "name": "get_balance", "arguments": {"account_id": "A"}},
                    {"action_id": "a1", "name": "deposit", "arguments": {"account_id": "A", "amount": 60}}],
        "reward_basis": ["DB", "ACTION"]}`,
    );
    const missingRead = score(task, [{ calls: [['deposit', '{"account_id": "A", "amount": 60}']] }]);
    expect(missingRead.reward_breakdown).toEqual({ DB: 1, ACTION: 0 });
    expect(missingRead.reward).toBe(0);
    expect(missingRead.info).toEqual({
      env: null,
      nl: null,
      communicate: { note: 'No communicate_info to evaluate' },
      action: null,
    });
  });

  it('scores a premature end 0 with the reference note, whatever the conversation did', () => {
    for (const [reason, name] of [
      ['max_steps', 'MAX_STEPS'],
      ['too_many_errors', 'TOO_MANY_ERRORS'],
    ] as const) {
      const r = score(DEPOSIT, GOLD_TURNS, reason);
      expect(r).toEqual({
        reward: 0,
        db_check: null,
        env_assertions: null,
        action_checks: null,
        nl_assertions: null,
        communicate_checks: null,
        reward_basis: ['DB'],
        reward_breakdown: null,
        info: { note: `Simulation terminated prematurely. Termination reason: TerminationReason.${name}` },
      });
    }
    expect(score(DEPOSIT, GOLD_TURNS, 'user_stop').reward).toBe(1);
  });

  it('gives 1 to a task without criteria, and a full database match when there are no actions nor assertions', () => {
    const none: Tau2Task = { id: 'none', user_scenario: { instructions: 'x' }, evaluation_criteria: null };
    expect(score(none, [])).toMatchObject({
      reward: 1,
      reward_basis: ['DB'],
      info: { note: 'No evaluation criteria' },
    });
    const empty = toyTask('empty', '{"communicate_info": ["hello"]}');
    const r = score(empty, [{ calls: [['deposit', '{"account_id": "A", "amount": 1}']] }, { say: 'hello' }]);
    expect(r.reward).toBe(1);
    expect(r.db_check).toEqual({ db_match: true, db_reward: 1 });
    expect(r.reward_breakdown).toEqual({ COMMUNICATE: 1 });
    expect(r.info?.env).toEqual({ note: 'No expected actions or env assertions' });
  });

  it('refuses a basis with NL assertions, which the default evaluation does not judge', () => {
    const task = toyTask(
      'nl',
      '{"actions": [], "nl_assertions": ["polite"], "reward_basis": ["NL_ASSERTION"]}',
    );
    expect(() => score(task, [])).toThrow(/NL assertions are part of the reward basis/);
  });
});

describe('the environment check', () => {
  it('compares the user database too', () => {
    const r = score(DEPOSIT, [...GOLD_TURNS, { calls: [['toggle_phone', '{}']], role: 'user' }]);
    expect(r.db_check?.db_match).toBe(false);
    expect(r.reward).toBe(0);
  });

  it('builds the gold environment without syncing after the gold actions, as make_tool_call does', () => {
    // The sync marks the user "rich" once A holds 1150. The conversation's deposit syncs; the gold's
    // does not, so the user databases differ: the reference's own quirk, kept.
    const syncing = toyDomain({ syncs: true });
    const messages = record(syncing, DEPOSIT, GOLD_TURNS);
    const r = evaluateSimulation(syncing, DEPOSIT, { termination_reason: 'agent_stop', messages });
    expect(r.db_check?.db_match).toBe(false);
  });

  it('applies initialisation data to both sides before the replay', () => {
    const task = toyTask(
      'data',
      `{"actions": [{"action_id": "a1", "name": "deposit", "arguments": {"account_id": "C", "amount": 1}}], "reward_basis": ["DB"]}`,
      '{"initialization_data": {"agent_data": {"accounts": {"C": {"balance": 0}}}, "user_data": {"on": true}}}',
    );
    const messages = record(domain, task, [{ calls: [['deposit', '{"account_id": "C", "amount": 1}']] }]);
    expect(messages[2]).toMatchObject({ content: '{"account_id": "C", "balance": 1}', error: false });
    expect(score(task, [], 'agent_stop', messages).reward).toBe(1);
  });

  it('runs the env assertions on the replayed environment and multiplies them in for ENV_ASSERTION', () => {
    const task = toyTask(
      'assert',
      `{"actions": [{"action_id": "t", "requestor": "user", "name": "toggle_phone", "arguments": {}}],
        "env_assertions": [
          {"env_type": "user", "func_name": "assert_phone_on", "arguments": {}},
          {"env_type": "assistant", "func_name": "assert_balance", "arguments": {"account_id": "B", "expected": 5}, "assert_value": true}],
        "reward_basis": ["ENV_ASSERTION"]}`,
    );
    const on = score(task, [{ calls: [['toggle_phone', '{}']], role: 'user' }]);
    expect(on.reward).toBe(1);
    expect(on.reward_breakdown).toEqual({ ENV_ASSERTION: 1 });
    expect(on.env_assertions?.map((a) => a.met)).toEqual([true, true]);
    const off = score(task, [
      { calls: [['toggle_phone', '{}']], role: 'user' },
      { calls: [['toggle_phone', '{}']], role: 'user' },
    ]);
    expect(off.reward).toBe(0);
    expect(off.env_assertions?.map((a) => [a.met, a.reward])).toEqual([
      [false, 0],
      [true, 1],
    ]);
    // DB is not in the basis: its check is reported, not counted
    expect(off.db_check?.db_match).toBe(false);
  });

  it('counts an assertion whose assert_value is false as met when the function returns false', () => {
    const task = toyTask(
      'negated',
      `{"actions": [], "env_assertions": [{"env_type": "user", "func_name": "assert_phone_on", "arguments": {}, "assert_value": false}], "reward_basis": ["ENV_ASSERTION"]}`,
    );
    expect(score(task, []).reward).toBe(1);
  });

  it('stops on an assertion that returns something other than a bool', () => {
    const task = toyTask(
      'bad',
      `{"actions": [], "env_assertions": [{"env_type": "user", "func_name": "phone_count", "arguments": {}}], "reward_basis": ["ENV_ASSERTION"]}`,
    );
    expect(() => score(task, [])).toThrow("Function phone_count returned <class 'int'> instead of bool");
  });
});

describe('the replay', () => {
  it('refuses a conversation whose recorded tool result was changed', () => {
    const messages = record(domain, DEPOSIT, GOLD_TURNS);
    const tampered = messages.map((m, i) =>
      i === 4 && m.role === 'tool' ? { ...m, content: m.content!.replace('1160', '1260') } : m,
    );
    expect(tampered).not.toEqual(messages);
    expect(() => score(DEPOSIT, [], 'agent_stop', tampered)).toThrow(Tau2ReplayError);
    expect(() => score(DEPOSIT, [], 'agent_stop', tampered)).toThrow(
      /message 4: the recorded result of deposit/,
    );
  });

  it('compares results as json.loads values, not as texts', () => {
    const messages = record(domain, DEPOSIT, GOLD_TURNS);
    const respaced = messages.map((m, i) =>
      i === 4 && m.role === 'tool'
        ? { ...m, content: '{"balance":1160.0,   "account_id":"A"}', error: true }
        : m,
    );
    expect(score(DEPOSIT, [], 'agent_stop', respaced).reward).toBe(1);
    // an error text is compared as text
    const err = record(domain, DEPOSIT, [{ calls: [['deposit', '{"account_id": "Z", "amount": 1}']] }]);
    expect(err[2]).toMatchObject({ content: 'Error: Account Z not found', error: true });
    const changed = err.map((m, i) =>
      i === 2 && m.role === 'tool' ? { ...m, content: 'Error: Account Y not found' } : m,
    );
    expect(() => score(DEPOSIT, [], 'agent_stop', changed)).toThrow(Tau2ReplayError);
  });

  it('refuses tool messages out of place or with another id', () => {
    const messages = record(domain, DEPOSIT, GOLD_TURNS);
    const wrongId = messages.map((m, i) => (i === 2 && m.role === 'tool' ? { ...m, id: 'other' } : m));
    expect(() => score(DEPOSIT, [], 'agent_stop', wrongId)).toThrow(/tool call id mismatch/);
    const stray = [...messages.slice(0, 1), messages[2]!, ...messages.slice(3)];
    expect(() => score(DEPOSIT, [], 'agent_stop', stray)).toThrow(/follows no tool call/);
    const missing = messages.slice(0, 2);
    expect(() => score(DEPOSIT, [], 'agent_stop', missing)).toThrow(/has no tool message after it/);
  });
});

describe('compare_with_tool_call', () => {
  const call = (args: string, name = 'deposit') => ({
    id: 'x',
    name,
    arguments: py(args),
    requestor: 'user' as const,
  });
  const action = (args: string, compare: string[] | null = null) => ({
    action_id: 'a',
    requestor: 'assistant' as const,
    name: 'deposit',
    arguments: py(args),
    compare_args: compare,
  });

  it('compares every argument of the call by Python ==, key order aside, and not the requestor', () => {
    expect(
      compareWithToolCall(
        action('{"account_id": "A", "amount": 60}'),
        call('{"amount": 60.0, "account_id": "A"}'),
      ),
    ).toBe(true);
    expect(
      compareWithToolCall(
        action('{"account_id": "A", "amount": 60}'),
        call('{"account_id": "A", "amount": 61}'),
      ),
    ).toBe(false);
    expect(
      compareWithToolCall(action('{"account_id": "A"}'), call('{"account_id": "A"}', 'get_balance')),
    ).toBe(false);
  });

  it("compares over the call's own argument names when compare_args is null", () => {
    // an argument the call adds is compared (and missing from the action)...
    expect(compareWithToolCall(action('{"account_id": "A"}'), call('{"account_id": "A", "note": "x"}'))).toBe(
      false,
    );
    // ...one only the action has is not
    expect(
      compareWithToolCall(action('{"account_id": "A", "amount": 60}'), call('{"account_id": "A"}')),
    ).toBe(true);
  });

  it('compares only compare_args when given, and anything when it is empty', () => {
    expect(
      compareWithToolCall(
        action('{"account_id": "A", "amount": 60}', ['account_id']),
        call('{"account_id": "A", "amount": 1}'),
      ),
    ).toBe(true);
    expect(compareWithToolCall(action('{"account_id": "A"}', []), call('{"account_id": "B"}'))).toBe(true);
    expect(
      compareWithToolCall(
        action('{"amount": [1, {"a": true}]}', ['amount']),
        call('{"amount": [1.0, {"a": 1}]}'),
      ),
    ).toBe(true);
  });
});
