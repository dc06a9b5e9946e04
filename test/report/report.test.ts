import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATEGORIES, CATEGORY_TITLES } from '../../src/envs/bfcl/data/tasks.js';
import { turnMessages } from '../../src/envs/bfcl/episode.js';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { buildPage, DEFAULT_REPORT_OPTIONS, sampleRollouts } from '../../src/report/data.js';
import { escapeHtml, renderReport, scriptJson } from '../../src/report/html.js';
import { type LoadedRun, loadRun } from '../../src/report/load.js';
import type { RolloutRecord } from '../../src/train/record.js';
import { buildDist, ROOT, seal } from '../support/cli.js';
import { inReport } from '../support/report-page.js';
import { HOSTILE_TEXT, writeRunFixture } from '../support/runFixture.js';
import { tinyTrainFlags } from '../support/tiny-run.js';

const SCREENSHOT = join(ROOT, 'test-results', 'report.png');
const TRAIN_SCREENSHOT = join(ROOT, 'test-results', 'report-train.png');

const root = mkdtempSync(join(tmpdir(), 'seal-report-'));
const runs = {
  seal: join(root, 'seal'),
  vanilla: join(root, 'vanilla'),
  killed: join(root, 'killed'),
  tinker: join(root, 'tinker'),
  old: join(root, 'old'),
  train: join(root, 'train'),
};

beforeAll(async () => {
  writeRunFixture(runs.seal, { method: 'seal', seed: 1, rounds: 4 });
  writeRunFixture(runs.vanilla, { method: 'vanilla', seed: 2, rounds: 4 });
  writeRunFixture(runs.killed, { method: 'seal', seed: 3, rounds: 2, killedMidRound: true });
  writeRunFixture(runs.tinker, { method: 'seal', seed: 4, rounds: 3, learner: 'tinker' });
  writeRunFixture(runs.old, { method: 'seal', seed: 5, rounds: 2, old: true });
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
    expect(notRun.stderr).toContain(`${root} is not a seal train or seal eval folder: it has no run.json`);
    expect(notRun.stderr).not.toMatch(/\n\s+at /);

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

describe('series and charts with no data', () => {
  it('leaves out a series with no value, and says in a line why a chart with none is not drawn', () => {
    const run = loadRun(runs.seal);
    // an embedded run whose rounds never trained a token: no ratio, and no learner KL either
    const untrained: LoadedRun = {
      ...run,
      rounds: run.rounds.map((rd) => {
        const { meanRatio: _, ...learner } = rd.learner;
        return { ...rd, learner };
      }),
    };
    const page = buildPage([untrained, loadRun(runs.tinker)]);
    const agreement = page.training.find((c) => c.id === 'training-agreement')!;
    expect(agreement.series.map((s) => s.label)).toEqual(['tinker', 'tinker KL']);

    const alone = buildPage([untrained]);
    const empty = alone.training.find((c) => c.id === 'training-agreement')!;
    expect(empty.series).toEqual([]);
    const text = renderReport(alone);
    expect(text).toContain(`<div class="nodata">${escapeHtml(empty.nodata)}</div>`);
    expect(empty.nodata).toMatch(/^no sampler\/trainer comparison: /);
    expect(text).not.toContain('id="chart-training-agreement"');
    const data = JSON.parse(text.match(/id="report-data" type="application\/json">(.*?)<\/script>/s)![1]!);
    expect(data.charts.map((c: { id: string }) => c.id)).not.toContain('training-agreement');
    // every chart the page carries has a series with a value
    for (const c of data.charts as { id: string; series: { values: (number | null)[] }[] }[])
      expect(
        c.series.some((s) => s.values.some((v) => v !== null)),
        c.id,
      ).toBe(true);
  });
});

describe('the accuracy panels', () => {
  it('keep the test evaluations and the dev validations apart, each named with its split and size', () => {
    const run = loadRun(runs.seal);
    const page = buildPage([run]);
    const base = page.accuracy.find((c) => c.id === 'accuracy-base')!;
    // rounds 0 (eval-start), 2 and 4 (validations) and 4 (eval-final)
    expect(base.x).toEqual([0, 2, 4]);
    const [test, validation] = base.series;
    expect(base.series.map((s) => s.label)).toEqual([
      'seal: test, 24 tasks',
      'seal: validation, 12 dev tasks, seed 1',
    ]);
    const at = (values: readonly (number | null)[], round: number) => values[base.x.indexOf(round)];
    const summaryOf = (dir: string) => JSON.parse(readFileSync(join(runs.seal, dir, 'summary.json'), 'utf8'));
    // the test series holds the two full evaluations and nothing between them
    expect(at(test!.values, 0)).toBe(summaryOf('eval-start').categories.base.accuracy);
    expect(at(test!.values, 2)).toBeNull();
    expect(at(test!.values, 4)).toBe(summaryOf('eval-final').categories.base.accuracy);
    // the last round's validation is drawn beside the final evaluation, not replaced by it
    expect(at(validation!.values, 0)).toBeNull();
    expect(at(validation!.values, 2)).toBe(summaryOf('validation/round-0002').categories.base.accuracy);
    expect(at(validation!.values, 4)).toBe(summaryOf('validation/round-0004').categories.base.accuracy);
    expect(validation!.dash).toBe(true);
    expect(test!.dash).toBeUndefined();
  });
});

describe('the abstention panel', () => {
  it("draws each validation's share of turns answered without a call, per category", () => {
    const run = loadRun(runs.seal);
    const chart = buildPage([run]).accuracy.find((c) => c.id === 'accuracy-abstention')!;
    const validated = run.rounds.filter((r) => r.validation?.abstention);
    expect(chart.x).toEqual(validated.map((r) => r.round));
    expect(chart.series.length).toBeGreaterThan(0);
    for (const series of chart.series) {
      const title = series.label.replace(/^seal /, '');
      const category = CATEGORIES.find((c) => CATEGORY_TITLES[c] === title)!;
      expect(category, series.label).toBeDefined();
      const expected = validated.map((r) => {
        const a = r.validation!.abstention![category];
        return a && a.turns > 0 ? a.abstained / a.turns : null;
      });
      expect(series.values, series.label).toEqual(expected);
      // a share, drawn on a 0..1 axis
      for (const v of series.values) if (v !== null) expect(v).toBeGreaterThanOrEqual(0);
    }
    // the first category solid, the others dashed
    expect(chart.series[0]!.dash).toBeUndefined();
    // a run recorded before the count has no panel at all
    expect(buildPage([loadRun(runs.old)]).accuracy.map((c) => c.id)).not.toContain('accuracy-abstention');
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

/** the series labels of a chart in the page's data */
async function seriesOf(page: Page, id: string): Promise<string[]> {
  return (await page.evaluate(
    `JSON.parse(document.getElementById('report-data').textContent).charts.find((c) => c.id === ${JSON.stringify(id)})?.series.map((s) => s.label) ?? []`,
  )) as string[];
}

/** opens the first round of a run, then its first rollout, and returns that rollout */
async function openFirstRollout(page: Page, run: string) {
  const round = page.locator(`#${run} details.round`).first();
  await round.locator('summary').first().click();
  const rollout = round.locator('details.rollout').first();
  await rollout.locator('summary').click();
  expect(await rollout.getAttribute('open')).not.toBeNull();
  await expect.poll(() => rollout.locator('.turn .step').first().isVisible()).toBe(true);
  return { round, rollout };
}

describe('the report in headless Chromium', () => {
  it('loads offline with no errors, draws every chart, expands trajectories, keeps model output inert', async () => {
    const out = join(root, 'report.html');
    const r = await seal(['report', runs.seal, runs.vanilla, runs.killed, '--out', out, '--rollouts', '6']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);

    await inReport(
      out,
      async ({ page, charts, panels }) => {
        // 5 accuracy panels (average + 4 categories) and the abstention curve, 11 training charts (tokens and sampler
        // against trainer among them), per run: labels, w_j, timings
        expect(charts).toHaveLength(5 + 1 + 11 + 3 * 3);
        expect(panels.filter((p) => p.note !== null)).toEqual([]);
        // the embedded learner's ratio differs from 1 by 1e-8: drawn, not a page error
        expect(charts.find((c) => c.id === 'chart-training-agreement')).toBeDefined();
        // what an embedded learner does not report is left out, not drawn as zeros
        const tokens = await seriesOf(page, 'training-usage');
        expect(tokens).toContain('seal prompt');
        expect(tokens.filter((l) => /cached|KL prefill/.test(l))).toEqual([]);
        expect(await seriesOf(page, 'training-agreement')).toEqual(['seal', 'vanilla', 'killed']);
        // the full test evaluations and the dev validations are two series a run, named with their split
        const accuracy = ['seal', 'vanilla', 'killed'].flatMap((name, i) => [
          `${name}: test, 24 tasks`,
          `${name}: validation, 12 dev tasks, seed ${i + 1}`,
        ]);
        expect(await seriesOf(page, 'accuracy-base')).toEqual(accuracy);
        const legend = await page.locator('#chart-accuracy-base .u-legend .u-label').allTextContents();
        expect(legend).toEqual(['round', ...accuracy]);

        // the trajectory browser: a round, then a rollout, opens onto its turns and steps
        const { round, rollout } = await openFirstRollout(page, 'run1');
        expect(await rollout.locator('.turn-head .lbl').count()).toBeGreaterThan(0);
        expect(await round.locator('details.rollout').count()).toBe(6);
        // each turn's request above its steps
        const turns = rollout.locator('.turn');
        expect(await turns.first().locator('pre.msg[data-role="user"]').count()).toBe(1);
        expect(await rollout.locator('pre.msg').count()).toBe(await turns.count());

        // hostile model output and config values are shown as text and never run
        const hostile = page.locator('pre.raw', { hasText: 'window.__pwned = 1' });
        expect(await hostile.count()).toBeGreaterThan(0);
        expect(await hostile.first().textContent()).toBe(HOSTILE_TEXT);
        expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
        expect(await page.evaluate(`document.querySelectorAll('img, b').length`)).toBe(0);
        expect(await page.evaluate(`document.scripts.length`)).toBe(3);
      },
      SCREENSHOT,
    );
  });

  it('draws a Tinker run with its own series (cache hits, KL prefill, sampler KL) beside an embedded one', async () => {
    const out = join(root, 'tinker.html');
    const r = await seal(['report', runs.tinker, runs.seal, '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    await inReport(out, async ({ page, panels }) => {
      expect(panels.filter((p) => p.note !== null)).toEqual([]);
      const tokens = await seriesOf(page, 'training-usage');
      expect(tokens).toEqual(
        expect.arrayContaining(['tinker cached (service)', 'tinker KL prefill', 'seal prompt']),
      );
      expect(tokens.filter((l) => l.startsWith('seal ') && /cached|KL prefill/.test(l))).toEqual([]);
      expect(await seriesOf(page, 'training-agreement')).toEqual(['tinker', 'seal', 'tinker KL']);
      expect(await page.locator('#run1 table.facts').first().textContent()).toMatch(/KL prefill/);
    });
  });

  it('renders a run recorded before turns kept their request (and rounds their usage)', async () => {
    const r = await seal(['report', runs.old]);
    expect(r.code).toBe(0);
    await inReport(join(runs.old, 'report.html'), async ({ page, charts }) => {
      expect(charts.map((c) => c.id)).not.toContain('chart-training-usage');
      const { rollout } = await openFirstRollout(page, 'run1');
      expect(await rollout.locator('.turn').count()).toBeGreaterThan(0);
      expect(await rollout.locator('pre.msg').count()).toBe(0);
    });
  });

  it('opens the report of a real short `seal train` with every panel drawn or explained', async () => {
    const flags = tinyTrainFlags({ groupSize: 4 });
    const r = await seal(['train', '--out', runs.train, ...flags]);
    expect(r.code, r.stderr).toBe(0);

    // every turn's request is recorded: the messages that opened it, as the policy saw them
    const data = loadMiniSuite();
    const lines = readdirSync(join(runs.train, 'rollouts'))
      .sort()
      .flatMap((f) =>
        readFileSync(join(runs.train, 'rollouts', f), 'utf8')
          .trim()
          .split('\n'),
      );
    expect(lines.length).toBe(2 * 2 * 4);
    for (const line of lines) {
      const row = JSON.parse(line) as RolloutRecord;
      const task = data.byId.get(row.taskId)!;
      expect(row.trajectory.turns.map((t) => t.request)).toEqual(
        row.trajectory.turns.map((t) => turnMessages(task, t.turn)),
      );
    }

    // the report `seal train` wrote itself
    await inReport(
      join(runs.train, 'report.html'),
      async ({ page, charts }) => {
        expect(charts.length).toBeGreaterThanOrEqual(5 + 9 + 2);
        const { rollout } = await openFirstRollout(page, 'run1');
        const first = lines
          .map((l) => JSON.parse(l) as RolloutRecord)
          .find((x) => x.round === 1 && x.group === 0 && x.sample === 0)!;
        const request = rollout.locator('.turn').first().locator('pre.msg').first();
        expect(await request.textContent()).toBe(first.trajectory.turns[0]!.request![0]!.content);
        expect(await request.isVisible()).toBe(true);
      },
      TRAIN_SCREENSHOT,
    );
  });
});
