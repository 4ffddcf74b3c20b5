#pragma once
// The plan's part of the pooler (docs/pooler.md): the PgBouncer a scenario or its stages ask for,
// checked before anything runs, and a stage's PgBouncer settings as its knobs ("Pooler settings
// as knobs"). Internal to make_plan (plan.cpp).

#include <optional>
#include <string>
#include <vector>

#include "common/errors.h"
#include "knobs/catalog.h"
#include "results/model.h"
#include "scenario/scenario.h"

namespace pgslow::scenario {

// The installed PgBouncer must run and have every setting the scenario's `pooler:` (or its
// sweep's `pooler: pgbouncer` points) gives it.
void check_scenario_pooler(const Scenario& scenario, std::vector<ConfigError>& problems);

// A stage's load knobs with its presets' pooler settings under them ("pgbouncer.pool_mode"): the
// stage's own `load:` wins.
LoadKnobs stage_load_knobs(const StageSpec& st, const knobs::Catalog& catalog);

// A stage's PgBouncer settings (`load`, from `knobs`) act on pgslow's own PgBouncer: its clients
// must go through it (the scenario's `pooler:`, or the stage's `pooler: pgbouncer`), and the
// installed PgBouncer must have each setting. Each problem at the line that sets it.
void check_pooler_knobs(const Scenario& scenario, const StageSpec& st, const LoadKnobs& knobs,
                        const results::LoadSettings& load, std::vector<ConfigError>& problems);

// The PgBouncer settings a stage sets as changes versus the stage it is compared with
// (`reference`), each applied by RELOAD of pgslow's PgBouncer.
void add_pooler_changes(const Scenario& scenario, const results::LoadSettings& reference,
                        const results::LoadSettings& load,
                        std::vector<results::KnobChange>& changes);

// Why a stage whose load differs from the baseline's cannot switch with it within one run
// (switchback); nullopt when the two differ only in settings of pgslow's PgBouncer that it
// applies to connected clients on RELOAD (server::PoolerSettingSpec::live), both loads' clients
// going through it with the same driver settings.
std::optional<std::string> load_switch_refusal(const Scenario& scenario,
                                               const results::LoadSettings& baseline,
                                               const results::LoadSettings& stage);

}  // namespace pgslow::scenario
