#include "scenario/plan_pooler.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "server/pgbouncer.h"
#include "server/pooler.h"

namespace pgslow::scenario {

namespace {

ConfigError not_installed(const SourceLocation& where) {
  return ConfigError{where, "pooler: PgBouncer is not installed here",
                     "install it with `scripts/install-deps.sh run` (Debian's pgbouncer "
                     "package), or remove the pooler"};
}

// The installed PgBouncer must run and have every setting the scenario gives it.
void check_pooler(const server::PoolerSpec& pooler, std::vector<ConfigError>& problems) {
  const std::string version = server::pgbouncer_version();
  if (version.empty()) {
    problems.push_back(not_installed(pooler.where));
    return;
  }
  for (const auto& [name, value] : pooler.settings) {
    if (auto why = server::check_pooler_setting(name, value, version))
      problems.push_back(ConfigError{pooler.where, "pooler: " + *why, ""});
  }
}

// The PgBouncer settings a stage's clients meet (pgslow's PgBouncer, with its defaults), by
// name; empty when they do not go through it.
std::map<std::string, std::string> pooler_settings_met(const Scenario& scenario,
                                                       const results::LoadSettings& load) {
  try {
    auto use =
        server::stage_pooler(scenario.pooler, load.pooler, load.pool_size, load.pooler_settings);
    if (use && use->managed()) return use->settings;
  } catch (const InputError&) {
    // check_pooler_knobs has said why.
  }
  return {};
}

}  // namespace

void check_scenario_pooler(const Scenario& scenario, std::vector<ConfigError>& problems) {
  if (scenario.pooler && scenario.pooler->managed()) {
    check_pooler(*scenario.pooler, problems);
  } else if (std::any_of(scenario.stages.begin(), scenario.stages.end(), [](const StageSpec& st) {
               const SweepValue* pooler = st.load.find("pooler");
               return pooler != nullptr && pooler->text == "pgbouncer";
             })) {
    server::PoolerSpec swept;  // a sweep's `pooler: pgbouncer` points
    swept.where = scenario.sweep.where;
    check_pooler(swept, problems);
  }
}

LoadKnobs stage_load_knobs(const StageSpec& st, const knobs::Catalog& catalog) {
  LoadKnobs out;
  for (const auto& ref : st.presets) {
    const knobs::Preset* preset = catalog.find_preset(ref.name);
    if (preset == nullptr) continue;  // resolve_stage_settings names it
    try {
      for (const auto& s : catalog.expand_pooler(*preset))
        out.values[std::string(server::kPoolerKnobPrefix) + s.name] = SweepValue{s.value, s.where};
    } catch (const InputError&) {
      // A cycle of includes: resolve_stage_settings names it.
    }
  }
  for (const auto& [dimension, value] : st.load.values) out.values[dimension] = value;
  return out;
}

void check_pooler_knobs(const Scenario& scenario, const StageSpec& st, const LoadKnobs& knobs,
                        const results::LoadSettings& load, std::vector<ConfigError>& problems) {
  if (load.pooler_settings.empty()) return;
  const bool through_pgbouncer =
      load.pooler == "pgbouncer" ||
      (load.pooler.empty() && scenario.pooler && scenario.pooler->managed());
  const std::string version = server::pgbouncer_version();
  for (const auto& [name, value] : load.pooler_settings) {
    const std::string dimension = std::string(server::kPoolerKnobPrefix) + name;
    const SweepValue* written = knobs.find(dimension);
    const SourceLocation where = written != nullptr ? written->where : st.where;
    if (!through_pgbouncer) {
      problems.push_back(ConfigError{
          where,
          fmt::format("stage '{}' sets {}, a setting of pgslow's own PgBouncer, but its clients "
                      "reach the server {}",
                      st.name, dimension,
                      load.pooler == "driver" ? "through the driver's own pool"
                      : scenario.pooler ? "through an external pooler, which pgslow does not change"
                                        : "directly"),
          "give the scenario `pooler: {kind: pgbouncer}` (the baseline then goes through the same "
          "PgBouncer, so the effect is the setting's alone), or the stage `load: {pooler: "
          "pgbouncer}`"});
    } else if (version.empty()) {
      problems.push_back(not_installed(where));
    } else if (auto why = server::check_pooler_setting(name, value, version)) {
      problems.push_back(ConfigError{where, *why, ""});
    }
  }
}

void add_pooler_changes(const Scenario& scenario, const results::LoadSettings& reference,
                        const results::LoadSettings& load,
                        std::vector<results::KnobChange>& changes) {
  std::set<std::string> names;
  for (const auto& entry : reference.pooler_settings) names.insert(entry.first);
  for (const auto& entry : load.pooler_settings) names.insert(entry.first);
  for (const auto& c : server::pooler_setting_changes(pooler_settings_met(scenario, reference),
                                                      pooler_settings_met(scenario, load),
                                                      {names.begin(), names.end()}))
    changes.push_back(results::KnobChange{std::string(server::kPoolerKnobPrefix) + c.name, c.before,
                                          c.after, std::string(results::kApplyByPooler)});
}

}  // namespace pgslow::scenario
