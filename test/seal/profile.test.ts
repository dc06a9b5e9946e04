import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Category } from '../../src/envs/bfcl/data/tasks.js';
import { LABELS } from '../../src/seal/labels.js';
import {
  DOMINANCE_ORDER,
  dominantLabel,
  FailureProfile,
  labelPressure,
  ProfileFormatError,
  type ProfileObservation,
} from '../../src/seal/profile.js';

// Four rollouts worked by hand below. Turn positions follow turnPosition(i, n): 3i/n < 1 early,
// < 2 middle, else late. So for n = 3: e m l; n = 4: e e m l; n = 2: e m.
const t1Pass: ProfileObservation = {
  taskId: 't1',
  category: 'base',
  reward: 1,
  labels: ['pass', 'pass', 'pass'],
};
const t2Args: ProfileObservation = {
  taskId: 't2',
  category: 'base',
  reward: 0,
  labels: ['pass', 'argument_mismatch', 'argument_mismatch', 'state_mismatch'],
};
const t3Spurious: ProfileObservation = {
  taskId: 't3',
  category: 'miss_func',
  reward: 0,
  labels: ['correct_abstention', 'spurious_tool_call'],
};
const t1Missing: ProfileObservation = {
  taskId: 't1',
  category: 'base',
  reward: 0,
  labels: ['pass', 'missing_tool_call', 'gt_error'],
};
const fourRollouts = [t1Pass, t2Args, t3Spurious, t1Missing];

function profileOf(observations: readonly ProfileObservation[]): FailureProfile {
  const profile = new FailureProfile();
  for (const obs of observations) profile.observe(obs);
  return profile;
}

function roundTrip(profile: FailureProfile): FailureProfile {
  return FailureProfile.fromJSON(JSON.parse(JSON.stringify(profile.toJSON())));
}

describe('FailureProfile aggregation', () => {
  it('computes every field of every scope for four hand-worked rollouts', () => {
    const snap = profileOf(fourRollouts).snapshot();
    const view = snap.total;

    // 3 + 4 + 2 + 3 = 12 turns; rewards 1, 0, 0, 0.
    expect(view.overall).toEqual({
      turns: 12,
      rollouts: 4,
      meanReward: 1 / 4,
      labels: {
        // 3 turns in t1Pass, 1 in t2Args, 1 in t1Missing; those rollouts' rewards 1, 0, 0
        pass: { count: 5, prevalence: 5 / 12, meanReward: 1 / 3, rollouts: 3 },
        // two turns, one rollout: the rollout counts once for rollouts and meanReward
        argument_mismatch: { count: 2, prevalence: 2 / 12, meanReward: 0, rollouts: 1 },
        state_mismatch: { count: 1, prevalence: 1 / 12, meanReward: 0, rollouts: 1 },
        missing_tool_call: { count: 1, prevalence: 1 / 12, meanReward: 0, rollouts: 1 },
        spurious_tool_call: { count: 1, prevalence: 1 / 12, meanReward: 0, rollouts: 1 },
        correct_abstention: { count: 1, prevalence: 1 / 12, meanReward: 0, rollouts: 1 },
        // excluded labels are counted like the others, denominator included
        gt_error: { count: 1, prevalence: 1 / 12, meanReward: 0, rollouts: 1 },
      },
    });

    expect(view.byCategory).toEqual({
      // t1Pass, t2Args, t1Missing: 3 + 4 + 3 = 10 turns
      base: {
        turns: 10,
        rollouts: 3,
        meanReward: 1 / 3,
        labels: {
          pass: { count: 5, prevalence: 5 / 10, meanReward: 1 / 3, rollouts: 3 },
          argument_mismatch: { count: 2, prevalence: 2 / 10, meanReward: 0, rollouts: 1 },
          state_mismatch: { count: 1, prevalence: 1 / 10, meanReward: 0, rollouts: 1 },
          missing_tool_call: { count: 1, prevalence: 1 / 10, meanReward: 0, rollouts: 1 },
          gt_error: { count: 1, prevalence: 1 / 10, meanReward: 0, rollouts: 1 },
        },
      },
      miss_func: {
        turns: 2,
        rollouts: 1,
        meanReward: 0,
        labels: {
          correct_abstention: { count: 1, prevalence: 1 / 2, meanReward: 0, rollouts: 1 },
          spurious_tool_call: { count: 1, prevalence: 1 / 2, meanReward: 0, rollouts: 1 },
        },
      },
    });

    expect(view.byPosition).toEqual({
      // early: t1Pass[0]=pass, t2Args[0..1]=pass,arg, t3[0]=abstention, t1Missing[0]=pass
      early: {
        turns: 5,
        rollouts: 4,
        meanReward: 1 / 4,
        labels: {
          pass: { count: 3, prevalence: 3 / 5, meanReward: 1 / 3, rollouts: 3 },
          argument_mismatch: { count: 1, prevalence: 1 / 5, meanReward: 0, rollouts: 1 },
          correct_abstention: { count: 1, prevalence: 1 / 5, meanReward: 0, rollouts: 1 },
        },
      },
      // middle: pass, arg, spurious, missing
      middle: {
        turns: 4,
        rollouts: 4,
        meanReward: 1 / 4,
        labels: {
          pass: { count: 1, prevalence: 1 / 4, meanReward: 1, rollouts: 1 },
          argument_mismatch: { count: 1, prevalence: 1 / 4, meanReward: 0, rollouts: 1 },
          missing_tool_call: { count: 1, prevalence: 1 / 4, meanReward: 0, rollouts: 1 },
          spurious_tool_call: { count: 1, prevalence: 1 / 4, meanReward: 0, rollouts: 1 },
        },
      },
      // late: pass (t1Pass), state (t2Args), gt_error (t1Missing); t3 has no late turn
      late: {
        turns: 3,
        rollouts: 3,
        meanReward: 1 / 3,
        labels: {
          pass: { count: 1, prevalence: 1 / 3, meanReward: 1, rollouts: 1 },
          state_mismatch: { count: 1, prevalence: 1 / 3, meanReward: 0, rollouts: 1 },
          gt_error: { count: 1, prevalence: 1 / 3, meanReward: 0, rollouts: 1 },
        },
      },
    });

    // t1's last rollout beats its earlier all-pass one; argument_mismatch outranks state_mismatch
    expect(view.lastDominantByTask).toEqual({
      t1: 'missing_tool_call',
      t2: 'argument_mismatch',
      t3: 'spurious_tool_call',
    });
    expect(snap.window).toEqual(snap.total);
    expect(snap.version).toBe(1);
  });

  it('starts empty, with zero ratios rather than NaN', () => {
    const snap = new FailureProfile().snapshot();
    const empty = {
      overall: { turns: 0, rollouts: 0, meanReward: 0, labels: {} },
      byCategory: {},
      byPosition: {},
      lastDominantByTask: {},
    };
    expect(snap).toEqual({ version: 1, window: empty, total: empty });
  });

  it('counts a rollout without labels in rollouts and reward only, keeping the task verdict', () => {
    const profile = profileOf([t2Args, { taskId: 't2', category: 'base', reward: 1, labels: [] }]);
    const view = profile.snapshot().total;
    expect(view.overall.turns).toBe(4);
    expect(view.overall.rollouts).toBe(2);
    expect(view.overall.meanReward).toBe(0.5);
    expect(view.overall.labels.pass).toEqual({ count: 1, prevalence: 1 / 4, meanReward: 0, rollouts: 1 });
    expect(view.byPosition.early?.rollouts).toBe(1);
    expect(view.lastDominantByTask).toEqual({ t2: 'argument_mismatch' });
  });

  it('resetWindow empties the window and leaves the running total', () => {
    const profile = profileOf(fourRollouts);
    profile.resetWindow();
    expect(profile.snapshot().window.overall.rollouts).toBe(0);

    profile.observe({ taskId: 't2', category: 'miss_param', reward: 1, labels: ['pass'] });
    const snap = profile.snapshot();
    expect(snap.window).toEqual({
      overall: {
        turns: 1,
        rollouts: 1,
        meanReward: 1,
        labels: { pass: { count: 1, prevalence: 1, meanReward: 1, rollouts: 1 } },
      },
      byCategory: {
        miss_param: {
          turns: 1,
          rollouts: 1,
          meanReward: 1,
          labels: { pass: { count: 1, prevalence: 1, meanReward: 1, rollouts: 1 } },
        },
      },
      byPosition: {
        early: {
          turns: 1,
          rollouts: 1,
          meanReward: 1,
          labels: { pass: { count: 1, prevalence: 1, meanReward: 1, rollouts: 1 } },
        },
      },
      lastDominantByTask: { t2: 'pass' },
    });
    // total = the four rollouts plus this one: 13 turns, rewards 1,0,0,0,1
    expect(snap.total.overall.turns).toBe(13);
    expect(snap.total.overall.rollouts).toBe(5);
    expect(snap.total.overall.meanReward).toBe(2 / 5);
    expect(snap.total.overall.labels.pass).toEqual({
      count: 6,
      prevalence: 6 / 13,
      meanReward: 2 / 4,
      rollouts: 4,
    });
    expect(Object.keys(snap.total.byCategory)).toEqual(['base', 'miss_func', 'miss_param']);
    expect(snap.total.lastDominantByTask).toEqual({
      t1: 'missing_tool_call',
      t2: 'pass',
      t3: 'spurious_tool_call',
    });
  });

  it('rejects observations that would poison the counters', () => {
    const profile = new FailureProfile();
    expect(() => profile.observe({ ...t1Pass, reward: Number.NaN })).toThrow(
      /reward must be a finite number/,
    );
    expect(() => profile.observe({ ...t1Pass, category: 'web' as Category })).toThrow(
      /unknown category "web"/,
    );
    const badLabels = ['pass', 'oops'] as unknown as ProfileObservation['labels'];
    expect(() => profile.observe({ ...t1Pass, labels: badLabels })).toThrow(
      /turn 1 has unknown label "oops"/,
    );
    expect(profile.snapshot().total.overall.rollouts).toBe(0);
  });
});

describe('dominant label', () => {
  it('orders every label exactly once, failure priority first', () => {
    expect([...DOMINANCE_ORDER].sort()).toEqual([...LABELS].sort());
    expect(DOMINANCE_ORDER.slice(0, 7)).toEqual([
      'invalid_tool_call',
      'argument_mismatch',
      'state_mismatch',
      'instance_mismatch',
      'recovery_failure',
      'missing_tool_call',
      'response_mismatch',
    ]);
    expect(DOMINANCE_ORDER.slice(7)).toEqual([
      'spurious_tool_call',
      'checker_error',
      'gt_error',
      'correct_abstention',
      'pass',
    ]);
  });

  it.each([
    [['pass', 'argument_mismatch', 'invalid_tool_call'], 'invalid_tool_call'],
    [['instance_mismatch', 'state_mismatch'], 'state_mismatch'],
    [['response_mismatch', 'recovery_failure'], 'recovery_failure'],
    [['spurious_tool_call', 'response_mismatch'], 'response_mismatch'],
    [['spurious_tool_call', 'checker_error', 'pass'], 'spurious_tool_call'],
    [['pass', 'gt_error'], 'gt_error'],
    [['pass', 'correct_abstention'], 'correct_abstention'],
    [['pass', 'pass'], 'pass'],
    [[], undefined],
  ] as const)('%j -> %s', (labels, expected) => {
    expect(dominantLabel(labels)).toBe(expected);
  });
});

describe('labelPressure', () => {
  it('is prevalence times the failure rate where the label occurs', () => {
    expect(labelPressure({ prevalence: 0.4, meanReward: 0.25 })).toBeCloseTo(0.3, 15);
    expect(labelPressure({ prevalence: 0.5, meanReward: 1 })).toBe(0);
    const stats = profileOf(fourRollouts).snapshot().total.overall.labels.argument_mismatch!;
    expect(labelPressure(stats)).toBe(2 / 12);
  });
});

const labelArb = fc.constantFrom(...LABELS);
const categoryArb = fc.constantFrom<Category>('base', 'miss_func', 'miss_param', 'long_context');
const observationArb = fc.record({
  taskId: fc.constantFrom('a', 'b', 'c', '10', '2', '__proto__'),
  category: categoryArb,
  reward: fc.oneof(fc.constantFrom(0, 1), fc.double({ min: 0, max: 1, noNaN: true })),
  labels: fc.array(labelArb, { maxLength: 9 }),
});
// a run of the profile: observations, with `null` standing for resetWindow()
const stepsArb = fc.array(fc.option(observationArb, { freq: 6 }), { maxLength: 40 });

function play(profile: FailureProfile, steps: readonly (ProfileObservation | null)[]): void {
  for (const step of steps) {
    if (step === null) profile.resetWindow();
    else profile.observe(step);
  }
}

describe('FailureProfile persistence', () => {
  it('snapshots are plain JSON data', () => {
    const snap = profileOf(fourRollouts).snapshot();
    expect(JSON.parse(JSON.stringify(snap))).toEqual(snap);
  });

  it('a restored profile continues exactly like the original', () => {
    const original = profileOf(fourRollouts);
    original.resetWindow();
    original.observe(t2Args);
    const restored = roundTrip(original);
    expect(restored.snapshot()).toEqual(original.snapshot());
    for (const profile of [original, restored]) {
      profile.observe(t3Spurious);
      profile.resetWindow();
      profile.observe(t1Pass);
    }
    expect(JSON.stringify(restored.snapshot())).toBe(JSON.stringify(original.snapshot()));
    expect(JSON.stringify(restored)).toBe(JSON.stringify(original));
  });

  it('property: save anywhere, restore, continue: same snapshots and same state, key order included', () => {
    fc.assert(
      fc.property(stepsArb, stepsArb, (before, after) => {
        const original = new FailureProfile();
        play(original, before);
        const snap = original.snapshot();
        expect(JSON.parse(JSON.stringify(snap))).toEqual(snap);
        const restored = roundTrip(original);
        play(original, after);
        play(restored, after);
        expect(JSON.stringify(restored.snapshot())).toBe(JSON.stringify(original.snapshot()));
        expect(JSON.stringify(restored.toJSON())).toBe(JSON.stringify(original.toJSON()));
      }),
    );
  });

  it('property: the snapshot does not depend on the order of rollouts of distinct tasks', () => {
    const distinctTasks = fc
      .uniqueArray(
        observationArb.map((o) => ({ ...o, reward: Math.round(o.reward) })),
        {
          selector: (o) => o.taskId,
        },
      )
      .chain((obs) => fc.tuple(fc.constant(obs), fc.shuffledSubarray(obs, { minLength: obs.length })));
    fc.assert(
      fc.property(distinctTasks, ([obs, shuffled]) => {
        expect(JSON.stringify(profileOf(shuffled).snapshot())).toBe(
          JSON.stringify(profileOf(obs).snapshot()),
        );
      }),
    );
  });

  it('property: in every scope the label counts add up to the turns', () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        const profile = new FailureProfile();
        play(profile, steps);
        const { total } = profile.snapshot();
        const scopes = [
          total.overall,
          ...Object.values(total.byCategory),
          ...Object.values(total.byPosition),
        ];
        for (const scope of scopes) {
          const stats = Object.values(scope.labels);
          expect(stats.reduce((sum, s) => sum + s.count, 0)).toBe(scope.turns);
          if (scope.turns > 0) expect(stats.reduce((sum, s) => sum + s.prevalence, 0)).toBeCloseTo(1, 12);
          for (const s of stats) expect(s.rollouts).toBeLessThanOrEqual(scope.rollouts);
        }
      }),
    );
  });

  it('fromJSON names the bad field of a corrupt profile', () => {
    const good = JSON.parse(JSON.stringify(profileOf(fourRollouts).toJSON()));
    expect(() => FailureProfile.fromJSON({ ...good, version: 2 })).toThrow(ProfileFormatError);
    const badCount = structuredClone(good);
    badCount.total.overall.labels.pass.count = -1;
    expect(() => FailureProfile.fromJSON(badCount)).toThrow(
      'profile.total.overall.labels.pass.count: expected a non-negative integer, got -1',
    );
    const badLabel = structuredClone(good);
    badLabel.window.lastDominantByTask.t1 = 'fine';
    expect(() => FailureProfile.fromJSON(badLabel)).toThrow(
      'profile.window.lastDominantByTask.t1: unknown label "fine"',
    );
    const badCategory = structuredClone(good);
    badCategory.total.byCategory.web = badCategory.total.byCategory.base;
    expect(() => FailureProfile.fromJSON(badCategory)).toThrow('profile.total.byCategory: unknown key "web"');
    expect(() => FailureProfile.fromJSON(null)).toThrow('profile: expected an object');
  });
});
