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

using Settings = std::map<std::string, std::string>;

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

// The PgBouncer settings a stage's clients meet on pgslow's PgBouncer (with its defaults), by
// name; nullopt when they do not go through it.
std::optional<std::map<std::string, std::string>> managed_pooler_settings(
    const Scenario& scenario, const results::LoadSettings& load) {
  try {
    auto use =
        server::stage_pooler(scenario.pooler, load.pooler, load.pool_size, load.pooler_settings);
    if (use && use->managed()) return use->settings;
  } catch (const InputError&) {
    // check_pooler_knobs has said why.
  }
  return std::nullopt;
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
  for (const auto& c : server::pooler_setting_changes(
           managed_pooler_settings(scenario, reference).value_or(Settings{}),
           managed_pooler_settings(scenario, load).value_or(Settings{}),
           {names.begin(), names.end()}))
    changes.push_back(results::KnobChange{std::string(server::kPoolerKnobPrefix) + c.name, c.before,
                                          c.after, std::string(results::kApplyByPooler)});
}

std::optional<std::string> load_switch_refusal(const Scenario& scenario,
                                               const results::LoadSettings& baseline,
                                               const results::LoadSettings& stage) {
  // How the clients connect: the same on both sides, or the run cannot switch.
  auto connecting = [](const results::LoadSettings& load) {
    results::LoadSettings d = load;
    d.pool_size = server::driver_pool_size(load.pooler, load.pool_size);
    d.clients = 0;  // switched between blocks (below)
    d.pooler.clear();
    d.pooler_settings.clear();
    return d;
  };
  if (baseline.rate != stage.rate || baseline.rate_percent != stage.rate_percent)
    return std::string(
        "its arrival rate differs from the baseline's (which runs a closed loop), and a run keeps "
        "its clients' schedule");
  // A closed loop's clients can stand by and connect again between blocks (driver.h
  // active_clients); a fixed rate's schedule would pile up while they stand by.
  if (baseline.clients != stage.clients && (baseline.rate > 0 || baseline.rate_percent > 0))
    return std::string(
        "its client count differs from the baseline's under a fixed arrival rate, whose "
        "clients' schedule would pile up while they stand by");
  if (baseline.clients != stage.clients && scenario.workload.think_time)
    return std::string(
        "its client count differs from the baseline's and the clients wait TPC-C's keying and "
        "think times (seconds each), longer than a switchback block's settling: a client stands "
        "by or starts again only between transactions");
  if (baseline.clients != stage.clients && scenario.allow_partial)
    return std::string(
        "its client count differs from the baseline's and allow_partial is on: the clients the "
        "server refuses are what such a stage shows, and a run connects every client once, at "
        "its start");
  if (!(connecting(baseline) == connecting(stage)))
    return std::string(
        "its load differs from the baseline's in how the clients connect (a connection per "
        "transaction, the driver's pool or threads), which cannot switch within a run");
  // The clients' path: directly, through an external pooler, or through pgslow's PgBouncer.
  auto path = [&](const results::LoadSettings& l) -> std::string {
    try {
      auto use = server::stage_pooler(scenario.pooler, l.pooler, l.pool_size, l.pooler_settings);
      if (!use) return "direct";
      return use->managed() ? "pgbouncer" : "external " + use->conninfo;
    } catch (const InputError&) {
      return "refused";  // check_pooler_knobs has said why
    }
  };
  if (path(baseline) != path(stage))
    return std::string(
        "its clients take another path to the server than the baseline's (directly, or through "
        "a pooler), which cannot switch within a run");
  const auto met_baseline = managed_pooler_settings(scenario, baseline);
  const auto met_stage = managed_pooler_settings(scenario, stage);
  if (!met_baseline || !met_stage) return std::nullopt;
  std::set<std::string> names;
  for (const auto* met : {&*met_baseline, &*met_stage})
    for (const auto& entry : *met) names.insert(entry.first);
  for (const auto& name : names) {
    if (server::pooler_setting_value(*met_baseline, name) ==
        server::pooler_setting_value(*met_stage, name))
      continue;
    const server::PoolerSettingSpec* spec = server::find_pooler_setting(name);
    if (name == "query_wait_timeout")
      return std::string(
          "PgBouncer's query_wait_timeout disconnects the clients that wait past it, and a run "
          "keeps its clients connected");
    if (spec == nullptr || !spec->live)
      return fmt::format(
          "PgBouncer's {} reaches only new clients or new server connections after a RELOAD, "
          "so it cannot switch within a run",
          name);
  }
  // In session mode a client keeps its server connection until it disconnects, and a run's
  // clients never do: a pool's size or a connection's lifetime never reaches them.
  for (const auto* met : {&*met_baseline, &*met_stage})
    if (server::pooler_setting_value(*met, "pool_mode") == "session" && *met_baseline != *met_stage)
      return std::string(
          "pgslow's PgBouncer runs in session mode, where a client keeps its server connection "
          "for as long as it stays connected, so a changed pool never reaches the run's clients");
  return std::nullopt;
}

}  // namespace pgslow::scenario
