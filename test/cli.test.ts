// @module-tag bfcl-data
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDist, seal } from './support/cli.js';
import { DATA_DIR, readJsonl } from './support/golden.js';

describe('seal verify', () => {
  const dir = mkdtempSync(join(tmpdir(), 'seal-verify-'));
  beforeAll(async () => {
    await buildDist();
  });

  it('scores the ground truth replayed as a BFCL result file at 100.00 in every category', async () => {
    const tasks = readFileSync(join(DATA_DIR, 'possible_answer', 'BFCL_v4_multi_turn_base.json'), 'utf8');
    const lines: string[] = [];
    for (const cat of ['base', 'miss_func', 'miss_param', 'long_context']) {
      const answers = readFileSync(
        join(DATA_DIR, 'possible_answer', `BFCL_v4_multi_turn_${cat}.json`),
        'utf8',
      )
        .trim()
        .split('\n');
      for (const a of answers) {
        const { id, ground_truth } = JSON.parse(a) as { id: string; ground_truth: string[][] };
        lines.push(JSON.stringify({ id, result: ground_truth.map((turn) => (turn.length ? [turn] : [])) }));
      }
    }
    expect(tasks.length).toBeGreaterThan(0);
    const results = join(dir, 'gt.jsonl');
    writeFileSync(results, lines.join('\n'));
    const out = join(dir, 'verdicts.jsonl');
    const r = await seal([
      'verify',
      '--suite',
      'bfcl',
      '--results',
      results,
      '--data-dir',
      DATA_DIR,
      '--json',
      '--out',
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as {
      categories: Record<string, { n: number; accuracy: number }>;
      average: number;
    };
    expect(summary).toEqual({
      categories: {
        base: { n: 200, accuracy: 100 },
        miss_func: { n: 200, accuracy: 100 },
        miss_param: { n: 200, accuracy: 100 },
        long_context: { n: 200, accuracy: 100 },
      },
      average: 100,
    });
    const verdicts = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(verdicts).toHaveLength(800);
    expect(verdicts[0]).toMatchObject({ id: 'multi_turn_base_0', category: 'base', valid: true });
    expect(verdicts[0].turns[0]).toEqual({ turn: 0, checked: true, passed: true });
  });

  it('prints the Table 1 layout and per-turn failures for a broken result file', async () => {
    const cases = readJsonl<{
      task_id: string;
      variant: string;
      model_turns: string[][][];
      valid: boolean;
      error_type?: string;
    }>('checker_cases.jsonl');
    const picked = new Map<string, (typeof cases)[number]>();
    for (const c of cases) if (!picked.has(c.task_id)) picked.set(c.task_id, c);
    const results = join(dir, 'mixed.jsonl');
    writeFileSync(
      results,
      [...picked.values()].map((c) => JSON.stringify({ id: c.task_id, result: c.model_turns })).join('\n'),
    );
    const out = join(dir, 'mixed-verdicts.jsonl');
    const r = await seal(['verify', '--results', results, '--data-dir', DATA_DIR, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\| +\| Average \| +Base \| Miss Func \| Miss Param \| Long Context \|/);
    const verdicts = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; valid: boolean; error_type?: string });
    for (const v of verdicts) {
      const c = picked.get(v.id)!;
      expect(v.valid, v.id).toBe(c.valid);
      if (!c.valid) expect(v.error_type).toBe(c.error_type);
    }
  });

  it('--diagnose adds one label per user turn and the rollout weight, and prints the label mix', async () => {
    const cases = readJsonl<{ task_id: string; variant: string; model_turns: string[][][]; valid: boolean }>(
      'checker_cases.jsonl',
    );
    // one line per task (a result file may not repeat a task): an empty-turn variant where
    // there is one, the replay otherwise
    const byTask = new Map<string, (typeof cases)[number]>();
    for (const c of cases.filter(
      (x) => x.variant.startsWith('empty_model_turn') || x.variant === 'gt_replay',
    ))
      if (!byTask.has(c.task_id) || c.variant !== 'gt_replay') byTask.set(c.task_id, c);
    const picked = [...byTask.values()].slice(0, 40);
    const results = join(dir, 'diag.jsonl');
    writeFileSync(
      results,
      picked.map((c) => JSON.stringify({ id: c.task_id, result: c.model_turns })).join('\n'),
    );
    const out = join(dir, 'diag-verdicts.jsonl');
    const r = await seal([
      'verify',
      '--results',
      results,
      '--data-dir',
      DATA_DIR,
      '--diagnose',
      '--out',
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Turn labels per category');
    expect(r.stdout).toMatch(/\| missing_tool_call +\|/);
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as { id: string; valid: boolean; turns: unknown[]; labels: string[]; weight: number },
      );
    expect(rows).toHaveLength(new Set(picked.map((c) => c.task_id)).size);
    for (const row of rows) {
      expect(row.labels).toHaveLength(row.turns.length);
      expect(row.weight).toBeGreaterThanOrEqual(0.5);
      expect(row.weight).toBeLessThanOrEqual(2);
      if (!row.valid) expect(row.labels.some((l) => !['pass', 'correct_abstention'].includes(l))).toBe(true);
    }
  });

  it('the built-in mini suite verifies without any data directory', async () => {
    const r = await seal(['verify', '--suite', 'mini', '--ground-truth', '--json'], {
      SEAL_BFCL_DATA: '/nonexistent',
    });
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout) as {
      categories: Record<string, { n: number; accuracy: number }>;
      average: number;
    };
    expect(s.average).toBe(100);
    // every task of the suite: 100 train, 100 test and 100 development tasks per category
    expect(Object.values(s.categories).map((c) => c.n)).toEqual([300, 300, 300, 300]);
  });

  it('says which command fixes missing data, and names a malformed line', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'seal-empty-'));
    const r = await seal(['verify', '--ground-truth', '--data-dir', empty]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('seal data pull bfcl');
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"id": "multi_turn_base_0", "result": []}\nnot json\n');
    const r2 = await seal(['verify', '--results', bad, '--data-dir', DATA_DIR]);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain('bad.jsonl:2');
  });
});
