#pragma once
// What the commands that measure a scenario share (run, plan, lesson): finding the scenario,
// the options that change it, and the --dashboard option. The experiment itself is
// experiment/scenario_experiment.h.

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "cli/context.h"
#include "cli/target_options.h"
#include "experiment/scenario_experiment.h"
#include "knobs/catalog.h"
#include "results/model.h"
#include "scenario/plan.h"
#include "scenario/scenario.h"
#include "server/server_control.h"
#include "workshop/dashboard.h"

namespace pgslow::cli {

using Prepared = experiment::PreparedScenario;
using experiment::ScenarioOverrides;

// The scenario `arg` names, prepared on the server the target options name (else the
// scenario's own target): experiment::prepare_scenario. Changes nothing.
Prepared prepare(Context& ctx, const std::string& arg, const TargetOptions& targs,
                 const ScenarioOverrides& overrides = {});

// --precision, --budget and --design on `cmd` (run and plan).
void add_measure_overrides(CLI::App* cmd, ScenarioOverrides& overrides);

// --dashboard [ADDR] (127.0.0.1:8080 without ADDR), --room-size N, --room-per-address N and
// --linger SECONDS.
struct DashboardArgs {
  std::string address;
  double linger_s = 0;
  std::size_t room_size = workshop::DashboardLimits{}.room_size;
  std::size_t per_address = workshop::DashboardLimits{}.per_address;
};
std::shared_ptr<DashboardArgs> add_dashboard_options(CLI::App* cmd);
// The dashboard when --dashboard was given (its address printed on stderr; beyond loopback, a
// warning on stdout says who can reach it), else nullptr.
std::unique_ptr<workshop::Dashboard> open_dashboard(CLI::App* cmd, const DashboardArgs& args,
                                                    const std::string& title);
// Keeps the page up for --linger seconds after the end (the room reads the reveal).
void linger(workshop::Dashboard* board, const DashboardArgs& args);

}  // namespace pgslow::cli
