#include "report/catalog_view.h"

#include <fmt/format.h>

#include <ostream>

#include "common/strings.h"
#include "report/json_schema.h"
#include "report/text.h"
#include "results/axes.h"

namespace pgslow::report {

// The JSON of the catalog's results as data (json_schema.h): a key is one line here. Live
// columns and the server appear only when a server was asked.
namespace json_schema {

template <>
struct Fields<results::VersionMinimum> {
  using S = results::VersionMinimum;
  static constexpr auto list = std::tuple{field("version", &S::version), field("value", &S::value)};
};

template <>
struct Fields<results::LiveSetting> {
  using S = results::LiveSetting;
  static constexpr auto enum_values = [](const S& s) { return !s.accepted.empty(); };
  static constexpr auto list = std::tuple{field("current", &S::current),
                                          field("setting", &S::setting),
                                          field("unit", &S::unit),
                                          field("min", &S::min),
                                          field("max", &S::max),
                                          field("accepted", &S::accepted, enum_values),
                                          field("type", &S::type),
                                          field("context", &S::context),
                                          field("applies_by", &S::applies_by),
                                          field("source", &S::source),
                                          field("default", &S::default_value),
                                          field("pending_restart", &S::pending_restart)};
};

template <>
struct Fields<results::KnobDetail> {
  using S = results::KnobDetail;
  static constexpr auto with_server = [](const S& k) { return !k.server.empty(); };
  static constexpr auto live = [](const S& k) { return k.live.has_value(); };
  static constexpr auto missing = [](const S& k) { return !k.server.empty() && !k.live; };
  static constexpr auto list = std::tuple{field("name", &S::name),
                                          field("category", &S::category),
                                          field("versions", &S::versions),
                                          field("why", &S::why),
                                          field("healthy", &S::healthy),
                                          field("slow", &S::slow),
                                          field("watch", &S::watch),
                                          field("moves", &S::moves),
                                          field("minimum", &S::minimum),
                                          field("docs", &S::docs),
                                          field("pitfalls", &S::pitfalls),
                                          field("server", &S::server, with_server),
                                          field("server_major", &S::server_major, with_server),
                                          field("live", &S::live, live),
                                          field("available", &S::unavailable, missing)};
};

template <>
struct Fields<results::PresetSummary> {
  using S = results::PresetSummary;
  static constexpr auto list = std::tuple{field("name", &S::name), field("knobs", &S::knobs),
                                          field("description", &S::description)};
};

template <>
struct Fields<results::PresetList> {
  using S = results::PresetList;
  static constexpr auto list = std::tuple{field("presets", &S::presets)};
};

template <>
struct Fields<results::PresetSetting> {
  using S = results::PresetSetting;
  static constexpr auto list =
      std::tuple{field("knob", &S::knob), field("value", &S::value),
                 field("category", &S::category), field("since", &S::since)};
};

template <>
struct Fields<results::SettingCheck> {
  using S = results::SettingCheck;
  static constexpr auto list = std::tuple{field("knob", &S::knob), field("value", &S::value),
                                          field("verdict", &S::verdict), field("note", &S::note)};
};

template <>
struct Fields<results::PresetDetail> {
  using S = results::PresetDetail;
  static constexpr auto with_server = [](const S& p) { return !p.server.empty(); };
  static constexpr auto list = std::tuple{field("name", &S::name),
                                          field("description", &S::description),
                                          field("includes", &S::includes),
                                          field("settings", &S::settings),
                                          field("server", &S::server, with_server),
                                          field("server_major", &S::server_major, with_server),
                                          field("checks", &S::checks, with_server),
                                          field("problem_count", &S::problem_count, with_server),
                                          field("problems", &S::problems, with_server)};
};

}  // namespace json_schema

namespace {

// The catalog entry as key/value rows; the terminal and Markdown show the same rows.
TextTable catalog_rows(const results::KnobDetail& k, bool markdown) {
  TextTable t{markdown ? std::vector<std::string>{"", "catalog"} : std::vector<std::string>{"", ""},
              {},
              {}};
  t.rows.push_back({"healthy", k.healthy});
  t.rows.push_back({"slow", join(k.slow, ", ") + "  (worst last)"});
  t.rows.push_back({"watch", join(k.watch, ", ")});
  if (!k.moves.empty()) {
    std::vector<std::string> labels;
    for (const auto& key : k.moves)
      if (const results::Axis* a = results::find_axis(key)) labels.emplace_back(a->label);
    t.rows.push_back({"tested first", "TPS, " + join(labels, ", ") + "  (the axes it moves)"});
  }
  std::vector<std::string> mins;
  for (const auto& m : k.minimum) mins.push_back(fmt::format("{}: {}", m.version, m.value));
  if (!mins.empty()) t.rows.push_back({"minimum", join(mins, ", ")});
  t.rows.push_back({"docs", k.docs});
  return t;
}

TextTable live_rows(const results::LiveSetting& s, bool markdown) {
  TextTable t{
      markdown ? std::vector<std::string>{"", "pg_settings"} : std::vector<std::string>{"", ""},
      {},
      {}};
  t.rows.push_back(
      {"current",
       s.current + (s.unit.empty() ? "" : fmt::format("  (setting {} x {})", s.setting, s.unit))});
  if (!s.unit.empty()) t.rows.push_back({"unit", s.unit});
  if (!s.min.empty()) t.rows.push_back({"min", s.min});
  if (!s.max.empty()) t.rows.push_back({"max", s.max});
  if (!s.accepted.empty()) t.rows.push_back({"accepted", join(s.accepted, ", ")});
  t.rows.push_back({"type", s.type});
  t.rows.push_back({"context", s.context + " (" + s.applies_by + ")"});
  t.rows.push_back({"source", s.source});
  t.rows.push_back({"default", s.default_value});
  t.rows.push_back({"pending_restart", s.pending_restart ? "yes" : "no"});
  return t;
}

std::string live_heading(const results::KnobDetail& k) {
  return fmt::format("live (PostgreSQL {}, {})", k.server_major, k.server);
}

TextTable preset_table(const results::PresetList& list, bool console) {
  TextTable t{console ? std::vector<std::string>{"PRESET", "KNOBS", "DESCRIPTION"}
                      : std::vector<std::string>{"preset", "knobs", "description"},
              {false, true, false},
              {}};
  for (const auto& p : list.presets) {
    t.rows.push_back(
        {p.name, std::to_string(p.knobs), console ? first_sentence(p.description) : p.description});
  }
  return t;
}

TextTable settings_table(const results::PresetDetail& p, bool console) {
  std::vector<std::string> header = {"KNOB", "VALUE", "CATEGORY", "SINCE"};
  if (!console) header = {"knob", "value", "category", "since"};
  TextTable t{header, {}, {}};
  for (const auto& s : p.settings) {
    t.rows.push_back({s.knob, s.value, s.category, s.since ? std::to_string(s.since) : ""});
  }
  return t;
}

TextTable checks_table(const std::vector<results::SettingCheck>& checks, bool console) {
  std::vector<std::string> header = {"KNOB", "VALUE", "VERDICT", "NOTE"};
  if (!console) header = {"knob", "value", "verdict", "note"};
  TextTable t{header, {}, {}};
  for (const auto& c : checks) t.rows.push_back({c.knob, c.value, c.verdict, c.note});
  return t;
}

std::string against_line(const results::PresetDetail& p) {
  return fmt::format("against PostgreSQL {} ({}): {}", p.server_major, p.server, p.problem_count);
}

}  // namespace

void render_knob_detail_console(const results::KnobDetail& k, std::ostream& out) {
  out << fmt::format("{}  ({}; PostgreSQL {})\n\n{}\n\n", k.name, k.category, k.versions, k.why)
      << catalog_rows(k, false).render();
  if (!k.pitfalls.empty()) {
    out << "\npitfalls:\n";
    for (const auto& p : k.pitfalls) out << "  - " << p << "\n";
  }
  if (k.server.empty()) return;
  out << "\n" << live_heading(k) << ":\n";
  if (!k.live) {
    out << "  not available on this server: " << k.unavailable << "\n";
    return;
  }
  out << live_rows(*k.live, false).render();
}

void render_knob_detail_markdown(const results::KnobDetail& k, std::ostream& out) {
  out << "# " << markdown_text(k.name) << "\n\n"
      << markdown_text(fmt::format("{}; PostgreSQL {}.", k.category, k.versions)) << "\n\n"
      << markdown_text(k.why) << "\n\n"
      << markdown_table(catalog_rows(k, true));
  if (!k.pitfalls.empty()) {
    out << "\n## Pitfalls\n\n";
    for (const auto& p : k.pitfalls) out << "- " << markdown_text(p) << "\n";
  }
  if (k.server.empty()) return;
  out << "\n## " << markdown_text(live_heading(k)) << "\n\n";
  if (!k.live) {
    out << "Not available on this server: " << markdown_text(k.unavailable) << ".\n";
    return;
  }
  out << markdown_table(live_rows(*k.live, true));
}

nlohmann::ordered_json knob_detail_to_json(const results::KnobDetail& knob) {
  return json_schema::write_value(knob);
}

void render_preset_list_console(const results::PresetList& list, std::ostream& out) {
  out << preset_table(list, true).render();
}

void render_preset_list_markdown(const results::PresetList& list, std::ostream& out) {
  out << "# The presets\n\n" << markdown_table(preset_table(list, false));
}

nlohmann::ordered_json preset_list_to_json(const results::PresetList& list) {
  return json_schema::write_value(list);
}

void render_preset_detail_console(const results::PresetDetail& p, std::ostream& out) {
  out << p.name << ": " << p.description << "\n";
  if (!p.includes.empty()) out << "includes: " << join(p.includes, ", ") << "\n";
  out << "\n";
  if (p.server.empty()) {
    out << settings_table(p, true).render();
    return;
  }
  out << checks_table(p.checks, true).render() << "\n" << against_line(p) << "\n";
  for (const auto& problem : p.problems) out << problem << "\n";
}

void render_preset_detail_markdown(const results::PresetDetail& p, std::ostream& out) {
  out << "# The preset " << markdown_text(p.name) << "\n\n"
      << markdown_text(p.description) << "\n\n";
  if (!p.includes.empty()) out << "Includes: " << markdown_text(join(p.includes, ", ")) << ".\n\n";
  if (p.server.empty()) {
    out << markdown_table(settings_table(p, false));
    return;
  }
  out << markdown_table(checks_table(p.checks, false)) << "\n"
      << markdown_text(against_line(p)) << ".\n";
  if (!p.problems.empty()) {
    out << "\n";
    for (const auto& problem : p.problems) out << "- " << markdown_text(problem) << "\n";
  }
}

nlohmann::ordered_json preset_detail_to_json(const results::PresetDetail& preset) {
  return json_schema::write_value(preset);
}

void render_setting_checks_console(const std::vector<results::SettingCheck>& checks,
                                   std::ostream& out) {
  out << checks_table(checks, true).render();
}

}  // namespace pgslow::report
