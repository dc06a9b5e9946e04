/**
 * The environment check of v0.2.0 (`EnvironmentEvaluator`): the conversation replayed on a fresh
 * environment against a gold environment that ran the task's gold actions from the same initial
 * state (both databases, agent's and user's, must be equal), then the task's environment
 * assertions on the replayed one.
 */
import { typeName } from '../../py/values.js';
import type { Tau2Domain, Tau2Message, Tau2Task } from '../types.js';
import { setState } from './replay.js';
import { type EnvAssertionCheck, type RewardBreakdown, type RewardInfo, rewardInfo } from './reward.js';

/** Python's `<class 'int'>` for a value's type, as the reference's assertion error names it. */
function pyClass(v: Parameters<typeof typeName>[0]): string {
  return `<class '${typeName(v)}'>`;
}

export function environmentReward(
  domain: Tau2Domain,
  task: Tau2Task,
  messages: readonly Tau2Message[],
): RewardInfo {
  const criteria = task.evaluation_criteria;
  if (!criteria) return rewardInfo({ reward: 1, info: { note: 'No evaluation criteria' } });
  if (
    (criteria.actions === null || criteria.actions === undefined) &&
    (criteria.env_assertions ?? null) === null
  )
    return rewardInfo({
      reward: 1,
      db_check: { db_match: true, db_reward: 1 },
      info: { note: 'No expected actions or env assertions' },
    });

  const initial = task.initial_state;
  const predicted = domain.makeEnvironment();
  setState(predicted, initial, messages);

  const gold = domain.makeEnvironment();
  setState(gold, initial, initial?.message_history ?? []);
  for (const action of criteria.actions ?? []) {
    try {
      gold.makeToolCall({
        id: '',
        name: action.name,
        arguments: action.arguments,
        requestor: action.requestor,
      });
    } catch {
      // The reference logs a failing gold action and goes on with the next.
    }
  }

  const dbMatch =
    gold.dbText('assistant') === predicted.dbText('assistant') &&
    gold.dbText('user') === predicted.dbText('user');
  const dbReward = dbMatch ? 1 : 0;

  const assertions: EnvAssertionCheck[] = [];
  let assertionReward = 1;
  for (const assertion of criteria.env_assertions ?? []) {
    const result = predicted.runFunction(assertion);
    if (typeof result !== 'boolean')
      throw new Error(`Function ${assertion.func_name} returned ${pyClass(result)} instead of bool`);
    const met = result === assertion.assert_value;
    assertions.push({ env_assertion: assertion, met, reward: met ? 1 : 0 });
    assertionReward *= met ? 1 : 0;
  }

  let reward = 1;
  const breakdown: RewardBreakdown = {};
  if (criteria.reward_basis.includes('DB')) {
    breakdown.DB = dbReward;
    reward *= dbReward;
  }
  if (criteria.reward_basis.includes('ENV_ASSERTION')) {
    breakdown.ENV_ASSERTION = assertionReward;
    reward *= assertionReward;
  }
  return rewardInfo({
    reward,
    db_check: { db_match: dbMatch, db_reward: dbReward },
    env_assertions: assertions,
    reward_basis: criteria.reward_basis,
    reward_breakdown: breakdown,
  });
}
