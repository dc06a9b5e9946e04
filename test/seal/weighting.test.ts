import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXCLUDED_LABELS, LABELS, type Label } from '../../src/seal/labels.js';
import { FailureProfile, type ProfileScope } from '../../src/seal/profile.js';
import {
  applyWeights,
  budgetNormalise,
  DEFAULT_RHO,
  type DynamicRhoState,
  dynamicRhoFromJSON,
  initialDynamicRho,
  type Rho,
  rolloutWeight,
  updateDynamicRho,
  WEIGHTED_LABELS,
  type WeightMode,
} from '../../src/seal/weighting.js';

const MODES: readonly WeightMode[] = ['all', 'positive', 'negative'];

describe('DEFAULT_RHO', () => {
  it("has the paper's values, ours for the executable failures, and no excluded label", () => {
    expect(DEFAULT_RHO).toEqual({
      pass: 1.0,
      invalid_tool_call: 1.6,
      argument_mismatch: 1.5,
      state_mismatch: 1.0,
      instance_mismatch: 0.6,
      recovery_failure: 1.2,
      missing_tool_call: 1.5,
      spurious_tool_call: 2.0,
      correct_abstention: 1.8,
      response_mismatch: 0.9,
    });
    expect(WEIGHTED_LABELS).toEqual(LABELS.filter((l) => !EXCLUDED_LABELS.has(l)));
    expect(Object.isFrozen(DEFAULT_RHO)).toBe(true);
  });
});

describe('rolloutWeight', () => {
  it.each([
    // all pass: 1.0
    [['pass', 'pass', 'pass'], 1],
    // (2.0 + 1.0) / 2
    [['spurious_tool_call', 'pass'], 1.5],
    // (1.5 + 0.9 + 1.0 + 1.0) / 4 = 4.4 / 4
    [['argument_mismatch', 'response_mismatch', 'pass', 'pass'], 1.1],
    // (1.6 + 1.6 + 1.2) / 3 = 4.4 / 3
    [['invalid_tool_call', 'recovery_failure', 'invalid_tool_call'], 4.4 / 3],
    // 0.6 is inside [0.5, 2]
    [['instance_mismatch', 'instance_mismatch'], 0.6],
    // gt_error dropped: 2.0 / 1
    [['gt_error', 'spurious_tool_call'], 2.0],
    // (1.5 + 1.8) / 2, checker_error dropped
    [['missing_tool_call', 'checker_error', 'correct_abstention'], 1.65],
    // nothing countable: left alone
    [['gt_error', 'checker_error'], 1],
    [[], 1],
  ] as const)('%j -> %d', (labels, expected) => {
    expect(rolloutWeight(labels)).toBeCloseTo(expected, 14);
  });

  it('clips to [wMin, wMax] but leaves a rollout with nothing countable at exactly 1', () => {
    // 0.6 < 0.8
    expect(rolloutWeight(['instance_mismatch'], { wMin: 0.8 })).toBe(0.8);
    // custom rho 3.0 > 2.0
    expect(rolloutWeight(['spurious_tool_call'], { rho: { ...DEFAULT_RHO, spurious_tool_call: 3 } })).toBe(2);
    // (2.0 + 2.0 + 1.0) / 3 = 1.667 > 1.5
    expect(rolloutWeight(['spurious_tool_call', 'spurious_tool_call', 'pass'], { wMax: 1.5 })).toBe(1.5);
    expect(rolloutWeight(['gt_error'], { wMin: 1.2, wMax: 2 })).toBe(1);
  });

  it('refuses bounds that could flip or erase an advantage', () => {
    expect(() => rolloutWeight(['pass'], { wMin: 0 })).toThrow(RangeError);
    expect(() => rolloutWeight(['pass'], { wMin: 1.5, wMax: 1 })).toThrow(/0 < min <= max/);
    expect(() => rolloutWeight(['pass'], { wMax: Number.POSITIVE_INFINITY })).toThrow(RangeError);
    expect(() => rolloutWeight(['pass'], { rho: { ...DEFAULT_RHO, pass: Number.NaN } })).toThrow(/rho.pass/);
  });

  const boundsArb = fc
    .tuple(fc.double({ min: 0.01, max: 5, noNaN: true }), fc.double({ min: 0.01, max: 5, noNaN: true }))
    .map(([a, b]) => ({ wMin: Math.min(a, b), wMax: Math.max(a, b) }));
  const rhoArb: fc.Arbitrary<Rho> = fc
    .array(fc.double({ min: 0, max: 10, noNaN: true }), {
      minLength: WEIGHTED_LABELS.length,
      maxLength: WEIGHTED_LABELS.length,
    })
    .map((values) => Object.fromEntries(WEIGHTED_LABELS.map((l, i) => [l, values[i]!])) as Rho);
  const labelsArb = fc.array(fc.constantFrom(...LABELS), { maxLength: 12 });

  it('property: w is in [wMin, wMax], or exactly 1 when no label counts', () => {
    fc.assert(
      fc.property(labelsArb, boundsArb, rhoArb, (labels, bounds, rho) => {
        const w = rolloutWeight(labels, { ...bounds, rho });
        if (labels.every((l) => EXCLUDED_LABELS.has(l))) expect(w).toBe(1);
        else {
          expect(w).toBeGreaterThanOrEqual(bounds.wMin);
          expect(w).toBeLessThanOrEqual(bounds.wMax);
        }
      }),
    );
  });

  it('property: w does not depend on the order of the turns, to the bit', () => {
    fc.assert(
      fc.property(
        labelsArb.chain((ls) => fc.tuple(fc.constant(ls), fc.shuffledSubarray(ls, { minLength: ls.length }))),
        rhoArb,
        ([labels, shuffled], rho) => {
          expect(rolloutWeight(shuffled, { rho })).toBe(rolloutWeight(labels, { rho }));
        },
      ),
    );
  });
});

describe('applyWeights', () => {
  const advantages = [1, -1, 0, 2];
  const weights = [2, 0.5, 1.5, 1];

  it('scales all, only positive, or only negative advantages', () => {
    expect(applyWeights(advantages, weights, 'all')).toEqual([2, -0.5, 0, 2]);
    expect(applyWeights(advantages, weights, 'positive')).toEqual([2, -1, 0, 2]);
    expect(applyWeights(advantages, weights, 'negative')).toEqual([1, -0.5, 0, 2]);
    expect(applyWeights(advantages, weights)).toEqual([2, -0.5, 0, 2]);
  });

  it('does not modify its inputs', () => {
    const a = [...advantages];
    applyWeights(a, weights, 'all');
    expect(a).toEqual(advantages);
  });

  it('rejects mismatched lengths and weights that are not positive', () => {
    expect(() => applyWeights([1, 2], [1], 'all')).toThrow(/2 advantages but 1 weights/);
    expect(() => applyWeights([1], [0], 'all')).toThrow(/weight 0 is 0/);
    expect(() => applyWeights([1], [-1], 'negative')).toThrow(RangeError);
    expect(() => applyWeights([1], [Number.NaN], 'positive')).toThrow(RangeError);
  });

  // Advantages as GRPO produces them: no subnormals, whose product with 0.5 would round to 0.
  const advantageArb = fc
    .double({ min: -1e6, max: 1e6, noNaN: true })
    .filter((a) => a === 0 || Math.abs(a) >= 1e-300);
  const weightedRolloutsArb = fc.array(
    fc.tuple(advantageArb, fc.array(fc.constantFrom(...LABELS), { maxLength: 8 })),
    { maxLength: 32 },
  );

  it('property: weighting never changes the sign of an advantage, in any mode', () => {
    fc.assert(
      fc.property(weightedRolloutsArb, fc.constantFrom(...MODES), (rollouts, mode) => {
        const a = rollouts.map(([adv]) => adv);
        const w = rollouts.map(([, labels]) => rolloutWeight(labels));
        const out = applyWeights(a, w, mode);
        out.forEach((x, i) => {
          expect(Math.sign(x)).toBe(Math.sign(a[i]!));
        });
      }),
    );
  });

  it('property: the mode leaves the other side of zero untouched', () => {
    fc.assert(
      fc.property(weightedRolloutsArb, (rollouts) => {
        const a = rollouts.map(([adv]) => adv);
        const w = rollouts.map(([, labels]) => rolloutWeight(labels));
        const positive = applyWeights(a, w, 'positive');
        const negative = applyWeights(a, w, 'negative');
        a.forEach((x, i) => {
          if (x <= 0) expect(positive[i]).toBe(x);
          if (x >= 0) expect(negative[i]).toBe(x);
        });
      }),
    );
  });
});

// A window built the way the trainer builds it: 8 failed rollouts with two argument mismatches
// in four turns, 8 solved rollouts of four passes. 64 turns, argument_mismatch 16, pass 48.
function windowScope(extra: readonly { reward: number; labels: readonly Label[] }[] = []): ProfileScope {
  const profile = new FailureProfile();
  for (let i = 0; i < 8; i++) {
    profile.observe({
      taskId: `f${i}`,
      category: 'base',
      reward: 0,
      labels: ['argument_mismatch', 'argument_mismatch', 'pass', 'pass'],
    });
    profile.observe({
      taskId: `s${i}`,
      category: 'base',
      reward: 1,
      labels: ['pass', 'pass', 'pass', 'pass'],
    });
  }
  extra.forEach((r, i) => {
    profile.observe({ taskId: `x${i}`, category: 'base', ...r });
  });
  return profile.snapshot().window.overall;
}

describe('dynamic rho', () => {
  it('moves a pressured label by one EMA step toward its target, worked by hand', () => {
    const next = updateDynamicRho(initialDynamicRho(), windowScope());
    // argument_mismatch: prevalence 16/64 = 0.25, meanReward 0, confidence min(1, 16/32) = 0.5
    // target = 1.5 * (1 + 1 * 0.25 * 1 * 0.5) = 1.6875
    // new    = 0.75 * 1.5 + 0.25 * 1.6875 = 1.546875
    expect(next.rho.argument_mismatch).toBe(1.546875);
    // pass keeps its base as target; absent labels have no pressure and stay at base
    expect(next.rho.pass).toBe(1);
    expect(next.rho.spurious_tool_call).toBe(2);
    expect(next.rho.instance_mismatch).toBe(0.6);
    expect(next.updates).toBe(1);

    // the label leaves the window: it drifts back toward its base
    // 0.75 * 1.546875 + 0.25 * 1.5 = 1.53515625
    const passOnly = windowScope().labels.pass!;
    const after = updateDynamicRho(next, {
      turns: 48,
      rollouts: 16,
      meanReward: 0.5,
      labels: { pass: passOnly },
    });
    expect(after.rho.argument_mismatch).toBe(1.53515625);
  });

  it('keeps excluded labels out of the prevalence denominator', () => {
    // 8 extra turns of gt_error leave argument_mismatch's prevalence at 16 / 64
    const withNoise = windowScope([{ reward: 0, labels: Array<Label>(8).fill('gt_error') }]);
    expect(withNoise.turns).toBe(72);
    expect(updateDynamicRho(initialDynamicRho(), withNoise).rho.argument_mismatch).toBe(1.546875);
  });

  it('clips the target, and full confidence at confidenceSamples turns', () => {
    // correct_abstention: 40 of 80 turns, meanReward 0.5, confidence min(1, 40/32) = 1
    // target = 1.8 * (1 + 0.5 * 0.5) = 2.25 -> clipped to 2.0; new = 0.75 * 1.8 + 0.25 * 2.0 = 1.85
    const scope: ProfileScope = {
      turns: 80,
      rollouts: 20,
      meanReward: 0.5,
      labels: {
        correct_abstention: { count: 40, prevalence: 0.5, meanReward: 0.5, rollouts: 20 },
        pass: { count: 40, prevalence: 0.5, meanReward: 0.5, rollouts: 20 },
      },
    };
    expect(updateDynamicRho(initialDynamicRho(), scope).rho.correct_abstention).toBeCloseTo(1.85, 14);
    // alpha 0 turns the pressure off: every weight stays at its base
    expect(updateDynamicRho(initialDynamicRho(), scope, { alpha: 0 }).rho).toEqual(DEFAULT_RHO);
    // beta 1 jumps straight to the (clipped) target
    expect(updateDynamicRho(initialDynamicRho(), scope, { beta: 1 }).rho.correct_abstention).toBe(2);
  });

  it('converges to the clipped target under a steady window', () => {
    let state = initialDynamicRho();
    for (let i = 0; i < 200; i++) state = updateDynamicRho(state, windowScope());
    expect(state.rho.argument_mismatch).toBeCloseTo(1.6875, 12);
    expect(state.updates).toBe(200);
  });

  it('ignores a window without evidence', () => {
    const state = updateDynamicRho(initialDynamicRho(), windowScope());
    const empty = new FailureProfile().snapshot().window.overall;
    expect(updateDynamicRho(state, empty)).toBe(state);
    const noiseOnly: ProfileScope = {
      turns: 2,
      rollouts: 1,
      meanReward: 0,
      labels: { gt_error: { count: 2, prevalence: 1, meanReward: 0, rollouts: 1 } },
    };
    expect(updateDynamicRho(state, noiseOnly)).toBe(state);
  });

  it('survives a JSON round trip and rejects junk', () => {
    const state = updateDynamicRho(initialDynamicRho(), windowScope());
    const restored = dynamicRhoFromJSON(JSON.parse(JSON.stringify(state)));
    expect(restored).toEqual(state);
    expect(updateDynamicRho(restored, windowScope())).toEqual(updateDynamicRho(state, windowScope()));
    expect(() => dynamicRhoFromJSON({ version: 1, rho: { pass: 1 }, updates: 0 })).toThrow(
      /rho.invalid_tool_call/,
    );
    expect(() =>
      dynamicRhoFromJSON({ version: 1, rho: { ...DEFAULT_RHO, gt_error: 1 }, updates: 0 }),
    ).toThrow(/unknown label "gt_error"/);
    expect(() => dynamicRhoFromJSON({ version: 2, rho: DEFAULT_RHO, updates: 0 })).toThrow(/version/);
    expect(() => dynamicRhoFromJSON({ version: 1, rho: DEFAULT_RHO, updates: -1 })).toThrow(/updates/);
  });

  it('rejects bad options', () => {
    const scope = windowScope();
    expect(() => updateDynamicRho(initialDynamicRho(), scope, { beta: 1.5 })).toThrow(/beta/);
    expect(() => updateDynamicRho(initialDynamicRho(), scope, { confidenceSamples: 0 })).toThrow(
      /confidenceSamples/,
    );
    expect(() => updateDynamicRho(initialDynamicRho(), scope, { wMin: 2, wMax: 1 })).toThrow(RangeError);
  });

  const scopeArb: fc.Arbitrary<ProfileScope> = fc
    .array(
      fc.record({
        reward: fc.double({ min: 0, max: 1, noNaN: true }),
        labels: fc.array(fc.constantFrom(...LABELS), { maxLength: 10 }),
      }),
      { maxLength: 30 },
    )
    .map((rollouts) => {
      const profile = new FailureProfile();
      rollouts.forEach((r, i) => {
        profile.observe({ taskId: `t${i}`, category: 'base', ...r });
      });
      return profile.snapshot().window.overall;
    });

  it('property: dynamic weights stay within [wMin, wMax] however the windows go', () => {
    fc.assert(
      fc.property(
        fc.array(scopeArb, { minLength: 1, maxLength: 6 }),
        fc.record({
          beta: fc.double({ min: 0, max: 1, noNaN: true }),
          alpha: fc.double({ min: -5, max: 50, noNaN: true }),
          confidenceSamples: fc.integer({ min: 1, max: 64 }),
        }),
        fc
          .tuple(fc.double({ min: 0.05, max: 4, noNaN: true }), fc.double({ min: 0.05, max: 4, noNaN: true }))
          .map(([a, b]) => ({ wMin: Math.min(a, b), wMax: Math.max(a, b) })),
        (scopes, opts, bounds) => {
          // start from the base, which may lie outside the bounds
          let state: DynamicRhoState = initialDynamicRho();
          for (const scope of scopes) {
            state = updateDynamicRho(state, scope, { ...opts, ...bounds });
            const hadEvidence = WEIGHTED_LABELS.some((l) => (scope.labels[l]?.count ?? 0) > 0);
            if (!hadEvidence && state.updates === 0) continue;
            for (const label of WEIGHTED_LABELS) {
              expect(state.rho[label]).toBeGreaterThanOrEqual(bounds.wMin);
              expect(state.rho[label]).toBeLessThanOrEqual(bounds.wMax);
            }
          }
        },
      ),
    );
  });
});

describe('budgetNormalise', () => {
  const bounds = { minScale: 0.5, maxScale: 2 };

  it('renormalises the tagged scales to mean 1, worked by hand', () => {
    // tagged [1.5, 0.5, 2.0]: mean 4/3, factor 0.75 -> [1.125, 0.375 -> 0.5, 1.5]; untagged stays
    expect(budgetNormalise([1.5, 0.5, 1, 2], [true, true, false, true], bounds)).toEqual([
      1.125, 0.5, 1, 1.5,
    ]);
  });

  it('softens deviations from 1 by strength before normalising', () => {
    // strength 0.5: [1.25, 0.75, 1.5], mean 3.5/3, factor 6/7 -> [7.5/7, 4.5/7, 9/7]
    const out = budgetNormalise([1.5, 0.5, 2], [true, true, true], { ...bounds, strength: 0.5 });
    [7.5 / 7, 4.5 / 7, 9 / 7].forEach((x, i) => {
      expect(out[i]).toBeCloseTo(x, 14);
    });
    // strength 0 flattens everything to 1
    expect(budgetNormalise([1.5, 0.5, 2], [true, true, true], { ...bounds, strength: 0 })).toEqual([1, 1, 1]);
  });

  it('without normalisation only softens and clips', () => {
    // strength 2: [1 + 2*0.5, 1 - 2*0.5, 1 + 2*1] = [2, 0 -> 0.5, 3 -> 2]
    expect(
      budgetNormalise([1.5, 0.5, 2], [true, true, true], { ...bounds, strength: 2, normaliseMean: false }),
    ).toEqual([2, 0.5, 2]);
  });

  it('hits another target mean, and leaves a batch without tags alone', () => {
    // [1, 2] mean 1.5, target 1.2 -> factor 0.8 -> [0.8, 1.6]
    const out = budgetNormalise([1, 2], [true, true], { ...bounds, targetMean: 1.2 });
    expect(out[0]).toBeCloseTo(0.8, 14);
    expect(out[1]).toBeCloseTo(1.6, 14);
    expect(budgetNormalise([1.3, 0.7], [false, false], bounds)).toEqual([1.3, 0.7]);
  });

  it('rejects inconsistent input', () => {
    expect(() => budgetNormalise([1], [true, false], bounds)).toThrow(/1 scales but 2 tags/);
    expect(() => budgetNormalise([1], [true], { minScale: 2, maxScale: 1 })).toThrow(RangeError);
    expect(() => budgetNormalise([1], [true], { ...bounds, strength: -1 })).toThrow(/strength/);
    expect(() => budgetNormalise([1], [true], { ...bounds, targetMean: 0 })).toThrow(/targetMean/);
  });

  const batchArb = fc.array(fc.tuple(fc.array(fc.constantFrom(...LABELS), { maxLength: 8 }), fc.boolean()), {
    minLength: 1,
    maxLength: 64,
  });

  it('property: when no scale hits a bound, the tagged mean is exactly the target', () => {
    fc.assert(
      fc.property(
        batchArb,
        fc.double({ min: 0.5, max: 1.5, noNaN: true }),
        fc.double({ min: 0, max: 2, noNaN: true }),
        (batch, targetMean, strength) => {
          const scales = batch.map(([labels]) => rolloutWeight(labels));
          const tagged = batch.map(([, isTagged]) => isTagged);
          // default weights lie in [0.6, 2], softened by strength <= 2 in [0.2, 3], rescaled by a
          // factor <= 1.5 / 0.2: the bounds below are never reached
          const out = budgetNormalise(scales, tagged, {
            minScale: 1e-3,
            maxScale: 1e3,
            strength,
            targetMean,
          });
          const picked = out.filter((_, i) => tagged[i]);
          if (picked.length > 0) {
            expect(picked.reduce((sum, s) => sum + s, 0) / picked.length).toBeCloseTo(targetMean, 9);
          }
          out.forEach((s, i) => {
            if (!tagged[i]) expect(s).toBe(scales[i]);
          });
        },
      ),
    );
  });

  it('property: output stays in [minScale, maxScale] for tagged rollouts', () => {
    fc.assert(
      fc.property(batchArb, fc.double({ min: 0, max: 3, noNaN: true }), (batch, strength) => {
        const scales = batch.map(([labels]) => rolloutWeight(labels));
        const tagged = batch.map(([, isTagged]) => isTagged);
        const out = budgetNormalise(scales, tagged, { minScale: 0.7, maxScale: 1.4, strength });
        out.forEach((s, i) => {
          if (tagged[i]) {
            expect(s).toBeGreaterThanOrEqual(0.7);
            expect(s).toBeLessThanOrEqual(1.4);
          }
        });
      }),
    );
  });
});
