#include "report/bisect_view.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "report/attribution_view.h"
#include "report/axes_view.h"
#include "report/json.h"
#include "report/text.h"
#include "results/metric.h"
#include "results/stats.h"
#include "results/summary.h"

namespace pgslow::report {
namespace {

// A verdict for a reader: "fast"/"slow" as ever when the search looks for what made it worse;
// with --direction faster, "faster" (like bad) or "not faster" (like good), so a helper is not
// called "slow". JSON keeps to_string's words.
std::string verdict_text(const Metric& m, BisectVerdict v) {
  if (!m.better || v == BisectVerdict::kUncertain) return to_string(v);
  return v == BisectVerdict::kBad ? worse_word(m) : "not " + worse_word(m);
}

// The knobs of one configuration, short enough for a table cell.
std::string knob_list(const std::vector<std::string>& knobs, std::size_t total) {
  if (knobs.empty()) return "(none: good)";
  if (knobs.size() == total && total > 3) return fmt::format("all {} (bad)", total);
  if (knobs.size() <= 3) return fmt::format("{}", fmt::join(knobs, ", "));
  return fmt::format("{} knobs: {}, {}, +{} more", knobs.size(), knobs[0], knobs[1],
                     knobs.size() - 2);
}

// A search sample in the metric's table unit (metric_unit): TPS as it always read, "412.3".
std::string level_text(const Metric& m, double sample) {
  if (m.kind == Metric::Kind::kTps && !m.better) return fmt::format("{:.1f}", sample);
  return format_number(metric_in_unit(m, sample));
}
// A ratio of samples as a ratio of the metric's values: "0.25x" good's TPS, "4.00x" its cost.
std::string ratio_text(const Metric& m, double search_ratio) {
  return fmt::format("{:.2f}x", metric_ratio(m, search_ratio));
}

std::string seconds_text(double s) {
  if (s < 60) return fmt::format("{:.1f} s", s);
  return fmt::format("{}m {:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
}

using Table = std::vector<std::vector<std::string>>;

// Right-aligned cells: "412.3", "0.25x", "3 (+2)", "8.4 s", "1m 09s"; not "6 knobs: ...".
const std::regex kNumber(R"(^[0-9][0-9.,]*(x| s|m [0-9]+s)?( \(\+[0-9]+\))?$)");

// The rows as report/'s one table: a column whose cells are all numbers is right-aligned.
TextTable text_table(const Table& rows) {
  TextTable table;
  table.header = rows.front();
  table.rows.assign(rows.begin() + 1, rows.end());
  for (std::size_t c = 0; c < table.header.size(); ++c) {
    bool numeric = table.rows.size() > 0;
    for (const auto& row : table.rows)
      if (c < row.size() && !row[c].empty() && !std::regex_match(row[c], kNumber)) numeric = false;
    table.right.push_back(numeric);
  }
  return table;
}

void print_table(std::ostream& out, const Table& rows, const std::string& indent = "  ") {
  if (!rows.empty()) out << text_table(rows).render(indent);
}

void print_markdown_table(std::ostream& out, const Table& rows) {
  if (!rows.empty()) out << markdown_table(text_table(rows));
}

// "costs +12.0% CPU/tx [+4.1%, +20.5%]; TPS within noise (could see ±9.0%)".
std::string every_axis(const std::vector<AxisEffect>& axes) {
  return every_axis_text(axis_changes(axes));
}

// Axes as report.json's `axes` words them (report/json.h axes_json).
nlohmann::json axes_of(const std::vector<AxisEffect>& axes) {
  return nlohmann::json::parse(axes_json(axis_changes(axes)).dump());
}

Table culprit_table(const BisectResult& r) {
  const Metric m = r.metric;
  Table t{{"round", "change", "alone", "alone vs good", "group vs good", "kind"}};
  // Each culprit alone on every axis, when the lab recorded its runs.
  bool axes = false;
  for (const auto& g : r.culprits)
    for (const auto& solo : g.solo) axes = axes || !solo.axes.empty();
  if (axes) t.front().push_back("alone, every axis");
  for (const auto& g : r.culprits) {
    for (std::size_t i = 0; i < g.knobs.size(); ++i) {
      const BisectSolo& s = g.solo[i];
      t.push_back({std::to_string(g.round), g.changes[i],
                   verdict_text(m, s.verdict) + " " + level_text(m, s.tps) + " " + metric_unit(m),
                   ratio_text(m, s.ratio), i == 0 ? ratio_text(m, g.ratio) : "",
                   i == 0 ? std::string(g.knobs.size() == 1 ? "single knob"
                                        : g.interaction     ? "interaction (slow only together)"
                                                            : "combination") +
                                (g.certain ? "" : ", uncertain")
                          : ""});
      if (axes) t.back().push_back(s.axes.empty() ? "—" : axes_verdict(axis_changes(s.axes)).cell);
    }
  }
  return t;
}

Table run_table(const BisectResult& r) {
  Table t{{"#", "purpose", "configuration (good +)", "runs", metric_unit(r.metric), "vs good",
           "verdict", "time"}};
  for (const auto& run : r.runs) {
    std::string purpose =
        run.round > 0 ? fmt::format("{} r{}", run.purpose, run.round) : run.purpose;
    t.push_back({std::to_string(run.number), purpose + (run.restart ? " *" : ""),
                 knob_list(run.knobs, r.candidates.size()),
                 run.new_runs == static_cast<int>(run.tps.size())
                     ? std::to_string(run.new_runs)
                     : fmt::format("{} (+{})", run.tps.size(), run.new_runs),
                 level_text(r.metric, run.tps_level),
                 r.good_tps > 0 ? ratio_text(r.metric, run.tps_level / r.good_tps) : "",
                 verdict_text(r.metric, run.verdict), seconds_text(run.seconds)});
  }
  return t;
}

Table excluded_table(const BisectResult& r) {
  Table t{{"setting", "value", "where", "why not bisected"}};
  for (const auto& e : r.excluded)
    t.push_back({e.name, e.value, e.where, (e.invalid ? "invalid: " : "skipped: ") + e.reason});
  return t;
}

std::string summary_line(const BisectResult& r) {
  return fmt::format("{} runs ({} in the search) in {}; {} restart{} for postmaster-context knobs",
                     r.total_runs, r.search_runs, seconds_text(r.wall_seconds), r.restarts,
                     r.restarts == 1 ? "" : "s");
}

// "synchronous_commit TPS +45% [+31%, +60%]": a change's effect alone and its interval.
std::string effect_text(const Metric& m, const KnobEffect& k) {
  const EffectInterval e = in_metric_terms(m, *k.alone);
  auto pct = [](double ratio) { return format_signed_percent(ratio, 0); };
  return fmt::format("{} {} {} [{}, {}]", fmt::join(k.knobs, " + "), metric_label(m), pct(e.ratio),
                     pct(e.low), pct(e.high));
}

}  // namespace

std::string attribution_tally(const BisectResult& r) {
  if (!r.attribution) return "";
  const Metric m = r.attribution->metric;
  // In search samples, below 1 is the way the search looks (worse, or better with
  // --direction faster); which of the two is "helped" depends on the direction.
  std::vector<std::string> sought, opposite;
  int none = 0;
  for (const auto& k : r.attribution->knobs) {
    if (k.alone && k.alone->high < 1)
      sought.push_back(effect_text(m, k));
    else if (k.alone && k.alone->low > 1)
      opposite.push_back(effect_text(m, k));
    else
      ++none;
  }
  const auto& helped = m.better ? sought : opposite;
  const auto& hurt = m.better ? opposite : sought;
  auto part = [](const std::vector<std::string>& list, const std::string& word) {
    return list.empty() ? fmt::format("0 {}", word)
                        : fmt::format("{} {} ({})", list.size(), word, fmt::join(list, ", "));
  };
  const std::size_t changes = r.attribution->knobs.size();
  const std::string first = m.better ? part(helped, "helped") : part(hurt, "hurt");
  const std::string last = m.better ? part(hurt, "hurt") : part(helped, "helped");
  return fmt::format("{}'s {} change{}: {}, {} no measurable effect, {}",
                     r.bad_label.empty() ? "bad" : r.bad_label, changes, changes == 1 ? "" : "s",
                     first, none, last);
}

void render_bisect_console(const BisectResult& r, std::ostream& out) {
  out << "bisect: " << r.conclusion << "\n";
  if (r.attribution) out << "  " << attribution_tally(r) << "\n";
  out << "\n";
  const Metric m = r.metric;
  const std::string unit = metric_unit(m);
  if (!r.runs.empty()) {
    if (m != Metric::kTps)
      out << "  judged by " << metric_name(m) << ", looking for what made it " << worse_word(m)
          << "\n";
    out << fmt::format("  good {} {}, bad {} {} ({} good); noise ±{:.1f}% per run",
                       level_text(m, r.good_tps), unit, level_text(m, r.bad_tps), unit,
                       ratio_text(m, r.good_tps > 0 ? r.bad_tps / r.good_tps : 0), r.noise * 100);
    if (r.clearly_different)
      out << fmt::format("; threshold {} {}", level_text(m, r.threshold_tps), unit);
    if (r.drift != 0) out << fmt::format("; drift of good {:+.1f}%", r.drift * 100);
    out << "\n";
    if (r.remaining_tps)
      out << fmt::format("  bad without the culprits: {} {} ({} good)\n",
                         level_text(m, *r.remaining_tps), unit, ratio_text(m, *r.remaining_ratio));
    if (!r.axes.empty()) out << "  bad vs good on every axis: " << every_axis(r.axes) << "\n";
    if (!r.remaining_axes.empty())
      out << "  bad without the culprits on every axis: " << every_axis(r.remaining_axes) << "\n";
    out << "\n";
  }
  if (!r.culprits.empty()) {
    out << "Culprits\n";
    print_table(out, culprit_table(r));
    out << "\n";
  }
  if (r.attribution) {
    out << "Each change's part (--isolate)\n";
    for (const auto& line : attribution_lines(*r.attribution, "  ")) out << line << "\n";
    out << "\n";
  }
  if (!r.runs.empty()) {
    out << "Runs (* = restart needed)\n";
    print_table(out, run_table(r));
    out << "\n";
  }
  if (!r.excluded.empty()) {
    out << "Not bisected\n";
    print_table(out, excluded_table(r));
    out << "\n";
  }
  if (!r.identical.empty())
    out << fmt::format("Same in good and bad (not candidates): {}\n\n",
                       fmt::join(r.identical, ", "));
  out << summary_line(r) << "\n";
}

void render_bisect_markdown(const BisectResult& r, std::ostream& out) {
  out << "# pgslow bisect\n\n" << r.conclusion << "\n\n";
  if (r.attribution) out << "**" << attribution_tally(r) << "**\n\n";
  const Metric m = r.metric;
  const std::string unit = metric_unit(m);
  if (!r.runs.empty()) {
    if (m != Metric::kTps)
      out << "- judged by: " << metric_name(m) << ", looking for what made it " << worse_word(m)
          << "\n";
    out << fmt::format("- good: {} {}\n- bad: {} {} ({} good)\n- noise: ±{:.1f}% per run\n",
                       level_text(m, r.good_tps), unit, level_text(m, r.bad_tps), unit,
                       ratio_text(m, r.good_tps > 0 ? r.bad_tps / r.good_tps : 0), r.noise * 100);
    if (r.clearly_different)
      out << "- threshold: " << level_text(m, r.threshold_tps) << " " << unit << "\n";
    if (r.drift != 0)
      out << fmt::format("- drift of good (re-measured between rounds): {:+.1f}%\n", r.drift * 100);
    if (r.remaining_tps)
      out << fmt::format("- bad without the culprits: {} {} ({} good)\n",
                         level_text(m, *r.remaining_tps), unit, ratio_text(m, *r.remaining_ratio));
    if (!r.axes.empty()) out << "- bad vs good on every axis: " << every_axis(r.axes) << "\n";
    if (!r.remaining_axes.empty())
      out << "- bad without the culprits on every axis: " << every_axis(r.remaining_axes) << "\n";
    out << "- " << summary_line(r) << "\n\n";
  }
  if (!r.culprits.empty()) {
    out << "## Culprits\n\n";
    print_markdown_table(out, culprit_table(r));
    out << "\n";
  }
  if (r.attribution) {
    out << "## Each change's part\n\n**" << r.attribution->headline << "**\n\n";
    out << markdown_table(attribution_table(*r.attribution));
    out << "\n" << describe_attribution_cost(*r.attribution) << "\n\n";
  }
  if (!r.runs.empty()) {
    out << "## Runs\n\n";
    print_markdown_table(out, run_table(r));
    out << "\n";
  }
  if (!r.excluded.empty()) {
    out << "## Not bisected\n\n";
    print_markdown_table(out, excluded_table(r));
    out << "\n";
  }
  if (!r.identical.empty())
    out << "Same in good and bad (not candidates): "
        << fmt::format("{}", fmt::join(r.identical, ", ")) << "\n";
}

nlohmann::json bisect_to_json(const BisectResult& r) {
  using nlohmann::json;
  // Levels and samples in the metric's own unit (TPS, CPU seconds per transaction, µs) under
  // its name: "good_tps" as ever, "good_cpu_per_tx"; ratios are of the metric's values.
  const Metric m = r.metric;
  const std::string k = metric_name(m);
  auto value = [m](double sample) { return search_sample(m, sample); };
  auto ratio = [m](double search_ratio) { return metric_ratio(m, search_ratio); };
  json j;
  j["conclusion"] = r.conclusion;
  j["metric"] = k;
  j["direction"] = direction_name(m);
  j["good"] = r.good_label;
  j["bad"] = r.bad_label;
  j["good_" + k] = value(r.good_tps);
  j["bad_" + k] = value(r.bad_tps);
  j["noise"] = r.noise;
  j["threshold_" + k] = value(r.threshold_tps);
  j["clearly_different"] = r.clearly_different;
  j["uncertain"] = r.uncertain;
  j["total_runs"] = r.total_runs;
  j["search_runs"] = r.search_runs;
  j["restarts"] = r.restarts;
  j["wall_seconds"] = r.wall_seconds;
  j["remaining_" + k] = r.remaining_tps ? json(value(*r.remaining_tps)) : json(nullptr);
  j["candidates"] = json::array();
  for (const auto& c : r.candidates)
    j["candidates"].push_back({{"name", c.name},
                               {"good_value", c.good_value ? json(*c.good_value) : json(nullptr)},
                               {"bad_value", c.bad_value},
                               {"back_to_server_value", c.back_to_server_value},
                               {"needs_restart", c.needs_restart},
                               {"server_value", c.server_value},
                               {"where", c.where}});
  j["identical"] = r.identical;
  j["excluded"] = json::array();
  for (const auto& e : r.excluded)
    j["excluded"].push_back({{"name", e.name},
                             {"value", e.value},
                             {"where", e.where},
                             {"reason", e.reason},
                             {"invalid", e.invalid}});
  if (!r.axes.empty()) j["axes"] = axes_of(r.axes);
  if (!r.remaining_axes.empty()) j["remaining_axes"] = axes_of(r.remaining_axes);
  j["culprits"] = json::array();
  for (const auto& g : r.culprits) {
    json solo = json::array();
    for (const auto& s : g.solo) {
      solo.push_back({{"knob", s.knob},
                      {k, value(s.tps)},
                      {"ratio", ratio(s.ratio)},
                      {"verdict", to_string(s.verdict)}});
      if (!s.axes.empty()) solo.back()["axes"] = axes_of(s.axes);
    }
    j["culprits"].push_back({{"round", g.round},
                             {"knobs", g.knobs},
                             {"changes", g.changes},
                             {k, value(g.tps)},
                             {"ratio", ratio(g.ratio)},
                             {"threshold_" + k, value(g.threshold_tps)},
                             {"interaction", g.interaction},
                             {"certain", g.certain},
                             {"solo", solo}});
    if (!g.axes.empty()) j["culprits"].back()["axes"] = axes_of(g.axes);
  }
  if (r.attribution) {
    j["attribution"] = attribution_json(*r.attribution);
    j["tally"] = attribution_tally(r);
  }
  j["runs"] = json::array();
  for (const auto& run : r.runs) {
    json samples = json::array();
    for (double s : run.tps) samples.push_back(value(s));
    j["runs"].push_back({{"number", run.number},
                         {"purpose", run.purpose},
                         {"round", run.round},
                         {"knobs", run.knobs},
                         {k, samples},
                         {"new_runs", run.new_runs},
                         {k + "_level", value(run.tps_level)},
                         {"verdict", to_string(run.verdict)},
                         {"seconds", run.seconds},
                         {"restart", run.restart}});
  }
  return j;
}

}  // namespace pgslow::report
