/**
 * Trajectory records: the evidence of each call, and the record of a whole rollout, either
 * assembled from a live episode (recorder.ts) or rebuilt from calls alone (a BFCL result file): the calls are replayed by
 * the official checker, and everything that replay can show is recorded (tool outputs,
 * execution errors, schema problems, unavailable tools). What only a live rollout knows (raw
 * text, parse errors, tokens) is absent.
 */

import type { ClassName } from '../envs/bfcl/apis/api.js';
import { API_CLASSES } from '../envs/bfcl/apis/index.js';
import { inspectCall } from '../envs/bfcl/calls/inspect.js';
import { type CheckResult, checkTask, type TurnCheck } from '../envs/bfcl/checker.js';
import type { BfclData, BfclTask } from '../envs/bfcl/data/tasks.js';
import { turnMessages, visibleFunctions } from '../envs/bfcl/episode.js';
import { ArgumentChecker } from '../seal/schema.js';
import {
  type CallRecord,
  isExecutionError,
  type StepRecord,
  TRAJECTORY_VERSION,
  type Trajectory,
  type TurnRecord,
} from '../seal/trajectory.js';

/** Parameter specs of a BFCL tool by name (for naming positional arguments). */
export function paramsOfTool(data: BfclData) {
  return (name: string) => {
    const owner = data.docs.get(name)?.className;
    return owner ? API_CLASSES[owner].methods[name]?.params : undefined;
  };
}

/** Builds CallRecords: the one place that turns a call and its output into evidence. */
export class CallRecorder {
  private readonly checker: ArgumentChecker;
  private readonly params: ReturnType<typeof paramsOfTool>;
  /**
   * By call list: every rollout of a task asks again for its ground truth's classes, parsing the
   * same calls (the lists are the task data's own arrays, which live as long as the data).
   */
  private readonly classes = new WeakMap<readonly string[], readonly ClassName[]>();
  constructor(private readonly data: BfclData) {
    this.checker = new ArgumentChecker(new Map([...data.docs].map(([n, d]) => [n, d.doc])));
    this.params = paramsOfTool(data);
  }

  record(call: string, output: string, available: ReadonlySet<string>): CallRecord {
    const inspected = inspectCall(call, this.params);
    const isAvailable = inspected.name !== null && available.has(inspected.name);
    let argumentIssues: CallRecord['argumentIssues'] = [];
    if (isAvailable && inspected.args) argumentIssues = this.checker.check(inspected.name!, inspected.args);
    else if (isAvailable)
      argumentIssues = [
        { kind: 'malformed', argument: '', message: inspected.problem ?? 'unreadable arguments' },
      ];
    return {
      call,
      name: inspected.name,
      args: inspected.args,
      available: isAvailable,
      argumentIssues,
      output,
      executionError: isExecutionError(output),
    };
  }

  /** The classes whose methods these calls name. */
  classesOf(calls: readonly string[]): ClassName[] {
    const known = this.classes.get(calls);
    if (known) return [...known];
    const out = new Set<ClassName>();
    for (const c of calls) {
      const name = inspectCall(c, this.params).name;
      const owner = name ? this.data.docs.get(name)?.className : undefined;
      if (owner) out.add(owner);
    }
    const classes = [...out];
    this.classes.set(calls, classes);
    return [...classes];
  }
}

function normaliseTurns(modelTurns: unknown, turnCount: number): string[][][] {
  const turns = Array.isArray(modelTurns) ? (modelTurns as unknown[]) : [];
  return Array.from({ length: turnCount }, (_, t) => {
    const turn = turns[t];
    if (!Array.isArray(turn)) return [];
    return turn.filter((s): s is string[] => Array.isArray(s) && s.every((c) => typeof c === 'string'));
  });
}

/**
 * The official verdict, plus per-turn detail for every turn even when the result has the wrong
 * shape (a force quit): then the played turns are rechecked padded with empty turns. The reward
 * always comes from `verdict`.
 */
export function checkWithDetail(
  task: BfclTask,
  modelTurns: unknown,
  data: BfclData,
  knownVerdict?: CheckResult,
): { verdict: CheckResult; detail: CheckResult } {
  const verdict = knownVerdict ?? checkTask(task, modelTurns, data);
  const turnCount = task.groundTruth.length;
  const detail =
    verdict.turns.length === turnCount
      ? verdict
      : checkTask(task, normaliseTurns(modelTurns, turnCount), data);
  return { verdict, detail };
}

export interface AssembleInput {
  readonly task: BfclTask;
  readonly data: BfclData;
  readonly recorder: CallRecorder;
  readonly verdict: CheckResult;
  readonly detail: CheckResult;
  /** the steps the policy took in a turn */
  readonly stepsFor: (turn: TurnCheck) => StepRecord[];
  readonly forceQuit: boolean;
}

/** The trajectory record from a verdict and the recorded steps: shared by live and replayed runs. */
export function assembleTrajectory(input: AssembleInput): Trajectory {
  const { task, data, recorder, verdict, detail } = input;
  const turns: TurnRecord[] = detail.turns.map((t) => ({
    turn: t.turn,
    request: turnMessages(task, t.turn),
    availableTools: visibleFunctions(task, data, t.turn).map((d) => d.name),
    steps: input.stepsFor(t),
    check: {
      checked: t.checked,
      passed: t.passed,
      ...(t.failure ? { failure: t.failure } : {}),
      ...(t.differingAttributes ? { differingAttributes: t.differingAttributes } : {}),
      ...(t.missingItems ? { missingItems: t.missingItems } : {}),
    },
    groundTruthClasses: recorder.classesOf(task.groundTruth[t.turn]!),
    ...(t.groundTruthResults.some(isExecutionError) ? { groundTruthError: true } : {}),
  }));
  return {
    version: TRAJECTORY_VERSION,
    suite: data.suite,
    taskId: task.id,
    category: task.category,
    turns,
    reward: verdict.valid ? 1 : 0,
    ...(verdict.errorType ? { errorType: verdict.errorType } : {}),
    forceQuit: input.forceQuit,
  };
}

function checkerFailure(task: BfclTask, data: BfclData, e: unknown): Trajectory {
  return {
    version: TRAJECTORY_VERSION,
    suite: data.suite,
    taskId: task.id,
    category: task.category,
    turns: [],
    reward: 0,
    forceQuit: false,
    checkerError: e instanceof Error ? e.message : String(e),
  };
}

/** Rebuild a trajectory from a BFCL result (turn -> step -> call strings) by replaying it. */
export function trajectoryFromCalls(
  task: BfclTask,
  modelTurns: unknown,
  data: BfclData,
  recorder: CallRecorder = new CallRecorder(data),
  /** the official verdict when the caller already has it (saves a replay) */
  verdict?: CheckResult,
): Trajectory {
  let checked: ReturnType<typeof checkWithDetail>;
  try {
    checked = checkWithDetail(task, modelTurns, data, verdict);
  } catch (e) {
    return checkerFailure(task, data, e);
  }
  return assembleTrajectory({
    task,
    data,
    recorder,
    ...checked,
    forceQuit: checked.verdict.errorType === 'multi_turn:force_terminated',
    stepsFor: (t) => {
      const available = new Set(visibleFunctions(task, data, t.turn).map((d) => d.name));
      return t.modelCalls.map((calls, i) => ({
        calls: calls.map((call, j) => recorder.record(call, t.modelResults[i]![j]!, available)),
      }));
    },
  });
}

export { checkerFailure };
