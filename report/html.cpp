#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "report/attribution_view.h"
#include "report/audit.h"
#include "report/axes_view.h"
#include "report/curve.h"
#include "report/load_columns.h"
#include "report/registry.h"
#include "report/text.h"
#include "report/waits_view.h"
#include "results/evidence_info.h"
#include "results/metric.h"
#include "results/stats.h"
#include "results/summary.h"

namespace pgslow::report {

namespace {

// The chart data the inline script draws from. Every < > & and the JavaScript line breaks
// U+2028 / U+2029 are \u escapes: no string can end the <script> element, open a comment
// ("<!--" makes the HTML parser swallow the rest of the script) or break the literal.
std::string chart_data(const Run& run, const std::vector<StageSummary>& summaries) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : summaries) {
    const StageResult& stage = run.stages[s.index];
    nlohmann::json series = nlohmann::json::array();
    if (const Measurement* m = median_repeat(stage)) {
      for (double v : m->tps_per_second) series.push_back(std::isfinite(v) ? v : 0.0);
    }
    stages.push_back({{"name", stage.name},
                      {"ran", s.ran},
                      {"tps", s.tps},
                      {"tps_min", s.tps_min},
                      {"tps_max", s.tps_max},
                      {"label", s.ran ? s.tps_text : std::string("failed")},
                      {"series", series}});
  }
  std::string text = nlohmann::json{{"stages", stages}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xe2' && i + 2 < text.size() && text[i + 1] == '\x80' &&
               (text[i + 2] == '\xa8' || text[i + 2] == '\xa9')) {
      out += text[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

const char* const kStyle = R"CSS(
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
.note { display: block; color: var(--bad); font-size: 11px; }
.design { display: block; color: var(--muted); font-size: 11px; }
svg.spark { width: 160px; height: 36px; }
.headline { display: block; font-size: 11px; }
.chart { background: var(--panel); border-radius: 6px; padding: 8px 12px 4px; }
.chart svg { width: 100%; height: auto; display: block; }
.controls { margin: 4px 0 8px; color: var(--muted); }
.legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; }
ul { margin: 4px 0; padding-left: 20px; }
)CSS";

// Draws the charts from the embedded data, then marks the page as rendered (the headless
// browser test reads data-rendered, data-bars and data-lines).
const char* const kScript = R"JS(
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
  }
  document.getElementById('log-scale').addEventListener('change', draw);
  draw();
})();
)JS";

std::string change_cell(const std::optional<Change>& c) {
  if (!c) return "<td class=\"num muted\">—</td>";
  const char* cls = !c->measurable ? "muted" : (c->ratio < 1 ? "slower" : "faster");
  return fmt::format("<td class=\"num {}\">{}</td>", cls, html_escape(c->text));
}

// The verdict naming its axis, coloured by which way it went for the user, with how the stage
// was measured beneath it.
std::string verdict_td(const StageSummary& s) {
  const std::string cell = verdict_cell(s);
  const bool worse = cell.starts_with("costs") || cell.starts_with("tail +") ||
                     (s.vs_baseline && s.vs_baseline->measurable && s.vs_baseline->ratio < 1 &&
                      cell == s.vs_baseline->text);
  const bool better =
      !worse && (cell.starts_with("saves") || cell.starts_with("tail -") ||
                 (s.vs_baseline && s.vs_baseline->measurable && cell == s.vs_baseline->text));
  std::string out = fmt::format("<td class=\"num {}\">{}",
                                worse    ? "slower"
                                : better ? "faster"
                                         : "muted",
                                html_escape(cell));
  if (!s.design.empty()) out += "<span class=\"design\">" + html_escape(s.design) + "</span>";
  return out + "</td>";
}

// What a stage's small plot over time shows: throughput, or the latency's p99 (a checkpoint's
// spikes).
enum class Series { kTps, kP99 };

// A stage's throughput or p99 over time as a small line: per second of its median run, or per
// block of a switchback run (the stage's blocks in the stage's colour, the reference's in grey,
// on one scale). Empty with fewer than two points.
std::string series_svg(const StageResult& stage, Series series) {
  struct Line {
    std::vector<std::pair<double, double>> points;  // (x, value)
    const char* colour;
  };
  const auto add = [](Line& line, std::size_t x, double y) {
    if (std::isfinite(y) && y > 0) line.points.emplace_back(static_cast<double>(x), y);
  };
  std::vector<Line> lines;
  if (stage.switchback) {
    Line mine{{}, "#c0392b"};
    Line reference{{}, "#8a94a3"};
    for (std::size_t i = 0; i < stage.switchback->blocks.size(); ++i) {
      const SwitchbackBlock& b = stage.switchback->blocks[i];
      if (b.seconds <= 0) continue;
      add(b.stage ? mine : reference, i,
          series == Series::kTps ? static_cast<double>(b.transactions) / b.seconds : b.p99_us);
    }
    lines = {reference, mine};
  } else if (const Measurement* m = median_repeat(stage)) {
    Line line{{}, series == Series::kTps ? "#3b6fd8" : "#b7791f"};
    const std::vector<double>& values =
        series == Series::kTps ? m->tps_per_second : m->p99_per_second;
    for (std::size_t i = 0; i < values.size(); ++i) add(line, i, values[i]);
    lines = {line};
  }
  double max_x = 0;
  double max_y = 0;
  std::size_t points = 0;
  for (const auto& l : lines)
    for (const auto& [x, y] : l.points) {
      max_x = std::max(max_x, x);
      max_y = std::max(max_y, y);
      ++points;
    }
  if (points < 2 || max_x <= 0 || max_y <= 0) return "";
  std::string out = fmt::format(
      "<svg class=\"spark\" viewBox=\"0 0 160 36\" role=\"img\" aria-label=\"{} over time\">",
      series == Series::kTps ? "TPS" : "p99");
  for (const auto& l : lines) {
    if (l.points.empty()) continue;
    std::string pts;
    for (const auto& [x, y] : l.points)
      pts += fmt::format("{}{:.1f},{:.1f}", pts.empty() ? "" : " ", 2 + x / max_x * 156,
                         34 - y / max_y * 32);
    out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"/>",
                       pts, l.colour);
  }
  return out + "</svg>";
}

}  // namespace

// The attribution of one stage as a chart drawn here (no script needed): one bar per knob,
// its effect alone on a log scale from "no change" leftwards to "slower", with the 95%
// interval as a whisker; the knobs found harmless together share one bar.
std::string attribution_chart(const Attribution& a) {
  struct Bar {
    std::string label;
    std::string verdict;
    EffectInterval e;
  };
  std::vector<Bar> bars;
  std::size_t harmless = 0;
  std::string harmless_verdict;  // "no measurable effect" or "too noisy to tell"
  for (const auto& k : a.knobs) {
    if (k.alone) {
      bars.push_back({describe_knob(k), k.verdict, *k.alone});
    } else {
      ++harmless;
      harmless_verdict = k.verdict;
    }
  }
  if (a.harmless && harmless > 0) {
    bars.push_back({fmt::format("{} other knob{} together", harmless, harmless == 1 ? "" : "s"),
                    harmless_verdict, *a.harmless});
  }
  bars.push_back({"whole stage", "", a.stage});
  // Decades of slowdown shown: at least one, enough for the slowest end of any interval.
  double worst = 1;
  for (const auto& b : bars) worst = std::min({worst, b.e.low, b.e.ratio});
  const double decades = std::max(1.0, std::ceil(-std::log10(std::max(worst, 1e-6))));
  const int left = 330, width = 420, row = 26, top = 24;
  const int height = top + row * static_cast<int>(bars.size()) + 8;
  auto x = [&](double ratio) {
    double d = std::clamp(-std::log10(std::max(ratio, 1e-9)), -0.25, decades);
    return left + static_cast<int>(std::lround(width * (d + 0.25) / (decades + 0.25)));
  };
  std::string svg = fmt::format(
      "<svg class=\"attribution\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"each knob "
      "alone versus {}\">\n",
      left + width + 170, height, html_escape(a.reference));
  for (int d = 0; d <= static_cast<int>(decades); ++d) {
    int gx = x(std::pow(10.0, -d));
    svg += fmt::format(
        "<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#d9dee5\"/><text x=\"{0}\" "
        "y=\"{3}\" font-size=\"11\" fill=\"#5b6675\" text-anchor=\"middle\">{4}</text>\n",
        gx, top - 4, height - 4, top - 8,
        d == 0 ? "no change" : fmt::format("{:g}x {}", std::pow(10.0, d), worse_word(a.metric)));
  }
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const int y = top + row * static_cast<int>(i);
    const int x0 = x(1.0), x1 = x(b.e.ratio);
    const char* colour = b.verdict == "the cause"     ? "#c0392b"
                         : b.verdict == "contributes" ? "#e67e22"
                         : b.verdict.empty()          ? "#1d2430"
                                                      : "#8a94a3";
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>\n",
                       left - 8, y + 16, html_escape(b.label));
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"14\" fill=\"{}\"><title>{}: "
        "{}</title></rect>\n",
        std::min(x0, x1), y + 5, std::max(1, std::abs(x1 - x0)), colour, html_escape(b.label),
        html_escape(format_interval(in_metric_terms(a.metric, b.e))));
    const int lo = x(b.e.high), hi = x(b.e.low), ym = y + 12;
    svg += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#1d2430\"/><line x1=\"{0}\" "
        "x2=\"{0}\" y1=\"{3}\" y2=\"{4}\" stroke=\"#1d2430\"/><line x1=\"{1}\" x2=\"{1}\" "
        "y1=\"{3}\" y2=\"{4}\" stroke=\"#1d2430\"/>\n",
        lo, hi, ym, ym - 4, ym + 4);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"#5b6675\">{}</text>\n",
                       left + width + 8, y + 16,
                       html_escape((b.verdict.empty() ? "" : b.verdict + ", ") +
                                   format_metric_change(a.metric, b.e.ratio)));
  }
  return svg + "</svg>";
}

void render_html(const Run& run, std::ostream& out) {
  const auto summaries = summarize(run);
  // A span of more than two decades reads better on a log scale: start there.
  double lo = 0, hi = 0;
  for (const auto& s : summaries) {
    if (!s.ran || s.tps <= 0) continue;
    lo = lo == 0 ? s.tps : std::min(lo, s.tps);
    hi = std::max(hi, s.tps);
  }
  const bool start_log = lo > 0 && hi / lo > 100;
  const std::string title =
      run.scenario.empty() ? "pgslow report" : "pgslow report: " + run.scenario;

  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << html_escape(title) << "</title>\n<style>" << kStyle
      << "</style>\n</head>\n<body>\n"
      << "<h1>" << html_escape(title) << "</h1>\n";
  if (!run.description.empty())
    out << "<p class=\"description\">" << html_escape(run.description) << "</p>\n";
  out << "<dl class=\"facts\">\n";
  for (const auto& [label, value] : run_facts(run)) {
    out << "<dt>" << html_escape(label) << "</dt><dd>" << html_escape(value) << "</dd>\n";
  }
  out << "</dl>\n";

  const bool cumulative = run.mode != "isolated";
  // The server's CPU per transaction, when a local server gave it.
  const bool cpu = std::any_of(summaries.begin(), summaries.end(),
                               [](const StageSummary& s) { return s.cpu_vs_baseline.has_value(); });
  out << "<h2>Stages</h2>\n<table id=\"stages\">\n<thead><tr><th>Stage</th><th>Knobs changed</th>"
      << "<th class=\"num\">TPS</th><th class=\"num\">Transactions</th><th class=\"num\">vs "
         "baseline</th><th class=\"num\">TPS interval</th>"
      << (cpu ? "<th class=\"num\">CPU/tx vs baseline</th>" : "")
      << (cumulative ? "<th class=\"num\">vs previous</th>" : "") << "<th class=\"num\">p99</th>";
  const auto columns = load_columns(run);
  for (const auto& c : columns) out << "<th class=\"num\">" << html_escape(c.header) << "</th>";
  out << "<th>Evidence that moved most</th></tr></thead>\n<tbody>\n";
  for (const auto& s : summaries) {
    const StageResult& stage = run.stages[s.index];
    std::string knobs;
    for (const auto& c : stage.changes)
      knobs += (knobs.empty() ? "" : "<br>") + html_escape(describe_change(c));
    for (const auto& k : stage.skipped) {
      knobs += (knobs.empty() ? "" : "<br>") + std::string("<span class=\"muted\">skipped ") +
               html_escape(describe_skipped(k)) + "</span>";
    }
    std::string tps = s.ran ? html_escape(s.tps_text) : "<span class=\"failed\">failed</span>";
    if (!s.note.empty()) tps += "<span class=\"note\">" + html_escape(s.note) + "</span>";
    if (!s.headline_text.empty())
      tps += "<span class=\"headline\">" + html_escape(s.headline_text) + "</span>";
    for (const auto& w : s.headline_warnings)
      tps += "<span class=\"note\">" + html_escape(w) + "</span>";
    std::string evidence;
    for (const auto& m : s.movers)
      evidence += (evidence.empty() ? "" : "<br>") + html_escape(m.text);
    if (!stage.error.empty())
      evidence = "<span class=\"failed\">" + html_escape(stage.error) + "</span>";
    out << "<tr><td class=\"stage\">" << html_escape(stage.name) << "</td><td class=\"knobs\">"
        << (knobs.empty() ? "—" : knobs) << "</td><td class=\"num\">" << tps << "</td>"
        << "<td class=\"num\">" << html_escape(s.ran ? s.transactions_text : "—") << "</td>"
        << verdict_td(s) << "<td class=\"num\">" << html_escape(interval_text(s.vs_baseline))
        << "</td>"
        << (cpu ? "<td class=\"num\">" +
                      html_escape(s.cpu_vs_baseline ? cost_change_text(*s.cpu_vs_baseline) : "—") +
                      "</td>"
                : std::string())
        << (cumulative ? change_cell(s.vs_previous) : std::string()) << "<td class=\"num\">"
        << (s.ran ? html_escape(format_latency_us(s.p99_us)) : "—") << "</td>";
    const Measurement* m = s.ran ? median_repeat(stage) : nullptr;
    for (const auto& c : columns)
      out << "<td class=\"num\">" << html_escape(c.cell(stage, m)) << "</td>";
    out << "<td>" << (evidence.empty() ? "—" : evidence) << "</td></tr>\n";
  }
  out << "</tbody>\n</table>\n";

  if (std::any_of(summaries.begin(), summaries.end(),
                  [](const StageSummary& s) { return s.axes.size() > 1; })) {
    out << "<h2>Every axis</h2>\n<p class=\"muted\">Each stage against the baseline on every "
           "axis it measured, from the stage's own design; Holm's rule over a stage's axes keeps "
           "the chance of any wrong verdict at 5%.</p>\n<table id=\"axes\">\n<thead><tr>"
           "<th>Stage</th><th>Verdict</th><th>Axes</th><th>TPS over time</th><th>p99 over "
           "time</th></tr></thead>\n"
           "<tbody>\n";
    for (const auto& s : summaries) {
      if (s.axes.size() <= 1) continue;
      std::string items;
      for (const auto& item : axis_items(s, true))
        items += (items.empty() ? "" : "<br>") + html_escape(item);
      out << "<tr><td class=\"stage\">" << html_escape(run.stages[s.index].name) << "</td><td>"
          << html_escape(s.verdict.sentence) << "</td><td>" << items << "</td><td>"
          << series_svg(run.stages[s.index], Series::kTps) << "</td><td>"
          << series_svg(run.stages[s.index], Series::kP99) << "</td></tr>\n";
    }
    out << "</tbody>\n</table>\n";
  }

  for (const auto& curve : sweep_curves(run)) {
    out << "<h2>Sweep over " << html_escape(dimension_label(curve.dimension))
        << (curve.series.empty() ? "" : " (" + html_escape(curve.series) + ")") << "</h2>\n"
        << "<div class=\"chart sweep\">" << curve_svg(curve) << "</div>\n"
        << "<p class=\"knee\">" << html_escape(describe_knee(curve)) << "</p>\n";
    const CurveTable ct = curve_table(curve);
    out << "<table class=\"curve\">\n<thead><tr>";
    for (const auto& h : ct.header) out << "<th class=\"num\">" << html_escape(h) << "</th>";
    out << "</tr></thead>\n<tbody>\n";
    for (const auto& row : ct.rows) {
      out << "<tr>";
      for (const auto& cell : row) out << "<td class=\"num\">" << html_escape(cell) << "</td>";
      out << "</tr>\n";
    }
    out << "</tbody>\n</table>\n";
  }

  bool any_attribution = false;
  for (const auto& stage : run.stages) any_attribution = any_attribution || stage.attribution;
  if (any_attribution) out << "<h2>Which knob did it</h2>\n";
  for (const auto& stage : run.stages) {
    if (!stage.attribution) continue;
    const Attribution& a = *stage.attribution;
    out << "<h3>" << html_escape(stage.name) << "</h3>\n<p><strong>" << html_escape(a.headline)
        << "</strong></p>\n<div class=\"chart\">" << attribution_chart(a) << "</div>\n";
    const TextTable t = attribution_table(a);
    out << "<table class=\"attribution\">\n<thead><tr>";
    for (std::size_t i = 0; i < t.header.size(); ++i)
      out << (t.right[i] ? "<th class=\"num\">" : "<th>") << html_escape(t.header[i]) << "</th>";
    out << "</tr></thead>\n<tbody>\n";
    for (const auto& r : t.rows) {
      out << "<tr>";
      for (std::size_t i = 0; i < r.size(); ++i)
        out << (t.right[i] ? "<td class=\"num\">"
                : i == 0   ? "<td class=\"knobs\">"
                           : "<td>")
            << html_escape(r[i]) << "</td>";
      out << "</tr>\n";
    }
    out << "</tbody>\n</table>\n<p class=\"muted\">vs " << html_escape(a.reference) << "; "
        << html_escape(describe_attribution_cost(a))
        << (a.note.empty() ? "" : "; " + html_escape(a.note)) << "</p>\n";
  }

  // The workload's audit of each stage (TPC-C-lite: the rules the tpmC label needs).
  for (const auto& a : stage_audits(run))
    out << "<h2>Audit: " << html_escape(a.stage->name) << "</h2>\n<p>"
        << html_escape(audit_summary(*a.rows)) << "</p>\n"
        << html_table(audit_table(*a.rows), "audit");

  out << "<h2>Throughput per stage</h2>\n<div class=\"controls\"><label><input type=\"checkbox\" "
      << "id=\"log-scale\"" << (start_log ? " checked" : "") << "> log scale</label></div>\n"
      << "<div class=\"chart\"><svg id=\"tps-bars\" role=\"img\" aria-label=\"TPS per "
         "stage\"></svg></div>\n"
      << "<h2>Throughput over time</h2>\n"
      << "<div class=\"chart\"><svg id=\"tps-lines\" role=\"img\" aria-label=\"TPS per "
         "second\"></svg>"
      << "<div class=\"legend\" id=\"tps-legend\"></div></div>\n";
  if (const std::string waits = waits_svg(run); !waits.empty())
    out << "<h2>Where the time went</h2>\n<p class=\"muted\">Share of the backends' time in "
           "each wait, sampled from pg_stat_activity (CPU: running, no wait; (/proc): a sleep "
           "PostgreSQL does not report, read from /proc).</p>\n"
        << "<div class=\"chart\">" << waits << "</div>\n";

  std::map<std::string, double> all_keys;
  for (const auto& stage : run.stages) {
    for (const auto& [key, v] : stage.evidence) {
      if (evidence_info(key).scale != EvidenceScale::kDriver) all_keys[key] = v;
    }
  }
  if (!all_keys.empty()) {
    out << "<h2>Evidence</h2>\n<p class=\"muted\">Per transaction (/tx), per minute (/min), or "
           "over "
           "the whole measured window (ratios, levels).</p>\n<table "
           "id=\"evidence\">\n<thead><tr><th>Evidence</th>";
    for (const auto& stage : run.stages)
      out << "<th class=\"num\">" << html_escape(stage.name) << "</th>";
    out << "</tr></thead>\n<tbody>\n";
    for (const auto& key : ordered_keys(all_keys)) {
      out << "<tr><td title=\"" << html_escape(key) << "\">" << html_escape(evidence_label(key))
          << "</td>";
      for (const auto& stage : run.stages) {
        const auto v = normalised_evidence(stage, key);
        out << "<td class=\"num\">" << (v ? html_escape(format_evidence_value(key, *v)) : "—")
            << "</td>";
      }
      out << "</tr>\n";
    }
    out << "</tbody>\n</table>\n";
  }

  bool any_warning = false;
  for (const auto& stage : run.stages) any_warning = any_warning || !stage.warnings.empty();
  if (any_warning) {
    out << "<h2>Warnings</h2>\n<ul>\n";
    for (const auto& stage : run.stages) {
      for (const auto& w : stage.warnings) {
        out << "<li><b>" << html_escape(stage.name) << "</b>: " << html_escape(w) << "</li>\n";
      }
    }
    out << "</ul>\n";
  }
  if (!run.expectations.empty()) {
    out << "<h2>Expectations</h2>\n<ul>\n";
    for (const auto& e : run.expectations) {
      out << "<li class=\"" << (e.passed ? "faster" : "slower") << "\">"
          << (e.passed ? "pass" : "FAIL") << ": " << html_escape(e.text)
          << (e.detail.empty() ? "" : " (" + html_escape(e.detail) + ")") << "</li>\n";
    }
    out << "</ul>\n";
  }

  out << "<script type=\"application/json\" id=\"pgslow-data\">" << chart_data(run, summaries)
      << "</script>\n<script>" << kScript << "</script>\n</body>\n</html>\n";
}

}  // namespace pgslow::report
