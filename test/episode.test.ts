// @module-tag bfcl-data
import { describe, expect, it } from 'vitest';
import { ADDITIONAL_FUNCTION_MESSAGE, BfclEpisode, MAX_STEPS_PER_TURN } from '../src/envs/bfcl/episode.js';
import { stateSnapshot } from '../src/envs/bfcl/state.js';
import { sharedData } from './support/golden.js';

const data = sharedData();

/** Play a task by replaying its ground truth, one call per step, the way a perfect policy would. */
function playGroundTruth(episode: BfclEpisode): void {
  do {
    for (const call of episode.task.groundTruth[episode.turn]!)
      expect(episode.act([call]).status).toBe('continue');
    expect(episode.act([]).status).toBe('turn_end');
  } while (episode.nextTurn());
}

describe('BFCL episodes', () => {
  it('plays every task turn by turn; the ground-truth policy passes the official checker', () => {
    for (const task of data.tasks.filter((_, i) => i % 7 === 0)) {
      const ep = new BfclEpisode(task, data);
      playGroundTruth(ep);
      expect(ep.status).toBe('done');
      expect(ep.check().valid, task.id).toBe(true);
    }
  });

  it('hides held-out functions until the miss_func turn, then reveals them with the fixed message', () => {
    const task = data.byId.get('multi_turn_miss_func_0')!;
    const held = task.missedFunction!;
    const ep = new BfclEpisode(task, data);
    const names = () => ep.observe().functions.map((f) => f.name);
    for (const n of held.names) expect(names()).not.toContain(n);
    expect(ep.observe().messages).toEqual(task.question[0]);
    while (ep.turn < held.turn) ep.nextTurn();
    const obs = ep.observe();
    expect(obs.messages).toEqual([{ role: 'user', content: ADDITIONAL_FUNCTION_MESSAGE }]);
    expect(obs.functionsAdded?.map((f) => f.name)).toEqual(held.names);
    expect(names().slice(-held.names.length)).toEqual(held.names);
    expect(obs.tools[0]).toMatchObject({ type: 'function', function: { parameters: { type: 'object' } } });
  });

  it('force-quits after 20 executed steps in one turn, and the checker fails the task', () => {
    const task = data.byId.get('multi_turn_base_0')!;
    const ep = new BfclEpisode(task, data);
    for (let i = 0; i < MAX_STEPS_PER_TURN; i++) expect(ep.act(['ls()']).status).toBe('continue');
    expect(ep.act(['ls()']).status).toBe('force_quit');
    expect(ep.nextTurn()).toBe(false);
    const r = ep.check();
    expect(r.valid).toBe(false);
    expect(r.errorType).toBe('multi_turn:force_terminated');
  });

  it('owns its step limit: calls and answered retries count alike, and the step beyond them quits', () => {
    const task = data.byId.get('multi_turn_base_0')!;
    const ep = new BfclEpisode(task, data, { maxStepsPerTurn: 3 });
    expect(ep.canRetry).toBe(true);
    ep.reject();
    expect(ep.act(['ls()']).status).toBe('continue');
    // two steps taken: a retry now would have no step left to run in
    expect(ep.stepsTaken).toBe(2);
    expect(ep.canRetry).toBe(false);
    expect(() => ep.reject()).toThrow(/no step left/);
    expect(ep.act(['ls()']).status).toBe('continue');
    expect(ep.act(['ls()']).status).toBe('force_quit');
    expect(ep.status).toBe('done');
    expect(ep.check().errorType).toBe('multi_turn:force_terminated');
    // a new turn starts with the whole budget
    const next = new BfclEpisode(task, data, { maxStepsPerTurn: 1 });
    expect(next.act([]).status).toBe('turn_end');
    expect(next.nextTurn()).toBe(true);
    expect(next.stepsTaken).toBe(0);
    expect(next.act(['ls()']).status).toBe('continue');
    expect(next.act(['ls()']).status).toBe('force_quit');
    expect(() => new BfclEpisode(task, data, { maxStepsPerTurn: 0 })).toThrow(RangeError);
  });

  it('keeps episodes of the same task independent when interleaved', () => {
    const task = data.byId.get('multi_turn_base_10')!;
    const a = new BfclEpisode(task, data);
    const b = new BfclEpisode(task, data);
    const gt = task.groundTruth[0]!;
    for (const call of gt) {
      a.act([call]);
      b.act(['ls()']);
    }
    const solo = new BfclEpisode(task, data);
    for (const call of gt) solo.act([call]);
    expect(stateSnapshot(a.environment())).toEqual(stateSnapshot(solo.environment()));
    expect(stateSnapshot(b.environment())).not.toEqual(stateSnapshot(solo.environment()));
  });

  it('float types in the schema are mapped the way the reference converts them', () => {
    const task = data.byId.get('multi_turn_base_150')!;
    const tool = new BfclEpisode(task, data)
      .observe()
      .tools.find((t) => JSON.stringify(t).includes('"format":"float"'));
    expect(tool).toBeDefined();
    // The reference converts parameters only; the `response` block keeps BFCL's own type names.
    const doc = JSON.stringify(tool!.function.parameters);
    expect(doc).toContain('This is a float type value.');
    expect(doc).not.toContain('"type":"float"');
    expect(doc).not.toContain('"type":"dict"');
  });
});
