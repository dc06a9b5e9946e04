// @module-tag bfcl-data
import { describe, expect, it } from 'vitest';
import { checkTask } from '../src/envs/bfcl/checker.js';
import { readJsonl, sharedData } from './support/golden.js';

interface CheckerCase {
  task_id: string;
  variant: string;
  model_turns: string[][][];
  valid: boolean;
  error_type?: string;
  error_message?: string;
  differing_attributes?: Record<string, string[]>;
  missing_items?: string[];
}

describe('official checker verdicts (golden checker_cases.jsonl)', () => {
  const cases = readJsonl<CheckerCase>('checker_cases.jsonl');
  const data = sharedData();

  it('agrees with the reference verdict, error type and message on every case', () => {
    const disagreements = cases
      .map((c) => {
        const r = checkTask(data.byId.get(c.task_id)!, c.model_turns, data);
        const same =
          r.valid === c.valid &&
          (c.valid || (r.errorType === c.error_type && r.errorMessage === c.error_message));
        return same
          ? undefined
          : {
              id: `${c.task_id} ${c.variant}`,
              expected: [c.valid, c.error_type, c.error_message],
              actual: [r.valid, r.errorType, r.errorMessage],
            };
      })
      .filter(Boolean);
    expect(disagreements.slice(0, 5)).toEqual([]);
    expect(cases.length).toBeGreaterThan(700);
  });

  it('reports the same differing attributes and missing items as the reference', () => {
    for (const c of cases.filter((x) => !x.valid)) {
      const r = checkTask(data.byId.get(c.task_id)!, c.model_turns, data);
      const failed = r.turns.find((t) => t.turn === r.failedTurn);
      if (c.differing_attributes) {
        const cls = Object.keys(c.differing_attributes)[0]!;
        // The golden file lists them sorted; we keep Python's vars() order.
        const ours = [...(failed?.differingAttributes?.[cls] ?? [])].sort();
        expect(ours, `${c.task_id} ${c.variant}`).toEqual(c.differing_attributes[cls]);
      }
      if (c.missing_items) expect(failed?.missingItems, `${c.task_id} ${c.variant}`).toEqual(c.missing_items);
    }
  });

  it('accepts the ground truth of all 800 tasks replayed one call per step', () => {
    const invalid = data.tasks.filter(
      (t) =>
        !checkTask(
          t,
          t.groundTruth.map((turn) => turn.map((call) => [call])),
          data,
        ).valid,
    );
    expect(invalid.map((t) => t.id)).toEqual([]);
  });

  it('fails a result with the wrong number of turns as force-terminated', () => {
    const task = data.byId.get('multi_turn_base_0')!;
    const r = checkTask(task, [[['ls()']]], data);
    expect(r.valid).toBe(false);
    expect(r.errorType).toBe('multi_turn:force_terminated');
  });
});
