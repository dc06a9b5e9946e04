/**
 * The diagnosis label set of SEAL (docs/method.md, section 3: Diagnosis): one label per user turn, from
 * executable evidence only.
 */

export const LABELS = [
  'pass',
  'invalid_tool_call',
  'argument_mismatch',
  'state_mismatch',
  'instance_mismatch',
  'recovery_failure',
  'missing_tool_call',
  'spurious_tool_call',
  'correct_abstention',
  'response_mismatch',
  'checker_error',
  'gt_error',
] as const;
export type Label = (typeof LABELS)[number];

/**
 * The policy's own failures, dominant first: directly executable failures win over downstream
 * verifier ones (state and instance mismatch share a rank). Each has a capability guideline in
 * the interface, shown in this order.
 */
export const POLICY_FAILURES: readonly Label[] = [
  'invalid_tool_call',
  'argument_mismatch',
  'state_mismatch',
  'instance_mismatch',
  'recovery_failure',
  'missing_tool_call',
  'spurious_tool_call',
  'response_mismatch',
];

/**
 * Labels of a failing checked turn, dominant first: the policy's failures but
 * `spurious_tool_call`, which only a turn the checker does not score (irrelevance) gets.
 */
export const FAILURE_PRIORITY: readonly Label[] = POLICY_FAILURES.filter((l) => l !== 'spurious_tool_call');

/** Labels that say the checker or the ground truth failed, not the policy: never weighted. */
export const EXCLUDED_LABELS: ReadonlySet<Label> = new Set<Label>(['checker_error', 'gt_error']);

/** Labels on a turn the policy got right. */
export const SUCCESS_LABELS: ReadonlySet<Label> = new Set<Label>(['pass', 'correct_abstention']);

export function isLabel(s: string): s is Label {
  return (LABELS as readonly string[]).includes(s);
}

/** The three thirds of a dialogue a turn can sit in (profile per turn position). */
export type TurnPosition = 'early' | 'middle' | 'late';

export function turnPosition(turn: number, turnCount: number): TurnPosition {
  const third = (3 * turn) / Math.max(1, turnCount);
  return third < 1 ? 'early' : third < 2 ? 'middle' : 'late';
}
