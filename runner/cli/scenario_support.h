#pragma once
// What the commands that measure a scenario share (run, lesson): finding the scenario,
// validating it against the live server, the results folder, and the --dashboard option.

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "cli/context.h"
#include "cli/target_options.h"
#include "knobs/catalog.h"
#include "report/model.h"
#include "scenario/plan.h"
#include "scenario/run.h"
#include "scenario/scenario.h"
#include "server/server_control.h"
#include "workshop/dashboard.h"

namespace pgslow::cli {

// A scenario argument is a file, or the name of one in scenarios/ ("quick").
std::filesystem::path resolve_scenario(const std::string& arg);

struct Prepared {
  scenario::Scenario scenario;
  server::TargetSpec target;  // the scenario's target, or the one the options name
  std::unique_ptr<server::ServerControl> server;
  knobs::Catalog catalog;
  scenario::Plan plan;
};

// Parse, open the target (the options' when they name one, else the scenario's), validate
// against the live server. Changes nothing.
// What the command line changes in a scenario before it is planned.
struct ScenarioOverrides {
  bool attribute = false;                // --attribute
  std::optional<std::string> precision;  // --precision 5%
  std::optional<double> budget_s;        // --budget (seconds)
  std::optional<std::string> design;     // --design auto|isolated
};

Prepared prepare(Context& ctx, const std::string& arg, const TargetOptions& targs,
                 const ScenarioOverrides& overrides = {});

// --precision, --budget and --design on `cmd` (run and plan).
void add_measure_overrides(CLI::App* cmd, ScenarioOverrides& overrides);

// Run options for a prepared scenario: its target, recorded for recovery, in this workdir.
scenario::RunOptions run_options_for(const Prepared& prepared);

std::filesystem::path default_out_dir(const std::string& scenario_name);
void render(const report::Run& run, std::string_view format, std::ostream& out);
// report.md/.json/.csv/.html and one server log excerpt per stage.
void write_results(const report::Run& run, const std::filesystem::path& dir);

// --dashboard [ADDR] (127.0.0.1:8080 without ADDR), --room-size N and --linger SECONDS.
struct DashboardArgs {
  std::string address;
  double linger_s = 0;
  std::size_t room_size = workshop::DashboardLimits{}.room_size;
};
std::shared_ptr<DashboardArgs> add_dashboard_options(CLI::App* cmd);
// The dashboard when --dashboard was given (its address printed on stderr; beyond loopback, a
// warning on stdout says who can reach it), else nullptr.
std::unique_ptr<workshop::Dashboard> open_dashboard(CLI::App* cmd, const DashboardArgs& args,
                                                    const std::string& title);
// Keeps the page up for --linger seconds after the end (the room reads the reveal).
void linger(workshop::Dashboard* board, const DashboardArgs& args);

}  // namespace pgslow::cli
