#include "scenario/library.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/errors.h"
#include "common/paths.h"
#include "common/strings.h"
#include "scenario/plan.h"
#include "scenario/scenario.h"
#include "server/pg_versions.h"
#include "server/target.h"

namespace pgslow::scenario {

namespace fs = std::filesystem;

namespace {

// The folders that hold named scenarios, searched in this order.
std::vector<fs::path> library_dirs() {
  return {data_root() / "scenarios", data_root() / "scenarios" / "workshop"};
}

}  // namespace

std::vector<std::string> scenario_names() {
  std::vector<std::string> names;
  for (const fs::path& dir : library_dirs()) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

namespace {

// What a run of the scenario needs beyond pgslow and PostgreSQL 15, as short tags: PgBouncer,
// root (a cgroup envelope), a target of another kind, "PG 18+" (the first version with all its
// knobs; an older one skips them, and the report says so).
std::vector<std::string> needs_of(const Scenario& sc, const knobs::Catalog& catalog) {
  std::vector<std::string> needs;
  bool pgbouncer = sc.pooler && sc.pooler->managed();
  std::set<std::string> newer;       // its knobs that PostgreSQL 15 lacks
  int newest = 0;                    // the first major version that has them all
  std::vector<ConfigError> ignored;  // `pgslow check` names them
  for (const StageSpec& st : sc.stages) {
    for (const auto& [dimension, value] : st.load.values) {
      if (starts_with(dimension, "pgbouncer.") ||
          (dimension == "pooler" && starts_with(value.text, "pgbouncer")))
        pgbouncer = true;
    }
    for (const knobs::Setting& s :
         resolve_stage_settings(st.presets, st.settings, catalog, ignored))
      if (const knobs::Knob* k = catalog.find(s.name); k && k->since > server::kOldestMajor) {
        newer.insert(k->name);
        newest = std::max(newest, k->since);
      }
  }
  if (pgbouncer) needs.push_back("PgBouncer");
  if (!sc.target.envelope.empty() || sc.sweep.envelope_dimension()) needs.push_back("root");
  if (sc.target.kind != server::TargetKind::kManaged)
    needs.push_back(fmt::format("a {} target", server::to_string(sc.target.kind)));
  if (!newer.empty()) needs.push_back(fmt::format("PG {}+", newest));
  return needs;
}

}  // namespace

std::vector<LibraryScenario> library_scenarios(const knobs::Catalog& catalog) {
  std::vector<LibraryScenario> out;
  for (const std::string& name : scenario_names()) {
    LibraryScenario entry{name, "", 0, {}, ""};
    try {
      const Scenario sc = load_scenario(resolve_scenario(name));
      entry.description = sc.description;
      entry.estimated_seconds = estimate_seconds_offline(sc, catalog);
      entry.needs = needs_of(sc, catalog);
    } catch (const InputError& e) {
      entry.problem = e.problems().empty() ? e.what() : e.problems().front().str();
    }
    out.push_back(std::move(entry));
  }
  return out;
}

fs::path resolve_scenario(const std::string& arg, const fs::path& base) {
  const fs::path p(arg);
  const fs::path file = base.empty() || p.is_absolute() ? p : base / p;
  // A bare name never reads the current folder: `cd /tmp && pgslow run quick` as root would
  // otherwise run a `quick` that anyone could have put there. A path is read only when no one
  // else could have written it (read_trusted_file).
  if (names_a_file(arg) && fs::is_regular_file(file)) return file;
  // A name ("quick", "quick.yaml", "workshop/01-cache"): relative to the library.
  if (p.is_relative()) {
    for (const fs::path& dir : library_dirs()) {
      for (const fs::path& candidate : {dir / (arg + ".yaml"), dir / arg}) {
        if (fs::is_regular_file(candidate)) return candidate;
      }
    }
  }
  const std::vector<std::string> names = scenario_names();
  const auto suggestion = closest_match(p.stem().string(), names);
  // A path that is not the library's either: the file is what is missing.
  if (names_a_file(arg)) {
    throw InputError(fmt::format(
        "{}{}", file_argument_problem(file.string()),
        suggestion
            ? fmt::format(" (the library has '{}': `pgslow scenarios` lists them)", *suggestion)
            : std::string()));
  }
  throw InputError(fmt::format(
      "'{}' is neither a scenario file nor a named scenario{}; the named ones (in {}) are: {}",
      file.string(), suggestion ? fmt::format(" (did you mean '{}'?)", *suggestion) : "",
      (data_root() / "scenarios").string(), join(names, ", ")));
}

}  // namespace pgslow::scenario
