/** The pure parts of the loop: packing, credit, task order, configuration. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CATEGORIES } from '../../src/envs/bfcl/data/tasks.js';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import type { Trajectory, TurnRecord } from '../../src/seal/trajectory.js';
import { resolveConfig, TRAIN_DEFAULTS } from '../../src/train/config.js';
import { roundCredit, stepAdvantages, turnAdvantages } from '../../src/train/credit.js';
import { interfaceConfig, methodSwitches } from '../../src/train/loop.js';
import type { METHODS } from '../../src/train/record.js';
import { aggregateRollouts, packSteps } from '../../src/train/sequences.js';
import { roundTasks, trainingTasks, validationTasks, withRevisits } from '../../src/train/tasks.js';

describe('packSteps', () => {
  it('packs steps whose prompt extends the last sequence, and starts anew where it does not', () => {
    // step 2's prompt is step 1's prompt + completion + a tool result (7, 8); step 3's was cut
    const steps = [
      { promptTokenIds: [1, 2, 3], tokenIds: [4, 5], logprobs: [-0.1, -0.2] },
      { promptTokenIds: [1, 2, 3, 4, 5, 7, 8], tokenIds: [9], logprobs: [-0.3] },
      { promptTokenIds: [1, 8], tokenIds: [6], logprobs: [-0.4] },
    ];
    const d = packSteps(steps, [0.5, -1, 2]);
    expect(d).toHaveLength(2);
    expect(d[0]!.tokens).toEqual([1, 2, 3, 4, 5, 7, 8, 9]);
    expect(d[0]!.weights).toEqual([0, 0, 0, 1, 1, 0, 0, 1]);
    expect(d[0]!.samplingLogprobs).toEqual([0, 0, 0, -0.1, -0.2, 0, 0, -0.3]);
    expect(d[0]!.advantages).toEqual([0, 0, 0, 0.5, 0.5, 0, 0, -1]);
    expect(d[1]!).toEqual({
      tokens: [1, 8, 6],
      weights: [0, 0, 1],
      samplingLogprobs: [0, 0, -0.4],
      advantages: [0, 0, 2],
    });
  });

  it('every sampled token is trained exactly once, with its own logprob and advantage (property)', () => {
    const step = fc.record({
      keep: fc.nat(), // how much of the running context the next prompt keeps
      extra: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 1, maxLength: 4 }),
      out: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 1, maxLength: 4 }),
      adv: fc.double({ min: -2, max: 2, noNaN: true }),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 6 }), (spec) => {
        let ctx: number[] = [];
        const steps = spec.map((s, i) => {
          const prompt = [...ctx.slice(0, s.keep % (ctx.length + 1)), ...s.extra];
          const st = {
            promptTokenIds: prompt,
            tokenIds: s.out,
            logprobs: s.out.map((_, t) => -(i + t / 10)),
          };
          ctx = [...prompt, ...s.out];
          return st;
        });
        const data = packSteps(
          steps,
          spec.map((s) => s.adv),
        );
        const trained = data.flatMap((d) =>
          d.tokens.flatMap((id, t) => (d.weights[t] ? [[id, d.samplingLogprobs[t], d.advantages[t]]] : [])),
        );
        const expected = steps.flatMap((s, i) =>
          s.tokenIds.map((id, t) => [id, s.logprobs[t], spec[i]!.adv]),
        );
        expect(trained).toEqual(expected);
        for (const d of data) expect(d.weights[0]).toBe(0);
      }),
    );
  });
});

describe('credit', () => {
  it('GRPO advantages, w_j from the labels, and the budget; no-reweight keeps w = 1', () => {
    // group 0: rewards 1, 0 -> A = +0.707, -0.707 (mean 0.5 over std 0.707 with n-1: 1/sqrt 2); group 1: no variance
    const rollouts = [
      { group: 0, reward: 1, labels: ['pass', 'pass'] as const },
      { group: 0, reward: 0, labels: ['pass', 'invalid_tool_call'] as const },
      { group: 1, reward: 0, labels: ['missing_tool_call'] as const },
      { group: 1, reward: 0, labels: ['state_mismatch'] as const },
    ];
    const opts = { reweight: true, weights: { wMin: 0.5, wMax: 2 }, mode: 'all' as const, budget: false };
    const c = roundCredit(rollouts, opts);
    expect(c[0]!.advantage).toBeCloseTo(Math.SQRT1_2, 4);
    expect(c[1]!.advantage).toBeCloseTo(-Math.SQRT1_2, 4);
    expect(c[2]!.advantage).toBe(0);
    // w = mean of rho over the turns: pass 1.0; (1.0 + 1.6) / 2 = 1.3; missing 1.5
    expect(c.map((x) => x.weight)).toEqual([1, 1.3, 1.5, 1]);
    expect(c[1]!.weightedAdvantage).toBeCloseTo(-Math.SQRT1_2 * 1.3, 4);
    // budget: the two nonzero-advantage rollouts (1, 1.3) rescaled to mean 1 -> 2/2.3, 2.6/2.3
    const b = roundCredit(rollouts, { ...opts, budget: true });
    expect(b[0]!.weight).toBeCloseTo(2 / 2.3, 10);
    expect(b[1]!.weight).toBeCloseTo(2.6 / 2.3, 10);
    expect(b[2]!.weight).toBe(1.5); // untagged: unchanged
    const plain = roundCredit(rollouts, { ...opts, reweight: false });
    for (const x of plain) {
      expect(x.weight).toBe(1);
      expect(x.weightedAdvantage).toBe(x.advantage);
    }
  });

  it('failed-turns keeps a negative advantage off the turns the diagnosis passed', () => {
    expect(turnAdvantages(['pass', 'state_mismatch', 'correct_abstention'], -0.5, 'failed-turns')).toEqual([
      0, -0.5, 0,
    ]);
    expect(turnAdvantages(['pass', 'state_mismatch'], 0.5, 'failed-turns')).toEqual([0.5, 0.5]);
    expect(turnAdvantages(['pass', 'state_mismatch'], -0.5, 'rollout')).toEqual([-0.5, -0.5]);
  });

  it('diagnosed-turns gives each turn the sign its diagnosis allows', () => {
    // a checker-passed rollout whose abstention turn made a read-only call: that turn takes nothing
    expect(
      turnAdvantages(['pass', 'spurious_tool_call', 'correct_abstention'], 0.5, 'diagnosed-turns'),
    ).toEqual([0.5, 0, 0.5]);
    // negative advantages go where failed-turns puts them
    expect(turnAdvantages(['pass', 'state_mismatch'], -0.5, 'diagnosed-turns')).toEqual([0, -0.5]);
    expect(turnAdvantages(['pass', 'state_mismatch'], 0, 'diagnosed-turns')).toEqual([0, 0]);
  });
});

describe('stepAdvantages', () => {
  // a rollout of three user turns with 2, 0 and 3 steps (a turn can end without a step)
  const turn = (n: number, i: number): TurnRecord => ({
    turn: i,
    availableTools: [],
    steps: Array.from({ length: n }, () => ({ calls: [] })),
    check: { checked: true, passed: i !== 2 },
    groundTruthClasses: [],
  });
  const trajectory: Trajectory = {
    version: 1,
    suite: 'mini',
    taskId: 't',
    category: 'base',
    turns: [2, 0, 3].map(turn),
    reward: 0,
    forceQuit: false,
  };
  it("each step trains with its user turn's advantage, in play order", () => {
    const labels = ['pass', 'pass', 'state_mismatch'] as const;
    expect(stepAdvantages(trajectory, labels, -0.5, 'failed-turns')).toEqual([0, 0, -0.5, -0.5, -0.5]);
    expect(stepAdvantages(trajectory, labels, -0.5, 'rollout')).toEqual([-0.5, -0.5, -0.5, -0.5, -0.5]);
  });
  it('a step of a turn past the labels trains with none', () => {
    expect(stepAdvantages(trajectory, ['pass', 'pass'], 0.5, 'rollout')).toEqual([0.5, 0.5, 0, 0, 0]);
  });
});

describe('methods', () => {
  it('each ablation switches exactly one thing off, vanilla all three', () => {
    const full = methodSwitches('seal');
    expect(full).toEqual({ interface: true, evolve: 'every-round', reweight: true });
    const diff = (m: (typeof METHODS)[number]) =>
      Object.keys(full).filter((k) => (methodSwitches(m) as never)[k] !== (full as never)[k]);
    expect(diff('no-reweight')).toEqual(['reweight']);
    expect(diff('no-closed-loop')).toEqual(['evolve']);
    expect(diff('no-env')).toEqual(['interface', 'evolve']);
    expect(diff('vanilla')).toEqual(['interface', 'evolve', 'reweight']);
  });
});

describe('aggregateRollouts', () => {
  const datum = (advantages: number[]) => ({
    tokens: advantages.map((_, i) => i + 1),
    weights: advantages.map((_, i) => (i === 0 ? 0 : 1)),
    samplingLogprobs: advantages.map(() => -1),
    advantages,
  });
  // rollout A: one sequence, 2 trained tokens at +2; rollout B: two sequences, 4 + 2 trained at -1
  const a = [datum([0, 2, 2])];
  const b = [datum([0, -1, -1, -1, -1]), datum([0, -1, -1])];
  it('token-mean leaves the advantages as they are', () => {
    expect(aggregateRollouts([a, b], 'token-mean')).toEqual([...a, ...b]);
  });
  it('rollout-mean weighs each rollout the same, keeping the mean scale per token at 1', () => {
    // N = 8 trained tokens, R = 2 rollouts: A scales by 8 / (2 * 2) = 2, B by 8 / (2 * 6) = 2/3
    const out = aggregateRollouts([a, b], 'rollout-mean');
    expect(out[0]!.advantages).toEqual([0, 4, 4]);
    for (const d of out.slice(1)) for (const x of d.advantages.slice(1)) expect(x).toBeCloseTo(-2 / 3, 12);
    // each rollout's summed advantage is (N / R) * A: 4 * 2 and 4 * -1
    const sum = (ds: typeof out) => ds.reduce((s, d) => s + d.advantages.reduce((x, y) => x + y, 0), 0);
    expect(sum(out.slice(0, 1))).toBeCloseTo(8, 12);
    expect(sum(out.slice(1))).toBeCloseTo(-4, 12);
    // tokens, weights and logprobs are untouched; an empty rollout is skipped
    expect(out[1]!.tokens).toEqual(b[0]!.tokens);
    expect(aggregateRollouts([[], a], 'rollout-mean')).toEqual(a);
  });
});

describe('tasks', () => {
  const data = loadMiniSuite();
  const train = data.split.train.map((id) => data.byId.get(id)!);
  it('rounds walk seeded epochs over the training split: every task once per epoch', () => {
    const epoch = Array.from({ length: 50 }, (_, r) => roundTasks(train, 3, r + 1, 8)).flat();
    expect(new Set(epoch.map((t) => t.id)).size).toBe(400);
    expect(roundTasks(train, 3, 7, 8)).toEqual(roundTasks(train, 3, 7, 8));
    expect(roundTasks(train, 4, 1, 8)).not.toEqual(roundTasks(train, 3, 1, 8));
  });
  it('revisit replaces the last fresh tasks by earlier tasks with 0 < success < 1, and only those', () => {
    const fresh = roundTasks(train, 3, 5, 8);
    const earlier = roundTasks(train, 3, 1, 8).map((t) => t.id);
    // three of the earlier tasks had a signal; one always failed, one always succeeded
    const rates = {
      [earlier[0]!]: 0.125,
      [earlier[1]!]: 0,
      [earlier[2]!]: 1,
      [earlier[3]!]: 0.5,
      [earlier[4]!]: 0.875,
    };
    const got = withRevisits(fresh, data.byId, rates, 0.5, 3, 5);
    expect(got).toHaveLength(8);
    // 4 wanted, 3 eligible: the first 5 fresh stay, then the 3 revisits in a seeded order
    expect(got.slice(0, 5)).toEqual(fresh.slice(0, 5));
    expect(new Set(got.slice(5).map((t) => t.id))).toEqual(new Set([earlier[0], earlier[3], earlier[4]]));
    expect(withRevisits(fresh, data.byId, rates, 0.5, 3, 5)).toEqual(got);
    expect(withRevisits(fresh, data.byId, rates, 0, 3, 5)).toEqual(fresh);
    expect(withRevisits(fresh, data.byId, {}, 1, 3, 5)).toEqual(fresh);
    // a task already among the fresh ones is not drawn twice
    const dup = withRevisits(fresh, data.byId, { [fresh[0]!.id]: 0.5 }, 1, 3, 5);
    expect(new Set(dup.map((t) => t.id)).size).toBe(8);
  });
  it('the validation subset is fixed by the seed, from the dev split, balanced by category', () => {
    const v = validationTasks(data, 1, 40);
    expect(v).toHaveLength(40);
    const dev = new Set(data.split.dev);
    expect(v.every((t) => dev.has(t.id))).toBe(true);
    for (const c of CATEGORIES) expect(v.filter((t) => t.category === c)).toHaveLength(10);
    expect(validationTasks(data, 1, 40)).toEqual(v);
    expect(validationTasks(data, 2, 40)).not.toEqual(v);
    // with a dev split, training keeps the whole training split
    expect(trainingTasks(data, v).map((t) => t.id)).toEqual(data.split.train);
  });
  it('without a dev split, validation holds out training tasks and training leaves them out', () => {
    const { dev: _, ...split } = data.split;
    const noDev = { ...data, split };
    const v = validationTasks(noDev, 1, 40);
    const train = new Set(data.split.train);
    expect(v.every((t) => train.has(t.id))).toBe(true);
    for (const c of CATEGORIES) expect(v.filter((t) => t.category === c)).toHaveLength(10);
    const rest = trainingTasks(noDev, v);
    expect(rest).toHaveLength(360);
    const held = new Set(v.map((t) => t.id));
    expect(rest.some((t) => held.has(t.id))).toBe(false);
  });
});

describe('configuration', () => {
  const dir = mkdtempSync(join(tmpdir(), 'seal-config-'));
  const file = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  it('defaults follow the method doc where the embedded run does not need less', () => {
    expect(TRAIN_DEFAULTS).toMatchObject({
      groupSize: 8,
      clipEps: 0.2,
      klCoef: 0.001,
      wMin: 0.5,
      wMax: 2,
      method: 'seal',
    });
  });
  it('the interface settings reach the evolution', () => {
    const { config } = resolveConfig(undefined, { maxGuidelines: 1, guidelines: 'on' });
    expect(interfaceConfig(config)).toEqual({
      components: { schemaCues: 'auto', errorFeedback: 'auto', guidelines: 'on' },
      maxGuidelines: 1,
    });
    expect(() => resolveConfig(undefined, { maxGuidelines: 9 })).toThrow(/maxGuidelines/);
  });
  it('a file sets keys, flags override it, and both count as overrides', () => {
    const { config, overrides } = resolveConfig(file('a.yaml', 'rounds: 3\nlr: 0.0002\n'), { rounds: 5 });
    expect(config.rounds).toBe(5);
    expect(config.lr).toBe(0.0002);
    expect(overrides).toEqual({ rounds: 5, lr: 0.0002 });
  });
  it('a bad key, value or type is named', () => {
    expect(() => resolveConfig(file('b.yaml', 'rouns: 3\n'), {})).toThrow(/unknown key\(s\) rouns/);
    expect(() => resolveConfig(file('c.yaml', 'method: fancy\n'), {})).toThrow(
      /method: .*allowed: seal, vanilla, no-env, no-reweight, no-closed-loop/,
    );
    expect(() => resolveConfig(file('d.yaml', 'groupSize: 1\n'), {})).toThrow(/groupSize: Too small/);
    expect(() => resolveConfig(file('e.yaml', '- 1\n- 2\n'), {})).toThrow(/must be a mapping/);
    expect(() => resolveConfig(undefined, { temperature: 9 })).toThrow(/--temperature: temperature: Too big/);
    expect(() => resolveConfig(join(dir, 'missing.yaml'), {})).toThrow(/config file not found/);
    expect(() => resolveConfig(undefined, { anchorCoef: 1, suite: 'bfcl' })).toThrow(
      /anchorCoef needs the mini suite/,
    );
    expect(() => resolveConfig(undefined, { policyGradient: false, anchorCoef: 0 })).toThrow(
      /leaves nothing to train; set an anchorCoef above 0/,
    );
    // the anchor is on by default on mini, and off by default elsewhere
    expect(resolveConfig(undefined, {}).config.anchorCoef).toBe(1);
    const bfcl = resolveConfig(undefined, { suite: 'bfcl' });
    expect(bfcl.config.anchorCoef).toBe(0);
    expect(bfcl.overrides.anchorCoef).toBeUndefined();
  });
});
