import { describe, expect, it } from 'vitest';
import {
  checkErrorCase,
  checkGoldenTrace,
  type ErrorCase,
  type GoldenTrace,
  readJsonl,
} from './support/golden.js';

// The reference Python's recorded behaviour, replayed through the port (SPEC section 9).
describe('golden traces: every ground-truth result string and per-turn state identical', () => {
  const traces = readJsonl<GoldenTrace>('golden_traces.jsonl');
  it('covers all 800 tasks', () => {
    expect(traces).toHaveLength(800);
  });
  for (const category of [
    'multi_turn_base',
    'multi_turn_miss_func',
    'multi_turn_miss_param',
    'multi_turn_long_context',
  ]) {
    it(category, () => {
      const mismatches = traces.filter((t) => t.category === category).flatMap((t) => checkGoldenTrace(t));
      expect(mismatches.slice(0, 5)).toEqual([]);
    });
  }
});

describe('error cases: invalid and edge calls give the reference result and state', () => {
  const cases = readJsonl<ErrorCase>('error_cases.jsonl');
  const groups = [...new Set(cases.map((c) => c.class_group))];
  for (const group of groups) {
    it(group, () => {
      const mismatches = cases.filter((c) => c.class_group === group).flatMap((c) => checkErrorCase(c));
      expect(mismatches).toEqual([]);
    });
  }
});
