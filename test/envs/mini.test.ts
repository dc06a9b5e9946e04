import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CallRecorder, trajectoryFromCalls } from '../../src/bfcl/trajectory.js';
import { CLASS_NAMES } from '../../src/envs/bfcl/apis/api.js';
import { API_CLASSES } from '../../src/envs/bfcl/apis/index.js';
import { checkTask } from '../../src/envs/bfcl/checker.js';
import { type BfclTask, CATEGORIES, isLongContext } from '../../src/envs/bfcl/data/tasks.js';
import { BfclEpisode, visibleFunctions } from '../../src/envs/bfcl/episode.js';
import {
  buildMiniSplits,
  generate,
  generateForTraining,
  loadMiniSuite,
  MINI_DOCS,
  miniTaskToJson,
  scenarioKeys,
} from '../../src/envs/mini/index.js';
import { parsePyJson } from '../../src/envs/py/json.js';
import { type PyDict, pyEquals } from '../../src/envs/py/values.js';
import { diagnose } from '../../src/seal/diagnosis.js';
import { isExecutionError } from '../../src/seal/trajectory.js';

const t0 = performance.now();
const data = loadMiniSuite();
const buildMs = performance.now() - t0;
const tasks = data.tasks;
const train = data.split.train.map((id) => data.byId.get(id)!);
const test = data.split.test.map((id) => data.byId.get(id)!);
const dev = (data.split.dev ?? []).map((id) => data.byId.get(id)!);

/** The ground truth as a BFCL result: one step per non-empty turn. */
const asResult = (t: BfclTask) => t.groundTruth.map((calls) => (calls.length > 0 ? [[...calls]] : []));
const fnName = (c: string) => c.slice(0, c.indexOf('('));
const text = (t: BfclTask, turn: number) => t.question[turn]!.map((m) => m.content).join('\n');
const hash = (ts: readonly BfclTask[]) =>
  createHash('sha256').update(ts.map(miniTaskToJson).join('\n')).digest('hex');

describe('mini suite: ground truth', () => {
  it('builds 1,200 tasks quickly', () => {
    console.log(`mini: ${tasks.length} tasks built in ${buildMs.toFixed(0)} ms`);
    expect(tasks).toHaveLength(1200);
    expect(buildMs).toBeLessThan(15_000);
  });

  it('every ground truth passes the official checker, and no ground-truth call fails', () => {
    for (const task of tasks) {
      const r = checkTask(task, asResult(task), data);
      expect(r.valid, `${task.id}: ${r.errorMessage}`).toBe(true);
      for (const turn of r.turns) {
        for (const out of turn.groundTruthResults)
          expect(isExecutionError(out), `${task.id}: ${out}`).toBe(false);
      }
    }
  });

  it('plays through BfclEpisode (held-out functions revealed on time) and diagnoses as pass/abstention', () => {
    const labels = new Set<string>();
    const recorder = new CallRecorder(data);
    for (const task of tasks) {
      const ep = new BfclEpisode(task, data);
      do {
        const obs = ep.observe();
        const calls = task.groundTruth[ep.turn]!;
        const visible = new Set(obs.functions.map((f) => f.name));
        for (const c of calls) expect(visible.has(fnName(c)), `${task.id} turn ${ep.turn}: ${c}`).toBe(true);
        if (calls.length > 0) {
          for (const out of ep.act(calls).results)
            expect(isExecutionError(out), `${task.id}: ${out}`).toBe(false);
        }
        ep.act([]);
      } while (ep.nextTurn());
      expect(ep.check().valid, task.id).toBe(true);
      const traj = trajectoryFromCalls(task, asResult(task), data, recorder);
      expect(traj.reward, task.id).toBe(1);
      for (const d of diagnose(traj, (n) => data.docs.get(n)?.className)) labels.add(d.label);
      for (const turn of traj.turns)
        for (const s of turn.steps)
          for (const c of s.calls) expect(c.argumentIssues, `${task.id} ${c.name}`).toEqual([]);
    }
    expect([...labels].sort()).toEqual(['correct_abstention', 'pass']);
  });

  it('tasks are small and never use the reference long-context mode', () => {
    for (const task of tasks) {
      expect(isLongContext(task)).toBe(false);
      expect(task.longContext).toBe(false);
      expect(task.involvedClasses.length).toBeGreaterThanOrEqual(1);
      expect(task.involvedClasses.length).toBeLessThanOrEqual(task.category === 'long_context' ? 3 : 2);
      const asked = task.question.filter((q) => q.length > 0).length;
      expect(asked).toBeGreaterThanOrEqual(2);
      expect(asked).toBeLessThanOrEqual(4);
      for (const turn of task.groundTruth) expect(turn.length).toBeLessThanOrEqual(3);
      for (const turn of task.groundTruth)
        for (const c of turn) expect(task.involvedClasses).toContain(data.docs.get(fnName(c))?.className);
    }
    expect(() => data.longContextConstants()).toThrow(/never runs in long-context mode/);
    expect(data.dir).toBe('');
  });
});

describe('mini suite: category structure', () => {
  it('base and long_context: every turn asks and calls', () => {
    for (const task of tasks.filter((t) => t.category === 'base' || t.category === 'long_context')) {
      expect(task.missedFunction).toBeUndefined();
      for (let i = 0; i < task.question.length; i++) {
        expect(task.question[i]!.length).toBe(1);
        expect(task.groundTruth[i]!.length).toBeGreaterThan(0);
      }
    }
  });

  it('long_context tasks have larger states and more tools than base tasks', () => {
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const size = (c: string) =>
      mean(tasks.filter((t) => t.category === c).map((t) => scenarioKeys(t).state.length));
    const tools = (c: string) =>
      mean(tasks.filter((t) => t.category === c).map((t) => visibleFunctions(t, data, 0).length));
    expect(size('long_context')).toBeGreaterThan(1.5 * size('base'));
    expect(tools('long_context')).toBeGreaterThan(1.3 * tools('base'));
  });

  it('miss_func: one empty reveal turn right after an empty-ground-truth turn; the held-out function is called there', () => {
    for (const task of tasks.filter((t) => t.category === 'miss_func')) {
      const mf = task.missedFunction!;
      expect(mf, task.id).toBeDefined();
      expect(mf.names).toHaveLength(1);
      const empty = task.question.map((q, i) => (q.length === 0 ? i : -1)).filter((i) => i >= 0);
      expect(empty).toEqual([mf.turn]);
      expect(mf.turn).toBeGreaterThanOrEqual(1);
      expect(task.groundTruth[mf.turn - 1]).toEqual([]);
      expect(task.groundTruth[mf.turn]!.map(fnName)).toContain(mf.names[0]);
      for (let t = 0; t < mf.turn; t++) expect(task.groundTruth[t]!.map(fnName)).not.toContain(mf.names[0]);
      const before = visibleFunctions(task, data, mf.turn - 1).map((d) => d.name);
      const after = visibleFunctions(task, data, mf.turn).map((d) => d.name);
      expect(before).not.toContain(mf.names[0]);
      expect(after).toContain(mf.names[0]);
      // every other turn asks and calls
      task.groundTruth.forEach((g, i) => {
        if (i !== mf.turn - 1) expect(g.length, `${task.id} turn ${i}`).toBeGreaterThan(0);
      });
    }
  });

  it('miss_param: an empty-ground-truth turn, then a user turn that supplies a value used in its ground truth', () => {
    for (const task of tasks.filter((t) => t.category === 'miss_param')) {
      expect(task.missedFunction).toBeUndefined();
      expect(task.question.every((q) => q.length === 1)).toBe(true);
      const empty = task.groundTruth.map((g, i) => (g.length === 0 ? i : -1)).filter((i) => i >= 0);
      expect(empty, task.id).toHaveLength(1);
      const k = empty[0]!;
      expect(k + 1).toBeLessThan(task.question.length);
      const earlier = Array.from({ length: k + 1 }, (_, i) => text(task, i)).join('\n');
      const later = text(task, k + 1);
      // the argument values of the supplying turn's calls: quoted strings and numbers
      const values = task.groundTruth[k + 1]!.flatMap((c) => [
        ...[...c.matchAll(/'((?:[^'\\]|\\.)*)'/g)].map((m) => m[1]!),
        ...[...c.matchAll(/=(\d+)(?:\.0)?\b/g)].map((m) => m[1]!),
      ]);
      const supplied = values.filter((v) => later.includes(v) && !earlier.includes(v));
      expect(supplied.length, `${task.id}: no value first given in turn ${k + 1}`).toBeGreaterThan(0);
    }
  });
});

describe('mini suite: splits', () => {
  it('400 train, 400 test and 400 dev tasks, 100 per category, with the BFCL ids and categories', () => {
    expect(train).toHaveLength(400);
    expect(test).toHaveLength(400);
    expect(dev).toHaveLength(400);
    for (const split of [train, test, dev]) {
      for (const c of CATEGORIES) expect(split.filter((t) => t.category === c)).toHaveLength(100);
      for (const t of split) expect(t.id).toMatch(new RegExp(`^mini_${t.category}_\\d+$`));
    }
    expect(new Set(tasks.map((t) => t.id)).size).toBe(1200);
  });

  it('dev overlaps neither test nor train: ids, initial states, dialogues', () => {
    for (const other of [test, train]) {
      const ids = new Set(other.map((t) => t.id));
      const states = new Set(other.map((t) => scenarioKeys(t).state));
      const dialogues = new Set(other.map((t) => scenarioKeys(t).dialogue));
      for (const t of dev) {
        expect(ids.has(t.id)).toBe(false);
        expect(states.has(scenarioKeys(t).state), t.id).toBe(false);
        expect(dialogues.has(scenarioKeys(t).dialogue), t.id).toBe(false);
      }
    }
    expect(new Set(dev.map((t) => scenarioKeys(t).state)).size).toBe(400);
  });

  it('train and test do not overlap: ids, initial states, dialogues', () => {
    const ids = new Set(train.map((t) => t.id));
    const states = new Set(train.map((t) => scenarioKeys(t).state));
    const dialogues = new Set(train.map((t) => scenarioKeys(t).dialogue));
    for (const t of test) {
      expect(ids.has(t.id)).toBe(false);
      expect(states.has(scenarioKeys(t).state), t.id).toBe(false);
      expect(dialogues.has(scenarioKeys(t).dialogue), t.id).toBe(false);
    }
    // distinct scenarios inside each split too
    expect(new Set(test.map((t) => scenarioKeys(t).state)).size).toBe(400);
  });

  it('fresh training tasks are valid and never reuse a test scenario', () => {
    const fresh = CATEGORIES.flatMap((c) => generateForTraining(99, c, 25, { start: 1000 }));
    const states = new Set(test.map((t) => scenarioKeys(t).state));
    const dialogues = new Set(test.map((t) => scenarioKeys(t).dialogue));
    for (const t of fresh) {
      expect(states.has(scenarioKeys(t).state)).toBe(false);
      expect(dialogues.has(scenarioKeys(t).dialogue)).toBe(false);
      expect(checkTask(t, asResult(t), data).valid).toBe(true);
      expect(t.id).toMatch(/^mini_[a-z_]+_1\d{3}$/);
    }
  });

  it('uses every API class', () => {
    const used = new Set(tasks.flatMap((t) => t.involvedClasses));
    expect([...used].sort()).toEqual([...CLASS_NAMES].sort());
  });
});

describe('mini suite: determinism', () => {
  it('the same seed gives byte-identical tasks, another seed different ones', () => {
    for (const c of CATEGORIES) {
      expect(hash(generate(42, c, 20))).toBe(hash(generate(42, c, 20)));
      expect(hash(generate(42, c, 20))).not.toBe(hash(generate(43, c, 20)));
    }
  });

  it('the fixed splits rebuild identically', () => {
    const again = buildMiniSplits();
    expect(hash([...again.train, ...again.test, ...again.dev])).toBe(hash(tasks));
    expect(hash(again.dev)).toBe(hash(dev));
  });

  it('the task JSON keeps Python ints and floats apart', () => {
    for (const task of tasks.slice(0, 100)) {
      const back = parsePyJson(miniTaskToJson(task)) as PyDict;
      expect(pyEquals(back.get('initial_config')!, task.initialConfig)).toBe(true);
    }
  });
});

describe('mini suite: compactness and docs', () => {
  it('the first observation (question + tool docs as JSON) is small', () => {
    const sizes = new Map<string, number[]>();
    for (const t of tasks) {
      const n = text(t, 0).length + JSON.stringify(visibleFunctions(t, data, 0)).length;
      sizes.set(t.category, [...(sizes.get(t.category) ?? []), n]);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    const report = Object.fromEntries(
      [...sizes].map(([c, xs]) => [c, { median: median(xs), max: Math.max(...xs) }]),
    );
    console.log('mini first-observation characters:', JSON.stringify(report));
    expect(median(sizes.get('base')!)).toBeLessThan(2500);
    expect(median(sizes.get('long_context')!)).toBeLessThan(4500);
    const questions = tasks.flatMap((t) => t.question.flat().map((m) => m.content.length));
    expect(median(questions)).toBeLessThan(80);
  });

  it('every documented function exists with the same parameter names, order and required flags', () => {
    for (const cls of CLASS_NAMES) {
      const table = API_CLASSES[cls].methods;
      expect(MINI_DOCS[cls].length).toBeGreaterThan(0);
      for (const doc of MINI_DOCS[cls]) {
        const spec = table[doc.name];
        expect(spec, `${cls}.${doc.name}`).toBeDefined();
        expect(Object.keys(doc.parameters.properties)).toEqual(spec!.params.map((p) => p.name));
        expect([...(doc.parameters.required ?? [])]).toEqual(
          spec!.params.filter((p) => p.required).map((p) => p.name),
        );
        expect(doc.description.length).toBeGreaterThan(0);
        expect(data.docs.get(doc.name)?.className).toBe(cls);
      }
    }
  });
});
