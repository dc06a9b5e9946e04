/**
 * Diagnosis Psi (docs/method.md, section 3: Diagnosis): one label per user turn, from the executable evidence
 * in a trajectory record only (parse results, schema checks, tool errors, the checker's per-turn
 * comparison). Deterministic and pure; never changes the reward.
 *
 * A turn whose ground truth is empty is not checked by the official verifier: calling tools
 * there is `spurious_tool_call`, not calling is `correct_abstention`. A checked turn that passes
 * is `pass` (a repaired error is kept as the secondary fact `recovered`). A failing checked turn
 * gets the dominant label among those its evidence supports, in `FAILURE_PRIORITY` order.
 */
import type { Label } from './labels.js';
import { FAILURE_PRIORITY } from './labels.js';
import type { CallRecord, Trajectory, TurnRecord } from './trajectory.js';

export interface TurnEvidence {
  /** the output did not parse into calls, or a call named a tool the policy was not shown */
  readonly invalidToolCall: boolean;
  /** a call to a shown tool broke its schema (required, unknown key, type, allowed values) */
  readonly argumentMismatch: boolean;
  /** the state check failed */
  readonly stateMismatch: boolean;
  /** the classes the policy's calls touched differ from the ground truth's */
  readonly instanceMismatch: boolean;
  /** a tool returned an execution error */
  readonly executionError: boolean;
  /** the policy made no call */
  readonly noCall: boolean;
  /** the response check failed */
  readonly responseMismatch: boolean;
}

export interface TurnDiagnosis {
  readonly turn: number;
  readonly label: Label;
  /** every label the evidence supports on a failing turn, dominant first */
  readonly candidates: readonly Label[];
  /** a tool error earlier in the turn was followed by success (recorded on passing turns) */
  readonly recovered?: boolean;
  readonly evidence: TurnEvidence;
}

function calls(turn: TurnRecord): CallRecord[] {
  return turn.steps.flatMap((s) => s.calls);
}

function touchedClasses(turn: TurnRecord, classOfTool: (name: string) => string | undefined): Set<string> {
  const out = new Set<string>();
  for (const c of calls(turn)) {
    const cls = c.name ? classOfTool(c.name) : undefined;
    if (cls) out.add(cls);
  }
  return out;
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}

export function turnEvidence(
  turn: TurnRecord,
  classOfTool: (name: string) => string | undefined,
): TurnEvidence {
  const cs = calls(turn);
  const failure = turn.check.failure;
  const touched = touchedClasses(turn, classOfTool);
  return {
    invalidToolCall: turn.steps.some((s) => s.parseError !== undefined) || cs.some((c) => !c.available),
    argumentMismatch: cs.some((c) => c.available && c.argumentIssues.length > 0),
    stateMismatch: failure === 'instance_state_mismatch',
    instanceMismatch:
      (failure === 'instance_state_mismatch' || failure === 'execution_response_mismatch') &&
      cs.length > 0 &&
      !sameSet(touched, new Set(turn.groundTruthClasses)),
    executionError: cs.some((c) => c.executionError),
    noCall: cs.length === 0,
    responseMismatch: failure === 'execution_response_mismatch',
  };
}

const EVIDENCE_OF: Readonly<Partial<Record<Label, keyof TurnEvidence>>> = {
  invalid_tool_call: 'invalidToolCall',
  argument_mismatch: 'argumentMismatch',
  state_mismatch: 'stateMismatch',
  instance_mismatch: 'instanceMismatch',
  recovery_failure: 'executionError',
  missing_tool_call: 'noCall',
  response_mismatch: 'responseMismatch',
};

/** Labels for one trajectory, one per user turn in turn order. */
export function diagnose(
  trajectory: Trajectory,
  classOfTool: (name: string) => string | undefined,
): TurnDiagnosis[] {
  return trajectory.turns.map((turn) => diagnoseTurn(trajectory, turn, classOfTool));
}

function diagnoseTurn(
  trajectory: Trajectory,
  turn: TurnRecord,
  classOfTool: (name: string) => string | undefined,
): TurnDiagnosis {
  const evidence = turnEvidence(turn, classOfTool);
  const base = { turn: turn.turn, evidence };
  if (trajectory.checkerError !== undefined) return { ...base, label: 'checker_error', candidates: [] };
  if (turn.groundTruthError) return { ...base, label: 'gt_error', candidates: [] };
  if (!turn.check.checked) {
    const attempted = turn.steps.some((s) => s.calls.length > 0 || s.parseError !== undefined);
    return { ...base, label: attempted ? 'spurious_tool_call' : 'correct_abstention', candidates: [] };
  }
  if (turn.check.passed) {
    return {
      ...base,
      label: 'pass',
      candidates: [],
      ...(evidence.executionError ? { recovered: true } : {}),
    };
  }
  // A state mismatch that comes with different touched classes is the instance-level failure.
  const supported = FAILURE_PRIORITY.filter((l) => evidence[EVIDENCE_OF[l]!]).filter(
    (l) => !(l === 'state_mismatch' && evidence.instanceMismatch),
  );
  const label = supported[0] ?? 'response_mismatch';
  return { ...base, label, candidates: supported.length ? supported : [label] };
}

/** Just the labels, in turn order. */
export function labelsOf(diagnoses: readonly TurnDiagnosis[]): Label[] {
  return diagnoses.map((d) => d.label);
}
