/**
 * The communicate check of v0.2.0 (`CommunicateEvaluator`): each required piece of information must
 * appear, case-insensitively, in some text message of the agent with its commas removed
 * (`"$1,234"` in a message matches `"1234"`).
 */
import type { Tau2Message, Tau2Task } from '../types.js';
import { type CommunicateCheck, type RewardInfo, rewardInfo } from './reward.js';

/** Python's `str.isspace()` characters, for `strip()`. */
const PY_SPACE = /^[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/;

/** `has_text_content`: content that is not None and not only whitespace. */
export function hasTextContent(content: string | null | undefined): content is string {
  return typeof content === 'string' && !PY_SPACE.test(content);
}

export function communicateChecks(
  messages: readonly Tau2Message[],
  infos: readonly string[],
): CommunicateCheck[] {
  const texts: string[] = [];
  for (const m of messages) if (m.role === 'assistant' && hasTextContent(m.content)) texts.push(m.content);
  return infos.map((info) => {
    const wanted = info.toLowerCase();
    const found = texts.find((text) => text.toLowerCase().replaceAll(',', '').includes(wanted));
    return found === undefined
      ? { info, met: false, justification: `Information '${info}' not communicated.` }
      : { info, met: true, justification: `Information '${info}' communicated in the message:\n '${found}'` };
  });
}

export function communicateReward(task: Tau2Task, messages: readonly Tau2Message[]): RewardInfo {
  const criteria = task.evaluation_criteria;
  if (!criteria)
    return rewardInfo({
      reward: 1,
      info: { notes: 'No evaluation criteria' },
      reward_breakdown: { COMMUNICATE: 1 },
    });
  const infos = criteria.communicate_info ?? [];
  if (infos.length === 0)
    return rewardInfo({
      reward: 1,
      info: { note: 'No communicate_info to evaluate' },
      reward_breakdown: { COMMUNICATE: 1 },
    });
  const checks = communicateChecks(messages, infos);
  const reward = checks.every((c) => c.met) ? 1 : 0;
  return rewardInfo({ reward, communicate_checks: checks, reward_breakdown: { COMMUNICATE: reward } });
}
