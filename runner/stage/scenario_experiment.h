#pragma once
// A scenario as an experiment (docs/architecture.md): read and plan it against the live server,
// run it through the scenario loop (run.h), write its results folder, judge its exit status,
// and run it on several PostgreSQL majors one after the other. `pgslow run`, `plan`, `lesson`
// and `run --versions` are clients of this; cli/ only parses their options.

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/progress.h"
#include "knobs/catalog.h"
#include "report/model.h"
#include "report/versions.h"
#include "scenario/plan.h"
#include "scenario/scenario.h"
#include "server/server_control.h"
#include "server/target.h"
#include "stage/run.h"

namespace pgslow::stage {

// What the command line changes in a scenario before it is planned.
struct ScenarioOverrides {
  bool attribute = false;                // --attribute
  std::optional<std::string> precision;  // --precision 5%
  std::optional<double> budget_s;        // --budget (seconds)
  std::optional<std::string> design;     // --design auto|isolated
};

struct PreparedScenario {
  scenario::Scenario scenario;
  server::TargetSpec target;  // the scenario's target, or the one the command line names
  std::unique_ptr<server::ServerControl> server;
  knobs::Catalog catalog;
  scenario::Plan plan;
};

// Picks the server: given the scenario's own target, the one to use (the command line's when it
// names one).
using TargetChooser = std::function<server::TargetSpec(const server::TargetSpec& scenario_target)>;

// Parses `file`, applies the overrides (InputError naming the option when one is not valid),
// opens the target and validates every stage against the live server. Changes nothing.
PreparedScenario prepare_scenario(const std::filesystem::path& file,
                                  const ScenarioOverrides& overrides,
                                  const TargetChooser& choose_target);

// Run options for a prepared scenario: its target, recorded for recovery.
RunOptions run_options_for(const PreparedScenario& prepared);

// results/<name>-<YYYYmmdd-HHMMSS>; InputError when the name could lead out of results/.
std::filesystem::path default_out_dir(const std::string& scenario_name);
// report.md/.json/.csv/.html and one server log excerpt per stage, in `dir`.
void write_results(const report::Run& run, const std::filesystem::path& dir);

// Runs a prepared scenario and writes its results to `out_dir`, also when interrupted (then
// the console table of the stages so far is printed, and apply::Interrupted propagates). The
// configuration is restored on every way out (run_plan).
report::Run run_prepared(PreparedScenario& prepared, RunOptions options,
                         const std::filesystem::path& workdir, const std::filesystem::path& out_dir,
                         Progress& progress);

// A finished run's exit status: RuntimeError when the baseline or every changed stage failed,
// Error(kExitExpectation) when an expectation failed. `which` names the run among several
// ("PostgreSQL 16: "), or is empty.
void check_run(const report::Run& run, const std::filesystem::path& out_dir,
               const std::string& which = "");

// One version of `run --versions`: its major and its prepared scenario on that version's
// managed cluster.
struct VersionPoint {
  int major = 0;
  PreparedScenario prepared;
};

// The same scenario on each version's managed cluster, one after the other; each version's
// results in out_dir/pg<N>/ and the side by side report in out_dir/versions.*. While one version
// is measured the other versions' clusters are stopped (their checkpoints, autovacuum and memory
// would share the machine with the measurement); at the end every cluster runs again.
// `on_version` is called before each version is measured (the dashboard watches its server).
report::VersionRuns run_versions(std::vector<VersionPoint>& versions, const RunOptions& options,
                                 const std::filesystem::path& workdir,
                                 const std::filesystem::path& out_dir, Progress& progress,
                                 const std::function<void(const VersionPoint&)>& on_version = {});

}  // namespace pgslow::stage
