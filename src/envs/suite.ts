/**
 * One episode interface for every suite. A suite is a set of tasks; an episode plays one task as
 * a conversation between the agent and the suite's side (its users, tools and environment):
 *
 *   open()        what the agent is shown first: its framing, the tools, the opening messages
 *   send(m)       the agent's message (text, tool calls, or both) -> what comes back to it: tool
 *                 results, or the next user message (a dataset's next turn, a simulated user's
 *                 reply), or the end of the conversation
 *   verdict()     the suite's own score of what was played (BFCL's checker, τ²'s evaluator)
 *   record()      the conversation in the suite's own format (τ²'s simulation, BFCL's result)
 *
 * Suites differ in who speaks next (BFCL's next turn is data; τ²'s user is a model that may act
 * on a phone first), in where the reward comes from and in their records; the agent loop and the
 * evaluation see only this. Nothing here assumes BFCL's turns or τ²'s orchestrator.
 */
import type { PyDict } from './py/values.js';
import type { OpenAiTool } from './tools.js';

/** A call the agent made: its id (answered by the result), the tool and the arguments as Python values. */
export interface AgentCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: PyDict;
}

/** What the sampler reported of a message, for suites that keep a trace of each step. */
export interface MessageMeta {
  /** the output as written (native calls as JSON lines after the text) */
  readonly rawText?: string;
  readonly tokenIds?: readonly number[];
  readonly logprobs?: readonly number[];
  readonly latencyMs?: number;
  readonly usage?: { readonly promptTokens: number; readonly completionTokens: number };
}

/** The agent's message: text, calls, or both (a suite decides what both means). */
export interface AgentMessage {
  readonly text: string | null;
  readonly calls: readonly AgentCall[];
  /**
   * every call in Python call syntax as the format decoded it, those `calls` could not hold
   * (positional or computed arguments) included: a suite whose executor runs call text (BFCL)
   * plays these, so it judges what was written, not a cleaned-up copy
   */
  readonly callText?: readonly string[];
  /** the output did not decode into calls: why (`text` is what was written) */
  readonly unparsed?: string;
  readonly meta?: MessageMeta;
}

/** What reaches the agent. */
export type AgentInput =
  | { readonly kind: 'user'; readonly content: string }
  /** a message the agent is shown as its own earlier turn (τ²'s fixed greeting) */
  | { readonly kind: 'assistant'; readonly content: string }
  | {
      readonly kind: 'tool';
      readonly callId: string;
      readonly name: string;
      readonly content: string;
      readonly error: boolean;
    }
  /**
   * the suite's answer to output that did not decode, leaving the turn open for another try (BFCL's
   * training protocol); the format says it in its own way
   */
  | { readonly kind: 'format_error'; readonly content: string };

export interface Observation {
  readonly inputs: readonly AgentInput[];
  /** the conversation is over: nothing more is sent */
  readonly done: boolean;
  /** why it ended, in the suite's words (τ²: `user_stop`, `max_steps`, ...) */
  readonly reason?: string;
  /**
   * tools that became available with this observation (BFCL's held-out functions); the user
   * message that comes with them is shown with the tools as the format writes them
   */
  readonly toolsAdded?: readonly OpenAiTool[];
}

export interface Opening extends Observation {
  /**
   * the suite's framing of the agent's job (τ²: the domain policy), which the format wraps in its
   * protocol; absent: the format's own framing (BFCL's)
   */
  readonly framing?: string;
  /**
   * the suite's instructions for this episode, which follow the format's system prompt (BFCL
   * memory: the scenario's setting and the memory as it stands); framing replaces, these add
   */
  readonly instructions?: string;
  readonly tools: readonly OpenAiTool[];
}

/** A suite's score of an episode: a reward in [0, 1], whether it counts as solved, and the suite's breakdown. */
export interface Verdict {
  readonly reward: number;
  readonly solved: boolean;
  readonly detail: unknown;
}

export interface Episode {
  readonly taskId: string;
  open(signal?: AbortSignal): Promise<Opening>;
  send(message: AgentMessage, signal?: AbortSignal): Promise<Observation>;
  /** end the conversation where it is (the agent cannot go on); `reason` in the suite's words */
  abort(reason: string): void;
  verdict(): Verdict;
  /** the conversation as the suite's own tools read it */
  record(): unknown;
}

/** A task as the runner lists it: its id and the group the summary reports it under (category, domain). */
export interface SuiteTask {
  readonly id: string;
  readonly group: string;
  /**
   * tasks whose episodes (of the same trial) must have ended, and been settled, before this one
   * opens (BFCL memory: a question after its scenario's prerequisite conversations); a suite lists
   * its tasks so that these always come earlier
   */
  readonly after?: readonly string[];
  /** false: played and kept, but not scored (BFCL memory's prerequisite conversations) */
  readonly scored?: boolean;
}

/** Which play of a task an episode is: its trial (0-based) and the seed drawn for that trial. */
export interface TrialOptions {
  readonly seed?: number;
  readonly trial?: number;
}

/** A column of a summary: the mean of its groups' scores (Table 2's "memory": its three backends). */
export interface SummaryColumn {
  readonly name: string;
  readonly groups: readonly string[];
}

/** A group's scores over its episodes: the mean reward and pass^k for k = 1..trials, each in [0, 1]. */
export interface GroupMetrics {
  readonly averageReward: number;
  readonly passHatK: readonly number[];
}

export interface Suite {
  readonly name: string;
  /** groups in the order a summary shows them */
  readonly groups: readonly string[];
  readonly tasks: readonly SuiteTask[];
  episode(taskId: string, options: TrialOptions): Episode;
  /**
   * told of every finished episode, whether played now or read back from a run folder, with its
   * record: state that later episodes start from is handed on here (BFCL memory: the memory a
   * prerequisite conversation left), so a resumed run rebuilds it from the folder alone
   */
  settle?(taskId: string, options: TrialOptions, record: unknown): void;
  /** the summary's columns, when they are not simply the groups */
  readonly columns?: readonly SummaryColumn[];
  /** the suite's own metrics of a group, where it computes them its way (τ²: its agent_metrics) */
  summarise?(
    group: string,
    episodes: readonly { readonly taskId: string; readonly reward: number }[],
    trials: number,
  ): GroupMetrics;
}

/**
 * A suite whose user is played by a model (τ²) is given one of these: the user's side of the
 * conversation as a chat (the agent's messages as `user`, the user's own as `assistant`, results
 * of the user's own tools as `tool`) and the tools the user may call, answered with the user's
 * next message. seal plays it with any policy (agent/user-model.ts); tests script it.
 */
export type UserChatMessage =
  | { readonly role: 'system' | 'user'; readonly content: string }
  | {
      readonly role: 'assistant';
      readonly content: string | null;
      readonly tool_calls?: readonly UserCall[];
    }
  | { readonly role: 'tool'; readonly content: string; readonly tool_call_id: string };

/** A tool call of the user's, its arguments as Python values (as the suite reads JSON). */
export interface UserCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: PyDict;
}

export interface UserModelRequest {
  readonly messages: readonly UserChatMessage[];
  /** the user's own tools (τ²'s telecom phone), absent when the user has none */
  readonly tools?: readonly OpenAiTool[];
  readonly seed?: number;
}

export interface UserModelReply {
  readonly content: string | null;
  readonly toolCalls: readonly UserCall[];
  readonly cost?: number;
  /** the serving API's usage record, as it reported it */
  readonly usage?: Record<string, unknown>;
}

export type UserModel = (request: UserModelRequest, signal?: AbortSignal) => Promise<UserModelReply>;
