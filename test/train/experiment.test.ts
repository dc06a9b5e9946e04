import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATEGORIES } from '../../src/envs/bfcl/data/tasks.js';
import { pairedTables, runDirName } from '../../src/train/experiment.js';
import type { Method } from '../../src/train/record.js';

/** an eval folder as `seal eval` leaves it: summary.json and one results line per task */
function writeEval(dir: string, verdicts: string): void {
  mkdirSync(dir, { recursive: true });
  const ids = [...verdicts].map((_, i) => `t${i}`);
  writeFileSync(
    join(dir, 'results.jsonl'),
    ids.map((id, i) => JSON.stringify({ id, valid: verdicts[i] === '1' })).join('\n'),
  );
  const accuracy = (100 * [...verdicts].filter((c) => c === '1').length) / verdicts.length;
  const categories = Object.fromEntries(CATEGORIES.map((c) => [c, { n: verdicts.length, accuracy }]));
  writeFileSync(join(dir, 'summary.json'), JSON.stringify({ categories, average: accuracy }));
}

function writeRun(root: string, method: Method, seed: number, start: string, final: string): void {
  const run = join(root, runDirName(method, seed));
  writeEval(join(run, 'eval-start'), start);
  writeEval(join(run, 'eval-final'), final);
}

describe('pairedTables', () => {
  it('pools each method over seeds against the base and against seal, from the run folders', () => {
    const root = mkdtempSync(join(tmpdir(), 'seal-exp-'));
    const base = '1100000000';
    writeRun(root, 'seal', 1, base, '1111000000'); // +2
    writeRun(root, 'seal', 2, base, '1011000000'); // +1: c, d won, b lost
    writeRun(root, 'vanilla', 1, base, '0100000000'); // a lost
    writeRun(root, 'vanilla', 2, base, '1100000001'); // j won
    // vanilla seed 3 never finished: only a start evaluation
    writeEval(join(root, runDirName('vanilla', 3), 'eval-start'), base);
    const out = pairedTables(root, ['seal', 'vanilla'], [1, 2, 3]);
    const lines = out.split('\n');
    const rows = lines.filter((l) => /^\| (seal|vanilla) /.test(l));
    // against the base: seal 4 won 1 lost (p = 2 (1 + 5) / 32 = 0.375), mean (+20 + 10) / 2 = +15
    expect(rows[0]).toMatch(
      /^\| seal +\| +2 \| +10 \| +4 \| +1 \| 0\.375 \| +\+15\.00 \| +\[-\d+\.\d\d, \+\d+\.\d\d\] \|$/,
    );
    // vanilla: 1 won, 1 lost, mean 0
    expect(rows[1]).toMatch(/^\| vanilla +\| +2 \| +10 \| +1 \| +1 \| 1\.000 \| +\+0\.00 \|/);
    // against seal, same seed: seed 1 vanilla wins none, loses a, c, d; seed 2 wins a, j, loses c, d
    expect(out).toContain('Against seal on the same seed');
    expect(rows[2]).toMatch(/^\| vanilla +\| +2 \| +10 \| +2 \| +5 \| 0\.453 \| +-15\.00 \|/);
  });
});
