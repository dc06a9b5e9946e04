/**
 * The trajectory record: everything one rollout of one task left behind, as plain JSON. The
 * rollout loop writes it, the diagnosis reads it, trainers and reports store it. Versioned, so
 * stored records can be read back after the shape grows.
 */
import type { ClassName } from '../envs/bfcl/apis/api.js';
import type { TurnFailure } from '../envs/bfcl/checker.js';
import type { Category, ChatMessage, SuiteName } from '../envs/bfcl/data/tasks.js';
import type { JsonValue } from '../envs/py/values.js';
import type { ArgumentIssue } from './schema.js';

export const TRAJECTORY_VERSION = 1 as const;

export interface CallRecord {
  /** the call string that was executed */
  readonly call: string;
  /** tool name, or null when the call could not be read */
  readonly name: string | null;
  /** named arguments (positional ones named by the Python parameter order), null if unreadable */
  readonly args: Readonly<Record<string, JsonValue>> | null;
  /** whether the tool was in the list the policy was shown this turn */
  readonly available: boolean;
  /** problems against the public schema (empty when the arguments conform or the tool is unknown) */
  readonly argumentIssues: readonly ArgumentIssue[];
  /** the environment's result string */
  readonly output: string;
  /** the result is an execution error (`Error during execution: ...` or an `error` field) */
  readonly executionError: boolean;
}

export interface StepRecord {
  /** the assistant's raw text (absent when rebuilt from a result file of calls) */
  readonly rawText?: string;
  /** set when the assistant's output did not parse into tool calls */
  readonly parseError?: string;
  /** the calls of this step; empty for a text answer */
  readonly calls: readonly CallRecord[];
  readonly tokenIds?: readonly number[];
  readonly logprobs?: readonly number[];
  readonly latencyMs?: number;
  readonly usage?: { readonly promptTokens: number; readonly completionTokens: number };
}

export interface TurnCheckRecord {
  readonly checked: boolean;
  readonly passed: boolean | null;
  readonly failure?: TurnFailure;
  readonly differingAttributes?: Readonly<Record<string, readonly string[]>>;
  readonly missingItems?: readonly string[];
}

export interface TurnRecord {
  readonly turn: number;
  /**
   * the messages that opened the turn, as the policy was shown them: the user's request (on a
   * miss_func reveal turn, the fixed message that tools were added); absent in records written
   * before it was kept
   */
  readonly request?: readonly ChatMessage[];
  /** tool names the policy could see this turn */
  readonly availableTools: readonly string[];
  readonly steps: readonly StepRecord[];
  /** the official checker's verdict on this turn */
  readonly check: TurnCheckRecord;
  /** classes whose methods the ground truth calls this turn (verifier-side evidence) */
  readonly groundTruthClasses: readonly ClassName[];
  /** the ground truth itself failed to execute this turn */
  readonly groundTruthError?: boolean;
}

export interface Trajectory {
  readonly version: typeof TRAJECTORY_VERSION;
  readonly suite: SuiteName;
  readonly taskId: string;
  readonly category: Category;
  readonly turns: readonly TurnRecord[];
  /** the verifier's binary reward */
  readonly reward: 0 | 1;
  readonly errorType?: string;
  /** the episode hit the step limit */
  readonly forceQuit: boolean;
  /** set when checking itself failed (the rollout is then not the policy's fault) */
  readonly checkerError?: string;
  /**
   * training only: the interface parts left out so that the first prompt fit the policy's prompt
   * budget, in the order dropped (interface/budget.ts); absent when the whole interface was shown
   */
  readonly interfaceDropped?: readonly string[];
  /**
   * training only: the sample request that failed for good and ended the rollout there, as a forced
   * quit (the service refused the prompt, e.g. longer than the model's context)
   */
  readonly sampleFailure?: string;
}

/**
 * Whether a result string reports a failed execution: the executor's error, or a result object
 * with an `error` field. Deliberately narrower than the interface's notion of a failed result
 * (which also reads e.g. `verification_failure`): some ground-truth calls return such negative
 * outcomes on purpose, and they must not count as execution errors or as a broken ground truth.
 */
export function isExecutionError(output: string): boolean {
  if (output.startsWith('Error during execution: ')) return true;
  if (!output.startsWith('{')) return false;
  // Long results are parsed only when an `error` key can be in them, plainly or escaped.
  if (!output.includes('error') && !output.includes('\\u')) return false;
  try {
    const parsed = JSON.parse(output) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && 'error' in parsed;
  } catch {
    return /^\{'error': /.test(output);
  }
}
