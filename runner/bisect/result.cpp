#include "bisect/result.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "common/strings.h"
#include "report/attribution.h"
#include "report/json.h"
#include "report/text.h"

namespace pgslow::bisect {
namespace {

// The knobs of one configuration, short enough for a table cell.
std::string knob_list(const std::vector<std::string>& knobs, std::size_t total) {
  if (knobs.empty()) return "(none: good)";
  if (knobs.size() == total && total > 3) return fmt::format("all {} (bad)", total);
  if (knobs.size() <= 3) return join(knobs, ", ");
  return fmt::format("{} knobs: {}, {}, +{} more", knobs.size(), knobs[0], knobs[1],
                     knobs.size() - 2);
}

std::string tps_text(double tps) {
  return fmt::format("{:.1f}", tps);
}
std::string ratio_text(double r) {
  return fmt::format("{:.2f}x", r);
}

std::string seconds_text(double s) {
  if (s < 60) return fmt::format("{:.1f} s", s);
  return fmt::format("{}m {:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
}

using Table = std::vector<std::vector<std::string>>;

// Right-aligned cells: "412.3", "0.25x", "3 (+2)", "8.4 s", "1m 09s"; not "6 knobs: ...".
const std::regex kNumber(R"(^[0-9][0-9.,]*(x| s|m [0-9]+s)?( \(\+[0-9]+\))?$)");

// Through report/'s one table printer: a column whose cells are all numbers is right-aligned.
void print_table(std::ostream& out, const Table& rows, const std::string& indent = "  ") {
  if (rows.empty()) return;
  report::TextTable table;
  table.header = rows.front();
  table.rows.assign(rows.begin() + 1, rows.end());
  for (std::size_t c = 0; c < table.header.size(); ++c) {
    bool numeric = table.rows.size() > 0;
    for (const auto& row : table.rows)
      if (c < row.size() && !row[c].empty() && !std::regex_match(row[c], kNumber)) numeric = false;
    table.right.push_back(numeric);
  }
  out << table.render(indent);
}

void print_markdown_table(std::ostream& out, const Table& rows) {
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out << "|";
    for (const auto& cell : rows[r]) out << ' ' << cell << " |";
    out << '\n';
    if (r == 0) {
      out << "|";
      for (std::size_t i = 0; i < rows[r].size(); ++i) out << " --- |";
      out << '\n';
    }
  }
}

Table culprit_table(const Result& r) {
  Table t{{"round", "change", "alone", "alone vs good", "group vs good", "kind"}};
  for (const auto& g : r.culprits) {
    for (std::size_t i = 0; i < g.knobs.size(); ++i) {
      const SoloEffect& s = g.solo[i];
      t.push_back({std::to_string(g.round), g.changes[i],
                   to_string(s.verdict) + " " + tps_text(s.tps) + " TPS", ratio_text(s.ratio),
                   i == 0 ? ratio_text(g.ratio) : "",
                   i == 0 ? std::string(g.knobs.size() == 1 ? "single knob"
                                        : g.interaction     ? "interaction (slow only together)"
                                                            : "combination") +
                                (g.certain ? "" : ", uncertain")
                          : ""});
    }
  }
  return t;
}

Table run_table(const Result& r) {
  Table t{{"#", "purpose", "configuration (good +)", "runs", "TPS", "vs good", "verdict", "time"}};
  for (const auto& run : r.runs) {
    std::string purpose =
        run.round > 0 ? fmt::format("{} r{}", run.purpose, run.round) : run.purpose;
    t.push_back({std::to_string(run.number), purpose + (run.restart ? " *" : ""),
                 knob_list(run.knobs, r.candidates.size()),
                 run.new_runs == static_cast<int>(run.tps.size())
                     ? std::to_string(run.new_runs)
                     : fmt::format("{} (+{})", run.tps.size(), run.new_runs),
                 tps_text(run.tps_level),
                 r.good_tps > 0 ? ratio_text(run.tps_level / r.good_tps) : "",
                 to_string(run.verdict), seconds_text(run.seconds)});
  }
  return t;
}

Table excluded_table(const Result& r) {
  Table t{{"setting", "value", "where", "why not bisected"}};
  for (const auto& e : r.excluded)
    t.push_back({e.setting.name, e.setting.value, e.setting.where.str(),
                 (e.invalid ? "invalid: " : "skipped: ") + e.reason});
  return t;
}

std::string summary_line(const Result& r) {
  return fmt::format("{} runs ({} in the search) in {}; {} restart{} for postmaster-context knobs",
                     r.total_runs, r.search_runs, seconds_text(r.wall_seconds), r.restarts,
                     r.restarts == 1 ? "" : "s");
}

}  // namespace

std::string Candidate::describe() const {
  std::string from = good_value             ? *good_value
                     : server_value.empty() ? "(server value)"
                                            : fmt::format("(server value {})", server_value);
  std::string to =
      back_to_server_value ? fmt::format("(server value {})", change.value) : change.value;
  return fmt::format("{}: {} -> {}{}", change.name, from, to, needs_restart ? " [restart]" : "");
}

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::kGood:
      return "fast";
    case Verdict::kBad:
      return "slow";
    case Verdict::kUncertain:
      return "uncertain";
  }
  return "?";
}

void render_console(const Result& r, std::ostream& out) {
  out << "bisect: " << r.conclusion << "\n\n";
  if (!r.runs.empty()) {
    out << fmt::format("  good {} TPS, bad {} TPS ({} good); noise ±{:.1f}% per run",
                       tps_text(r.good_tps), tps_text(r.bad_tps),
                       ratio_text(r.good_tps > 0 ? r.bad_tps / r.good_tps : 0), r.noise * 100);
    if (r.clearly_different) out << fmt::format("; threshold {} TPS", tps_text(r.threshold_tps));
    if (r.drift != 0) out << fmt::format("; drift of good {:+.1f}%", r.drift * 100);
    out << "\n";
    if (r.remaining_tps)
      out << fmt::format("  bad without the culprits: {} TPS ({} good)\n",
                         tps_text(*r.remaining_tps), ratio_text(*r.remaining_ratio));
    out << "\n";
  }
  if (!r.culprits.empty()) {
    out << "Culprits\n";
    print_table(out, culprit_table(r));
    out << "\n";
  }
  if (r.attribution) {
    out << "Each change's part (--isolate)\n";
    for (const auto& line : report::attribution_lines(*r.attribution, "  ")) out << line << "\n";
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
    out << fmt::format("Same in good and bad (not candidates): {}\n\n", join(r.identical, ", "));
  out << summary_line(r) << "\n";
}

void render_markdown(const Result& r, std::ostream& out) {
  out << "# pgslow bisect\n\n" << r.conclusion << "\n\n";
  if (!r.runs.empty()) {
    out << fmt::format("- good: {} TPS\n- bad: {} TPS ({} good)\n- noise: ±{:.1f}% per run\n",
                       tps_text(r.good_tps), tps_text(r.bad_tps),
                       ratio_text(r.good_tps > 0 ? r.bad_tps / r.good_tps : 0), r.noise * 100);
    if (r.clearly_different) out << "- threshold: " << tps_text(r.threshold_tps) << " TPS\n";
    if (r.drift != 0)
      out << fmt::format("- drift of good (re-measured between rounds): {:+.1f}%\n", r.drift * 100);
    if (r.remaining_tps)
      out << fmt::format("- bad without the culprits: {} TPS ({} good)\n",
                         tps_text(*r.remaining_tps), ratio_text(*r.remaining_ratio));
    out << "- " << summary_line(r) << "\n\n";
  }
  if (!r.culprits.empty()) {
    out << "## Culprits\n\n";
    print_markdown_table(out, culprit_table(r));
    out << "\n";
  }
  if (r.attribution) {
    out << "## Each change's part\n\n**" << r.attribution->headline << "**\n\n";
    const report::TextTable t = report::attribution_table(*r.attribution);
    Table rows{t.header};
    for (const auto& row : t.rows) rows.push_back(row);
    print_markdown_table(out, rows);
    out << "\n" << report::describe_attribution_cost(*r.attribution) << "\n\n";
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
    out << "Same in good and bad (not candidates): " << join(r.identical, ", ") << "\n";
}

nlohmann::json to_json(const Result& r) {
  using nlohmann::json;
  json j;
  j["conclusion"] = r.conclusion;
  j["good_tps"] = r.good_tps;
  j["bad_tps"] = r.bad_tps;
  j["noise"] = r.noise;
  j["threshold_tps"] = r.threshold_tps;
  j["clearly_different"] = r.clearly_different;
  j["uncertain"] = r.uncertain;
  j["total_runs"] = r.total_runs;
  j["search_runs"] = r.search_runs;
  j["restarts"] = r.restarts;
  j["wall_seconds"] = r.wall_seconds;
  j["remaining_tps"] = r.remaining_tps ? json(*r.remaining_tps) : json(nullptr);
  j["candidates"] = json::array();
  for (const auto& c : r.candidates)
    j["candidates"].push_back({{"name", c.change.name},
                               {"good_value", c.good_value ? json(*c.good_value) : json(nullptr)},
                               {"bad_value", c.change.value},
                               {"back_to_server_value", c.back_to_server_value},
                               {"needs_restart", c.needs_restart},
                               {"server_value", c.server_value},
                               {"where", c.change.where.str()}});
  j["identical"] = r.identical;
  j["excluded"] = json::array();
  for (const auto& e : r.excluded)
    j["excluded"].push_back({{"name", e.setting.name},
                             {"value", e.setting.value},
                             {"where", e.setting.where.str()},
                             {"reason", e.reason},
                             {"invalid", e.invalid}});
  j["culprits"] = json::array();
  for (const auto& g : r.culprits) {
    json solo = json::array();
    for (const auto& s : g.solo)
      solo.push_back({{"knob", s.knob},
                      {"tps", s.tps},
                      {"ratio", s.ratio},
                      {"verdict", to_string(s.verdict)}});
    j["culprits"].push_back({{"round", g.round},
                             {"knobs", g.knobs},
                             {"changes", g.changes},
                             {"tps", g.tps},
                             {"ratio", g.ratio},
                             {"threshold_tps", g.threshold_tps},
                             {"interaction", g.interaction},
                             {"certain", g.certain},
                             {"solo", solo}});
  }
  if (r.attribution) j["attribution"] = report::attribution_json(*r.attribution);
  j["runs"] = json::array();
  for (const auto& run : r.runs)
    j["runs"].push_back({{"number", run.number},
                         {"purpose", run.purpose},
                         {"round", run.round},
                         {"knobs", run.knobs},
                         {"tps", run.tps},
                         {"new_runs", run.new_runs},
                         {"tps_level", run.tps_level},
                         {"verdict", to_string(run.verdict)},
                         {"seconds", run.seconds},
                         {"restart", run.restart}});
  return j;
}

}  // namespace pgslow::bisect
