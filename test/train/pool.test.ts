/**
 * What the recovery experiment needs of `seal train`, tried as a user runs it: a training pool read
 * from a file (only training tasks, said clearly otherwise, before anything is written), an anchor
 * kept to chosen categories, and the validation's count of turns answered without a call (the
 * internalisation curve of a habit).
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { abstentionByCategory, abstentionText } from '../../src/bfcl/abstention.js';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { EmbeddedLearner } from '../../src/learner/embedded/learner.js';
import { BASE_CHECKPOINT_DIR } from '../../src/nn/checkpoint.js';
import { anchorData } from '../../src/train/anchor.js';
import { poolIds, poolTasks } from '../../src/train/tasks.js';
import { buildDist, seal } from '../support/cli.js';
import { tinyTrainFlags } from '../support/tiny-run.js';

describe('turns answered without a call', () => {
  it('counts the empty-ground-truth turns per category from the labels', () => {
    const counts = abstentionByCategory([
      { category: 'miss_param', labels: ['pass', 'correct_abstention', 'pass'] },
      { category: 'miss_param', labels: ['pass', 'spurious_tool_call', 'state_mismatch'] },
      { category: 'miss_param', labels: ['state_mismatch', 'spurious_tool_call'] },
      { category: 'miss_func', labels: ['correct_abstention', 'pass'] },
      { category: 'base', labels: ['pass', 'state_mismatch'] },
    ]);
    expect(counts).toEqual({
      miss_func: { abstained: 1, turns: 1 },
      miss_param: { abstained: 1, turns: 3 },
    });
    expect(abstentionText(counts.miss_param)).toBe('1 / 3 (33.3%)');
    expect(abstentionText(counts.base)).toBe('-');
  });
});

describe('a training pool', () => {
  const data = loadMiniSuite();
  const train = data.split.train.map((id) => data.byId.get(id)!);

  it('reads ids one a line, comments and blank lines skipped', () => {
    expect(poolIds('# made by hand\nmini_base_1\n\n  mini_base_2  # the second\n')).toEqual([
      'mini_base_1',
      'mini_base_2',
    ]);
  });

  it('names training tasks only, in its order, each once', () => {
    const ids = [train[5]!.id, train[2]!.id, train[5]!.id];
    expect(poolTasks(train, ids, 'pool').map((t) => t.id)).toEqual([train[5]!.id, train[2]!.id]);
    const testId = data.split.test[0]!;
    expect(() => poolTasks(train, [train[0]!.id, testId], 'trainPool p.txt')).toThrow(
      new RegExp(`trainPool p.txt: 1 id\\(s\\) are not tasks of the training split \\(${testId}\\)`),
    );
    expect(() => poolTasks(train, [], 'trainPool p.txt')).toThrow(/names no task/);
  });
});

describe('the anchor kept to chosen categories', () => {
  it('renders demonstrations of those categories only', async () => {
    const seen: string[][] = [];
    const learner = {
      renderSupervised: (messages: readonly { role: string; content: string }[]) => {
        seen.push(messages.map((m) => m.content));
        return [];
      },
    };
    await anchorData(learner, 3, 1, 4, ['base', 'long_context']);
    expect(seen).toHaveLength(4);
    // a miss_param demonstration asks for a value, a miss_func one says no function fits: none here
    const text = seen.flat().join('\n');
    expect(text).not.toMatch(/missing value|required value was not given|No listed function|cannot do that/);
  });
});

describe('seal train with a pool and a kept anchor', () => {
  const dir = mkdtempSync(join(tmpdir(), 'seal-pool-'));
  const data = loadMiniSuite();
  const pool = data.split.train.filter((id) => id.includes('miss_param')).slice(0, 3);

  beforeAll(async () => {
    await buildDist();
  }, 300_000);

  it('trains on the pool only, records both settings, and counts the asks at validation', async () => {
    const file = join(dir, 'pool.txt');
    writeFileSync(file, `# three miss_param tasks\n${pool.join('\n')}\n`);
    const out = join(dir, 'run');
    const r = await seal([
      'train',
      ...tinyTrainFlags({ trainPool: file, kernels: 'wasm', anchorDemos: 4 }),
      '--anchor-categories',
      'base',
      'miss_func',
      '--out',
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const rounds = readFileSync(join(out, 'rounds.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    for (const round of rounds) for (const id of round.tasks) expect(pool).toContain(id);
    const manifest = JSON.parse(readFileSync(join(out, 'run.json'), 'utf8'));
    expect(manifest.config.trainPool).toBe(file);
    expect(manifest.config.anchorCategories).toEqual(['base', 'miss_func']);
    // the update's anchor is the demonstrations of those categories, not of all four (four a round:
    // one demonstration alone is of the same category either way)
    const learner = EmbeddedLearner.open(BASE_CHECKPOINT_DIR, {
      gradientWorkers: 1,
      samplerWorkers: 1,
      samplerDir: '',
      name: 'embedded:test',
    });
    const { seed, anchorDemos } = manifest.config;
    const targets = (ds: readonly { weights: readonly number[] }[]) =>
      ds.reduce((n, d) => n + d.weights.filter((w) => w > 0).length, 0);
    for (const round of rounds) {
      const kept = await anchorData(learner, seed, round.round, anchorDemos, ['base', 'miss_func']);
      const all = await anchorData(learner, seed, round.round, anchorDemos);
      expect(round.learner.anchor).toMatchObject({ sequences: kept.length, tokens: targets(kept) });
      expect(targets(all)).not.toBe(targets(kept));
    }
    const validated = rounds.at(-1).validation;
    expect(validated.abstention.miss_param.turns).toBe(1);
    expect(validated.abstention.miss_param.abstained).toBeGreaterThanOrEqual(0);
    // the finished run resumes as one (the pool and the kept anchor read back from run.json)
    const resumed = await seal(['train', '--resume', out]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('nothing to do');
  }, 300_000);

  it('refuses a pool naming a test task before the run folder is made', async () => {
    const file = join(dir, 'leaky.txt');
    writeFileSync(file, `${pool[0]}\n${data.split.test[0]}\n`);
    const out = join(dir, 'leaky-run');
    const r = await seal(['train', ...tinyTrainFlags({ trainPool: file }), '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not tasks of the training split .*a pool may name training tasks only/);
    expect(existsSync(out)).toBe(false);
    const missing = await seal([
      'train',
      ...tinyTrainFlags({ trainPool: join(dir, 'nope.txt') }),
      '--out',
      out,
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope\.txt/);
    expect(existsSync(out)).toBe(false);
  }, 300_000);
});
