#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "report/attribution_view.h"
#include "report/audit.h"
#include "report/axes_view.h"
#include "report/curve.h"
#include "report/html_assets.h"
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
  // The interval under it: the verdict and its interval are one figure, read together.
  if (const std::string interval = verdict_interval(s); interval != "—")
    out += "<span class=\"design\">" + html_escape(interval) + "</span>";
  if (!s.design.empty()) out += "<span class=\"design\">" + html_escape(s.design) + "</span>";
  return out + "</td>";
}

// What a stage's small plot over time shows: throughput, or the latency's p99 (a checkpoint's
// spikes).
enum class Series { kTps, kP99 };

// One line of a small plot.
struct Line {
  std::vector<std::pair<double, double>> points;  // (x, value)
  const char* colour;
  std::string name = {};  // a tooltip; empty: none
};

void add_point(Line& line, std::size_t x, double y) {
  if (std::isfinite(y) && y > 0) line.points.emplace_back(static_cast<double>(x), y);
}

// Lines on one scale from 0 as a small plot, `label` its accessible name; empty with fewer
// than two points.
std::string lines_svg(const std::vector<Line>& lines, const std::string& label);

// A stage's throughput or p99 over time as a small line: per second of its median run, or per
// block of a switchback run (the stage's blocks in the stage's colour, the reference's in grey,
// on one scale). Empty with fewer than two points.
std::string series_svg(const StageResult& stage, Series series) {
  std::vector<Line> lines;
  if (stage.switchback) {
    Line mine{{}, "#c0392b"};
    Line reference{{}, "#8a94a3"};
    for (std::size_t i = 0; i < stage.switchback->blocks.size(); ++i) {
      const SwitchbackBlock& b = stage.switchback->blocks[i];
      if (b.seconds <= 0) continue;
      add_point(
          b.stage ? mine : reference, i,
          series == Series::kTps ? static_cast<double>(b.transactions) / b.seconds : b.p99_us);
    }
    lines = {reference, mine};
  } else if (const Measurement* m = median_repeat(stage)) {
    Line line{{}, series == Series::kTps ? "#3b6fd8" : "#b7791f"};
    const std::vector<double>& values =
        series == Series::kTps ? m->tps_per_second : m->p99_per_second;
    for (std::size_t i = 0; i < values.size(); ++i) add_point(line, i, values[i]);
    lines = {line};
  }
  return lines_svg(lines, series == Series::kTps ? "TPS" : "p99");
}

std::string lines_svg(const std::vector<Line>& lines, const std::string& label) {
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
      html_escape(label));
  for (const auto& l : lines) {
    if (l.points.empty()) continue;
    std::string pts;
    for (const auto& [x, y] : l.points)
      pts += fmt::format("{}{:.1f},{:.1f}", pts.empty() ? "" : " ", 2 + x / max_x * 156,
                         34 - y / max_y * 32);
    out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"",
                       pts, l.colour);
    out += l.name.empty() ? "/>" : "><title>" + html_escape(l.name) + "</title></polyline>";
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

namespace {

// One row per stage: its knobs, throughput, verdict, load columns and the evidence that moved.
void stages_table(const Run& run, const std::vector<StageSummary>& summaries, std::ostream& out) {
  const bool cumulative = run.mode != "isolated";
  // The server's CPU per transaction, when a local server gave it.
  const bool cpu = std::any_of(summaries.begin(), summaries.end(),
                               [](const StageSummary& s) { return s.cpu_vs_baseline.has_value(); });
  // Fits a 1280-pixel window: the transactions under the TPS, the interval under the verdict,
  // and the small lines under a figure wrap.
  out << "<h2>Stages</h2>\n<table id=\"stages\">\n<thead><tr><th>Stage</th><th>Knobs changed</th>"
      << "<th class=\"num\">TPS</th><th class=\"num\">vs baseline</th>"
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
    if (s.ran) tps += "<span class=\"design\">" + html_escape(s.transactions_text) + "</span>";
    if (!s.note.empty()) tps += "<span class=\"note\">" + html_escape(s.note) + "</span>";
    if (!s.headline_text.empty())
      tps += "<span class=\"headline\">" + html_escape(s.headline_text) + "</span>";
    if (!s.retries_text.empty())
      tps += "<span class=\"headline\">retries: " + html_escape(s.retries_text) + "</span>";
    for (const auto& w : s.headline_warnings)
      tps += "<span class=\"note\">" + html_escape(w) + "</span>";
    std::string evidence;
    for (const auto& m : s.movers)
      evidence += (evidence.empty() ? "" : "<br>") + html_escape(m.text);
    if (!stage.error.empty())
      evidence = "<span class=\"failed\">" + html_escape(stage.error) + "</span>";
    out << "<tr><td class=\"stage\">" << html_escape(stage.name) << "</td><td class=\"knobs\">"
        << (knobs.empty() ? "—" : knobs) << "</td><td class=\"num\">" << tps << "</td>"
        << verdict_td(s)
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
}

// The colours of a run's transaction types, in the order of its by_type.
constexpr std::array<const char*, 6> kTypeColours = {"#3b6fd8", "#e67e22", "#27ae60",
                                                     "#8e44ad", "#c0392b", "#16a085"};

// One plot of every type of a run over time: completions per minute, or the p90 latency, with
// the top of its scale beneath it (the plot runs from 0).
std::string type_series_svg(const Measurement& m, bool p90) {
  std::vector<Line> lines;
  double top = 0;
  for (std::size_t i = 0; i < m.type_series.size(); ++i) {
    const TypeSeries& t = m.type_series[i];
    Line line{{}, kTypeColours[i % kTypeColours.size()], t.name};
    for (std::size_t k = 0; k < t.finished.size(); ++k) {
      const double seconds = type_series_seconds(m, k);
      // A last interval cut short (a run that ended early) is no rate to plot.
      if (seconds < m.type_series_interval_s / 2) continue;
      const double value = p90 ? (k < t.p90_us.size() ? t.p90_us[k] : 0)
                               : static_cast<double>(t.finished[k]) * 60 / seconds;
      add_point(line, k, value);
      if (std::isfinite(value)) top = std::max(top, value);
    }
    lines.push_back(std::move(line));
  }
  const std::string plot =
      lines_svg(lines, p90 ? "p90 per type" : "completions per minute per type");
  if (plot.empty()) return plot;
  return plot + "<span class=\"design\">top " +
         html_escape(p90 ? format_latency_us(top) : format_number(top) + "/min") + "</span>";
}

// Each transaction type over time (a workload of several types: TPC-C-lite), per stage from
// its median run, as the TPC-C specification's 5.6 charts: completions per minute and p90.
void type_series_table(const Run& run, std::ostream& out) {
  std::string rows;
  std::vector<std::string> names;
  for (const StageResult& stage : run.stages) {
    const Measurement* m = median_repeat(stage);
    if (m == nullptr || m->type_series.empty()) continue;
    if (names.empty())
      for (const TypeSeries& t : m->type_series) names.push_back(t.name);
    rows += fmt::format(
        "<tr><td class=\"stage\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>\n",
        html_escape(stage.name), html_escape(format_seconds(m->type_series_interval_s)),
        type_series_svg(*m, false), type_series_svg(*m, true));
  }
  if (rows.empty()) return;
  std::string legend;
  for (std::size_t i = 0; i < names.size(); ++i)
    legend += fmt::format("<span><i style=\"background:{}\"></i>{}</span>",
                          kTypeColours[i % kTypeColours.size()], html_escape(names[i]));
  out << "<h2>Each transaction type over time</h2>\n<p class=\"muted\">Per stage, its median "
         "run's completions per minute and p90 latency of each type, interval by interval (a "
         "ramp, a checkpoint or a falling server shows here and not in the run's totals).</p>\n"
      << "<p class=\"legend\">" << legend << "</p>\n"
      << "<table id=\"type-series\">\n<thead><tr><th>Stage</th><th class=\"num\">interval</th>"
         "<th>completions per minute</th><th>p90</th></tr></thead>\n<tbody>\n"
      << rows << "</tbody>\n</table>\n";
}

// Every axis of the stages measured on more than one, with their small plots over time.
void axes_table(const Run& run, const std::vector<StageSummary>& summaries, std::ostream& out) {
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
}

// A sweep's curve per dimension (and series), with its knee and its table.
void sweep_sections(const Run& run, std::ostream& out) {
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
}

// The stages' attributions: a chart and a table each.
void attribution_sections(const Run& run, std::ostream& out) {
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
}

// Every server-side evidence key, one column per stage.
void evidence_table(const Run& run, std::ostream& out) {
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
}

void warnings_and_expectations(const Run& run, std::ostream& out) {
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
}

}  // namespace

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
      << "<title>" << html_escape(title) << "</title>\n<style>" << kHtmlStyle
      << "</style>\n</head>\n<body>\n"
      << "<h1>" << html_escape(title) << "</h1>\n";
  if (!run.description.empty())
    out << "<p class=\"description\">" << html_escape(run.description) << "</p>\n";
  out << "<dl class=\"facts\">\n";
  for (const auto& [label, value] : run_facts(run)) {
    out << "<dt>" << html_escape(label) << "</dt><dd>" << html_escape(value) << "</dd>\n";
  }
  out << "</dl>\n";

  stages_table(run, summaries, out);
  axes_table(run, summaries, out);
  type_series_table(run, out);
  sweep_sections(run, out);
  attribution_sections(run, out);

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

  evidence_table(run, out);
  warnings_and_expectations(run, out);

  out << "<script type=\"application/json\" id=\"pgslow-data\">" << chart_data(run, summaries)
      << "</script>\n<script>" << kHtmlScript << "</script>\n</body>\n</html>\n";
}

}  // namespace pgslow::report
