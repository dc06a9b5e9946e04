/**
 * The official BFCL multi-turn checker (eval_runner + multi_turn_checker), re-implemented with
 * the same verdicts, plus a per-turn detail record for the diagnosis.
 *
 * Official semantics kept exactly: per turn, the model's decoded steps run on the model
 * instances and the ground truth on separate instances; a turn with empty ground truth is not
 * checked (but its calls still change state); a checked turn fails on an empty model turn, then
 * on the first class whose public attributes differ under Python `==` (state check), then if a
 * ground-truth result string is missing from the model's results of *all turns so far*
 * (multiset inclusion, response check). The task is valid when no turn fails. The official
 * checker stops at the first failure; we keep checking later turns for the detail record, which
 * does not change `valid`.
 */

import { pyEquals } from '../py/values.js';
import type { ClassName } from './apis/api.js';
import { type BfclData, type BfclTask, isLongContext } from './data/tasks.js';
import { TaskEnvironment } from './executor.js';

export type CheckErrorType =
  | 'multi_turn:inference_error'
  | 'multi_turn:force_terminated'
  | 'multi_turn:empty_turn_model_response'
  | 'multi_turn:instance_state_mismatch'
  | 'multi_turn:execution_response_mismatch';

export type TurnFailure =
  | 'empty_turn_model_response'
  | 'instance_state_mismatch'
  | 'execution_response_mismatch';

export interface TurnCheck {
  readonly turn: number;
  /** false when the ground truth of the turn is empty (the official checker skips it) */
  readonly checked: boolean;
  /** null when not checked */
  readonly passed: boolean | null;
  readonly failure?: TurnFailure;
  /** state check: class -> public attributes that differ from the ground truth's */
  readonly differingAttributes?: Readonly<Record<string, readonly string[]>>;
  /** the first class whose state differs (the one the official message names) */
  readonly mismatchClass?: ClassName;
  /** response check: ground-truth result strings missing from the model's results so far */
  readonly missingItems?: readonly string[];
  /** the model's results in this turn, per step */
  readonly modelResults: readonly (readonly string[])[];
  readonly groundTruthResults: readonly string[];
  /** the calls the model made in this turn, per step (after dropping empty steps) */
  readonly modelCalls: readonly (readonly string[])[];
}

export interface CheckResult {
  readonly valid: boolean;
  readonly errorType?: CheckErrorType;
  readonly errorMessage?: string;
  /** the first failing turn (the official verdict's turn) */
  readonly failedTurn?: number;
  readonly turns: readonly TurnCheck[];
}

export interface CheckOptions {
  /** prefix for instance names (only visible through the reference's string-rewrite quirk) */
  readonly modelName?: string;
}

/**
 * Check a model's decoded calls for a task: `modelTurns[turn][step]` is a list of call strings.
 * A model result of the wrong shape (not one entry per ground-truth turn) fails the way the
 * official evaluator fails it.
 */
export function checkTask(
  task: BfclTask,
  modelTurns: readonly (readonly (readonly string[])[])[] | unknown,
  data: BfclData,
  options: CheckOptions = {},
): CheckResult {
  if (!Array.isArray(modelTurns)) {
    return {
      valid: false,
      errorType: 'multi_turn:inference_error',
      errorMessage: 'Error during inference phase. Model did not output a list of model responses.',
      turns: [],
    };
  }
  const gt = task.groundTruth;
  if (modelTurns.length !== gt.length) {
    return {
      valid: false,
      errorType: 'multi_turn:force_terminated',
      errorMessage: `Model was force-terminated during inference phase. The length of the model result turns (${modelTurns.length}) does not match the length of the ground truth turns (${gt.length}).`,
      turns: [],
    };
  }
  const longContext = isLongContext(task);
  const constants = longContext ? data.longContextConstants() : undefined;
  const model = options.modelName ?? 'seal';
  const envOptions = {
    taskId: task.id,
    involvedClasses: task.involvedClasses,
    initialConfig: task.initialConfig,
    longContext,
    ...(constants ? { constants } : {}),
  };
  const modelEnv = new TaskEnvironment({ ...envOptions, modelName: `${model}_eval` });
  const gtEnv = new TaskEnvironment({ ...envOptions, modelName: `${model}_ground_truth_eval` });

  const allModelResults: string[] = [];
  const turns: TurnCheck[] = [];
  let first: { turn: number; type: CheckErrorType; message: string } | undefined;

  for (let t = 0; t < gt.length; t++) {
    const steps = (modelTurns[t] as readonly (readonly string[])[]).filter(
      (s) => Array.isArray(s) && s.length > 0,
    );
    const modelResults = steps.map((step) => step.map((call) => modelEnv.execute(call)));
    for (const r of modelResults) allModelResults.push(...r);
    const gtCalls = gt[t]!;
    const groundTruthResults = gtCalls.map((call) => gtEnv.execute(call));
    const base = { turn: t, modelResults, groundTruthResults, modelCalls: steps };

    if (gtCalls.length === 0) {
      turns.push({ ...base, checked: false, passed: null });
      continue;
    }
    if (steps.length === 0) {
      turns.push({ ...base, checked: true, passed: false, failure: 'empty_turn_model_response' });
      first ??= {
        turn: t,
        type: 'multi_turn:empty_turn_model_response',
        message: `Model response list is empty for turn ${t}`,
      };
      continue;
    }
    const differing: Record<string, string[]> = {};
    let mismatchClass: ClassName | undefined;
    const modelState = modelEnv.publicState();
    for (const [cls, gtAttrs] of gtEnv.publicState()) {
      const modelAttrs = modelState.get(cls)!;
      const diffs = [...gtAttrs.keys()].filter((k) => !pyEquals(modelAttrs.get(k) ?? null, gtAttrs.get(k)!));
      if (diffs.length > 0) {
        differing[cls] = diffs;
        mismatchClass ??= cls;
      }
    }
    if (mismatchClass) {
      turns.push({
        ...base,
        checked: true,
        passed: false,
        failure: 'instance_state_mismatch',
        differingAttributes: differing,
        mismatchClass,
      });
      first ??= {
        turn: t,
        type: 'multi_turn:instance_state_mismatch',
        message: `Model instance for ${mismatchClass} does not match the state with ground truth instance.`,
      };
      continue;
    }
    const missingItems = missingFromMultiset(groundTruthResults, allModelResults);
    if (missingItems.length > 0) {
      turns.push({
        ...base,
        checked: true,
        passed: false,
        failure: 'execution_response_mismatch',
        missingItems,
      });
      first ??= {
        turn: t,
        type: 'multi_turn:execution_response_mismatch',
        message: `Model response execution results so far does not contain all the ground truth response execution results for turn ${t}.`,
      };
      continue;
    }
    turns.push({ ...base, checked: true, passed: true });
  }
  if (!first) return { valid: true, turns };
  return { valid: false, errorType: first.type, errorMessage: first.message, failedTurn: first.turn, turns };
}

/** Items of `needed` not covered by `available`, each available item used at most once. */
function missingFromMultiset(needed: readonly string[], available: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const a of available) counts.set(a, (counts.get(a) ?? 0) + 1);
  const missing: string[] = [];
  for (const n of needed) {
    const c = counts.get(n) ?? 0;
    if (c > 0) counts.set(n, c - 1);
    else missing.push(n);
  }
  return missing;
}
