#pragma once
// A scenario as an experiment (docs/architecture.md): read and plan it against the live server,
// run it through the scenario loop (run.h), have its results written, judge its exit status,
// and run it on several PostgreSQL majors one after the other. `pgslow run`, `plan`, `lesson`
// and `run --versions` are clients of this; cli/ only parses their options.

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/progress.h"
#include "experiment/run.h"
#include "knobs/catalog.h"
#include "results/model.h"
#include "results/versions.h"
#include "scenario/plan.h"
#include "scenario/scenario.h"
#include "server/server_control.h"
#include "server/target.h"

namespace pgslow::experiment {

// What the command line changes in a scenario before it is planned.
struct ScenarioOverrides {
  bool attribute = false;                // --attribute
  std::optional<std::string> precision;  // --precision 5%
  std::optional<double> budget_s;        // --budget (seconds)
  std::optional<std::string> design;     // --design auto|isolated
  // --pooler: the scenario's `pooler:` as the plan checks it (its stages' PgBouncer settings
  // need one) and the run uses it.
  std::optional<server::PoolerSpec> pooler;
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

// The results folder of a run: `out` when given, else default_out_dir(name). Checked as every
// folder pgslow writes into is (require_output_folder: a `results` another user planted as a
// link is refused) before anything is measured, so it fails at once, not after the run.
std::filesystem::path results_folder(const std::string& out, const std::string& name);

// How a run's results are written and shown. The views are the command's (report/): the
// experiment layer only says when, so it links no renderer.
struct ResultsOutput {
  // The results folder of one run (report::write_results).
  std::function<void(const results::Run&, const std::filesystem::path&)> write;
  // The stages so far of an interrupted run, on the terminal.
  std::function<void(const results::Run&)> show_partial;
  // `run --versions`' side by side report in its folder (report::write_versions).
  std::function<void(const results::VersionRuns&, const std::filesystem::path&)> write_versions;
};

// Runs a prepared scenario and writes its results to `out_dir`, also when interrupted (then
// the stages so far are shown, and apply::Interrupted propagates). The configuration is
// restored on every way out (run_plan).
results::Run run_prepared(PreparedScenario& prepared, RunOptions options,
                          const std::filesystem::path& workdir,
                          const std::filesystem::path& out_dir, Progress& progress,
                          const ResultsOutput& output);

// A finished run's exit status: RuntimeError when the baseline or every changed stage failed,
// Error(kExitExpectation) when an expectation failed. `which` names the run among several
// ("PostgreSQL 16: "), or is empty.
void check_run(const results::Run& run, const std::filesystem::path& out_dir,
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
results::VersionRuns run_versions(std::vector<VersionPoint>& versions, const RunOptions& options,
                                  const std::filesystem::path& workdir,
                                  const std::filesystem::path& out_dir, Progress& progress,
                                  const ResultsOutput& output,
                                  const std::function<void(const VersionPoint&)>& on_version = {});

}  // namespace pgslow::experiment
