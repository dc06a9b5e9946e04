/**
 * The page's one script of its own, as text: it draws the charts from the JSON the page carries.
 * Plain ES5-style JavaScript with no imports, since it runs in the viewer's browser next to the
 * inlined uPlot, not in Node. It only ever passes record strings to uPlot as series labels (which
 * uPlot sets as text), never to innerHTML.
 */
export const CLIENT_SCRIPT = `(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var plots = [];

  function fmt(v, share) {
    if (v === null || v === undefined || !isFinite(v)) return '-';
    if (share) return (100 * v).toFixed(1) + '%';
    var a = Math.abs(v);
    if (a === 0) return '0';
    if (a >= 100) return v.toFixed(0);
    if (a >= 0.01) return v.toFixed(3);
    return v.toExponential(2);
  }

  // axis ticks are round numbers already: print them short (50, not 50.000)
  function tick(v, share) {
    if (v === null || v === undefined) return '';
    return share ? +(100 * v).toFixed(1) + '%' : String(+v.toPrecision(4));
  }

  function render(spec) {
    var el = document.getElementById('chart-' + spec.id);
    if (!el) return;
    var stacked = spec.kind === 'stacked';
    var series = [{ label: 'round', value: function (u, v) { return v === null ? '-' : String(v); } }];
    spec.series.forEach(function (s) {
      series.push({
        label: s.label,
        stroke: s.color,
        width: stacked ? 0 : 2,
        dash: s.dash ? [6, 4] : undefined,
        fill: stacked ? s.color : undefined,
        paths: stacked ? uPlot.paths.bars({ size: [0.7, 48] }) : undefined,
        points: { show: !stacked, size: 6 },
        spanGaps: true,
        value: function (u, v, si, idx) {
          return fmt(stacked ? (idx === null ? null : s.own[idx]) : v, spec.share);
        }
      });
    });
    var xs = spec.x;
    var lo = Math.min.apply(null, xs), hi = Math.max.apply(null, xs);
    var opts = {
      width: Math.max(260, el.clientWidth),
      height: 220,
      series: series,
      legend: { live: true },
      scales: {
        x: { time: false, range: function () { return stacked || lo === hi ? [lo - 0.5, hi + 0.5] : [lo, hi]; } },
        y: spec.yRange
          ? { range: function () { return [spec.yRange[0], spec.yRange[1]]; } }
          : stacked ? { range: function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; } } : {}
      },
      axes: [
        { label: 'round', incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500], values: function (u, vals) { return vals.map(String); } },
        { label: spec.yLabel, size: 56, values: function (u, vals) { return vals.map(function (v) { return tick(v, spec.share); }); } }
      ]
    };
    var plot = new uPlot(opts, [xs].concat(spec.series.map(function (s) { return s.values; })), el);
    plots.push({ plot: plot, el: el });
    el.setAttribute('data-rendered', 'true');
  }

  data.charts.forEach(function (spec) {
    try {
      render(spec);
    } catch (e) {
      console.error('chart ' + spec.id + ': ' + e);
    }
  });

  var pending = false;
  window.addEventListener('resize', function () {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () {
      pending = false;
      plots.forEach(function (p) { p.plot.setSize({ width: Math.max(260, p.el.clientWidth), height: 220 }); });
    });
  });
})();
`;
