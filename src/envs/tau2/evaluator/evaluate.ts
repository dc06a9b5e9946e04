/**
 * `evaluate_simulation` of τ²-bench v0.2.0 with its default evaluation (`EvaluationType.ALL`, what
 * `tau2 run` scores with): a premature end scores 0; otherwise the environment, action and
 * communicate checks all run and the parts the task's reward basis names are multiplied. Natural-
 * language assertions are an LLM judge the default leaves out: a task whose basis names them is
 * refused, as the reference refuses it.
 */
import type { RewardType, Tau2Domain, Tau2Task } from '../types.js';
import { actionReward } from './actions.js';
import { communicateReward } from './communicate.js';
import { environmentReward } from './environment.js';
import {
  type RewardBreakdown,
  type RewardInfo,
  rewardInfo,
  type Tau2Conversation,
  terminationReasonName,
} from './reward.js';

/** Only the agent's or the user's own stop lets a conversation be scored. */
export function endedPrematurely(conversation: Tau2Conversation): boolean {
  return conversation.termination_reason !== 'agent_stop' && conversation.termination_reason !== 'user_stop';
}

export function evaluateSimulation(
  domain: Tau2Domain,
  task: Tau2Task,
  conversation: Tau2Conversation,
): RewardInfo {
  if (endedPrematurely(conversation))
    return rewardInfo({
      reward: 0,
      info: {
        note: `Simulation terminated prematurely. Termination reason: ${terminationReasonName(conversation.termination_reason)}`,
      },
    });
  const criteria = task.evaluation_criteria;
  if (!criteria) return rewardInfo({ reward: 1, info: { note: 'No evaluation criteria' } });

  const env = environmentReward(domain, task, conversation.messages);
  const action = actionReward(task, conversation.messages);
  const communicate = communicateReward(task, conversation.messages);

  const basis = new Set<RewardType>(criteria.reward_basis);
  let reward = 1;
  const breakdown: RewardBreakdown = {};
  const include = (part: RewardInfo) => {
    if (part.reward_breakdown) Object.assign(breakdown, part.reward_breakdown);
    reward *= part.reward;
  };
  if (basis.has('DB') || basis.has('ENV_ASSERTION')) include(env);
  if (basis.has('ACTION')) include(action);
  if (basis.has('NL_ASSERTION'))
    throw new Error(
      `task ${task.id}: NL assertions are part of the reward basis, but they are not being evaluated (v0.2.0's default evaluation leaves out the LLM judge)`,
    );
  if (basis.has('COMMUNICATE')) include(communicate);

  return {
    reward,
    db_check: env.db_check,
    env_assertions: env.env_assertions,
    action_checks: action.action_checks,
    nl_assertions: null,
    communicate_checks: communicate.communicate_checks,
    reward_basis: criteria.reward_basis,
    reward_breakdown: breakdown,
    info: { env: env.info, nl: null, communicate: communicate.info, action: action.info },
  };
}
