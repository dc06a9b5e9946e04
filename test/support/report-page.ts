/**
 * A report page as a reader sees it: opened offline in headless Chromium (Debian's), every chart
 * checked for ink, then handed to the test; anything the page complained of meanwhile fails it.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { ROOT } from './cli.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
interface ChartCheck {
  readonly id: string;
  readonly width: number;
  readonly height: number;
  /** pixels in a series' own colour: the data drawn, not just axes and grid */
  readonly inked: number;
  readonly rendered?: string;
  /** series of the chart's spec with at least one value */
  readonly withData: number;
}

interface PanelCheck {
  readonly title: string;
  readonly chart: boolean;
  readonly note: string | null;
}

export interface OpenReport {
  readonly page: Page;
  readonly charts: readonly ChartCheck[];
  readonly panels: readonly PanelCheck[];
}

/**
 * Opens a report offline in headless Chromium, hands it to `look`, and then fails on anything the
 * page complained of meanwhile: a page error, a console error or warning, any request at all.
 */
export async function inReport(file: string, look: (r: OpenReport) => Promise<void>, screenshot?: string) {
  const url = pathToFileURL(file).href;
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
    // uPlot draws in a microtask after the page's script ran: let every chart's draw (or throw) happen
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    const charts = (await page.evaluate(`(() => {
      const specs = JSON.parse(document.getElementById('report-data').textContent).charts;
      const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
      return [...document.querySelectorAll('.chart')].map((el) => {
        const c = el.querySelector('canvas');
        const spec = specs.find((s) => 'chart-' + s.id === el.id);
        const withData = spec ? spec.series.filter((s) => s.values.some((v) => v !== null && isFinite(v))).length : 0;
        if (!c || !spec) return { id: el.id, width: 0, height: 0, inked: 0, rendered: el.dataset.rendered, withData };
        const colours = spec.series.map((s) => rgb(s.color));
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let inked = 0;
        for (let i = 0; i < d.length; i += 4) {
          if (d[i + 3] < 250) continue;
          if (colours.some(([r, g, b]) => Math.abs(d[i] - r) + Math.abs(d[i + 1] - g) + Math.abs(d[i + 2] - b) < 12)) inked++;
        }
        return { id: el.id, width: c.width, height: c.height, inked, rendered: el.dataset.rendered, withData };
      });
    })()`)) as ChartCheck[];
    const panels = (await page.evaluate(`[...document.querySelectorAll('.panel')].map((p) => ({
      title: p.querySelector('h4').textContent,
      chart: !!p.querySelector('.chart canvas'),
      note: p.querySelector('.nodata') ? p.querySelector('.nodata').textContent : null,
    }))`)) as PanelCheck[];
    for (const c of charts) {
      expect(c, c.id).toMatchObject({ rendered: 'true' });
      expect(c.withData, c.id).toBeGreaterThan(0);
      expect(c.width, c.id).toBeGreaterThan(200);
      expect(c.height, c.id).toBeGreaterThan(100);
      // a lone point (a chart of one validation) is some 30 pixels
      expect(c.inked, c.id).toBeGreaterThan(20);
    }
    // every panel is a drawn chart or says in a line why there is none: never an empty legend
    for (const p of panels) expect(p.chart !== (p.note !== null), p.title).toBe(true);
    for (const p of panels) if (p.note !== null) expect(p.note.length, p.title).toBeGreaterThan(10);
    await look({ page, charts, panels });
    if (screenshot) {
      mkdirSync(join(ROOT, 'test-results'), { recursive: true });
      await page.screenshot({ path: screenshot, fullPage: true });
    }
    expect(problems).toEqual([]);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
  if (screenshot) expect(readFileSync(screenshot).subarray(1, 4).toString()).toBe('PNG');
}
