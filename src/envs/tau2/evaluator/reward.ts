/**
 * What τ²-bench v0.2.0's evaluator returns (`RewardInfo` and its checks), with the reference's
 * field names, so a results file round-trips. `null` stands for the reference's `None`.
 */
import type { EnvAssertion, RewardType, Tau2Action, Tau2Message } from '../types.js';

/**
 * The four ways v0.2.0's orchestrator ends a conversation, and seal's fifth: `agent_error`, an
 * agent message with neither text nor calls. The reference's message check raises there and its
 * whole run stops, so it has no name for it; seal ends that conversation alone (it scores 0) and
 * says so. A results file holding one is seal's: the reference's reader refuses the name.
 */
export type TerminationReason = 'user_stop' | 'agent_stop' | 'max_steps' | 'too_many_errors' | 'agent_error';
export const TERMINATION_REASONS: readonly TerminationReason[] = [
  'user_stop',
  'agent_stop',
  'max_steps',
  'too_many_errors',
  'agent_error',
];

/** The enum's Python name, as the reference's note formats it (`TerminationReason.MAX_STEPS`). */
export function terminationReasonName(reason: TerminationReason): string {
  return `TerminationReason.${reason.toUpperCase()}`;
}

export interface DbCheck {
  readonly db_match: boolean;
  readonly db_reward: number;
}

export interface EnvAssertionCheck {
  readonly env_assertion: EnvAssertion;
  readonly met: boolean;
  readonly reward: number;
}

export interface ActionCheck {
  readonly action: Tau2Action;
  readonly action_match: boolean;
  readonly action_reward: number;
}

export interface CommunicateCheck {
  readonly info: string;
  readonly met: boolean;
  readonly justification: string;
}

export interface NlAssertionCheck {
  readonly nl_assertion: string;
  readonly met: boolean;
  readonly justification: string;
}

/** A JSON value as the reference keeps it in `RewardInfo.info` (notes, per-part infos). */
export type InfoValue =
  | null
  | boolean
  | number
  | string
  | InfoValue[]
  | { readonly [key: string]: InfoValue };
export type InfoDict = { readonly [key: string]: InfoValue };

/** Reward parts by basis, in the order the evaluator adds them (env, action, nl, communicate). */
export type RewardBreakdown = Partial<Record<RewardType, number>>;

export interface RewardInfo {
  readonly reward: number;
  readonly db_check: DbCheck | null;
  readonly env_assertions: readonly EnvAssertionCheck[] | null;
  readonly action_checks: readonly ActionCheck[] | null;
  readonly nl_assertions: readonly NlAssertionCheck[] | null;
  readonly communicate_checks: readonly CommunicateCheck[] | null;
  /** the pydantic default is `['DB']` when the evaluator sets none (premature ends, no criteria) */
  readonly reward_basis: readonly RewardType[] | null;
  readonly reward_breakdown: RewardBreakdown | null;
  readonly info: InfoDict | null;
}

/** A `RewardInfo(...)` with the reference's defaults for the fields not given. */
export function rewardInfo(fields: Partial<RewardInfo> & { reward: number }): RewardInfo {
  return {
    db_check: null,
    env_assertions: null,
    action_checks: null,
    nl_assertions: null,
    communicate_checks: null,
    reward_basis: ['DB'],
    reward_breakdown: null,
    info: null,
    ...fields,
  };
}

/** What the evaluator reads of a conversation. */
export interface Tau2Conversation {
  readonly termination_reason: TerminationReason;
  /** the whole conversation, the task's message history included */
  readonly messages: readonly Tau2Message[];
}
