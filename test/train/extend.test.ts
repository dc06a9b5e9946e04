/**
 * `seal train --resume DIR --rounds N` raises a run's budget, through real `seal train` processes:
 * a finished 2-round run extended to 3 continues its record where it ended, records the raise in
 * run.json, keeps the old final evaluation beside the new one, and ends with the rounds, rollouts
 * and weights of a run trained 3 rounds from the start; a lower or equal N, or another setting,
 * is refused with nothing changed; a kill right after run.json records the raise is completed by
 * a plain --resume.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDist, seal } from '../support/cli.js';
import { fileHashes, timelessLines, tinyTrainFlags, trainedRecord } from '../support/tiny-run.js';

// validated at round 2 either way (every 2 rounds, and the last): a budget of 2 and one of 3 run
// rounds 1 and 2 alike by design
const BASE = { validateEvery: 2, kernels: 'wasm' } as const;

const root = mkdtempSync(join(tmpdir(), 'seal-extend-'));
const json = (p: string) => JSON.parse(readFileSync(p, 'utf8'));

/** what must equal between two runs of the same seed and rounds */
const training = (dir: string) => trainedRecord(dir, 'round-0003');

// the same folder name everywhere: the sampler's name carries it
const done = join(root, 'done', 'run');
const plain = join(root, 'plain', 'run');

describe('seal train --resume DIR --rounds N', { timeout: 1_800_000 }, () => {
  beforeAll(async () => {
    await buildDist();
    const [a, b] = await Promise.all([
      seal(['train', '--out', done, ...tinyTrainFlags({ ...BASE, evalFinal: true })]),
      seal(['train', '--out', plain, ...tinyTrainFlags({ ...BASE, rounds: 3 })]),
    ]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
  }, 1_800_000);

  it('refuses a budget not above the recorded one, and any other setting, changing nothing', async () => {
    const before = fileHashes(done);
    for (const n of ['2', '1']) {
      const r = await seal(['train', '--resume', done, '--rounds', n]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`already has 2 rounds (2 done): give more than 2`);
      expect(r.stderr).not.toMatch(/^\s+at /m);
    }
    const other = await seal(['train', '--resume', done, '--rounds', '3', '--lr', '0.01']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('only --rounds N may raise its rounds); drop --lr');
    expect(fileHashes(done)).toEqual(before);
  });

  it('extends a finished run: the record continues, the raise is recorded, and rounds 1-3 are those of a 3-round run', async () => {
    const dir = join(root, 'extended', 'run');
    const killed = join(root, 'killed', 'run');
    cpSync(done, dir, { recursive: true });
    cpSync(done, killed, { recursive: true });
    const oldFinal = readFileSync(join(done, 'eval-final', 'summary.json'), 'utf8');
    const oldFinished = json(join(done, 'finished.json'));

    const [r, k] = await Promise.all([
      seal(['train', '--resume', dir, '--rounds', '3']),
      // killed right after run.json records the raise, before the old final evaluation is moved
      seal(['train', '--resume', killed, '--rounds', '3'], { SEAL_TEST_KILL_AT: '2:extension' }),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      'rounds raised from 2 to 3 (the final evaluation of the 2 rounds is kept in eval-final-round-0002/)',
    );
    expect(r.stderr).toContain('after round 2 of 3');
    expect(k.code).not.toBe(0);
    expect(existsSync(join(killed, 'finished.json'))).toBe(true);

    const rounds = timelessLines(join(dir, 'rounds.jsonl')) as { round: number }[];
    expect(rounds.map((x) => x.round)).toEqual([1, 2, 3]);
    const m = json(join(dir, 'run.json'));
    expect(m.config.rounds).toBe(3);
    expect(m.budget).toMatchObject({ rounds: 3, rollouts: 3 * 2 * 2 });
    expect(m.command).not.toContain('--resume');
    expect(m.extensions).toEqual([
      {
        afterRound: 2,
        fromRounds: 2,
        toRounds: 3,
        at: expect.any(String),
        command: `seal train --resume ${dir} --rounds 3`,
        finished: oldFinished,
        evalFinal: 'eval-final-round-0002',
      },
    ]);
    // the old final evaluation kept, a new one made after round 3
    expect(readFileSync(join(dir, 'eval-final-round-0002', 'summary.json'), 'utf8')).toBe(oldFinal);
    expect(json(join(dir, 'eval-final', 'run.json')).model).toMatch(/@\d+$/);
    expect(json(join(dir, 'finished.json')).rounds).toBe(3);
    expect(training(dir)).toEqual(training(plain));

    // a later plain --resume reads the new budget: the run is complete at 3
    const again = await seal(['train', '--resume', dir]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('is complete (3 rounds); nothing to do');
    // the report names the raise and the earlier final evaluation
    const rep = await seal(['report', dir, '--out', join(root, 'report.html')]);
    expect(rep.code, rep.stderr).toBe(0);
    const html = readFileSync(join(root, 'report.html'), 'utf8');
    expect(html).toContain('rounds raised');
    expect(html).toMatch(
      /from 2 to 3 after round 2, .* \(the run had finished\); the final evaluation of the 2 rounds: average \d+\.\d\d, in eval-final-round-0002\//,
    );

    // the cut-short raise: a plain --resume completes it and ends as the uninterrupted one
    const resumed = await seal(['train', '--resume', killed, '--quiet']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(training(killed)).toEqual(training(dir));
    expect(readFileSync(join(killed, 'eval-final-round-0002', 'summary.json'), 'utf8')).toBe(oldFinal);
    expect(json(join(killed, 'finished.json')).rounds).toBe(3);
  });
});
