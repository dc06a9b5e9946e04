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

  // the decimals a tick step needs (0.25: 2, 2e-5: 5), so that close ticks print apart
  function decimals(step) {
    for (var d = 0; d < 15; d++) if (Math.abs(+step.toFixed(d) - step) <= step * 1e-6) return d;
    return 15;
  }

  // axis ticks are round numbers already: print them short (50, not 50.000)
  // and large ones in thousands or millions (400k), so they fit beside the axis label
  function ticks(vals, share) {
    var top = Math.max.apply(null, vals.map(function (v) { return Math.abs(v || 0); }));
    var unit = share ? ['%', 0.01] : top >= 1e6 ? ['M', 1e6] : top >= 1e4 ? ['k', 1e3] : ['', 1];
    var step = vals.length > 1 ? Math.abs(vals[1] - vals[0]) / unit[1] : 0;
    var d = step > 0 ? decimals(step) : 1;
    return vals.map(function (v) {
      if (v === null || v === undefined) return '';
      return v === 0 && !share ? '0' : String(+(v / unit[1]).toFixed(d)) + unit[0];
    });
  }

  // uPlot's own fit of a range narrower than about 1e-6 of its values (a mean ratio of 1.00000002
  // and 1.00000007) rounds both ends to the same number, and its axis then loops until the page
  // throws; such a range is widened to 1e-4 of the values first (flat data uPlot pads itself)
  function fitted(u, min, max) {
    if (min === null || max === null) return [0, 1];
    var floor = 1e-4 * Math.max(Math.abs(min), Math.abs(max));
    if (max > min && max - min < floor) {
      var mid = (min + max) / 2;
      min = mid - floor / 2;
      max = mid + floor / 2;
    }
    return uPlot.rangeNum(min, max, 0.1, true);
  }

  // round numbers on the round axis: 1, 2, 5, 10, ... up to the longest run the settings allow
  var roundIncrs = [];
  for (var p = 1; p <= 1e6; p *= 10) roundIncrs.push(p, 2 * p, 5 * p);

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
        // filled, so that a run with a single point (one validation) shows it plainly
        points: { show: !stacked, size: 7, fill: s.color },
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
          : stacked ? { range: function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; } } : { range: fitted }
      },
      axes: [
        { label: 'round', incrs: roundIncrs, values: function (u, vals) { return vals.map(String); } },
        { label: spec.yLabel, size: 56, values: function (u, vals) { return ticks(vals, spec.share); } }
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
