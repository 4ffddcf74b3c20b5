#include "report/cliff_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "report/axes_view.h"
#include "report/json.h"
#include "report/text.h"
#include "results/evidence_info.h"
#include "results/metric.h"
#include "results/stats.h"
#include "results/summary.h"
#include "results/waits.h"

namespace pgslow::report {

namespace {

// The evidence that tells why a knob's value hurts, in the order tables show it.
const std::vector<std::string> kKeyEvidence = {"temp_files", "temp_bytes", "buffer_hit_ratio"};

// "-18.0% [-24.0%, -12.0%]", in the metric's own terms, with its label for a cost.
std::string effect_text(Metric m, const EffectInterval& search) {
  const EffectInterval e = in_metric_terms(m, search);
  const std::string label = m == Metric::kTps ? "" : metric_label(m) + " ";
  return fmt::format("{}{} [{}, {}]", label, format_signed_percent(e.ratio),
                     format_signed_percent(e.low), format_signed_percent(e.high));
}

std::string runs_text(const CliffPoint& p) {
  std::string out = fmt::format("{} run{}", p.samples.size(), p.samples.size() == 1 ? "" : "s");
  if (p.transactions > 0) out += ", " + format_count(p.transactions) + " transactions";
  return out;
}

// "at 2MB: -18.0% [-24.0%, -12.0%] (3 runs, ...)"; a point whose interval includes no change
// also says what it could have seen, so "no effect" and "too noisy to tell" read differently.
std::string at_text(const CliffResult& r, const CliffPoint& p) {
  std::string noise;
  if (p.effect.low <= 1 && p.effect.high >= 1 && p.effect.detectable > 0)
    noise = ", within noise (" + format_could_see(p.effect.detectable) + ")";
  return fmt::format("at {}: {}{} ({})", p.value, effect_text(r.metric, p.effect), noise,
                     runs_text(p));
}

std::string outcome(const CliffResult& r) {
  if (!r.first_harmful) return r.points.empty() ? "not_measured" : "no_cliff";
  return r.last_safe ? "cliff" : "first_step";
}

// The evidence keys any point has, in kKeyEvidence's order.
std::vector<std::string> evidence_columns(const CliffResult& r) {
  std::vector<std::string> keys;
  for (const auto& k : kKeyEvidence) {
    bool any = r.baseline.evidence.count(k) != 0;
    for (const auto& p : r.points) any = any || p.evidence.count(k) != 0;
    if (any) keys.push_back(k);
  }
  return keys;
}

std::string evidence_cell(const CliffPoint& p, const std::string& key) {
  auto it = p.evidence.find(key);
  return it == p.evidence.end() ? "—" : format_evidence_value(key, it->second);
}

std::string evidence_header(const std::string& key) {
  return evidence_label(key);
}

bool is_baseline(const CliffResult& r, const CliffPoint* p) {
  return p == &r.baseline;
}

// One point's every axis for a reader: its verdict naming the axis and an item per axis.
struct PointAxes {
  std::string value;
  AxesVerdict verdict;
  std::vector<std::string> items;  // every axis but TPS (in the verdict)
};

const char* const kAxesIntro =
    "every axis: each point against the baseline runs around it, Holm's rule over a point's axes";

std::vector<PointAxes> point_axes(const CliffResult& r) {
  std::vector<PointAxes> out;
  for (const CliffPoint* p : points_in_value_order(r)) {
    if (is_baseline(r, p) || p->axes.empty()) continue;
    const std::vector<AxisChange> changes = axis_changes(p->axes);
    out.push_back({p->value, axes_verdict(changes), axis_items(changes, true)});
  }
  return out;
}

// The table of points in value order, baseline first.
TextTable points_table(const CliffResult& r) {
  const Metric m = r.metric;
  TextTable t;
  const auto keys = evidence_columns(r);
  t.header = {r.knob, "runs", "transactions", metric_unit(m), "effect", "interval", "verdict"};
  t.right = {false, true, true, true, true, true, false};
  for (const auto& k : keys) {
    t.header.push_back(evidence_header(k));
    t.right.push_back(true);
  }
  for (const CliffPoint* p : points_in_value_order(r)) {
    const bool base = is_baseline(r, p);
    std::vector<std::string> row{p->value, std::to_string(p->samples.size()),
                                 count_or_dash(p->transactions)};
    const double level = p->samples.empty() ? 0 : std::exp(log_mean(p->samples));
    row.push_back(p->samples.empty() ? "—" : format_number(metric_in_unit(m, level)));
    if (base) {
      row.insert(row.end(), {"baseline", "", ""});
    } else {
      const EffectInterval e = in_metric_terms(m, p->effect);
      row.push_back(format_signed_percent(e.ratio));
      row.push_back(
          fmt::format("[{}, {}]", format_signed_percent(e.low), format_signed_percent(e.high)));
      std::string v = to_string(p->verdict);
      if (p->looks > 1) v += fmt::format(" ({} looks)", p->looks);
      if (!p->error.empty()) v += " (a run failed)";
      row.push_back(v);
    }
    for (const auto& k : keys) row.push_back(evidence_cell(*p, k));
    t.rows.push_back(row);
  }
  return t;
}

// The curve as text: one bar per value, its length the effect's size, to the worse side '█',
// to the better side '░', a point within noise a '·'.
std::vector<std::string> curve_lines(const CliffResult& r) {
  const Metric m = r.metric;
  double worst = 0;
  for (const auto& p : r.points) worst = std::max(worst, std::fabs(std::log(p.effect.ratio)));
  std::vector<std::string> lines;
  std::size_t width = 0;
  for (const CliffPoint* p : points_in_value_order(r)) width = std::max(width, p->value.size());
  for (const CliffPoint* p : points_in_value_order(r)) {
    if (is_baseline(r, p)) {
      lines.push_back(pad_right(p->value, width) + "  |  baseline");
      continue;
    }
    const double size = std::fabs(std::log(p->effect.ratio));
    const int n = worst > 0 ? static_cast<int>(std::lround(30 * size / worst)) : 0;
    std::string bar;
    const bool within =
        p->verdict != CliffVerdict::kHarmful && p->effect.low <= 1 && p->effect.high >= 1;
    if (within || n == 0) {
      bar = "·";
    } else {
      for (int i = 0; i < n; ++i) bar += p->effect.ratio < 1 ? "█" : "░";
    }
    lines.push_back(pad_right(p->value, width) + "  |" + bar + "  " +
                    format_signed_percent(in_metric_terms(m, p->effect).ratio));
  }
  return lines;
}

std::string setup_line(const CliffResult& r) {
  std::string s =
      fmt::format("{} from {} {} to {}: {} steps of at most {}x, at most {} points; judged by {}",
                  r.knob, r.from, cliff_direction(r), r.to, r.grid_steps,
                  fmt::format("{:g}", r.resolution), r.max_points, metric_name(r.metric));
  return s;
}

std::string cost_line(const CliffResult& r) {
  return fmt::format(
      "{} point{}, {} runs ({} of the baseline, interleaved), {}; each interval at {} so that the "
      "whole search is right {} of the time",
      r.points.size(), r.points.size() == 1 ? "" : "s", r.runs, r.baseline.samples.size(),
      format_seconds(r.seconds), format_percent(r.confidence), format_percent(r.search_confidence));
}

}  // namespace

std::string cliff_headline(const CliffResult& r) {
  const std::string dir = cliff_direction(r);
  if (r.points.empty())
    return fmt::format("nothing to search: {} and {} are the same", r.from, r.to);
  if (!r.first_harmful) {
    const CliffPoint& far = r.points.front();
    return fmt::format("no cliff in the range: safe {} to {} (the whole range); {}", dir, r.to,
                       at_text(r, far));
  }
  const CliffPoint& h = r.points[*r.first_harmful];
  if (!r.last_safe)
    return fmt::format("not safe {} {}: the first step is already {}; {}",
                       dir == "down" ? "below" : "above", r.from, worse_word(r.metric),
                       at_text(r, h));
  // "Safe" claims only what its interval could have seen there.
  const CliffPoint& safe = r.points[*r.last_safe];
  const std::string seen =
      safe.effect.detectable > 0 ? " (" + format_could_see(safe.effect.detectable) + " there)" : "";
  return fmt::format("safe {} to {}{}; {}", dir, safe.value, seen, at_text(r, h));
}

std::string cliff_uncertain_note(const CliffResult& r) {
  std::vector<std::string> values;
  for (const CliffPoint* p : points_in_value_order(r))
    if (p != &r.baseline && p->verdict == CliffVerdict::kUncertain) values.push_back(p->value);
  if (values.empty()) return "";
  std::string list;
  for (std::size_t i = 0; i < values.size(); ++i)
    list += (i == 0 ? "" : i + 1 == values.size() ? " and " : ", ") + values[i];
  return fmt::format(
      "{} looked {} only at a looser confidence than {}, even measured again: the search took "
      "{} as safe; more runs (--repeats) or a quieter machine would settle {}",
      list, worse_word(r.metric), format_percent(r.confidence), values.size() == 1 ? "it" : "them",
      values.size() == 1 ? "it" : "them");
}

std::string cliff_point_line(const CliffPoint& p, Metric metric) {
  const EffectInterval e = in_metric_terms(metric, p.effect);
  return fmt::format("point {:>2}  {:<10} {:>2} runs  {:+6.1f}% [{:+.1f}%, {:+.1f}%]  {}{}",
                     p.order, p.value, p.samples.size(), (e.ratio - 1) * 100, (e.low - 1) * 100,
                     (e.high - 1) * 100, to_string(p.verdict),
                     p.looks > 1 ? fmt::format(" (look {})", p.looks) : "");
}

void render_cliff_console(const CliffResult& r, std::ostream& out) {
  out << "cliff: " << printable_lines(setup_line(r)) << "\n";
  if (!r.workload.empty()) out << "  " << printable_lines(r.workload) << "\n";
  if (!r.server.empty()) out << "  on " << printable_lines(r.server) << "\n";
  out << "\n" << printable_lines(cliff_headline(r)) << "\n";
  if (const auto note = cliff_uncertain_note(r); !note.empty())
    out << printable_lines(note) << "\n";
  out << "\n";
  out << printable_lines(points_table(r).render("  "));
  out << "\ncurve (effect against " << printable_lines(r.baseline.value) << "):\n";
  for (const auto& l : curve_lines(r)) out << "  " << printable_lines(l) << "\n";
  if (const auto axes = point_axes(r); !axes.empty()) {
    std::size_t width = 0;
    for (const auto& a : axes) width = std::max(width, a.value.size());
    out << "\n" << kAxesIntro << ":\n";
    for (const auto& a : axes) {
      out << "  " << printable_lines(fmt::format("{:<{}}  {}", a.value, width, a.verdict.sentence))
          << "\n";
      for (const auto& l : wrap_items(a.items, 88))
        out << "  " << std::string(width + 2, ' ') << printable_lines(l) << "\n";
    }
  }
  out << "\n" << cost_line(r) << "\n";
  for (const auto& p : r.points)
    if (!p.error.empty()) out << "  " << printable_lines(p.value + ": " + p.error) << "\n";
}

void render_cliff_markdown(const CliffResult& r, std::ostream& out) {
  out << "# Cliff: " << markdown_text(r.knob) << "\n\n";
  out << markdown_text(setup_line(r)) << "\n\n";
  if (!r.workload.empty()) out << "Workload: " << markdown_text(r.workload) << "\n\n";
  if (!r.server.empty()) out << "Server: " << markdown_text(r.server) << "\n\n";
  out << "**" << markdown_text(cliff_headline(r)) << "**\n\n";
  if (const auto note = cliff_uncertain_note(r); !note.empty())
    out << markdown_text(note) << "\n\n";
  out << markdown_table(points_table(r));
  out << "\n```\n";
  for (const auto& l : curve_lines(r)) out << l << "\n";
  out << "```\n\n";
  if (const auto axes = point_axes(r); !axes.empty()) {
    out << markdown_text(std::string(kAxesIntro) + ":") << "\n\n";
    for (const auto& a : axes) {
      out << "- **" << markdown_text(a.value) << "**: " << markdown_text(a.verdict.sentence);
      if (!a.items.empty()) {
        std::string items;
        for (const auto& i : a.items) items += (items.empty() ? "" : "; ") + i;
        out << ". " << markdown_text(items);
      }
      out << "\n";
    }
    out << "\n";
  }
  out << markdown_text(cost_line(r)) << "\n";
  for (const auto& p : r.points)
    if (!p.error.empty()) out << "\n- " << markdown_text(p.value + ": " + p.error) << "\n";
}

void render_cliff_csv(const CliffResult& r, std::ostream& out) {
  const auto keys = evidence_columns(r);
  const Metric m = r.metric;
  std::vector<std::string> header{"knob",  "value",      "base_value",    "role",
                                  "order", "runs",       "baseline_runs", "transactions",
                                  "level", "level_unit", "effect",        "low",
                                  "high",  "verdict",    "looks"};
  // Every axis of each point against the baseline runs around it, as the run's CSV has them.
  const bool axes = std::any_of(r.points.begin(), r.points.end(),
                                [](const CliffPoint& p) { return !p.axes.empty(); });
  if (axes) {
    const std::vector<std::string> columns = axis_csv_header();
    header.insert(header.end(), columns.begin(), columns.end());
  }
  for (const auto& k : keys) header.push_back(k);
  for (std::size_t i = 0; i < header.size(); ++i) out << (i ? "," : "") << header[i];
  out << "\n";
  for (const CliffPoint* p : points_in_value_order(r)) {
    const bool base = is_baseline(r, p);
    const EffectInterval e = in_metric_terms(m, p->effect);
    const double level = p->samples.empty() ? 0 : metric_in_unit(m, std::exp(log_mean(p->samples)));
    std::vector<std::string> row{csv_field(r.knob),
                                 csv_field(p->value),
                                 fmt::format("{}", p->base_value),
                                 base ? "baseline" : "point",
                                 std::to_string(p->order),
                                 std::to_string(p->samples.size()),
                                 std::to_string(base ? 0 : p->baseline_samples.size()),
                                 std::to_string(p->transactions),
                                 fmt::format("{:.6g}", level),
                                 csv_field(metric_unit(m)),
                                 base ? "" : fmt::format("{:.6g}", e.ratio),
                                 base ? "" : fmt::format("{:.6g}", e.low),
                                 base ? "" : fmt::format("{:.6g}", e.high),
                                 base ? "baseline" : to_string(p->verdict),
                                 std::to_string(base ? 0 : p->looks)};
    if (axes) {
      const std::vector<std::string> cells = axis_csv_cells(axis_changes(p->axes));
      row.insert(row.end(), cells.begin(), cells.end());
    }
    for (const auto& k : keys) {
      auto it = p->evidence.find(k);
      row.push_back(it == p->evidence.end() ? "" : fmt::format("{:.6g}", it->second));
    }
    for (std::size_t i = 0; i < row.size(); ++i) out << (i ? "," : "") << row[i];
    out << "\n";
  }
}

namespace {

// The effect against the value, with each point's interval as a whisker: x in value order
// (the grid is even in log scale, so order is the scale), y the metric's change in percent.
std::string effect_svg(const CliffResult& r) {
  const Metric m = r.metric;
  const auto pts = points_in_value_order(r);
  const double w = 640, h = 240, left = 60, right = 20, top = 28, bottom = 40;
  double lo = 0, hi = 0;
  for (const CliffPoint* p : pts) {
    if (is_baseline(r, p)) continue;
    const EffectInterval e = in_metric_terms(m, p->effect);
    lo = std::min({lo, (e.low - 1) * 100, (e.ratio - 1) * 100});
    hi = std::max({hi, (e.high - 1) * 100, (e.ratio - 1) * 100});
  }
  if (hi - lo < 1) hi = lo + 1;
  const double span = hi - lo;
  lo -= span * 0.05;
  hi += span * 0.05;
  // x in log scale of the value, from `from` (left) to `to` (right), as the grid steps.
  const double lx0 = std::log(std::max(r.baseline.base_value, 1e-300));
  const double lx1 = std::log(std::max(r.to_value, 1e-300));
  auto x = [&](std::size_t i) {
    const double v = std::log(std::max(pts[i]->base_value, 1e-300));
    const double f = lx1 == lx0 ? 0.5 : (v - lx0) / (lx1 - lx0);
    return left + (w - left - right) * std::clamp(f, 0.0, 1.0);
  };
  auto y = [&](double pct) { return top + (h - top - bottom) * (hi - pct) / (hi - lo); };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\" aria-label=\"effect against {2}\">\n",
      w, h, html_escape(r.knob));
  s += fmt::format(
      "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#999\" "
      "stroke-dasharray=\"4 3\"/>\n",
      left, y(0), w - right, y(0));
  s += fmt::format("<text x=\"4\" y=\"{:.1f}\" font-size=\"11\">0%</text>\n", y(0) + 4);
  s += fmt::format(
      "<text x=\"{:.1f}\" y=\"12\" font-size=\"11\" text-anchor=\"middle\">{} against {} "
      "({} interval per point; {} in log scale)</text>\n",
      left + (w - left - right) / 2, html_escape(metric_label(m)), html_escape(r.baseline.value),
      format_percent(r.confidence), html_escape(r.knob));
  s += fmt::format("<text x=\"4\" y=\"{:.1f}\" font-size=\"11\">{:+.0f}%</text>\n", y(lo), lo);
  s += fmt::format("<text x=\"4\" y=\"{:.1f}\" font-size=\"11\">{:+.0f}%</text>\n", y(hi) + 10, hi);
  std::string path;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const CliffPoint* p = pts[i];
    const bool base = is_baseline(r, p);
    const EffectInterval e = in_metric_terms(m, p->effect);
    const double cy = base ? y(0) : y((e.ratio - 1) * 100);
    path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", x(i), cy);
    if (!base)
      s += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#555\"/>\n",
          x(i), y((e.low - 1) * 100), y((e.high - 1) * 100));
    const char* colour = base                                     ? "#1f77b4"
                         : p->verdict == CliffVerdict::kHarmful   ? "#d62728"
                         : p->verdict == CliffVerdict::kUncertain ? "#ff7f0e"
                                                                  : "#2ca02c";
    s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"/>\n", x(i), cy,
                     colour);
    s += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n", x(i),
        h - bottom + 16, html_escape(p->value));
  }
  s += "<path d=\"" + path + "\" fill=\"none\" stroke=\"#1f77b4\"/>\n</svg>\n";
  return s;
}

}  // namespace

void render_cliff_html(const CliffResult& r, std::ostream& out) {
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      << "<title>pgslow cliff " << html_escape(r.knob) << "</title>\n"
      << "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
         "td,th{border:1px solid #ccc;padding:2px "
         "8px;white-space:nowrap}td.n{text-align:right}</style>"
         "</head><body>\n";
  out << "<h1>Cliff: " << html_escape(r.knob) << "</h1>\n";
  out << "<p>" << html_escape(setup_line(r)) << "</p>\n";
  if (!r.workload.empty()) out << "<p>Workload: " << html_escape(r.workload) << "</p>\n";
  if (!r.server.empty()) out << "<p>Server: " << html_escape(r.server) << "</p>\n";
  out << "<p><strong>" << html_escape(cliff_headline(r)) << "</strong></p>\n";
  if (const auto note = cliff_uncertain_note(r); !note.empty())
    out << "<p>" << html_escape(note) << "</p>\n";
  out << effect_svg(r);
  const TextTable t = points_table(r);
  out << "<table>\n<tr>";
  for (const auto& hd : t.header) out << "<th>" << html_escape(hd) << "</th>";
  out << "</tr>\n";
  for (const auto& row : t.rows) {
    out << "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i)
      out << (t.right[i] ? "<td class=\"n\">" : "<td>") << html_escape(row[i]) << "</td>";
    out << "</tr>\n";
  }
  out << "</table>\n";
  if (const auto axes = point_axes(r); !axes.empty()) {
    out << "<p>" << html_escape(std::string(kAxesIntro)) << ".</p>\n<table>\n<tr><th>"
        << html_escape(r.knob) << "</th><th>verdict</th><th>axes</th></tr>\n";
    for (const auto& a : axes) {
      std::string items;
      for (const auto& i : a.items) items += (items.empty() ? "" : "<br>") + html_escape(i);
      out << "<tr><td>" << html_escape(a.value) << "</td><td>" << html_escape(a.verdict.sentence)
          << "</td><td>" << items << "</td></tr>\n";
    }
    out << "</table>\n";
  }
  out << "<p>" << html_escape(cost_line(r)) << "</p>\n";
  for (const auto& p : r.points)
    if (!p.error.empty()) out << "<p>" << html_escape(p.value + ": " + p.error) << "</p>\n";
  out << "</body></html>\n";
}

nlohmann::json cliff_to_json(const CliffResult& r) {
  const Metric m = r.metric;
  auto point_json = [&](const CliffPoint& p, bool base) {
    nlohmann::json j;
    j["value"] = p.value;
    j["base_value"] = p.base_value;
    j["runs"] = p.samples.size();
    j["transactions"] = p.transactions;
    j["tps"] = p.tps;
    j["p99_us"] = p.p99_us;
    j["samples"] = p.samples;
    j["evidence"] = p.evidence;
    if (p.waits) {
      // Shares of the median run's backend time per wait event (results/waits.h).
      nlohmann::json waits = nlohmann::json::object();
      for (const auto& w : results::wait_shares(*p.waits)) waits[w.wait] = w.share;
      j["waits"] = waits;
    }
    if (!base) {
      const EffectInterval e = in_metric_terms(m, p.effect);
      j["order"] = p.order;
      j["baseline_runs"] = p.baseline_samples.size();
      j["baseline_samples"] = p.baseline_samples;
      j["effect"] = {{"ratio", e.ratio}, {"low", e.low}, {"high", e.high}};
      j["verdict"] = to_string(p.verdict);
      j["looks"] = p.looks;
      if (!p.axes.empty()) {
        // Every axis against the baseline runs around the point, Holm's rule over them.
        const std::vector<AxisChange> changes = axis_changes(p.axes);
        const AxesVerdict v = axes_verdict(changes);
        j["axes_verdict"] = v.cell;
        j["axes_verdict_text"] = v.sentence;
        j["axes"] = nlohmann::json::parse(axes_json(changes).dump());
      }
      if (!p.error.empty()) j["error"] = p.error;
    }
    return j;
  };
  nlohmann::json j;
  j["knob"] = r.knob;
  j["from"] = r.from;
  j["to"] = r.to;
  j["to_value"] = r.to_value;
  j["direction"] = cliff_direction(r);
  j["resolution"] = r.resolution;
  j["metric"] = metric_name(m);
  j["grid_steps"] = r.grid_steps;
  j["max_points"] = r.max_points;
  j["confidence"] = r.confidence;
  j["runs"] = r.runs;
  j["seconds"] = r.seconds;
  j["workload"] = r.workload;
  j["server"] = r.server;
  j["outcome"] = outcome(r);
  j["headline"] = cliff_headline(r);
  j["uncertain_note"] = cliff_uncertain_note(r);
  j["last_safe"] = r.last_safe ? nlohmann::json(r.points[*r.last_safe].value) : nlohmann::json();
  j["first_harmful"] =
      r.first_harmful ? nlohmann::json(r.points[*r.first_harmful].value) : nlohmann::json();
  j["baseline"] = point_json(r.baseline, true);
  j["points"] = nlohmann::json::array();
  for (const auto& p : r.points) j["points"].push_back(point_json(p, false));
  return j;
}

}  // namespace pgslow::report
