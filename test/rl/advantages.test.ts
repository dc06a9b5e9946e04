import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { grpoAdvantages, weightedAdvantages } from '../../src/rl/advantages.js';
import { LABELS } from '../../src/seal/labels.js';
import { applyWeights, rolloutWeight, type WeightMode } from '../../src/seal/weighting.js';

const MODES: readonly WeightMode[] = ['all', 'positive', 'negative'];

describe('grpoAdvantages', () => {
  // Group a: rewards 1, 0, 0, 0. mean 0.25; deviations 0.75, -0.25 x3; squared sum
  // 0.5625 + 3 * 0.0625 = 0.75; unbiased variance 0.75 / 3 = 0.25, std 0.5.
  // (The population std would be sqrt(0.1875) = 0.433.)
  // Group b: rewards 1, 1: std 0, every advantage 0. Group c: a single rollout.
  const rewards = [1, 1, 0, 0, 1, 1, 0];
  const groups = ['a', 'b', 'a', 'a', 'b', 'c', 'a'];

  it('standardises within each group with the unbiased std, as verl does', () => {
    const out = grpoAdvantages(rewards, groups);
    const expected = [0.75 / 0.500001, 0, -0.25 / 0.500001, -0.25 / 0.500001, 0, 0, -0.25 / 0.500001];
    out.forEach((a, i) => {
      expect(a).toBeCloseTo(expected[i]!, 12);
    });
    // epsilon 0 shows the divisor is exactly 0.5
    expect(grpoAdvantages(rewards, groups, { epsilon: 0 })).toEqual([1.5, 0, -0.5, -0.5, 0, 0, -0.5]);
  });

  it('only centres without std normalisation (Dr. GRPO)', () => {
    expect(grpoAdvantages(rewards, groups, { normaliseStd: false })).toEqual([
      0.75, 0, -0.25, -0.25, 0, 0, -0.25,
    ]);
  });

  it('gives a lone rollout 0 by default, or what verl gives it (mean 0, std 1)', () => {
    expect(grpoAdvantages([1], ['solo'])).toEqual([0]);
    expect(grpoAdvantages([1], ['solo'], { singleton: 'verl' })[0]).toBeCloseTo(1 / 1.000001, 15);
    expect(grpoAdvantages([0.5], ['solo'], { singleton: 'verl', normaliseStd: false })).toEqual([0.5]);
  });

  it('gives 0 to a group of equal rewards even with epsilon 0', () => {
    // 0.1 * 3 / 3 is not exactly 0.1 in floats; the advantages must still be exactly 0
    expect(grpoAdvantages([0.1, 0.1, 0.1], ['g', 'g', 'g'], { epsilon: 0 })).toEqual([0, 0, 0]);
    expect(grpoAdvantages([0.1, 0.1, 0.1], ['g', 'g', 'g'])).toEqual([0, 0, 0]);
  });

  it('tells group 1 from group "1"', () => {
    expect(grpoAdvantages([1, 0], [1, '1'])).toEqual([0, 0]);
    // mean 0.5, unbiased std sqrt(0.5): +-0.5 / sqrt(0.5) = +-sqrt(0.5)
    const [a, b] = grpoAdvantages([1, 0], [1, 1], { epsilon: 0 });
    expect(a).toBeCloseTo(Math.SQRT1_2, 15);
    expect(b).toBeCloseTo(-Math.SQRT1_2, 15);
  });

  it('rejects inconsistent input', () => {
    expect(() => grpoAdvantages([1, 0], ['a'])).toThrow(/2 rewards but 1 group ids/);
    expect(() => grpoAdvantages([Number.NaN], ['a'])).toThrow(/reward 0 is NaN/);
    expect(() => grpoAdvantages([1], ['a'], { epsilon: -1 })).toThrow(/epsilon/);
    expect(grpoAdvantages([], [])).toEqual([]);
  });

  // Rollouts of several prompts, groups interleaved; rewards binary, or partial on a 1/1000 grid
  // (rewards a few ulps apart would test float cancellation, not GRPO).
  const batchArb = fc
    .array(
      fc.tuple(
        fc.integer({ min: 0, max: 5 }),
        fc.oneof(
          fc.constantFrom(0, 1),
          fc.integer({ min: 0, max: 1000 }).map((k) => k / 1000),
        ),
      ),
      { maxLength: 48 },
    )
    .map((rows) => ({ groups: rows.map(([g]) => g), rewards: rows.map(([, r]) => r) }));

  it('property: advantages sum to 0 within a group, and have unit sample std when rewards differ', () => {
    fc.assert(
      fc.property(batchArb, ({ groups, rewards }) => {
        const out = grpoAdvantages(rewards, groups, { epsilon: 0 });
        for (const g of new Set(groups)) {
          const idx = groups.flatMap((x, i) => (x === g ? [i] : []));
          const a = idx.map((i) => out[i]!);
          expect(a.reduce((s, x) => s + x, 0)).toBeCloseTo(0, 9);
          const r = idx.map((i) => rewards[i]!);
          if (idx.length > 1 && Math.max(...r) > Math.min(...r)) {
            const variance = a.reduce((s, x) => s + x * x, 0) / (a.length - 1);
            expect(variance).toBeCloseTo(1, 9);
          }
        }
      }),
    );
  });

  it('property: a better reward in the group never gets a smaller advantage', () => {
    fc.assert(
      fc.property(batchArb, ({ groups, rewards }) => {
        const out = grpoAdvantages(rewards, groups);
        groups.forEach((g, i) => {
          groups.forEach((h, j) => {
            if (g === h && rewards[i]! > rewards[j]!) expect(out[i]!).toBeGreaterThan(out[j]!);
          });
        });
      }),
    );
  });

  const labelledBatchArb = batchArb.chain(({ groups, rewards }) =>
    fc
      .array(fc.array(fc.constantFrom(...LABELS), { maxLength: 8 }), {
        minLength: groups.length,
        maxLength: groups.length,
      })
      .map((labels) => ({ groups, rewards, labels })),
  );

  it('property: diagnosis weighting keeps every GRPO advantage on its side of zero', () => {
    fc.assert(
      fc.property(labelledBatchArb, fc.constantFrom(...MODES), ({ groups, rewards, labels }, mode) => {
        const plain = grpoAdvantages(rewards, groups);
        const weighted = weightedAdvantages(
          plain,
          labels.map((l) => rolloutWeight(l)),
          mode,
        );
        weighted.forEach((a, i) => {
          expect(Math.sign(a)).toBe(Math.sign(plain[i]!));
        });
      }),
    );
  });

  it('property: with every turn labelled pass, weighted GRPO is plain GRPO exactly', () => {
    fc.assert(
      fc.property(
        batchArb,
        fc.integer({ min: 1, max: 10 }),
        fc.constantFrom(...MODES),
        ({ groups, rewards }, turns, mode) => {
          const plain = grpoAdvantages(rewards, groups);
          const weights = rewards.map(() => rolloutWeight(Array(turns).fill('pass')));
          expect(weightedAdvantages(plain, weights, mode)).toEqual(plain);
        },
      ),
    );
  });

  it('weightedAdvantages is applyWeights, not a second implementation', () => {
    expect(weightedAdvantages).toBe(applyWeights);
    // group [1, 0] -> [0.7071, -0.7071]; weights: spurious 2.0, instance 0.6
    const plain = grpoAdvantages([1, 0], ['g', 'g'], { epsilon: 0 });
    const w = [rolloutWeight(['spurious_tool_call']), rolloutWeight(['instance_mismatch'])];
    expect(weightedAdvantages(plain, w, 'all')).toEqual([2 * plain[0]!, 0.6 * plain[1]!]);
    expect(weightedAdvantages(plain, w, 'negative')).toEqual([plain[0], 0.6 * plain[1]!]);
    expect(weightedAdvantages(plain, w, 'positive')).toEqual([2 * plain[0]!, plain[1]]);
    expect(weightedAdvantages(plain, w, 'all')[0]).toBeCloseTo(Math.SQRT2, 15);
  });
});
