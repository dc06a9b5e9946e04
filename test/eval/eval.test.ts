// @module-tag bfcl-data
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolCallFormat } from '../../src/agent/format.js';
import { readFinished, runEval } from '../../src/bfcl/eval.js';
import { OpenAiCompatiblePolicy } from '../../src/policy/openai.js';
import { pairedTables, runDirName } from '../../src/train/experiment.js';
import { Rng } from '../../src/util/rng.js';
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
      JSON.stringify({
        suite: 'bfcl',
        model: 'other',
        format: 'native',
        split: 'multi_turn_base_0',
        sampling: { temperature: 0 },
      }),
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

/** every file of a folder with its bytes, to tell that a refused run left the folder as it was */
function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((name) => [name, readFileSync(join(dir, name), 'latin1')]),
  );
}

/** `seal eval` of the scripted server into `out`, with `more` flags after the usual ones */
const evalArgs = (url: string, split: string, out: string, ...more: string[]) => [
  'eval',
  '--split',
  split,
  '--model',
  'scripted',
  '--base-url',
  url,
  '--format',
  'hermes',
  '--timeout',
  '2',
  '--out',
  out,
  '--data-dir',
  DATA_DIR,
  ...more,
];

describe('an evaluation folder never contradicts itself', () => {
  beforeAll(async () => {
    await buildDist();
  });

  it('a resume with other settings is refused and leaves the folder as it was; --force starts it over', async () => {
    const behaviours: Record<string, Behaviour> = {
      multi_turn_base_0: 'gt',
      multi_turn_base_1: 'wrong',
      multi_turn_miss_func_3: 'gt',
    };
    const ids = Object.keys(behaviours).join(',');
    const server = await startFakeModelServer(bfclPlayer(data, behaviours, 'hermes'));
    try {
      const out = mkdtempSync(join(tmpdir(), 'seal-eval-settings-'));
      const first = await seal(evalArgs(server.url, ids, out));
      expect(first.code, first.stderr).toBe(0);
      const run = JSON.parse(readFileSync(join(out, 'run.json'), 'utf8'));
      expect(run).toMatchObject({ policy: 'server', split: ids, format: 'hermes' });
      writeFileSync(join(out, 'notes.txt'), 'mine\n');
      const before = snapshot(out);
      const refused: [string[], string][] = [
        [evalArgs(server.url, 'multi_turn_base_0', out), 'split'],
        [evalArgs(server.url, ids, out, '--format', 'python'), 'format'],
        [evalArgs(server.url, ids, out, '--temperature', '0.7'), 'sampling'],
        [evalArgs(server.url, ids, out, '--extra-body', '{"top_k": 5}'), 'extraBody'],
        [evalArgs(server.url, ids, out, '--model', 'other'), 'model'],
        [
          ['eval', '--suite', 'mini', '--policy', 'embedded', '--split', 'mini_base_0', '--out', out],
          'suite, split, policy, model, format',
        ],
      ];
      for (const [args, what] of refused) {
        const r = await seal(args);
        expect(r.code, `${what}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toContain(`holds a run with a different ${what} (`);
        expect(r.stderr).toContain('another --out folder');
        expect(r.stderr).toContain('--force');
        expect(snapshot(out), what).toEqual(before);
      }
      // the same settings resume (nothing left to run), a moved server included
      const again = await seal(evalArgs('http://127.0.0.1:9/v1', ids, out));
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('0 task(s) run, 3 kept from before');
      // a folder of an earlier build (no policy recorded) resumes on the settings it records
      const { policy: _, ...legacy } = JSON.parse(readFileSync(join(out, 'run.json'), 'utf8'));
      writeFileSync(join(out, 'run.json'), JSON.stringify(legacy));
      const old = await seal(evalArgs(server.url, ids, out));
      expect(old.stdout, old.stderr).toContain('0 task(s) run, 3 kept from before');

      const forced = await seal(evalArgs(server.url, 'multi_turn_base_1', out, '--force'));
      expect(forced.code, forced.stderr).toBe(0);
      expect(forced.stdout).toContain('1 task(s) run, 0 kept from before');
      expect(readFinished(out).size).toBe(1);
      expect(JSON.parse(readFileSync(join(out, 'run.json'), 'utf8')).split).toBe('multi_turn_base_1');
      const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
      expect(summary.categories.base).toEqual({ n: 1, accuracy: 0 });
      expect(readFileSync(join(out, 'notes.txt'), 'utf8')).toBe('mine\n');
    } finally {
      await server.close();
    }
  });

  it('results without their run.json are not adopted', async () => {
    const out = mkdtempSync(join(tmpdir(), 'seal-eval-orphan-'));
    writeFileSync(
      join(out, 'results.jsonl'),
      '{"id": "multi_turn_base_0", "valid": true, "trajectory": {}}\n',
    );
    const before = snapshot(out);
    const r = await seal(evalArgs('http://127.0.0.1:9/v1', 'multi_turn_base_0', out));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('but no run.json');
    expect(r.stderr).toContain('--force');
    expect(snapshot(out)).toEqual(before);
  });

  it('seal compare refuses a folder whose summary and results disagree, naming it and what to do', async () => {
    const behaviours: Record<string, Behaviour> = {
      multi_turn_base_0: 'gt',
      multi_turn_base_1: 'wrong',
      multi_turn_miss_param_4: 'gt',
    };
    const ids = Object.keys(behaviours).join(',');
    const server = await startFakeModelServer(bfclPlayer(data, behaviours, 'hermes'));
    try {
      const root = mkdtempSync(join(tmpdir(), 'seal-compare-mixed-'));
      const [whole, one] = [join(root, 'whole'), join(root, 'one')];
      for (const [dir, split] of [
        [whole, ids],
        [one, 'multi_turn_base_0'],
      ] as const) {
        const r = await seal(evalArgs(server.url, split, dir));
        expect(r.code, r.stderr).toBe(0);
      }
      // what an older build left: the three tasks' results under the one task's summary
      const mixed = join(root, 'mixed');
      cpSync(whole, mixed, { recursive: true });
      cpSync(join(one, 'summary.json'), join(mixed, 'summary.json'));
      const r = await seal(['compare', whole, mixed]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`${mixed} mixes runs: its summary.json counts 1 task(s), average 100.00`);
      expect(r.stderr).toContain('results.jsonl holds 3, average');
      expect(r.stderr).toContain(`Rerun \`seal eval\` into ${mixed}`);
      // a task twice: the summary still agrees with the last verdict, the results do not
      const twice = join(root, 'twice');
      cpSync(whole, twice, { recursive: true });
      const line = readFileSync(join(twice, 'results.jsonl'), 'utf8').split('\n')[0]!;
      appendFileSync(join(twice, 'results.jsonl'), `${line}\n`);
      const t = await seal(['compare', twice, whole]);
      expect(t.code).toBe(2);
      expect(t.stderr).toMatch(
        new RegExp(`${twice} mixes runs: its results.jsonl holds task \\S+ more than once`),
      );
    } finally {
      await server.close();
    }
  });

  it('seal compare and seal experiment give the same output whatever the order of the results lines', async () => {
    // 100 tasks, 25 per category, each run answering a seeded half of them. Whether a bootstrap
    // bound moves when the same verdicts are drawn in another order depends on where the bound falls
    // between two printable values: with seed 4 (11 won, 18 lost) it moved for 28 of 40 random
    // orders, so six shuffles all agree only when the order does not count
    const ids = ['base', 'miss_func', 'miss_param', 'long_context'].flatMap((c) =>
      data.tasks
        .filter((t) => t.category === c)
        .slice(0, 25)
        .map((t) => t.id),
    );
    const rng = new Rng(4, 'mulberry32');
    const runs = ['a', 'b'].map(() =>
      Object.fromEntries(ids.map((id) => [id, (rng.next() < 0.5 ? 'gt' : 'wrong') as Behaviour])),
    );
    const root = mkdtempSync(join(tmpdir(), 'seal-order-'));
    for (const [i, name] of ['a', 'b'].entries()) {
      const server = await startFakeModelServer(bfclPlayer(data, runs[i]!, 'hermes'));
      try {
        const r = await seal(
          evalArgs(server.url, ids.join(','), join(root, 'kept', name), '--concurrency', '8'),
        );
        expect(r.code, r.stderr).toBe(0);
      } finally {
        await server.close();
      }
    }
    // copies of both folders with their results lines in another order: a seeded shuffle, reversed
    const shuffle = (variant: number): string => {
      const to = join(root, `shuffled-${variant}`);
      for (const name of ['a', 'b']) {
        const dir = join(to, name);
        cpSync(join(root, 'kept', name), dir, { recursive: true });
        const lines = readFileSync(join(dir, 'results.jsonl'), 'utf8').trim().split('\n');
        const order = new Rng(100 * variant + name.charCodeAt(0), 'mulberry32');
        for (let i = lines.length - 1; i > 0; i--) {
          const j = Math.floor(order.next() * (i + 1));
          [lines[i], lines[j]] = [lines[j]!, lines[i]!];
        }
        writeFileSync(join(dir, 'results.jsonl'), `${lines.reverse().join('\n')}\n`);
      }
      return to;
    };
    const variants = [1, 2, 3, 4, 5, 6].map(shuffle);
    const compare = (from: string) => seal(['compare', join(from, 'a'), join(from, 'b')]);
    const kept = await compare(join(root, 'kept'));
    expect(kept.code, kept.stderr).toBe(0);
    // a comparison with something to resample: tasks won and lost, an interval of some width
    expect(kept.stdout).toMatch(/\| b +\| +100 \| +[1-9]\d* \| +[1-9]\d* \|.*\[-\d+\.\d\d, \+\d+\.\d\d\] \|/);
    for (const v of variants) expect((await compare(v)).stdout, v).toBe(kept.stdout);

    // seal experiment's tables, from experiment folders holding the same evaluations
    const experiment = (from: string) => {
      const dir = join(from, 'experiment');
      for (const method of ['seal', 'vanilla'] as const) {
        const run = join(dir, runDirName(method, 1));
        mkdirSync(run, { recursive: true });
        cpSync(join(from, 'a'), join(run, 'eval-start'), { recursive: true });
        cpSync(join(from, method === 'seal' ? 'b' : 'a'), join(run, 'eval-final'), { recursive: true });
      }
      return pairedTables(dir, ['seal', 'vanilla'], [1]);
    };
    const expected = experiment(join(root, 'kept'));
    for (const v of variants) expect(experiment(v), v).toBe(expected);
  });
});

afterAll(() => {});
