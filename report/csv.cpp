#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string_view>

#include "report/attribution_view.h"
#include "report/audit.h"
#include "report/axes_view.h"
#include "report/load_columns.h"
#include "report/registry.h"
#include "report/text.h"
#include "results/evidence_info.h"
#include "results/load_fields.h"
#include "results/metric.h"
#include "results/summary.h"
#include "results/waits.h"

namespace pgslow::report {

namespace {

bool is_number(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

// A load setting's cell: whole numbers, plain numbers, true/false, words as they are.
std::string csv_text(int v) {
  return std::to_string(v);
}
std::string csv_text(double v) {
  return csv_number(v);
}
std::string csv_text(bool v) {
  return v ? "true" : "false";
}
std::string csv_text(const std::string& v) {
  return v;
}
// Settings by name, as a stage's `load:` writes them: "default_pool_size=2 pool_mode=session".
std::string csv_text(const std::map<std::string, std::string>& v) {
  std::string out;
  for (const auto& [name, value] : v) out += (out.empty() ? "" : " ") + name + "=" + value;
  return out;
}

}  // namespace

// RFC 4180: quote a field holding a comma, quote or line break; double inner quotes. A text
// starting with = + - @ (or a tab or carriage return) would be a formula in a spreadsheet:
// it gets a leading ' (OWASP's CSV injection advice); plain numbers stay numbers.
std::string csv_number(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : "";
}

std::string csv_field(const std::string& raw) {
  std::string s = printable_lines(raw);
  if (!raw.empty() && std::string_view("=+-@\t\r").find(raw.front()) != std::string_view::npos &&
      !is_number(raw))
    s = "'" + s;
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

namespace {

// The stage columns, then the load, the axes, the sweep, every evidence key and wait, the error,
// and the attribution's knob columns.
std::vector<std::string> csv_header(const Run& run, const std::vector<LoadColumn>& columns,
                                    const std::vector<std::string>& keys,
                                    const std::set<std::string>& waits) {
  std::vector<std::string> header = {"stage",
                                     "status",
                                     "knobs_changed",
                                     "skipped_knobs",
                                     "tps_median",
                                     "tps_min",
                                     "tps_max",
                                     "repeats",
                                     "transactions",
                                     "vs_previous_ratio",
                                     "vs_baseline_ratio",
                                     "effect_vs_previous",
                                     "effect_vs_baseline",
                                     "vs_baseline_low",
                                     "vs_baseline_high",
                                     "verdict_vs_baseline",
                                     "p50_ms",
                                     "p99_ms",
                                     "failed",
                                     "retries",
                                     "retries_by_type",
                                     "clients",
                                     "evidence_seconds",
                                     "headline",
                                     "audit"};
  for (const auto& c : columns) {
    if (c.key != "failed") header.push_back(c.key);
  }
  for (int column = 1; column <= results::kLoadCsvColumns; ++column)
    results::for_each_load_field([&](const auto& row) {
      if (row.csv_column == column) header.push_back(row.name);
    });
  // Every axis against the baseline (results/axes.h): ratio stage / baseline, the interval at
  // the confidence Holm's rule stated it at, and whether it moved.
  const std::vector<std::string> axes = axis_csv_header();
  header.insert(header.end(), axes.begin(), axes.end());
  // A sweep point's value per swept dimension, as written ("32MB"): the curve's x axis.
  for (const auto& d : run.sweep) header.push_back("sweep_" + d);
  for (const auto& k : keys) header.push_back(k);
  for (const auto& w : waits) header.push_back("wait_share:" + w);
  header.push_back("error");
  // Per-knob attribution: one more row per knob under its stage (status "knob"), with these
  // columns filled; empty on stage rows.
  // Ratios are of the attribution's metric (knob_metric: tps, cpu_per_tx, p99), new / reference.
  for (const char* h : {"knob", "verdict", "alone_ratio", "alone_low", "alone_high",
                        "without_ratio", "knob_transactions", "knob_evidence", "knob_metric"})
    header.push_back(h);
  return header;
}

// One stage's row, in the header's order up to its error column.
std::vector<std::string> stage_row(const Run& run, const StageSummary& s,
                                   const std::vector<LoadColumn>& columns,
                                   const std::vector<std::string>& keys,
                                   const std::set<std::string>& waits) {
  const StageResult& stage = run.stages[s.index];
  const Measurement* m = median_repeat(stage);
  std::string knobs;
  for (const auto& c : stage.changes) knobs += (knobs.empty() ? "" : "; ") + describe_change(c);
  std::string skipped;
  for (const auto& k : stage.skipped)
    skipped += (skipped.empty() ? "" : "; ") + describe_skipped(k);
  std::vector<std::string> row = {
      stage.name,
      s.ran ? "ok" : "failed",
      knobs,
      skipped,
      s.ran ? csv_number(s.tps) : "",
      s.ran ? csv_number(s.tps_min) : "",
      s.ran ? csv_number(s.tps_max) : "",
      std::to_string(s.repeats),
      s.ran ? std::to_string(s.transactions) : "",
      s.vs_previous ? csv_number(s.vs_previous->ratio) : "",
      s.vs_baseline ? csv_number(s.vs_baseline->ratio) : "",
      s.vs_previous ? s.vs_previous->text : "",
      s.vs_baseline ? s.vs_baseline->text : "",
      s.vs_baseline && s.vs_baseline->interval.known ? csv_number(s.vs_baseline->interval.low) : "",
      s.vs_baseline && s.vs_baseline->interval.known ? csv_number(s.vs_baseline->interval.high)
                                                     : "",
      s.verdict.sentence,
      m != nullptr ? csv_number(m->latency.p50_us / 1000) : "",
      m != nullptr ? csv_number(m->latency.p99_us / 1000) : "",
      m != nullptr ? std::to_string(m->failed) : "",
      m != nullptr ? std::to_string(m->retries) : "",
      s.retries_text,
      std::to_string(stage.load.clients),
      s.ran ? csv_number(s.window_seconds) : "",
      s.headline_text,
      m != nullptr ? audit_summary(m->audit) : "",
  };
  for (const auto& c : columns) {
    if (c.key != "failed") row.push_back(c.csv(stage, m));
  }
  for (int column = 1; column <= results::kLoadCsvColumns; ++column)
    results::for_each_load_field([&](const auto& field) {
      if (field.csv_column == column) row.push_back(csv_text(stage.load.*(field.member)));
    });
  const std::vector<std::string> axes = axis_csv_cells(s.axes);
  row.insert(row.end(), axes.begin(), axes.end());
  for (const auto& d : run.sweep) {
    const auto it = stage.sweep_values.find(d);
    row.push_back(it != stage.sweep_values.end() ? it->second : "");
  }
  for (const auto& k : keys) {
    const auto it = stage.evidence.find(k);
    row.push_back(it != stage.evidence.end() ? csv_number(it->second) : "");
  }
  for (const auto& w : waits)
    row.push_back(stage.waits ? csv_number(wait_share(*stage.waits, w)) : "");
  row.push_back(stage.error);
  return row;
}

// Per-knob attribution: one more row per knob under its stage (status "knob").
void knob_rows(const StageResult& stage, const std::vector<std::string>& header,
               std::ostream& out) {
  const std::size_t columns = header.size();
  const auto first_axis = static_cast<std::size_t>(
      std::find(header.begin(), header.end(), "axis_tps_ratio") - header.begin());
  const Attribution& a = *stage.attribution;
  for (const auto& k : a.knobs) {
    // Harmless knobs carry the group's interval: the one measurement they rest on.
    const EffectInterval* found = k.alone ? &*k.alone : (a.harmless ? &*a.harmless : nullptr);
    std::optional<EffectInterval> shown;
    if (found) shown = in_metric_terms(a.metric, *found);
    const EffectInterval* e = shown ? &*shown : nullptr;
    std::vector<std::string> knob_row(columns - 9);
    knob_row[0] = stage.name;
    knob_row[1] = "knob";
    // Its axes alone against the reference, in the stage's axis columns.
    // Harmless knobs carry the group's axes, as they carry its interval.
    const std::vector<AxisEffect>& own = k.alone ? k.axes : a.harmless_axes;
    const std::vector<std::string> axes = axis_csv_cells(axis_changes(own));
    if (!own.empty() && first_axis + axes.size() <= knob_row.size())
      std::copy(axes.begin(), axes.end(),
                knob_row.begin() + static_cast<std::ptrdiff_t>(first_axis));
    std::string ev;
    for (const auto& moved : k.evidence) ev += (ev.empty() ? "" : "; ") + describe_evidence(moved);
    for (const std::string& cell :
         {describe_knob(k), k.verdict, e ? csv_number(e->ratio) : "", e ? csv_number(e->low) : "",
          e ? csv_number(e->high) : "",
          k.without ? csv_number(metric_ratio(a.metric, k.without->ratio)) : "",
          e ? std::to_string(e->transactions) : "", ev, metric_name(a.metric)})
      knob_row.push_back(cell);
    for (std::size_t i = 0; i < knob_row.size(); ++i)
      out << (i ? "," : "") << csv_field(knob_row[i]);
    out << "\n";
  }
}

}  // namespace

void render_csv(const Run& run, std::ostream& out) {
  std::map<std::string, double> all_keys;
  for (const auto& stage : run.stages) {
    for (const auto& [key, v] : stage.evidence) all_keys[key] = v;
  }
  const auto keys = ordered_keys(all_keys);
  const auto columns = load_columns(run);
  // Each wait any stage saw: its share of the stage's backend time (results/waits.h).
  std::set<std::string> waits;
  for (const auto& stage : run.stages)
    if (stage.waits)
      for (const auto& [wait, n] : stage.waits->backends) waits.insert(wait);
  const std::vector<std::string> header = csv_header(run, columns, keys, waits);
  for (std::size_t i = 0; i < header.size(); ++i) out << (i ? "," : "") << header[i];
  out << "\n";

  for (const auto& s : summarize(run)) {
    const StageResult& stage = run.stages[s.index];
    std::vector<std::string> row = stage_row(run, s, columns, keys, waits);
    row.resize(header.size());
    for (std::size_t i = 0; i < row.size(); ++i) out << (i ? "," : "") << csv_field(row[i]);
    out << "\n";
    if (stage.attribution) knob_rows(stage, header, out);
  }
}

}  // namespace pgslow::report
