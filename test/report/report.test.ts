import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPage, DEFAULT_REPORT_OPTIONS, sampleRollouts } from '../../src/report/data.js';
import { escapeHtml, renderReport, scriptJson } from '../../src/report/html.js';
import { type LoadedRun, loadRun } from '../../src/report/load.js';
import type { RolloutRecord } from '../../src/train/record.js';
import { buildDist, ROOT, seal } from '../support/cli.js';
import { HOSTILE_TEXT, writeRunFixture } from '../support/runFixture.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const SCREENSHOT = join(ROOT, 'test-results', 'report.png');

const root = mkdtempSync(join(tmpdir(), 'seal-report-'));
const runs = { seal: join(root, 'seal'), vanilla: join(root, 'vanilla'), killed: join(root, 'killed') };

beforeAll(async () => {
  writeRunFixture(runs.seal, { method: 'seal', seed: 1, rounds: 4 });
  writeRunFixture(runs.vanilla, { method: 'vanilla', seed: 2, rounds: 4 });
  writeRunFixture(runs.killed, { method: 'seal', seed: 3, rounds: 2, killedMidRound: true });
  await buildDist();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('loading a run folder', () => {
  it('reports the completed rounds of a run killed mid-round, and leaves the torn files as they were', () => {
    const before = readFileSync(join(runs.killed, 'rounds.jsonl'), 'utf8');
    const run = loadRun(runs.killed);
    expect(run.rounds.map((r) => r.round)).toEqual([1, 2]);
    expect(run.droppedRoundLines).toBe(1);
    expect(run.unfinishedRound).toBe(3);
    expect(run.rollouts.map((r) => r.rollouts.length)).toEqual([16, 16]);
    expect(run.evalStart).toBeDefined();
    expect(run.evalFinal).toBeUndefined();
    expect(run.validation.map((v) => v.round)).toEqual([2]);
    expect(readFileSync(join(runs.killed, 'rounds.jsonl'), 'utf8')).toBe(before);
  });

  it('refuses folders that are not runs, naming the folder and what is missing (exit 2)', async () => {
    const notRun = await seal(['report', root]);
    expect(notRun.code).toBe(2);
    expect(notRun.stderr).toContain(`${root} is not a seal train run folder: it has no run.json`);
    expect(notRun.stderr).not.toMatch(/\n\s+at /);

    const evalFolder = join(runs.seal, 'eval-start');
    const evalRun = await seal(['report', runs.seal, evalFolder, '--out', join(root, 'none.html')]);
    expect(evalRun.code).toBe(2);
    expect(evalRun.stderr).toContain(`${evalFolder} is a \`seal eval\` folder`);

    const badFlag = await seal(['report', runs.seal, '--rollouts', '0']);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toContain('--rollouts must be an integer >= 1, got "0"');

    const missing = await seal(['report', join(root, 'nope')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`${join(root, 'nope')}: no such folder`);
    expect(existsSync(join(root, 'none.html'))).toBe(false);
  });

  it('writes report.html into a single run folder by default', async () => {
    const r = await seal(['report', runs.killed]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('killed: 2 round(s)');
    const text = readFileSync(join(runs.killed, 'report.html'), 'utf8');
    expect(text).toContain('it was interrupted');
  });
});

describe('page building blocks', () => {
  it('escapes markup and keeps inlined JSON from closing its script element', () => {
    expect(escapeHtml(`<img src="x" onerror='y'>&`)).toBe(
      '&lt;img src=&quot;x&quot; onerror=&#39;y&#39;&gt;&amp;',
    );
    const json = scriptJson({ text: '</script><!-- \u2028' });
    expect(json).not.toContain('<');
    expect(JSON.parse(json)).toEqual({ text: '</script><!-- \u2028' });
  });

  it('samples a round up to the cap with successes and failures both shown, in group order', () => {
    const rollout = (group: number, sample: number, reward: 0 | 1) =>
      ({ group, sample, reward }) as RolloutRecord;
    const all = Array.from({ length: 8 }, (_, g) =>
      Array.from({ length: 8 }, (_, s) => rollout(g, s, s === 0 && g < 2 ? 1 : 0)),
    ).flat();
    const shown = sampleRollouts(all, 6);
    expect(shown).toHaveLength(6);
    expect(shown.filter((r) => r.reward === 1)).toHaveLength(2);
    expect(new Set(shown.map((r) => r.group)).size).toBeGreaterThan(3);
    expect(shown.map((r) => r.group * 8 + r.sample)).toEqual(
      [...shown.map((r) => r.group * 8 + r.sample)].sort((a, b) => a - b),
    );
    expect(sampleRollouts(all.slice(0, 4), 6)).toHaveLength(4);
  });
});

describe('the run facts', () => {
  it('name the supervised control (policy gradient off) for what it is', () => {
    const run = loadRun(runs.vanilla);
    const method = (r: LoadedRun) => buildPage([r]).runs[0]!.facts.find(([k]) => k === 'method')![1];
    expect(method(run)).toBe('vanilla');
    const control: LoadedRun = {
      ...run,
      manifest: { ...run.manifest, config: { ...run.manifest.config, policyGradient: false } },
    };
    expect(method(control)).toBe('vanilla, policy gradient off: the supervised anchor alone (the control)');
  });
});

describe('the size of the page', () => {
  it('stays bounded for a long run with long model output: fewer rollouts per round, text cut', () => {
    const run = loadRun(runs.seal);
    const long = 'x'.repeat(50_000);
    const rounds = Array.from({ length: 60 }, (_, i) => ({
      ...run.rounds[i % run.rounds.length]!,
      round: i + 1,
    }));
    const rollouts = rounds.map((rd, i) => ({
      round: rd.round,
      dropped: 0,
      rollouts: run.rollouts[i % run.rollouts.length]!.rollouts.map((r) => ({
        ...r,
        trajectory: {
          ...r.trajectory,
          turns: r.trajectory.turns.map((t) => ({
            ...t,
            steps: t.steps.map((st) => ({ ...st, rawText: long })),
          })),
        },
      })),
    }));
    const big: LoadedRun = { ...run, rounds, rollouts };
    const page = buildPage([big]);
    const perRound = DEFAULT_REPORT_OPTIONS.rolloutsPerRun / 60;
    expect(page.runs[0]!.browser.every((b) => b.shown.length === perRound)).toBe(true);
    const texts = page.runs[0]!.browser.flatMap((b) =>
      b.shown.flatMap((r) => r.turns.flatMap((t) => t.steps.map((st) => st.rawText ?? ''))),
    );
    expect(Math.max(...texts.map((t) => t.length))).toBeLessThan(DEFAULT_REPORT_OPTIONS.maxTextChars + 40);
    expect(texts[0]).toMatch(/… \[48000 more characters\]$/);
    expect(renderReport(page).length).toBeLessThan(8 << 20);
  });
});

describe('the report in headless Chromium', () => {
  it('loads offline with no errors, draws every chart, expands trajectories, keeps model output inert', async () => {
    const out = join(root, 'report.html');
    const r = await seal(['report', runs.seal, runs.vanilla, runs.killed, '--out', out, '--rollouts', '6']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const url = pathToFileURL(out).href;

    const profile = mkdtempSync(join(tmpdir(), 'seal-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
      headless: true,
      viewport: { width: 1400, height: 1000 },
    });
    try {
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('requestfailed', (q) => problems.push(`request failed: ${q.url()}`));
      page.on('request', (q) => {
        if (q.url() !== url) problems.push(`request: ${q.url()}`);
      });
      await page.goto(url, { waitUntil: 'load' });

      // 5 accuracy panels (average + 4 categories), 9 training charts, per run: labels, w_j, timings
      // "drew something" means the data: pixels in a series' own colour, not just axes and grid
      const charts = (await page.evaluate(`(() => {
        const specs = JSON.parse(document.getElementById('report-data').textContent).charts;
        const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
        return [...document.querySelectorAll('.chart')].map((el) => {
          const c = el.querySelector('canvas');
          const spec = specs.find((s) => 'chart-' + s.id === el.id);
          if (!c || !spec) return { id: el.id, width: 0, height: 0, inked: 0, rendered: el.dataset.rendered };
          const colours = spec.series.map((s) => rgb(s.color));
          const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
          let inked = 0;
          for (let i = 0; i < d.length; i += 4) {
            if (d[i + 3] < 250) continue;
            if (colours.some(([r, g, b]) => Math.abs(d[i] - r) + Math.abs(d[i + 1] - g) + Math.abs(d[i + 2] - b) < 12)) inked++;
          }
          return { id: el.id, width: c.width, height: c.height, inked, rendered: el.dataset.rendered };
        });
      })()`)) as { id: string; width: number; height: number; inked: number; rendered?: string }[];
      expect(charts).toHaveLength(5 + 9 + 3 * 3);
      for (const c of charts) {
        expect(c, c.id).toMatchObject({ rendered: 'true' });
        expect(c.width, c.id).toBeGreaterThan(200);
        expect(c.height, c.id).toBeGreaterThan(100);
        expect(c.inked, c.id).toBeGreaterThan(50);
      }

      // the trajectory browser: a round, then a rollout, opens onto its turns and steps
      const round = page.locator('#run1 details.round').first();
      await round.locator('summary').first().click();
      const rollout = round.locator('details.rollout').first();
      await rollout.locator('summary').click();
      expect(await rollout.getAttribute('open')).not.toBeNull();
      await expect.poll(() => rollout.locator('.turn .step').first().isVisible()).toBe(true);
      expect(await rollout.locator('.turn-head .lbl').count()).toBeGreaterThan(0);
      expect(await round.locator('details.rollout').count()).toBe(6);

      // hostile model output and config values are shown as text and never run
      const hostile = page.locator('pre.raw', { hasText: 'window.__pwned = 1' });
      expect(await hostile.count()).toBeGreaterThan(0);
      expect(await hostile.first().textContent()).toBe(HOSTILE_TEXT);
      expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
      expect(await page.evaluate(`document.querySelectorAll('img, b').length`)).toBe(0);
      expect(await page.evaluate(`document.scripts.length`)).toBe(3);

      mkdirSync(join(ROOT, 'test-results'), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    }
    expect(readFileSync(SCREENSHOT).subarray(1, 4).toString()).toBe('PNG');
  });
});
