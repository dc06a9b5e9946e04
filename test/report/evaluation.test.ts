/**
 * `seal report` on `seal eval` folders, as a user gets them: a BFCL multi-turn evaluation and a
 * τ² evaluation with two trials, each written by the real `seal eval` against scripted models on
 * loopback, then reported together and opened in headless Chromium. The scores on the page are
 * the folders' own summaries; a folder whose run was killed is reported from its finished lines.
 */
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EpisodeSummary } from '../../src/eval/episodes.js';
import { type Behaviour, bfclPlayer } from '../support/bfclPlayer.js';
import { buildDist, ROOT, seal } from '../support/cli.js';
import {
  type ChatRequestBody,
  type FakeModelServer,
  startFakeModelServer,
} from '../support/fakeModelServer.js';
import { DATA_DIR, sharedData } from '../support/golden.js';
import { inReport } from '../support/report-page.js';
import { HAS_TAU2, noteMissingTau2, TAU2_ROOT } from '../support/tau2-data.js';

noteMissingTau2('seal report on a τ² evaluation');

const HOSTILE = '<img src=x onerror="window.__pwned = 1"><b>bold?</b>';
const BEHAVIOURS: Record<string, Behaviour> = {
  multi_turn_base_0: 'gt',
  multi_turn_base_1: 'wrong',
  multi_turn_base_2: 'malformed',
};
const TAU2_TASKS = 'retail/0,retail/1,airline/0';

const root = mkdtempSync(join(tmpdir(), 'seal-eval-report-'));
const dirs = { bfcl: join(root, 'bfcl-eval'), tau2: join(root, 'tau2-eval'), killed: join(root, 'killed') };
const servers: FakeModelServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  rmSync(root, { recursive: true, force: true });
});

/** The agent: one calculation, then an answer with markup in it. */
function agent(body: ChatRequestBody) {
  const msgs = body.messages ?? [];
  if (!msgs.some((m) => m.role === 'tool'))
    return { toolCalls: [{ id: 'c1', name: 'calculate', arguments: { expression: '2 + 2' } }] };
  return { content: `The answer is 4. ${HOSTILE}` };
}

/** The user: asks, then stops. */
function user(body: ChatRequestBody) {
  const own = (body.messages ?? []).filter((m) => m.role === 'assistant');
  return { content: own.length === 0 ? 'Hi, I need help with my order.' : 'Thanks. ###STOP###' };
}

beforeAll(async () => {
  await buildDist();
  const data = sharedData();
  const bfclModel = await startFakeModelServer(bfclPlayer(data, BEHAVIOURS, 'hermes'));
  servers.push(bfclModel);
  const b = await seal([
    'eval',
    '--split',
    Object.keys(BEHAVIOURS).join(','),
    '--model',
    'scripted',
    '--base-url',
    bfclModel.url,
    '--format',
    'hermes',
    '--data-dir',
    DATA_DIR,
    '--out',
    dirs.bfcl,
  ]);
  expect(b.code, b.stderr).toBe(0);
  if (!HAS_TAU2) return;
  const agentModel = await startFakeModelServer(agent);
  const userModel = await startFakeModelServer(user);
  servers.push(agentModel, userModel);
  const t = await seal(
    [
      'eval',
      '--suite',
      'tau2',
      '--tau2-data',
      TAU2_ROOT,
      '--split',
      TAU2_TASKS,
      '--trials',
      '2',
      '--model',
      'scripted-agent',
      '--base-url',
      agentModel.url,
      '--user-model',
      'scripted-user',
      '--user-base-url',
      userModel.url,
      '--out',
      dirs.tau2,
    ],
    { OPENAI_API_KEY: 'test' },
  );
  expect(t.code, t.stderr).toBe(0);
}, 120_000);

const readSummary = (dir: string) => JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as unknown;

describe('an evaluation folder keeps the chat', () => {
  it.runIf(HAS_TAU2)('each τ² episode line holds the chat after the system prompt', () => {
    const lines = readFileSync(join(dirs.tau2, 'episodes.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(6);
    const chat = (JSON.parse(lines[0]!) as { chat: { role: string; content: string | null }[] }).chat;
    expect(chat.map((m) => m.role)).not.toContain('system');
    expect(chat.some((m) => m.role === 'user' && m.content === 'Hi, I need help with my order.')).toBe(true);
    expect(chat.some((m) => m.role === 'tool')).toBe(true);
  });
});

describe('seal report on evaluation folders', () => {
  it.runIf(HAS_TAU2)(
    'shows each folder’s scores, the two side by side, and every kind of episode, with model output inert',
    async () => {
      const out = join(root, 'evals.html');
      const r = await seal(['report', dirs.bfcl, dirs.tau2, '--out', out]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('bfcl-eval: 3 episode(s), tau2-eval: 6 episode(s)');
      const tau2 = readSummary(dirs.tau2) as EpisodeSummary;
      const bfcl = readSummary(dirs.bfcl) as { categories: { base: { accuracy: number } }; average: number };

      await inReport(
        out,
        async ({ page, charts }) => {
          // evaluations only: no train charts at all
          expect(charts).toEqual([]);
          const rows = await page.$$eval('h2 + p.note + table.scores tbody tr', (trs) =>
            trs.map((tr) => [...tr.children].map((c) => c.textContent)),
          );
          expect(rows).toEqual([
            ['Base', bfcl.categories.base.accuracy.toFixed(2), '-'],
            ...tau2.groups
              .filter((g) => g.episodes > 0)
              .map((g) => [g.group, '-', g.averageReward.toFixed(2)]),
            ['average', bfcl.average.toFixed(2), tau2.average.toFixed(2)],
          ]);
          expect(bfcl.categories.base.accuracy).toBeCloseTo(100 / 3, 2);

          // finished folders: their own summaries, nothing to warn of
          expect(await page.locator('.warn').count()).toBe(0);
          // τ²: per domain the average reward and pass^1, pass^2 (two trials)
          const heads = await page.$$eval('#run2 table.scores thead th', (ths) =>
            ths.map((t) => t.textContent),
          );
          expect(heads).toEqual(['', 'average reward', 'tasks', 'episodes', 'pass^1', 'pass^2']);
          const retail = tau2.groups.find((g) => g.group === 'retail')!;
          const retailRow = await page.$$eval('#run2 table.scores tbody tr', (trs) =>
            trs
              .map((tr) => [...tr.children].map((c) => c.textContent))
              .find((cells) => cells[0] === 'retail'),
          );
          expect(retailRow).toEqual([
            'retail',
            retail.averageReward.toFixed(2),
            '2',
            '4',
            ...retail.passHatK.map((p) => p.toFixed(2)),
          ]);

          // a τ² episode opens onto its chat: the user's words, the call, the answer as text
          const group = page.locator('#run2 details.round').first();
          await group.locator('summary').first().click();
          expect(await group.locator('summary').first().textContent()).toMatch(
            /^retail: \d of 4 solved \(4 shown\)$/,
          );
          const episode = group.locator('details.rollout').first();
          await episode.locator('summary').first().click();
          expect(await episode.locator('pre.msg[data-role="user"]').first().textContent()).toBe(
            'Hi, I need help with my order.',
          );
          expect(await episode.locator('pre.call-text').first().textContent()).toBe(
            'calculate({"expression":"2 + 2"})',
          );
          expect(await episode.locator('pre.msg[data-role="tool"]').first().textContent()).toBe('4.0');
          const answer = episode.locator('pre.msg[data-role="assistant"]', { hasText: 'The answer is 4.' });
          expect(await answer.textContent()).toBe(`The answer is 4. ${HOSTILE}`);
          await episode.locator('details summary', { hasText: 'Verdict breakdown' }).click();
          expect(await episode.locator('details pre').last().textContent()).toContain('"reward_basis"');
          expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
          expect(await page.evaluate(`document.querySelectorAll('img, b').length`)).toBe(0);

          // a BFCL task opens onto its turns, with the diagnosis's labels
          const base = page.locator('#run1 details.round').first();
          await base.locator('summary').first().click();
          expect(await base.locator('summary').first().textContent()).toBe('base: 1 of 3 solved (3 shown)');
          const task = base.locator('details.rollout', { hasText: 'multi_turn_base_0' });
          await task.locator('summary').first().click();
          expect(await task.locator('.turn').count()).toBeGreaterThan(1);
          expect(await task.locator('.turn-head .lbl').first().textContent()).toBe('pass');
        },
        join(ROOT, 'test-results', 'report-eval.png'),
      );
    },
    60_000,
  );

  it.runIf(HAS_TAU2)('reports a killed evaluation from its finished lines, and says so', async () => {
    cpSync(dirs.tau2, dirs.killed, { recursive: true });
    rmSync(join(dirs.killed, 'summary.json'));
    // the lines in the order airline's episodes ended first: the page keeps the suite's order
    const lines = readFileSync(join(dirs.killed, 'episodes.jsonl'), 'utf8').trim().split('\n');
    const airlineFirst = [
      ...lines.filter((l) => l.includes('"airline"')),
      ...lines.filter((l) => !l.includes('"airline"')),
    ];
    writeFileSync(join(dirs.killed, 'episodes.jsonl'), `${airlineFirst.join('\n')}\n`);
    appendFileSync(join(dirs.killed, 'episodes.jsonl'), '{"task_id": "retail/1", "tri');
    const before = readFileSync(join(dirs.killed, 'episodes.jsonl'), 'utf8');
    const r = await seal(['report', dirs.killed]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('killed: 6 episode(s)');
    const text = readFileSync(join(dirs.killed, 'report.html'), 'utf8');
    expect(text).toContain('No summary.json yet');
    expect(text).toContain('1 line(s) of the results could not be read');
    const summaries = [...text.matchAll(/<summary>(\w+): \d of \d solved/g)].map((m) => m[1]);
    expect(summaries).toEqual(['retail', 'airline']);
    const tau2 = readSummary(dirs.tau2) as EpisodeSummary;
    expect(text).toContain(`<th>average</th><td class="num">${tau2.average.toFixed(2)}</td>`);
    // read only: the torn line is still there for the resume to repair
    expect(readFileSync(join(dirs.killed, 'episodes.jsonl'), 'utf8')).toBe(before);
  });

  it('refuses a folder whose run.json is neither a run nor an evaluation, and writes nothing', async () => {
    const odd = join(root, 'odd');
    mkdirSync(odd);
    writeFileSync(join(odd, 'run.json'), '{"name": "something else"}\n');
    const out = join(root, 'none.html');
    const r = await seal(['report', dirs.bfcl, odd, '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${odd} is not a seal train or seal eval folder`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const bad = await seal(['report', dirs.bfcl, '--episodes', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--episodes must be an integer >= 1, got "0"');
  });
});
