// @module-tag bfcl-data
/**
 * `seal eval --format python` (a real process) against a scripted server whose answers use
 * positional arguments, prose around a fenced list, a think block and a bare fence: the run's
 * verdicts, `seal verify` on its bfcl_result.jsonl, and the official pipeline's verdicts agree.
 * The official verdicts come from the test data: the scripted answers are built so that BFCL's
 * decoder (whose output on such texts prompting_decode_cases.jsonl records) turns each task into
 * a trace whose official checker verdict checker_cases.jsonl records.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeExecutePrompting } from '../../src/envs/py/prompting.js';
import { keywordForm, locate } from '../support/bfclPlayer.js';
import { buildDist, seal } from '../support/cli.js';
import { type FakeScript, startFakeModelServer } from '../support/fakeModelServer.js';
import { DATA_DIR, readJsonl, sharedData } from '../support/golden.js';

interface CheckerCase {
  task_id: string;
  variant: string;
  model_turns: string[][][];
  valid: boolean;
  error_type?: string;
}

const data = sharedData();
const checkerCases = readJsonl<CheckerCase>('checker_cases.jsonl');
const recorded = (id: string, variant: string) => {
  const c = checkerCases.find((x) => x.task_id === id && x.variant === variant);
  if (!c) throw new Error(`no recorded verdict for ${id} ${variant}`);
  return c;
};

/** per task: the recorded variant its answers reproduce, and how the answers are written */
const PLAN = {
  // turn 0's last call written positionally: the official decoder runs it with no arguments,
  // so nothing moves, as when the call is left out
  multi_turn_base_0: 'drop_last_call_turn_0',
  // the last turn's calls in a ```python fence with prose around it: the turn ends with no call
  multi_turn_base_20: 'empty_model_turn_1',
  // an extra call with a positional argument in every turn: it runs as nonexistent_function()
  multi_turn_base_30: 'gt_plus_unknown_function_call',
} as const;
type PlannedId = keyof typeof PLAN;
const IDS = Object.keys(PLAN) as PlannedId[];

function answer(id: PlannedId, turn: number): string {
  const gt = (data.byId.get(id)!.groundTruth[turn] ?? []).map((c) => keywordForm(c, data));
  if (id === 'multi_turn_base_0' && turn === 0) {
    const last = gt.pop()!;
    // mv(source='a', destination='b') -> mv('a', 'b')
    return `<think>move the report</think>\n[${[...gt, last.replace(/\w+=/g, '')].join(', ')}]`;
  }
  if (id === 'multi_turn_base_20' && turn === 1)
    return `I will call:\n\`\`\`python\n[${gt.join(', ')}]\n\`\`\`\nThat should do it.`;
  if (id === 'multi_turn_base_30')
    return `\`\`\`\n[${[...gt, "nonexistent_function('x')"].join(', ')}]\n\`\`\``;
  return `[${gt.join(', ')}]`;
}

const script: FakeScript = (body) => {
  const at = locate(body, data, IDS);
  if (!at) return { status: 400, body: { error: { message: 'unknown conversation' } } };
  const gt = at.task.groundTruth[at.turn] ?? [];
  if (at.step > 0 || gt.length === 0) return { content: 'Done.' };
  return { content: answer(at.task.id as PlannedId, at.turn) };
};

describe('python-format seal eval scores like the official pipeline', () => {
  beforeAll(async () => {
    await buildDist();
  });

  it('eval, verify on bfcl_result.jsonl, and the recorded official verdicts agree', async () => {
    // the plan reproduces what it says, before anything is run
    expect(recorded('multi_turn_base_20', 'empty_model_turn_1').model_turns).toHaveLength(2);
    const server = await startFakeModelServer(script);
    try {
      const out = mkdtempSync(join(tmpdir(), 'seal-official-'));
      const r = await seal([
        'eval',
        '--split',
        IDS.join(','),
        '--model',
        'scripted',
        '--base-url',
        server.url,
        '--format',
        'python',
        '--concurrency',
        '2',
        '--out',
        out,
        '--data-dir',
        DATA_DIR,
      ]);
      expect(r.code, r.stderr).toBe(0);
      const rows = readFileSync(join(out, 'results.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: PlannedId; valid: boolean; error_type?: string });
      expect(rows.map((x) => x.id).sort()).toEqual([...IDS].sort());

      const verdicts = join(out, 'verdicts.jsonl');
      const v = await seal([
        'verify',
        '--results',
        join(out, 'bfcl_result.jsonl'),
        '--data-dir',
        DATA_DIR,
        '--out',
        verdicts,
      ]);
      expect(v.code, v.stderr).toBe(0);
      const verified = new Map(
        readFileSync(verdicts, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { id: string; valid: boolean; error_type?: string })
          .map((x) => [x.id, x]),
      );

      for (const row of rows) {
        const official = recorded(row.id, PLAN[row.id]);
        expect({ id: row.id, valid: row.valid, error_type: row.error_type }).toEqual({
          id: row.id,
          valid: official.valid,
          error_type: official.error_type,
        });
        const ver = verified.get(row.id)!;
        expect({ id: row.id, valid: ver.valid, error_type: ver.error_type }).toEqual({
          id: row.id,
          valid: official.valid,
          error_type: official.error_type,
        });
      }

      // bfcl_result.jsonl holds the executed calls in keyword form: the official decoder reads
      // each step back to exactly the calls that ran
      const results = readFileSync(join(out, 'bfcl_result.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: PlannedId; result: string[][] });
      for (const res of results) {
        const decoded = res.result.map((turn) =>
          turn.map((step) => {
            const d = decodeExecutePrompting(step);
            if (!d.ok) throw new Error(`${res.id}: ${step} does not decode`);
            return d.calls;
          }),
        );
        if (res.id === 'multi_turn_base_30') {
          // the very trace the official checker was run on
          expect(decoded).toEqual(recorded(res.id, 'gt_plus_unknown_function_call').model_turns);
        }
        if (res.id === 'multi_turn_base_0') expect(decoded[0]![0]!.at(-1)).toBe('mv()');
        if (res.id === 'multi_turn_base_20') expect(decoded[1]).toEqual([]);
      }
    } finally {
      await server.close();
    }
  });
});
