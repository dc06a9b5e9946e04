// τ² v0.2.0's metrics: average reward and pass^k, against values worked out by hand, and the
// averages summed as numpy sums them.
import { describe, expect, it } from 'vitest';
import {
  computeMetrics,
  isSuccessful,
  pairwiseSum,
  passHatK,
} from '../../src/envs/tau2/evaluator/metrics.js';
import { toyTask } from '../support/tau2-toy.js';

const trials = (taskId: string, rewards: number[]) => rewards.map((reward) => ({ task_id: taskId, reward }));

describe('pass^k', () => {
  it('is C(successes, k) / C(trials, k)', () => {
    // 3 trials, 2 successes: pass^1 = 2/3, pass^2 = C(2,2)/C(3,2) = 1/3, pass^3 = 0
    expect(passHatK(3, 2, 1)).toBe(2 / 3);
    expect(passHatK(3, 2, 2)).toBe(1 / 3);
    expect(passHatK(3, 2, 3)).toBe(0);
    // 4 trials, 3 successes: 3/4, 3/6, 1/4, 0
    expect([1, 2, 3, 4].map((k) => passHatK(4, 3, k))).toEqual([0.75, 0.5, 0.25, 0]);
    expect(passHatK(4, 4, 4)).toBe(1);
    expect(() => passHatK(2, 1, 3)).toThrow('Number of trials 2 is less than k 3.');
  });

  it('counts a reward within 1e-6 of 1 as a success', () => {
    expect(isSuccessful(1)).toBe(true);
    expect(isSuccessful(0.9999995)).toBe(true);
    expect(isSuccessful(1.0000009)).toBe(true);
    expect(isSuccessful(0.999998)).toBe(false);
    expect(isSuccessful(0)).toBe(false);
  });

  it('averages each k over tasks, up to the trials every task has', () => {
    const m = computeMetrics(
      [
        ...trials('t1', [1, 0, 1]), // 2 of 3: 2/3, 1/3, 0
        ...trials('t2', [1, 1, 1]), // 3 of 3: 1, 1, 1
      ],
      3,
    );
    expect(m.avg_reward).toBe(5 / 6);
    expect(m.pass_hat_ks).toEqual({ 1: (2 / 3 + 1) / 2, 2: (1 / 3 + 1) / 2, 3: 0.5 });
    expect(m.num_tasks).toBe(2);
    expect(m.num_simulations).toBe(6);
    expect(m.avg_agent_cost).toBeNull();

    // a task with only two trials caps k at 2, and pass^k of t1 uses its own 3 trials
    const capped = computeMetrics([...trials('t1', [1, 0, 1]), ...trials('t2', [1, 0])], 3);
    expect(capped.pass_hat_ks).toEqual({ 1: (2 / 3 + 1 / 2) / 2, 2: (1 / 3 + 0) / 2 });
    // the run's number of trials caps it too
    expect(Object.keys(computeMetrics(trials('t1', [1, 1, 1]), 1).pass_hat_ks)).toEqual(['1']);
  });

  it('averages the agent cost over the conversations that have one', () => {
    const m = computeMetrics(
      [
        { task_id: 'a', reward: 0.5, agent_cost: 0.25 },
        { task_id: 'b', reward: 1, agent_cost: null },
        { task_id: 'c', reward: 0, agent_cost: 0.75 },
      ],
      1,
    );
    expect(m.avg_agent_cost).toBe(0.5);
    expect(m.avg_reward).toBe(0.5);
  });

  it('refuses an empty run', () => {
    expect(() => computeMetrics([], 1)).toThrow(/no conversations/);
  });
});

describe('the averages', () => {
  it("sum as numpy's pairwise summation (values recorded from numpy 2.4)", () => {
    const tenths = Array.from({ length: 200 }, (_, i) => 0.1 * (i + 1));
    // np.add.reduce: 2010.0; a running sum gives 2010.0000000000002
    expect(pairwiseSum(tenths)).toBe(2010);
    expect(tenths.reduce((a, b) => a + b, 0)).toBe(2010.0000000000002);
    const mixed = [...Array(17).fill(1 / 3), ...Array(5).fill(0.7)];
    // np.sum: 9.166666666666666; a running sum gives 9.166666666666664
    expect(pairwiseSum(mixed)).toBe(9.166666666666666);
  });

  it('averages pass^k over tasks ordered by their number of gold actions', () => {
    // Two orders of the same per-task values can sum differently; the reference sorts tasks by
    // their number of actions (a transfer-only task counts -1) before averaging.
    const tasks = [
      toyTask(
        'many',
        '{"actions": [{"action_id": "1", "name": "a", "arguments": {}}, {"action_id": "2", "name": "b", "arguments": {}}]}',
      ),
      toyTask(
        'transfer',
        '{"actions": [{"action_id": "1", "name": "transfer_to_human_agents", "arguments": {}}]}',
      ),
      toyTask('one', '{"actions": [{"action_id": "1", "name": "a", "arguments": {}}]}'),
    ];
    const m = computeMetrics(
      [...trials('many', [1, 1, 1, 1, 0]), ...trials('one', [1, 0, 0]), ...trials('transfer', [0, 1, 0])],
      5,
      tasks,
    );
    // order: transfer (-1), one (1), many (2): 1/3 + 1/3 + 0.8, which is not 0.8 + 1/3 + 1/3 in floats
    expect(m.pass_hat_ks[1]).toBe(0.48888888888888893);
    expect((0.8 + 1 / 3 + 1 / 3) / 3).toBe(0.4888888888888889);
    expect(Object.keys(m.pass_hat_ks)).toEqual(['1', '2', '3']);
  });
});
