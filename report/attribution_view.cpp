#include "report/attribution_view.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/axes_view.h"
#include "report/text.h"
#include "results/evidence_info.h"
#include "results/metric.h"
#include "results/stats.h"
#include "results/summary.h"

namespace pgslow::report {

std::string describe_knob(const KnobEffect& k) {
  std::string out;
  for (std::size_t i = 0; i < k.knobs.size(); ++i) {
    if (i > 0) out += " + ";
    out += k.knobs[i] + " = " + (i < k.values.size() ? k.values[i] : "?");
  }
  return out;
}

namespace {

std::string ratio_text(double r) {
  return format_number(r, 3) + "x";
}

}  // namespace

// The interval's bounds in the metric's own terms: "0.0363x-0.146x" of TPS, "1.05x-1.21x" of
// CPU per transaction.
std::string bounds_text(const Metric& m, const EffectInterval& e) {
  const EffectInterval shown = in_metric_terms(m, e);
  return ratio_text(shown.low) + "-" + ratio_text(shown.high);
}

// The harmless group's change and what it could have seen: "-1.0% (0.920x-1.07x, could see
// ±8.5%, 43,055 tx)".
std::string group_text(const Metric& m, const EffectInterval& e) {
  return fmt::format("{} ({}{}, {} tx)", format_metric_change(m, e.ratio), bounds_text(m, e),
                     e.detectable > 0 ? ", " + format_could_see(e.detectable) : "",
                     count_or_dash(e.transactions));
}

std::string format_interval(const EffectInterval& e) {
  return fmt::format("{} (95%: {}-{})", ratio_text(e.ratio), ratio_text(e.low), ratio_text(e.high));
}

std::string describe_evidence(const KnobEvidence& e) {
  if (e.key == "latency_p99")
    return "p99 latency " + format_latency_us(e.reference) + " → " + format_latency_us(e.value);
  return evidence_label(e.key) + " " + format_evidence_value(e.key, e.reference) + " → " +
         format_evidence_value(e.key, e.value);
}

TextTable attribution_table(const Attribution& a) {
  const Metric m = a.metric;
  TextTable t;
  // The knobs' axes alone, when the lab recorded their runs.
  const bool axes =
      !a.harmless_axes.empty() || std::any_of(a.knobs.begin(), a.knobs.end(),
                                              [](const KnobEffect& k) { return !k.axes.empty(); });
  t.header = {"knob", "verdict", "alone", "95% interval", "stage without it", "tx"};
  t.right = {false, false, true, true, true, true};
  if (axes) {
    t.header.push_back("every axis");
    t.right.push_back(false);
  }
  t.header.push_back("evidence");
  t.right.push_back(false);
  bool group_shown = false;
  for (const auto& k : a.knobs) {
    std::vector<std::string> row{describe_knob(k), k.verdict};
    const std::vector<AxisEffect>* row_axes = &k.axes;  // the group's on the group's row
    if (k.alone) {
      row.push_back(format_metric_change(m, k.alone->ratio));
      row.push_back(bounds_text(m, *k.alone));
      row.push_back(k.without ? format_metric_change(m, k.without->ratio) : "—");
      row.push_back(count_or_dash(k.alone->transactions));
    } else if (a.harmless && !group_shown) {
      // The harmless knobs share one measurement: all of them together.
      row.push_back("as a group: " + format_metric_change(m, a.harmless->ratio));
      row.push_back(bounds_text(m, *a.harmless) +
                    (a.harmless->detectable > 0
                         ? " (" + format_could_see(a.harmless->detectable) + ")"
                         : ""));
      row.push_back("—");
      row.push_back(count_or_dash(a.harmless->transactions));
      row_axes = &a.harmless_axes;
      group_shown = true;
    } else {
      row.insert(row.end(), {a.harmless ? "(same group)" : "—", "", "", ""});
    }
    if (axes) row.push_back(row_axes->empty() ? "—" : every_axis_text(axis_changes(*row_axes)));
    std::string ev;
    for (const auto& e : k.evidence) ev += (ev.empty() ? "" : "; ") + describe_evidence(e);
    if (!k.note.empty()) ev += (ev.empty() ? "" : "; ") + k.note;
    row.push_back(ev.empty() ? "—" : ev);
    t.rows.push_back(std::move(row));
  }
  return t;
}

namespace {

// Words of `text` in lines of at most `width` columns: the first starts with `first`, the
// rest with `rest` (a hanging indent).
void wrap(const std::string& text, const std::string& first, const std::string& rest,
          std::size_t width, std::vector<std::string>& out) {
  std::string line = first;
  bool empty = true;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    if (!empty && display_width(line) + 1 + display_width(word) > width) {
      out.push_back(line);
      line = rest;
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  if (!empty) out.push_back(line);
}

}  // namespace

std::vector<std::string> attribution_lines(const Attribution& a, const std::string& indent,
                                           std::size_t width) {
  const Metric m = a.metric;
  std::vector<std::string> out;
  const std::string more = indent + "  ";
  wrap(a.headline, indent, more, width, out);
  std::size_t verdict_width = 0;
  for (const auto& k : a.knobs) verdict_width = std::max(verdict_width, display_width(k.verdict));
  bool group_shown = false;
  for (const auto& k : a.knobs) {
    std::string text = describe_knob(k);
    if (k.alone) {
      text += fmt::format(": alone {} ({}, {} tx)", format_metric_change(m, k.alone->ratio),
                          bounds_text(m, *k.alone), count_or_dash(k.alone->transactions));
      if (k.without) text += "; stage without it " + format_metric_change(m, k.without->ratio);
    } else if (a.harmless && !group_shown) {
      text += ": as a group " + group_text(m, *a.harmless);
      if (!a.harmless_axes.empty())
        text += "; every axis: " + every_axis_text(axis_changes(a.harmless_axes));
      group_shown = true;
    }
    std::string ev;
    for (const auto& e : k.evidence) ev += (ev.empty() ? "" : "; ") + describe_evidence(e);
    if (!ev.empty()) text += "; moved: " + ev;
    // Alone on every axis: what it costs even where the metric did not move.
    if (!k.axes.empty()) text += "; every axis: " + every_axis_text(axis_changes(k.axes));
    if (!k.note.empty()) text += "; " + k.note;
    wrap(text, more + pad_right(k.verdict, verdict_width) + "  ",
         more + std::string(verdict_width + 4, ' '), width, out);
  }
  wrap("vs " + a.reference + (m == Metric::kTps ? "" : ", judged by " + metric_name(m)) + "; " +
           describe_attribution_cost(a) + (a.note.empty() ? "" : "; " + a.note),
       more, more + "  ", width, out);
  return out;
}

std::string describe_attribution_cost(const Attribution& a) {
  if (a.extra_runs == 0)
    return fmt::format(
        "no extra runs (the stage's and the baseline's own sufficed); noise "
        "±{:.1f}% per run",
        a.noise * 100);
  return fmt::format("{} extra run{} ({} restart{}, {}); noise ±{:.1f}% per run", a.extra_runs,
                     a.extra_runs == 1 ? "" : "s", a.restarts, a.restarts == 1 ? "" : "s",
                     format_seconds(a.seconds), a.noise * 100);
}

}  // namespace pgslow::report
