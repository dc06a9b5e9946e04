/**
 * The start and final evaluations of `seal train`, run as a user runs them: the real command, the
 * full test split under the strict protocol, a cache of its own (XDG_CACHE_HOME). With the learning
 * rate at 0 the final weights are the start weights, so the final evaluation, which is made afresh,
 * must give every task the start evaluation's verdict; a second run of the same checkpoint and
 * settings reuses the start evaluation from the cache, byte for byte, and says so.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readVerdicts } from '../../src/bfcl/eval.js';
import { buildDist, seal } from '../support/cli.js';

const root = mkdtempSync(join(tmpdir(), 'seal-evals-'));
const env = { XDG_CACHE_HOME: join(root, 'cache') };
// one round of two tasks: the evaluations are what is under test, not the training
const TINY = [
  '--method',
  'seal',
  '--seed',
  '3',
  '--rounds',
  '1',
  '--tasks-per-round',
  '2',
  '--group-size',
  '2',
  '--validate-every',
  '0',
  '--anchor-coef',
  '0',
  '--quiet',
];

const json = (path: string) => JSON.parse(readFileSync(path, 'utf8'));
const text = (path: string) => readFileSync(path, 'utf8');

describe('seal train: start and final evaluations on the test split', { timeout: 1_200_000 }, () => {
  beforeAll(buildDist, 300_000);

  it('evaluates the start and the final policy; frozen weights give the same verdicts; the start is cached', async () => {
    const first = join(root, 'frozen');
    // not --quiet: the progress lines through both evaluations are under test too
    const loud = TINY.filter((f) => f !== '--quiet');
    const a = await seal(['train', ...loud, '--lr', '0', '--out', first], env);
    expect(a.code, a.stderr).toBe(0);
    // a log (stderr is a pipe here) gets a line as each evaluation starts and ends, with its pace
    for (const which of ['start', 'final']) {
      expect(a.stderr).toContain(`${which} evaluation 0/400 tasks\n`);
      expect(a.stderr).toMatch(
        new RegExp(`${which} evaluation 400/400 tasks \\| [0-9.]+ tasks/s \\| took [0-9.]+ min\n`),
      );
    }
    // the round's ETA holds the final evaluation at the start evaluation's pace: not zero
    const eta = /round 1\/1 .*\| ETA ([0-9.]+) min\n/.exec(a.stderr);
    expect(eta, a.stderr).not.toBeNull();
    expect(Number(eta![1])).toBeGreaterThan(0);
    const start = json(join(first, 'eval-start', 'summary.json'));
    const final = json(join(first, 'eval-final', 'summary.json'));
    expect(a.stderr).toContain(`start: average ${start.average.toFixed(2)}\n`);
    expect(a.stderr).toContain(`final: average ${final.average.toFixed(2)}`);
    expect(json(join(first, 'eval-start', 'cache.json')).reused).toBe(false);
    expect(json(join(first, 'finished.json')).evalStartMs).toBeGreaterThan(0);

    // the whole test split, every task judged, the same tasks on both sides
    const startVerdicts = readVerdicts(join(first, 'eval-start'))!;
    const finalVerdicts = readVerdicts(join(first, 'eval-final'))!;
    expect(startVerdicts.size).toBe(400);
    // the records name the split they scored, as `seal eval --split test` does
    for (const dir of ['eval-start', 'eval-final']) {
      expect(json(join(first, dir, 'run.json')).split).toBe('test');
      expect(text(join(first, dir, 'summary.md'))).toContain('(test, ');
    }
    const compared = await seal(['compare', join(first, 'eval-start'), first], env);
    expect(compared.code, compared.stderr).toBe(0);
    expect([...finalVerdicts.keys()].sort()).toEqual([...startVerdicts.keys()].sort());
    // the base passes some tasks and fails others: a score, not a constant
    const passed = [...startVerdicts.values()].filter(Boolean).length;
    expect(passed).toBeGreaterThan(0);
    expect(passed).toBeLessThan(400);
    expect(start.average).toBeGreaterThan(0);
    // lr 0: the round trained nothing, so the final policy is the start policy, evaluated again
    expect(Object.fromEntries(finalVerdicts)).toEqual(Object.fromEntries(startVerdicts));
    expect(final.average).toBe(start.average);
    expect(final.categories).toEqual(start.categories);

    // a cache written by an earlier version, which called the test split a validation subset
    const cached = join(
      root,
      'cache',
      'seal',
      'eval-start',
      json(join(first, 'eval-start', 'cache.json')).key,
    );
    const oldLabel = 'validation (400 dev tasks, seed 3)';
    writeFileSync(
      join(cached, 'run.json'),
      JSON.stringify({ ...json(join(cached, 'run.json')), split: oldLabel }),
    );
    writeFileSync(
      join(cached, 'summary.md'),
      text(join(cached, 'summary.md')).replace('(test, ', `(${oldLabel}, `),
    );

    // the same checkpoint and settings: the start evaluation comes from the cache, unchanged
    const second = join(root, 'cached');
    const b = await seal(['train', ...TINY, '--lr', '1e-3', '--eval-final', 'false', '--out', second], env);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stderr).toContain(`start: average ${start.average.toFixed(2)} (reused from the cache)`);
    expect(json(join(second, 'eval-start', 'cache.json'))).toEqual({
      reused: true,
      key: json(join(first, 'eval-start', 'cache.json')).key,
    });
    expect(json(join(second, 'finished.json')).evalStartMs).toBeNull();
    for (const f of ['summary.json', 'results.jsonl', 'bfcl_result.jsonl'])
      expect(text(join(second, 'eval-start', f))).toBe(text(join(first, 'eval-start', f)));
    expect(json(join(second, 'finished.json')).evalFinalMs).toBeUndefined();
    // named for its split again, and for this run's policy, not the run that filled the cache
    expect(json(join(second, 'eval-start', 'run.json'))).toMatchObject({
      split: 'test',
      model: 'embedded:cached@0',
    });
    expect(text(join(second, 'eval-start', 'summary.md'))).toBe(
      text(join(first, 'eval-start', 'summary.md')).replace('embedded:frozen@0', 'embedded:cached@0'),
    );
  });
});
