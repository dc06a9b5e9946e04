/**
 * The action check of v0.2.0 (`ActionEvaluator`): every gold action must match some tool call of
 * the conversation, by either side.
 */
import { type PyDict, pyEquals } from '../../py/values.js';
import type { Tau2Action, Tau2Message, Tau2Task, Tau2ToolCall } from '../types.js';
import { toolCallsOf } from './replay.js';
import { type ActionCheck, type RewardInfo, rewardInfo } from './reward.js';

function only(args: PyDict, keys: ReadonlySet<unknown>): PyDict {
  return new Map([...args].filter(([k]) => keys.has(k)));
}

/**
 * `Action.compare_with_tool_call`: same name, and equal arguments (Python `==`) over
 * `compare_args`, or over the CALL's argument names when `compare_args` is null (so an argument
 * only the gold action has is not compared). The requestor is not compared in v0.2.0.
 */
export function compareWithToolCall(action: Tau2Action, call: Tau2ToolCall): boolean {
  if (action.name !== call.name) return false;
  const names: ReadonlySet<unknown> = new Set(action.compare_args ?? [...call.arguments.keys()]);
  if (names.size === 0) return true;
  return pyEquals(only(call.arguments, names), only(action.arguments, names));
}

export function actionReward(task: Tau2Task, messages: readonly Tau2Message[]): RewardInfo {
  const criteria = task.evaluation_criteria;
  if (!criteria)
    return rewardInfo({
      reward: 1,
      action_checks: [],
      info: { note: 'No evaluation criteria' },
      reward_breakdown: { ACTION: 1 },
    });
  const gold = criteria.actions ?? [];
  if (gold.length === 0)
    return rewardInfo({
      reward: 1,
      info: { note: 'No actions to evaluate' },
      reward_breakdown: { ACTION: 1 },
    });
  const calls = toolCallsOf(messages);
  const checks: ActionCheck[] = gold.map((action) => {
    const match = calls.some((call) => compareWithToolCall(action, call));
    return { action, action_match: match, action_reward: match ? 1 : 0 };
  });
  const reward = checks.every((c) => c.action_match) ? 1 : 0;
  return rewardInfo({ reward, action_checks: checks, reward_breakdown: { ACTION: reward } });
}
