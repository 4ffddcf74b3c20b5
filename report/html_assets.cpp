#include "report/html_assets.h"

namespace pgslow::report {

const char* const kHtmlStyle = R"CSS(
:root { --fg:#1d2430; --muted:#5b6675; --line:#d9dee5; --bg:#ffffff; --panel:#f6f8fa;
        --bar:#3b6fd8; --bad:#c0392b; --good:#1e8449; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       background: var(--bg); margin: 0; padding: 24px 32px 48px; max-width: 1200px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 28px 0 8px; }
p.description { color: var(--muted); margin: 0 0 12px; max-width: 800px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0 0;
           background: var(--panel); padding: 10px 14px; border-radius: 6px; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; text-align: left; }
th { background: var(--panel); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.stage { white-space: nowrap; font-weight: 600; }
td.knobs { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
.slower { color: var(--bad); } .faster { color: var(--good); } .muted { color: var(--muted); }
.failed { color: var(--bad); font-weight: 600; }
.note { display: block; color: var(--bad); font-size: 11px; white-space: normal; }
.design { display: block; color: var(--muted); font-size: 11px; white-space: normal; }
svg.spark { width: 160px; height: 36px; }
.headline { display: block; font-size: 11px; white-space: normal; }
.chart { background: var(--panel); border-radius: 6px; padding: 8px 12px 4px; }
.chart svg { width: 100%; height: auto; display: block; }
.controls { margin: 4px 0 8px; color: var(--muted); }
.legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; }
ul { margin: 4px 0; padding-left: 20px; }
)CSS";

const char* const kHtmlScript = R"JS(
(function () {
  var data = JSON.parse(document.getElementById('pgslow-data').textContent);
  var NS = 'http://www.w3.org/2000/svg';
  var colors = ['#3b6fd8', '#e67e22', '#27ae60', '#8e44ad', '#c0392b', '#16a085', '#d35400',
                '#2c3e50', '#f1c40f', '#7f8c8d'];
  function el(name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmt(v) {
    if (v === 0) return '0';
    var a = Math.abs(v);
    if (a >= 1000) return Math.round(v).toLocaleString('en-US');
    var d = Math.max(0, 2 - Math.floor(Math.log10(a)));
    return v.toFixed(d);
  }
  function tick(v) { return v >= 1000 ? v.toLocaleString('en-US') : String(+v.toPrecision(3)); }
  // Ticks: powers of ten on a log axis, 5 even steps on a linear one.
  function scale(lo, hi, log, size) {
    if (log) {
      var l0 = Math.floor(Math.log10(lo)), l1 = Math.ceil(Math.log10(hi));
      if (l1 === l0) l1 = l0 + 1;
      var ticks = [];
      for (var p = l0; p <= l1; p++) ticks.push(Math.pow(10, p));
      return { map: function (v) { return size * (Math.log10(Math.max(v, ticks[0])) - l0) / (l1 - l0); },
               ticks: ticks };
    }
    var step = Math.pow(10, Math.floor(Math.log10(hi || 1)));
    if (hi / step < 2) step /= 5; else if (hi / step < 5) step /= 2;
    var top = Math.ceil(hi / step) * step || 1, t = [];
    for (var v = 0; v <= top + step / 2; v += step) t.push(v);
    return { map: function (v) { return size * v / top; }, ticks: t };
  }
  function bars(svg, log) {
    svg.textContent = '';
    var ran = data.stages.filter(function (s) { return s.ran && s.tps > 0; });
    var W = 1000, rowH = 30, left = 170, right = 130, top = 24;
    var H = top + data.stages.length * rowH + 10;
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    var hi = Math.max.apply(null, ran.map(function (s) { return s.tps_max || s.tps; }).concat([1]));
    var lo = Math.min.apply(null, ran.map(function (s) { return s.tps_min || s.tps; }).concat([hi]));
    var sc = scale(log ? lo : 0, hi, log, W - left - right);
    sc.ticks.forEach(function (t) {
      var x = left + sc.map(t);
      svg.appendChild(el('line', { x1: x, x2: x, y1: top - 4, y2: H - 10, stroke: '#d9dee5' }));
      svg.appendChild(el('text', { x: x, y: top - 8, 'font-size': 11, fill: '#5b6675',
                                   'text-anchor': 'middle' }, tick(t)));
    });
    var n = 0;
    data.stages.forEach(function (s, i) {
      var y = top + i * rowH;
      svg.appendChild(el('text', { x: left - 10, y: y + rowH / 2 + 4, 'font-size': 13,
                                   'text-anchor': 'end', fill: '#1d2430' }, s.name));
      if (!s.ran) {
        svg.appendChild(el('text', { x: left + 4, y: y + rowH / 2 + 4, 'font-size': 12,
                                     fill: '#c0392b' }, 'failed'));
        return;
      }
      var w = Math.max(2, sc.map(s.tps));
      var bar = el('rect', { x: left, y: y + 5, width: w, height: rowH - 10, rx: 3,
                             fill: i === 0 ? '#7f8c8d' : '#3b6fd8', 'class': 'bar' });
      bar.appendChild(el('title', {}, s.name + ': ' + s.label + ' TPS'));
      svg.appendChild(bar);
      if (s.tps_max > s.tps_min) {
        var x0 = left + sc.map(s.tps_min), x1 = left + sc.map(s.tps_max), ym = y + rowH / 2;
        svg.appendChild(el('line', { x1: x0, x2: x1, y1: ym, y2: ym, stroke: '#1d2430' }));
        svg.appendChild(el('line', { x1: x0, x2: x0, y1: ym - 5, y2: ym + 5, stroke: '#1d2430' }));
        svg.appendChild(el('line', { x1: x1, x2: x1, y1: ym - 5, y2: ym + 5, stroke: '#1d2430' }));
      }
      svg.appendChild(el('text', { x: left + w + 6, y: y + rowH / 2 + 4, 'font-size': 12,
                                   fill: '#1d2430' }, s.label));
      n++;
    });
    return n;
  }
  function lines(svg, legend, log) {
    svg.textContent = '';
    legend.textContent = '';
    var W = 1000, H = 320, left = 70, right = 20, top = 14, bottom = 34;
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    var withSeries = data.stages.filter(function (s) { return s.ran && s.series.length > 0; });
    var all = [];
    withSeries.forEach(function (s) { all = all.concat(s.series); });
    var pos = all.filter(function (v) { return v > 0; });
    var hi = Math.max.apply(null, all.concat([1]));
    var lo = pos.length ? Math.min.apply(null, pos) : 1;
    var len = Math.max.apply(null, withSeries.map(function (s) { return s.series.length; }).concat([2]));
    var sy = scale(log ? lo : 0, hi, log, H - top - bottom);
    var sx = function (i) { return left + (W - left - right) * i / Math.max(1, len - 1); };
    sy.ticks.forEach(function (t) {
      var y = H - bottom - sy.map(t);
      svg.appendChild(el('line', { x1: left, x2: W - right, y1: y, y2: y, stroke: '#d9dee5' }));
      svg.appendChild(el('text', { x: left - 8, y: y + 4, 'font-size': 11, 'text-anchor': 'end',
                                   fill: '#5b6675' }, tick(t)));
    });
    for (var t = 0; t < len; t += Math.max(1, Math.ceil(len / 10))) {
      svg.appendChild(el('text', { x: sx(t), y: H - bottom + 16, 'font-size': 11,
                                   'text-anchor': 'middle', fill: '#5b6675' }, (t + 1) + ' s'));
    }
    var n = 0;
    withSeries.forEach(function (s, k) {
      var c = colors[k % colors.length];
      var pts = s.series.map(function (v, i) {
        return sx(i).toFixed(1) + ',' + (H - bottom - sy.map(log ? Math.max(v, lo) : v)).toFixed(1);
      });
      var line = el('polyline', { points: pts.join(' '), fill: 'none', stroke: c, 'stroke-width': 2,
                                  'class': 'series' });
      line.appendChild(el('title', {}, s.name));
      svg.appendChild(line);
      var item = document.createElement('span');
      var sw = document.createElement('i');
      sw.style.background = c;
      item.appendChild(sw);
      item.appendChild(document.createTextNode(s.name));
      legend.appendChild(item);
      n++;
    });
    if (n === 0) {
      svg.appendChild(el('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', fill: '#5b6675' },
                         'no per-second series in this report'));
    }
    return n;
  }
  function draw() {
    var log = document.getElementById('log-scale').checked;
    var nb = bars(document.getElementById('tps-bars'), log);
    var nl = lines(document.getElementById('tps-lines'), document.getElementById('tps-legend'), log);
    document.body.setAttribute('data-bars', nb);
    document.body.setAttribute('data-lines', nl);
    document.body.setAttribute('data-scale', log ? 'log' : 'linear');
    document.body.setAttribute('data-rendered', 'true');
    // How wide the stage table is against the window: it should fit without scrolling.
    var stages = document.getElementById('stages');
    if (stages) {
      document.body.setAttribute('data-stages-width', Math.ceil(stages.getBoundingClientRect().right));
      document.body.setAttribute('data-page-width', document.documentElement.scrollWidth);
      document.body.setAttribute('data-window-width', window.innerWidth);
    }
  }
  document.getElementById('log-scale').addEventListener('change', draw);
  draw();
})();
)JS";

}  // namespace pgslow::report
