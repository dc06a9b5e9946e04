// @module-tag bfcl-data
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolCallFormat } from '../../src/agent/format.js';
import { readFinished, runEval } from '../../src/eval/run.js';
import { OpenAiCompatiblePolicy } from '../../src/policy/openai.js';
import { type Behaviour, bfclPlayer } from '../support/bfclPlayer.js';
import { buildDist, seal } from '../support/cli.js';
import { startFakeModelServer } from '../support/fakeModelServer.js';
import { DATA_DIR, sharedData } from '../support/golden.js';

const data = sharedData();

const BEHAVIOURS: Record<string, Behaviour> = {
  multi_turn_base_0: 'gt',
  multi_turn_base_1: 'wrong',
  multi_turn_base_2: 'malformed',
  multi_turn_miss_func_3: 'gt',
  multi_turn_miss_param_4: 'gt',
  multi_turn_long_context_5: 'gt',
  multi_turn_base_6: { failFirst: 2, status: 500 },
  multi_turn_base_7: 'hang_once',
};
const IDS = Object.keys(BEHAVIOURS).join(',');
const VALID = new Set([
  'multi_turn_base_0',
  'multi_turn_miss_func_3',
  'multi_turn_miss_param_4',
  'multi_turn_long_context_5',
  'multi_turn_base_6',
  'multi_turn_base_7',
]);

const policyFor = (url: string) =>
  new OpenAiCompatiblePolicy({
    baseUrl: url,
    model: 'scripted',
    timeoutMs: 1500,
    maxRetries: 3,
    initialBackoffMs: 5,
    maxBackoffMs: 20,
  });

describe('seal eval against an OpenAI-compatible server (scripted)', () => {
  beforeAll(async () => {
    await buildDist();
  });

  for (const format of ['native', 'hermes', 'python', 'compact'] as ToolCallFormat[]) {
    it(`${format}: scores, labels, retries, and the BFCL result file scores the same with seal verify`, async () => {
      const server = await startFakeModelServer(bfclPlayer(data, BEHAVIOURS, format));
      try {
        const out = mkdtempSync(join(tmpdir(), `seal-eval-${format}-`));
        const tasks = Object.keys(BEHAVIOURS).map((id) => data.byId.get(id)!);
        const outcome = await runEval(
          data,
          tasks,
          policyFor(server.url),
          {
            suite: 'bfcl',
            model: 'scripted',
            baseUrl: server.url,
            format,
            split: IDS,
            sampling: { temperature: 0 },
          },
          out,
          { concurrency: 4 },
        );
        expect(outcome.ran).toBe(tasks.length);
        const rows = [...readFinished(out).values()];
        for (const row of rows) {
          expect(row.valid, `${format} ${row.id}`).toBe(VALID.has(row.id));
          expect(row.labels).toHaveLength(row.trajectory.turns.length);
        }
        const byId = new Map(rows.map((r) => [r.id, r]));
        expect(byId.get('multi_turn_base_1')!.labels[0]).toBe('missing_tool_call');
        expect(byId.get('multi_turn_base_2')!.labels[0]).toBe('invalid_tool_call');
        expect(byId.get('multi_turn_base_2')!.trajectory.turns[0]!.steps[0]!.parseError).toBeTruthy();
        expect(byId.get('multi_turn_base_0')!.trajectory.turns[0]!.steps[0]!.rawText).toBeTruthy();
        // the 500s and the hang were retried (more requests than steps for those tasks)
        const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
        expect(summary.categories.base).toEqual({ n: 5, accuracy: 60 });
        expect(summary.categories.miss_func.accuracy).toBe(100);
        const verify = await seal([
          'verify',
          '--results',
          join(out, 'bfcl_result.jsonl'),
          '--data-dir',
          DATA_DIR,
          '--json',
        ]);
        expect(verify.code, verify.stderr).toBe(0);
        expect(JSON.parse(verify.stdout)).toEqual(summary);
        expect(readFileSync(join(out, 'summary.md'), 'utf8')).toContain('| Average |');
      } finally {
        await server.close();
      }
    });
  }

  it('resumes: an interrupted run keeps what finished and reruns only the rest', async () => {
    const out = mkdtempSync(join(tmpdir(), 'seal-eval-resume-'));
    const broken: Record<string, Behaviour> = {
      ...BEHAVIOURS,
      multi_turn_base_6: { failFirst: 1000, status: 400 },
    };
    const tasks = Object.keys(BEHAVIOURS).map((id) => data.byId.get(id)!);
    const config = {
      suite: 'bfcl' as const,
      model: 'scripted',
      format: 'native' as const,
      split: IDS,
      sampling: { temperature: 0 },
    };
    const first = await startFakeModelServer(bfclPlayer(data, broken, 'native'));
    await expect(
      runEval(data, tasks, policyFor(first.url), { ...config, baseUrl: first.url }, out, { concurrency: 1 }),
    ).rejects.toThrow(/HTTP 400/);
    await first.close();
    const kept = readFinished(out);
    expect(kept.size).toBeGreaterThan(0);
    expect(kept.has('multi_turn_base_6')).toBe(false);
    // a torn last line (killed mid-write) is dropped, not fatal
    writeFileSync(
      join(out, 'results.jsonl'),
      `${readFileSync(join(out, 'results.jsonl'), 'utf8')}{"id": "multi_turn_base_7", "tra`,
    );

    const second = await startFakeModelServer(bfclPlayer(data, BEHAVIOURS, 'native'));
    try {
      const outcome = await runEval(
        data,
        tasks,
        policyFor(second.url),
        { ...config, baseUrl: second.url },
        out,
        { concurrency: 2 },
      );
      expect(outcome.resumed).toBe(kept.size);
      expect(outcome.ran).toBe(tasks.length - kept.size);
      const askedAbout = new Set(second.requests.map((b) => JSON.stringify(b.messages?.[1])));
      for (const id of kept.keys()) {
        expect(
          askedAbout.has(
            JSON.stringify({ role: 'user', content: data.byId.get(id)!.question[0]![0]!.content }),
          ),
        ).toBe(false);
      }
      expect(readFinished(out).size).toBe(tasks.length);
    } finally {
      await second.close();
    }
  });

  it('refuses to resume a folder with other settings', async () => {
    const out = mkdtempSync(join(tmpdir(), 'seal-eval-mismatch-'));
    writeFileSync(
      join(out, 'run.json'),
      JSON.stringify({ suite: 'bfcl', model: 'other', format: 'native', sampling: { temperature: 0 } }),
    );
    const r = await seal([
      'eval',
      '--split',
      'multi_turn_base_0',
      '--model',
      'scripted',
      '--base-url',
      'http://127.0.0.1:9/v1',
      '--out',
      out,
      '--data-dir',
      DATA_DIR,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('different model');
  });

  it('a dead server gives a clear error naming the URL, and exit code 1', async () => {
    const out = mkdtempSync(join(tmpdir(), 'seal-eval-dead-'));
    const r = await seal([
      'eval',
      '--split',
      'multi_turn_base_0',
      '--model',
      'm',
      '--base-url',
      'http://127.0.0.1:9/v1',
      '--retries',
      '1',
      '--timeout',
      '2',
      '--out',
      out,
      '--data-dir',
      DATA_DIR,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('http://127.0.0.1:9/v1');
    expect(r.stderr).toMatch(/cannot reach/);
    expect(existsSync(join(out, 'summary.json'))).toBe(false);
  });

  it('runs end to end as a real process and compares runs side by side', async () => {
    const server = await startFakeModelServer(bfclPlayer(data, BEHAVIOURS, 'hermes'));
    try {
      const a = mkdtempSync(join(tmpdir(), 'seal-eval-a-'));
      const r = await seal([
        'eval',
        '--split',
        IDS,
        '--model',
        'scripted',
        '--base-url',
        server.url,
        '--format',
        'hermes',
        '--concurrency',
        '3',
        '--timeout',
        '2',
        '--out',
        a,
        '--data-dir',
        DATA_DIR,
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/\| scripted +\| +[\d.]+ \|/);
      const again = await seal([
        'eval',
        '--split',
        IDS,
        '--model',
        'scripted',
        '--base-url',
        server.url,
        '--format',
        'hermes',
        '--out',
        a,
        '--data-dir',
        DATA_DIR,
      ]);
      expect(again.stdout).toContain(`0 task(s) run, ${Object.keys(BEHAVIOURS).length} kept from before`);
      const cmp = await seal(['compare', a, a]);
      expect(cmp.code, cmp.stderr).toBe(0);
      expect(cmp.stdout).toContain('(+0.00)');
      // task by task: every task kept its verdict
      expect(cmp.stdout).toMatch(
        new RegExp(`\\| +${Object.keys(BEHAVIOURS).length} \\| +0 \\| +0 \\| 1\\.000 \\|`),
      );
    } finally {
      await server.close();
    }
  });
});

afterAll(() => {});
