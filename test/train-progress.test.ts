/**
 * What `seal train` prints while it runs, on a clock the test moves: the evaluations report their
 * progress like the rounds (a line every 30 s in a log, a live line on a terminal), and the ETA of
 * a round counts the final evaluation at the pace of the run's latest evaluation.
 */
import { describe, expect, it } from 'vitest';
import { trainHooks } from '../src/cli/train-progress.js';
import type { RoundRecord } from '../src/train/record.js';

function harness(tty: boolean, plan = { rounds: 4, finalTasks: 400 }) {
  let t = 1_000_000;
  const out: string[] = [];
  const hooks = trainHooks(() => plan, {
    quiet: false,
    tty,
    write: (s) => out.push(s),
    now: () => t,
  });
  return {
    hooks,
    out,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

/** a round record with what the line reads; `validated` tasks took `validationMs` */
function round(n: number, validated = 0, validationMs = 0): RoundRecord {
  const categories = {
    base: { n: validated, accuracy: 50 },
    miss_func: { n: 0, accuracy: 0 },
    miss_param: { n: 0, accuracy: 0 },
    long_context: { n: 0, accuracy: 0 },
  };
  return {
    round: n,
    rollouts: { count: 64, meanReward: 0.25, groupsWithVariance: 3, parseErrors: 0, steps: 100 },
    labels: { pass: 10 },
    learner: { kl: 0 },
    timings: { samplingMs: 1, envMs: 1, learnMs: 1, validationMs, totalMs: 60_000 },
    ...(validated > 0 ? { validation: { round: n, summary: { categories, average: 50 }, dir: 'v' } } : {}),
  } as unknown as RoundRecord;
}

const eta = (line: string) => /\| ETA (.*)$/.exec(line.trim())?.[1];

describe('seal train progress', () => {
  it('a log gets a line as an evaluation starts, every 30 s, and as it ends', () => {
    const { hooks, out, advance } = harness(false);
    hooks.evaluation({ which: 'start', done: 0, total: 400 });
    for (let i = 1; i <= 400; i++) {
      advance(250); // 4 tasks/s: 100 s in all
      hooks.evaluation({ which: 'start', done: i, total: 400 });
    }
    expect(out).toEqual([
      'start evaluation 0/400 tasks\n',
      // 30 s after the first line, then every 30 s: 120, 240, 360 tasks done
      'start evaluation 120/400 tasks | 4.00 tasks/s | ETA 1.2 min\n',
      'start evaluation 240/400 tasks | 4.00 tasks/s | ETA 0.7 min\n',
      'start evaluation 360/400 tasks | 4.00 tasks/s | ETA 0.2 min\n',
      'start evaluation 400/400 tasks | 4.00 tasks/s | took 1.7 min\n',
    ]);
  });

  it('tasks kept from an earlier try count as done but not in the pace', () => {
    const { hooks, out, advance } = harness(false);
    hooks.evaluation({ which: 'final', done: 300, total: 400 });
    advance(40_000);
    hooks.evaluation({ which: 'final', done: 340, total: 400 });
    expect(out).toEqual([
      'final evaluation 300/400 tasks\n',
      'final evaluation 340/400 tasks | 1.00 tasks/s | ETA 1.0 min\n',
    ]);
  });

  it("the rounds' ETA adds the final evaluation at the start evaluation's pace", () => {
    const { hooks, out, advance } = harness(false);
    hooks.evaluation({ which: 'start', done: 0, total: 400 });
    advance(120_000); // 400 tasks in 2 min: the final evaluation will take 2 min
    hooks.evaluation({ which: 'start', done: 400, total: 400 });
    hooks.progress({ round: 1, rounds: 4, phase: 'sampling', done: 0, total: 64 });
    advance(60_000);
    hooks.onRound(round(1));
    // 3 rounds of 1 min left, and the final evaluation's 2 min
    expect(eta(out.at(-1)!)).toBe('5.0 min');
  });

  it('without a measured evaluation the ETA says the final evaluation is still to come; a validation gives the pace', () => {
    const { hooks, out, advance } = harness(false);
    hooks.progress({ round: 1, rounds: 4, phase: 'sampling', done: 0, total: 64 });
    advance(60_000);
    hooks.onRound(round(1));
    expect(eta(out.at(-1)!)).toBe('3.0 min + the final evaluation');
    advance(60_000);
    // 40 validation tasks in 12 s: 0.3 s a task, 400 tasks in 2 min
    hooks.onRound(round(2, 40, 12_000));
    expect(eta(out.at(-1)!)).toBe('4.0 min');
  });

  it('without a final evaluation the ETA is the rounds alone', () => {
    const { hooks, out, advance } = harness(false, { rounds: 2, finalTasks: 0 });
    hooks.progress({ round: 1, rounds: 2, phase: 'sampling', done: 0, total: 64 });
    advance(30_000);
    hooks.onRound(round(1));
    expect(eta(out.at(-1)!)).toBe('0.5 min');
  });

  it('a terminal gets one live line, redrawn in place and cleared at the end', () => {
    const { hooks, out, advance } = harness(true);
    hooks.evaluation({ which: 'start', done: 0, total: 2 });
    advance(1000);
    hooks.evaluation({ which: 'start', done: 1, total: 2 });
    advance(1000);
    hooks.evaluation({ which: 'start', done: 2, total: 2 });
    expect(out).toEqual([
      '\r\x1b[2Kstart evaluation 0/2 tasks',
      '\r\x1b[2Kstart evaluation 1/2 tasks | 1.00 tasks/s | ETA 0.0 min',
      '\r\x1b[2K',
    ]);
  });
});
