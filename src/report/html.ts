/**
 * The page itself: one HTML file with uPlot, the chart script, the styles and the data inlined, so
 * it opens from disk with no network. Every value goes through the `html` template, which escapes
 * whatever is not markup built here, so model output in the record stays text. A Content Security
 * Policy that admits only the page's own two scripts (by hash) is the second line of defence.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { LABELS } from '../seal/labels.js';
import { CLIENT_SCRIPT } from './client.js';
import {
  type BrowserRound,
  type ChartSpec,
  type ChatLineView,
  type EpisodeView,
  type EvalPage,
  LABEL_COLORS,
  type PageData,
  type RolloutView,
  type RunPage,
  type ScoreTable,
  type Timeline,
  type TurnView,
} from './data.js';

class Markup {
  constructor(readonly text: string) {}
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function piece(v: unknown): string {
  if (v instanceof Markup) return v.text;
  if (Array.isArray(v)) return v.map(piece).join('');
  if (v === null || v === undefined || v === false) return '';
  return escapeHtml(String(v));
}

/** Markup from a template whose interpolated values are escaped (unless they are Markup themselves). */
function html(strings: TemplateStringsArray, ...values: unknown[]): Markup {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += piece(v) + strings[i + 1]!;
  });
  return new Markup(out);
}

const num = (x: unknown, digits = 2): string =>
  typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : '-';

/** JSON inside a script element: `<` escaped so no `</script>` or `<!--` in the data can end it. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const sha256 = (s: string) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`;

export interface Assets {
  readonly uplotJs: string;
  readonly uplotCss: string;
}

export function loadAssets(): Assets {
  const require = createRequire(import.meta.url);
  const read = (p: string) => readFileSync(require.resolve(p), 'utf8');
  const uplotJs = read('uplot/dist/uPlot.iife.min.js');
  // inlined verbatim, so it must not be able to close its own script element
  if (/<\/script|<!--/i.test(uplotJs))
    throw new Error('uPlot bundle cannot be inlined: contains </script or <!--');
  return { uplotJs, uplotCss: read('uplot/dist/uPlot.min.css') };
}

const STYLE = `
:root { --fg: #1d232b; --muted: #5b6673; --line: #d7dce2; --bg: #fff; --soft: #f4f6f8; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); margin: 0; padding: 0 24px 48px; max-width: 1500px; }
h1 { font-size: 22px; margin: 20px 0 4px; }
h2 { font-size: 18px; margin: 32px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 20px 0 6px; }
p.note, .muted { color: var(--muted); }
p.note { margin: 4px 0 12px; max-width: 110ch; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: -1px; margin-right: 4px; }
.runs-list span { margin-right: 16px; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(420px, 1fr)); gap: 12px 20px; }
.panel { min-width: 0; }
.panel h4 { margin: 8px 0 2px; font-size: 13px; }
.chart { min-width: 0; overflow: hidden; }
.chart .u-legend { font-size: 11px; line-height: 1.2; }
.chart .u-legend .u-series { padding: 0 4px; }
.chart .u-legend .u-series th { font-weight: normal; }
.chart .u-legend .u-series td { min-width: 3.5em; color: var(--muted); }
.nodata { color: var(--muted); font-style: italic; padding: 24px 0; }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.facts td:first-child { color: var(--muted); white-space: nowrap; }
table.facts td { max-width: 900px; overflow-wrap: anywhere; }
.warn { background: #fff4d6; border: 1px solid #f0d48a; padding: 6px 10px; border-radius: 4px; margin: 6px 0; }
.run-section { border-left: 4px solid var(--run); padding-left: 14px; margin-top: 28px; }
table.timeline td.on { background: #cfe3f6; }
table.timeline td.on.evolved { background: #9cc7ee; }
table.timeline td.on.guideline { background: #f6d9b0; }
table.timeline td { min-width: 26px; text-align: center; font-size: 12px; }
table.timeline td.name { text-align: left; white-space: nowrap; }
.lbl { display: inline-block; padding: 0 5px; margin: 1px 2px 1px 0; border-radius: 3px; font-size: 12px; background: #ddd; color: #111; }
${LABELS.map((l) => `.lbl.l-${l} { background: ${LABEL_COLORS[l]}; }`).join('\n')}
.lbl.l-invalid_tool_call, .lbl.l-state_mismatch, .lbl.l-recovery_failure, .lbl.l-missing_tool_call, .lbl.l-gt_error { color: #fff; }
details.round { margin: 6px 0; }
details.round > summary { cursor: pointer; font-weight: 600; }
details.rollout { margin: 2px 0 2px 16px; border: 1px solid var(--line); border-radius: 4px; }
details.rollout > summary { cursor: pointer; padding: 3px 6px; font-variant-numeric: tabular-nums; }
details.rollout[open] > summary { background: var(--soft); }
.ok { color: #1a7f37; font-weight: 600; }
.bad { color: #b42318; font-weight: 600; }
.turn { margin: 6px 10px 10px; }
.turn-head { font-weight: 600; }
.step { margin: 4px 0 4px 14px; padding-left: 8px; border-left: 2px solid var(--line); }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 2px 0; padding: 4px 6px; background: var(--soft); border-radius: 3px; font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; max-height: 320px; overflow: auto; }
pre.err { background: #fdecea; }
pre.raw { background: #fff; border: 1px solid var(--line); }
pre.raw::before, pre.call-text::before { color: var(--muted); font-style: italic; }
pre.raw::before { content: 'model: '; }
pre.msg { background: #e8f1fb; margin-left: 0; }
pre.msg::before { content: attr(data-role) ': '; color: var(--muted); font-style: italic; }
pre.call-text::before { content: 'call: '; }
.call { margin: 4px 0; }
`;

function chartBlock(spec: ChartSpec): Markup {
  return html`<div class="panel"><h4>${spec.title}</h4>${
    spec.x.length === 0 || spec.series.length === 0
      ? html`<div class="nodata">${spec.nodata}</div>`
      : html`<div class="chart" id="${`chart-${spec.id}`}" data-chart="${spec.id}"></div>`
  }</div>`;
}

function scoresTable(t: ScoreTable): Markup {
  return html`<table class="scores"><thead><tr>${t.columns.map(
    (c, i) => html`<th class="${i > 0 ? 'num' : ''}">${c}</th>`,
  )}</tr></thead><tbody>${t.rows.map(
    (r) => html`<tr><th>${r.label}</th>${r.cells.map((c) => html`<td class="num">${c}</td>`)}</tr>`,
  )}</tbody></table>`;
}

function timelineTable(t: Timeline): Markup {
  if (t.rounds.length === 0) return html`<p class="nodata">no completed round yet</p>`;
  return html`<table class="timeline"><thead><tr><th>component</th><th>cue group / guideline</th>${t.rounds.map(
    (r) => html`<th class="num">${r}</th>`,
  )}</tr></thead><tbody>${t.rows.map(
    (row) =>
      html`<tr><td class="name muted">${row.component}</td><td class="name">${row.kind === 'guideline' ? `guideline: ${row.name}` : row.name}</td>${row.cells.map(
        (c) =>
          c === null
            ? html`<td></td>`
            : html`<td class="${`on ${row.kind} ${c.startsWith('evolved') ? 'evolved' : ''}`}" title="${c}">●</td>`,
      )}</tr>`,
  )}</tbody></table>${
    t.changes.some((c) => c.length > 0)
      ? html`<details><summary>What evolution changed after each round</summary><table><tbody>${t.rounds.map(
          (r, i) =>
            (t.changes[i] ?? []).length
              ? html`<tr><th class="num">${r}</th><td>${(t.changes[i] ?? []).map((c) => html`<div>${c}</div>`)}</td></tr>`
              : '',
        )}</tbody></table></details>`
      : ''
  }`;
}

const labelChip = (l: unknown) => html`<span class="${`lbl l-${String(l)}`}">${l}</span>`;

function turnBlock(t: TurnView): Markup {
  const verdict =
    t.passed === null ? 'not checked' : t.passed ? 'passed' : `failed${t.failure ? ` (${t.failure})` : ''}`;
  return html`<div class="turn"><div class="turn-head">turn ${t.turn} ${t.label ? labelChip(t.label) : ''} <span class="muted">${verdict}, ${t.tools} tools visible, ${t.steps.length} step(s)</span></div>${(
    t.request ?? []
  ).map((m) => html`<pre class="msg" data-role="${m.role}">${m.content}</pre>`)}${t.steps.map(
    (s, i) =>
      html`<div class="step"><div class="muted">step ${i + 1}</div>${
        s.rawText !== undefined ? html`<pre class="raw">${s.rawText}</pre>` : ''
      }${s.parseError !== undefined ? html`<pre class="err">parse error: ${s.parseError}</pre>` : ''}${s.calls.map(
        (c) =>
          html`<div class="call"><pre class="call-text">${c.available ? '' : '[not available] '}${c.call}</pre><pre class="${c.executionError ? 'err' : ''}">→ ${c.output}</pre>${c.issues.map(
            (x) => html`<div class="bad">${x}</div>`,
          )}</div>`,
      )}</div>`,
  )}</div>`;
}

function rolloutBlock(r: RolloutView): Markup {
  return html`<details class="rollout"><summary><span class="${r.reward === 1 ? 'ok' : 'bad'}">${r.reward === 1 ? '✓' : '✗'}</span> ${r.taskId} <span class="muted">(${r.category}, group ${r.group}, sample ${r.sample})</span> reward ${r.reward} · w ${num(r.weight)} · A ${num(r.advantage, 3)} · wA ${num(r.weightedAdvantage, 3)} · ${r.completionTokens} tokens${r.forceQuit ? ' · step limit' : ''} · ${r.labels.map(labelChip)}</summary>${r.turns.map(turnBlock)}</details>`;
}

function browserBlock(rounds: readonly BrowserRound[]): Markup {
  if (rounds.length === 0) return html`<p class="nodata">no completed round yet</p>`;
  return html`${rounds.map(
    (b) =>
      html`<details class="round"><summary>Round ${b.round}: ${b.shown.length} of ${b.total} rollouts</summary>${b.shown.map(rolloutBlock)}</details>`,
  )}`;
}

function runSection(run: RunPage): Markup {
  return html`<section class="run-section" id="${run.id}" style="${`--run: ${run.color}`}">
<h2><span class="swatch" style="${`background: ${run.color}`}"></span>${run.name}</h2>
${run.notes.map((n) => html`<div class="warn">${n}</div>`)}
<table class="facts"><tbody>${run.facts.map(([k, v]) => html`<tr><td>${k}</td><td>${v}</td></tr>`)}</tbody></table>
<h3>Config overrides</h3>
${
  run.overrides.length
    ? html`<table class="facts"><tbody>${run.overrides.map(([k, v]) => html`<tr><td>${k}</td><td><code>${v}</code></td></tr>`)}</tbody></table>`
    : html`<p class="muted">none: every key at its default</p>`
}
<h3>Strict evaluation, start and final (accuracy %)</h3>
${scoresTable(run.scores)}
<div class="grid">${run.charts.map(chartBlock)}</div>
<h3>Interface timeline</h3>
<p class="note">The interface each round's rollouts were shown: a dot where a cue group or guideline was active (hover for why). Darker: activated by a failure label; light: base or forced on.</p>
${timelineTable(run.timeline)}
<h3>Trajectory browser</h3>
<p class="note">${run.browserNote} Click a round, then a rollout, to see its turns and steps.</p>
${browserBlock(run.browser)}
</section>`;
}

const chatLine = (m: ChatLineView) =>
  html`${m.content !== '' || m.calls.length === 0 ? html`<pre class="msg" data-role="${m.role}">${m.content}</pre>` : ''}${m.calls.map((c) => html`<pre class="call-text">${c}</pre>`)}`;

function episodeBlock(e: EpisodeView): Markup {
  const mark = e.solved ? html`<span class="ok">✓</span>` : html`<span class="bad">✗</span>`;
  return html`<details class="rollout"><summary>${mark} ${e.taskId} <span class="muted">(trial ${e.trial + 1}${e.scored ? '' : ', not scored'})</span> reward ${num(e.reward)}${e.reason ? ` · ended: ${e.reason}` : ''}${e.labels.length ? html` · ${e.labels.map(labelChip)}` : ''}</summary>${
    e.turns ? e.turns.map(turnBlock) : ''
  }${e.chat ? e.chat.map(chatLine) : ''}${
    e.detail !== undefined
      ? html`<details><summary>Verdict breakdown</summary><pre>${e.detail}</pre></details>`
      : ''
  }</details>`;
}

function evalSection(e: EvalPage): Markup {
  return html`<section class="run-section eval-section" id="${e.id}" style="${`--run: ${e.color}`}">
<h2><span class="swatch" style="${`background: ${e.color}`}"></span>${e.name} <span class="muted">(evaluation)</span></h2>
${e.notes.map((n) => html`<div class="warn">${n}</div>`)}
<table class="facts"><tbody>${e.facts.map(([k, v]) => html`<tr><td>${k}</td><td>${v}</td></tr>`)}</tbody></table>
<h3>Scores</h3>
${scoresTable(e.scores)}
<h3>Episode browser</h3>
<p class="note">${e.browserNote} Click a group, then an episode.</p>
${
  e.groups.length === 0
    ? html`<p class="nodata">no finished episode yet</p>`
    : e.groups.map(
        (g) =>
          html`<details class="round"><summary>${g.group}: ${g.solved} of ${g.total} solved (${g.shown.length} shown)</summary>${g.shown.map(episodeBlock)}</details>`,
      )
}
</section>`;
}

function trainBlocks(page: PageData): Markup {
  if (page.runs.length === 0) return html``;
  return html`<h2>Strict accuracy per category: test evaluations and validations</h2>
<p class="note">${page.accuracyNote}</p>
<div class="grid">${page.accuracy.map(chartBlock)}</div>
<h2>Training</h2>
<p class="note">One line per run. Rewards and shares are over each round's training rollouts (shown the training interface).</p>
<div class="grid">${page.training.map(chartBlock)}</div>`;
}

export function renderReport(page: PageData, assets: Assets = loadAssets()): string {
  const charts = [...page.accuracy, ...page.training, ...page.runs.flatMap((r) => r.charts)].filter(
    (c) => c.x.length > 0 && c.series.length > 0,
  );
  const dataJson = scriptJson({ charts });
  const csp = `default-src 'none'; script-src ${sha256(assets.uplotJs)} ${sha256(CLIENT_SCRIPT)}; style-src 'unsafe-inline'; img-src data:`;
  const body = html`<h1>${page.title}</h1>
<p class="muted">generated ${page.generated} by seal report</p>
<p class="runs-list">${page.runs.map(
    (r) =>
      html`<span><span class="swatch" style="${`background: ${r.color}`}"></span><a href="${`#${r.id}`}">${r.name}</a> <span class="muted">(${r.facts.find((f) => f[0] === 'method')?.[1]}, seed ${r.facts.find((f) => f[0] === 'seed')?.[1]})</span></span>`,
  )}${page.evaluations.map(
    (e) =>
      html`<span><span class="swatch" style="${`background: ${e.color}`}"></span><a href="${`#${e.id}`}">${e.name}</a> <span class="muted">(evaluation: ${e.facts.find((f) => f[0] === 'model')?.[1]} on ${e.facts.find((f) => f[0] === 'suite')?.[1]})</span></span>`,
  )}</p>
${trainBlocks(page)}
${
  page.sideBySide
    ? html`<h2>Evaluations side by side</h2>
<p class="note">Per group: BFCL multi-turn's accuracy %, or a suite's average reward x100 (τ², BFCL memory and web search); each evaluation's own tasks.</p>
${scoresTable(page.sideBySide)}`
    : ''
}
${page.runs.map(runSection)}
${page.evaluations.map(evalSection)}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)}</title>
<style>${assets.uplotCss}</style>
<style>${STYLE}</style>
</head>
<body>
${body.text}
<script id="report-data" type="application/json">${dataJson}</script>
<script>${assets.uplotJs}</script>
<script>${CLIENT_SCRIPT}</script>
</body>
</html>
`;
}
