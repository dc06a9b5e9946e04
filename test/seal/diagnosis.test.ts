// @module-tag bfcl-data
import { describe, expect, it } from 'vitest';
import { EpisodeRecorder } from '../../src/bfcl/recorder.js';
import { CallRecorder, trajectoryFromCalls } from '../../src/bfcl/trajectory.js';
import type { BfclTask } from '../../src/envs/bfcl/data/tasks.js';
import { diagnose, labelsOf } from '../../src/seal/diagnosis.js';
import type { Label } from '../../src/seal/labels.js';
import type { Trajectory } from '../../src/seal/trajectory.js';
import { readJsonl, sharedData } from '../support/golden.js';

const data = sharedData();
const recorder = new CallRecorder(data);
const classOf = (name: string) => data.docs.get(name)?.className;
const labels = (t: Trajectory) => labelsOf(diagnose(t, classOf));

type Script = ({ calls: string[] } | { text: string } | { parseError: string })[];

/** Play a real episode: per turn a scripted list of steps; unscripted turns replay the ground truth. */
function play(task: BfclTask, scripts: Record<number, Script>): Trajectory {
  const rec = new EpisodeRecorder(task, data, { recorder });
  do {
    const t = rec.episode.turn;
    const script: Script =
      scripts[t] ?? (task.groundTruth[t]!.length ? [{ calls: [...task.groundTruth[t]!] }] : []);
    let ended = false;
    for (const s of script) {
      if ('calls' in s) rec.step({ kind: 'calls', calls: s.calls }, { rawText: JSON.stringify(s.calls) });
      else if ('text' in s) {
        rec.step({ kind: 'text' }, { rawText: s.text });
        ended = true;
      } else {
        rec.step({ kind: 'parse_error', error: s.parseError }, { rawText: '[cd(folder=' });
        ended = true;
      }
      if (ended) break;
    }
    if (!ended) rec.step({ kind: 'text' }, { rawText: 'Done.' });
  } while (rec.nextTurn());
  return rec.finish();
}

const READ_ONLY = new Set(['ls', 'pwd', 'cat', 'grep', 'wc', 'tail', 'diff', 'find', 'du', 'sort']);
/** A base task whose turn 0 ground truth only reads the file system (state can't differ). */
function readOnlyTurnTask(): BfclTask {
  return data.tasks.find(
    (t) =>
      t.category === 'base' &&
      t.involvedClasses.length === 1 &&
      t.involvedClasses[0] === 'GorillaFileSystem' &&
      t.groundTruth[0]!.length > 0 &&
      t.groundTruth[0]!.every((c) => READ_ONLY.has(c.slice(0, c.indexOf('(')))) &&
      t.groundTruth[0]!.some((c) => !c.startsWith('ls(') && !c.startsWith('pwd(')),
  )!;
}

describe('diagnosis labels from real episodes', () => {
  const base0 = data.byId.get('multi_turn_base_0')!;
  const missFunc = data.tasks.find((t) => t.category === 'miss_func')!;
  const holdTurn = missFunc.missedFunction!.turn - 1;

  it('pass: the ground truth', () => {
    const t = play(base0, {});
    expect(t.reward).toBe(1);
    expect(new Set(labels(t))).toEqual(new Set(['pass']));
  });

  it('correct_abstention and spurious_tool_call on the turn whose function is held out', () => {
    expect(missFunc.groundTruth[holdTurn]).toEqual([]);
    const abstain = play(missFunc, { [holdTurn]: [{ text: 'I cannot do that with the tools I have.' }] });
    expect(labels(abstain)[holdTurn]).toBe('correct_abstention');
    const spurious = play(missFunc, { [holdTurn]: [{ calls: ['ls()'] }] });
    expect(labels(spurious)[holdTurn]).toBe('spurious_tool_call');
  });

  it('invalid_tool_call: output that does not parse, or a tool the policy was not shown', () => {
    const parse = play(base0, { 0: [{ parseError: "'(' was never closed" }] });
    expect(labels(parse)[0]).toBe('invalid_tool_call');
    const unknown = play(base0, {
      0: [{ calls: [...base0.groundTruth[0]!.slice(0, 1), 'frobnicate(x=1)'] }],
    });
    expect(labels(unknown)[0]).toBe('invalid_tool_call');
    // A held-out function executes fine in the reference, but the policy was not shown it yet.
    const heldName = missFunc.missedFunction!.names[0]!;
    const early = trajectoryFromCalls(
      missFunc,
      missFunc.groundTruth.map((turn, i) =>
        i === 0 ? [[`${heldName}()`, ...turn]] : turn.length ? [turn] : [],
      ),
      data,
      recorder,
    );
    const d = diagnose(early, classOf)[0]!;
    expect(d.evidence.invalidToolCall).toBe(true);
  });

  it('argument_mismatch beats the state mismatch and the tool error it causes', () => {
    const gt = base0.groundTruth[0]!;
    const t = play(base0, { 0: [{ calls: ["cd(folder='document', recursive=True)", ...gt.slice(1)] }] });
    const d = diagnose(t, classOf)[0]!;
    expect(d.label).toBe('argument_mismatch');
    expect(d.candidates).toEqual(
      expect.arrayContaining(['argument_mismatch', 'state_mismatch', 'recovery_failure']),
    );
  });

  it('argument_mismatch, not response_mismatch, when a bad argument causes the missing result', () => {
    const task = readOnlyTurnTask();
    const t = play(task, { 0: [{ calls: ["cat(file_name='notes.txt', encoding='utf8')"] }] });
    const d = diagnose(t, classOf)[0]!;
    expect(d.label).toBe('argument_mismatch');
    expect(d.evidence.responseMismatch || d.evidence.stateMismatch).toBe(true);
  });

  it('state_mismatch: the calls ran but left a different state', () => {
    const t = play(base0, {
      0: [
        {
          calls: [
            "cd(folder='document')",
            "mkdir(dir_name='tmp')",
            "mv(source='final_report.pdf', destination='tmp')",
          ],
        },
      ],
    });
    expect(labels(t)[0]).toBe('state_mismatch');
  });

  it('state_mismatch beats recovery_failure', () => {
    const t = play(base0, { 0: [{ calls: ["cd(folder='nowhere')", "mkdir(dir_name='temp')"] }] });
    const d = diagnose(t, classOf)[0]!;
    expect(d.evidence.executionError).toBe(true);
    expect(d.label).toBe('state_mismatch');
  });

  it('instance_mismatch: a different set of instances was touched', () => {
    const task = data.tasks.find(
      (t) =>
        t.category === 'base' &&
        t.involvedClasses.includes('TwitterAPI') &&
        t.involvedClasses.includes('GorillaFileSystem') &&
        t.groundTruth[0]!.every(
          (c) => data.docs.get(c.slice(0, c.indexOf('(')))?.className === 'GorillaFileSystem',
        ),
    )!;
    // Log in to Twitter with the scenario's own credentials: a real state change in a class the
    // ground truth of this turn does not touch.
    const cfg = task.initialConfig.get('TwitterAPI') as Map<string, unknown>;
    const login = `authenticate_twitter(username='${cfg.get('username')}', password='${cfg.get('password')}')`;
    const t = play(task, { 0: [{ calls: [...task.groundTruth[0]!, login] }] });
    const l = labels(t)[0]!;
    expect(l).toBe('instance_mismatch');
  });

  it('recovery_failure: a tool error and the turn still failed', () => {
    const task = readOnlyTurnTask();
    const t = play(task, { 0: [{ calls: ["cat(file_name='no_such_file.txt')"] }] });
    expect(labels(t)[0]).toBe('recovery_failure');
  });

  it('pass with a recovery recorded as a secondary fact', () => {
    const t = play(base0, {
      0: [{ calls: ["cd(folder='nowhere')"] }, { calls: [...base0.groundTruth[0]!] }],
    });
    const d = diagnose(t, classOf)[0]!;
    expect(d.label).toBe('pass');
    expect(d.recovered).toBe(true);
  });

  it('missing_tool_call: a checked turn answered in text', () => {
    const t = play(base0, { 1: [{ text: 'Sure, done.' }] });
    expect(labels(t)[1]).toBe('missing_tool_call');
  });

  it('invalid_tool_call beats missing_tool_call when the attempt did not parse', () => {
    const t = play(base0, { 1: [{ parseError: 'unterminated string literal' }] });
    expect(labels(t)[1]).toBe('invalid_tool_call');
  });

  it('response_mismatch: right state, missing results', () => {
    const task = readOnlyTurnTask();
    const t = play(task, { 0: [{ calls: ['pwd()'] }] });
    expect(labels(t)[0]).toBe('response_mismatch');
  });

  it('checker_error: the result could not be checked at all', () => {
    const t = trajectoryFromCalls(base0, [5, [], [], []], data, recorder);
    expect(t.checkerError).toBeDefined();
    expect(labels(t).every((l) => l === 'checker_error')).toBe(true);
  });

  it("gt_error: a ground truth that fails to execute is not the policy's fault", () => {
    const broken: BfclTask = {
      ...base0,
      groundTruth: [["cd(folder='no_such_dir_in_gt')"], ...base0.groundTruth.slice(1)],
    };
    const t = trajectoryFromCalls(
      broken,
      broken.groundTruth.map((turn) => (turn.length ? [turn] : [])),
      data,
      recorder,
    );
    expect(labels(t)[0]).toBe('gt_error');
  });

  it('a force quit leaves the unplayed turns labelled, the reward 0', () => {
    const rec = new EpisodeRecorder(base0, data, { recorder });
    for (let i = 0; i < 21; i++) rec.step({ kind: 'calls', calls: ['ls()'] });
    const t = rec.finish();
    expect(t.forceQuit).toBe(true);
    expect(t.reward).toBe(0);
    expect(labels(t)).toHaveLength(base0.groundTruth.length);
  });
});

interface CheckerCase {
  task_id: string;
  variant: string;
  model_turns: string[][][];
  valid: boolean;
}

describe('diagnosis agrees with the official checker on every checker case', () => {
  const cases = readJsonl<CheckerCase>('checker_cases.jsonl');
  const SUCCESS: ReadonlySet<Label> = new Set(['pass', 'correct_abstention']);
  it('valid -> only pass/abstention (spurious only on empty-ground-truth turns); invalid -> first failing turn agrees', () => {
    for (const c of cases) {
      const task = data.byId.get(c.task_id)!;
      const t = trajectoryFromCalls(task, c.model_turns, data, recorder);
      const ds = diagnose(t, classOf);
      const where = `${c.task_id} ${c.variant}`;
      expect(t.reward, where).toBe(c.valid ? 1 : 0);
      for (const d of ds) {
        if (SUCCESS.has(d.label)) continue;
        if (d.label === 'spurious_tool_call') {
          expect(task.groundTruth[d.turn], where).toEqual([]);
          continue;
        }
        expect(c.valid, `${where}: turn ${d.turn} labelled ${d.label}`).toBe(false);
      }
      if (!c.valid) {
        const firstFailing = ds.find((d) => t.turns[d.turn]!.check.checked && !SUCCESS.has(d.label));
        expect(firstFailing, where).toBeDefined();
        const official = t.turns.find((x) => x.check.passed === false)!.turn;
        expect(firstFailing!.turn, where).toBe(official);
      }
    }
  });
});
