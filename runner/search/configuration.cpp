#include "search/configuration.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "common/paths.h"
#include "common/strings.h"
#include "search/conf_file.h"

namespace pgslow::search {
namespace {

namespace fs = std::filesystem;

// Later settings win, names lower case (PostgreSQL's names are case-insensitive).
std::vector<knobs::Setting> normalised(std::vector<knobs::Setting> in) {
  std::map<std::string, std::size_t> index;
  std::vector<knobs::Setting> out;
  for (auto& s : in) {
    s.name = to_lower(s.name);
    auto it = index.find(s.name);
    if (it != index.end()) {
      out[it->second] = s;
    } else {
      index[s.name] = out.size();
      out.push_back(s);
    }
  }
  return out;
}

// The server's value as a person writes it (shared_buffers "16384" with unit 8kB -> 128MB).
std::string server_value_text(const knobs::ServerSetting& s) {
  auto unit = knobs::parse_base_unit(s.unit);
  if (unit && unit->kind != knobs::BaseUnit::Kind::kNone &&
      (s.vartype == "integer" || s.vartype == "real")) {
    try {
      return knobs::format_with_unit(std::stod(s.setting), *unit);
    } catch (const std::exception&) {
    }
  }
  return s.setting;
}

// Compares what pg_settings would show; the raw text (case-insensitively) when a value could
// not be normalised.
bool same_value(const knobs::SettingVerdict& a, const knobs::SettingVerdict& b) {
  bool normalised_both = a.verdict != knobs::Verdict::kError &&
                         b.verdict != knobs::Verdict::kError && !a.expected_setting.empty() &&
                         !b.expected_setting.empty();
  if (normalised_both) return iequals(a.expected_setting, b.expected_setting);
  return iequals(trim(a.setting.value), trim(b.setting.value));
}

std::string problems_text(const knobs::SettingVerdict& v) {
  std::vector<std::string> parts;
  for (const auto& p : v.problems)
    if (p.severity == ConfigError::Severity::kError)
      parts.push_back(p.message + (p.hint.empty() ? "" : " (" + p.hint + ")"));
  return parts.empty() ? v.reason : join(parts, "; ");
}

}  // namespace

Configuration load_configuration(const std::string& spec, const knobs::Catalog& catalog) {
  Configuration c;
  c.label = spec;
  if (const knobs::Preset* p = catalog.find_preset(spec)) {
    c.settings = normalised(catalog.expand_for_server(*p, "a search of configurations"));
    return c;
  }
  if (spec == "default") return c;  // the empty preset: the server as it is
  fs::path path(spec);
  std::error_code ec;
  // A bare name is a preset or nothing: the current folder is not read (names_a_file). A path
  // is never a preset's name: when it is not a file, that is what is wrong.
  if (names_a_file(spec)) {
    if (!fs::is_regular_file(path, ec)) throw InputError(file_argument_problem(spec));
    if (looks_like_conf_file(path)) {
      c.settings = normalised(load_conf_file(path));
    } else {
      knobs::SettingsFile f = knobs::load_settings_file(path);
      c.settings = normalised(knobs::resolve_settings(f, catalog));
    }
    return c;
  }
  std::vector<std::string> names;
  for (const auto& p : catalog.presets()) names.push_back(p.name);  // `default` is one of them
  auto suggestion = closest_match(spec, names);
  throw InputError(fmt::format(
      "'{}' is neither a preset nor a file{}; give a preset ({}), a settings YAML file, "
      "or a postgresql.conf file, a file as a path (./{} or a name ending in .yaml or .conf)",
      spec, suggestion ? fmt::format(" (did you mean '{}'?)", *suggestion) : "", join(names, ", "),
      spec));
}

Difference difference(const Configuration& good, const Configuration& bad,
                      const knobs::Catalog& catalog, const knobs::ServerSettings& server) {
  Difference d;
  auto good_verdicts = knobs::validate(good.settings, catalog, server);
  auto bad_verdicts = knobs::validate(bad.settings, catalog, server);

  std::vector<ConfigError> good_errors;
  for (const auto& p : knobs::all_problems(good_verdicts))
    if (p.severity == ConfigError::Severity::kError) good_errors.push_back(p);
  if (!good_errors.empty()) throw InputError(good_errors);

  std::map<std::string, const knobs::SettingVerdict*> in_good;
  for (const auto& v : good_verdicts) {
    in_good[to_lower(v.setting.name)] = &v;
    if (v.verdict == knobs::Verdict::kSkipped)
      d.excluded.push_back({v.setting, "in good: " + v.reason, false});
    else
      d.good.push_back(v.setting);
  }

  std::map<std::string, bool> seen;
  for (const auto& b : bad_verdicts) {
    std::string name = to_lower(b.setting.name);
    seen[name] = true;
    const knobs::ServerSetting* live = server.find(name);
    auto g = in_good.find(name);
    const knobs::SettingVerdict* gv = g == in_good.end() ? nullptr : g->second;
    if (gv != nullptr && gv->verdict != knobs::Verdict::kSkipped && same_value(*gv, b)) {
      d.identical.push_back(name);
      continue;
    }
    if (b.verdict == knobs::Verdict::kSkipped) {
      d.excluded.push_back({b.setting, b.reason, false});
      continue;
    }
    if (b.verdict == knobs::Verdict::kError) {
      d.excluded.push_back({b.setting, problems_text(b), true});
      continue;
    }
    // Only in bad, at the value the server already has: no difference either.
    if (gv == nullptr && live != nullptr && knobs::effective_value_matches(*live, b)) {
      d.identical.push_back(name);
      continue;
    }
    Candidate c;
    c.change = b.setting;
    c.change.name = name;
    if (gv != nullptr && gv->verdict != knobs::Verdict::kSkipped) c.good_value = gv->setting.value;
    c.needs_restart = b.verdict == knobs::Verdict::kRestart;
    if (live != nullptr) c.server_value = server_value_text(*live);
    d.candidates.push_back(std::move(c));
  }
  // Set only in good: in bad the server's own value applies. Bisect applies that value
  // explicitly (read from the live server before any change), and says so.
  for (const auto& gv : good_verdicts) {
    std::string name = to_lower(gv.setting.name);
    if (seen.count(name) != 0 || gv.verdict == knobs::Verdict::kSkipped) continue;
    const knobs::ServerSetting* live = server.find(name);
    if (live == nullptr) continue;  // validate would have refused it
    if (knobs::effective_value_matches(*live, gv)) {
      d.identical.push_back(name);
      continue;
    }
    Candidate c;
    c.change = {name, server_value_text(*live), gv.setting.where};
    c.good_value = gv.setting.value;
    c.back_to_server_value = true;
    c.needs_restart = live->context == "postmaster";
    c.server_value = c.change.value;
    d.candidates.push_back(std::move(c));
  }
  return d;
}

}  // namespace pgslow::search
