#include "experiment/scenario_experiment.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <ctime>

#include "apply/interrupt.h"
#include "common/errors.h"
#include "common/paths.h"
#include "common/printable.h"
#include "common/safe_fs.h"
#include "experiment/lab.h"
#include "knobs/validate.h"
#include "pg/connection.h"
#include "server/managed_cluster.h"

namespace pgslow::experiment {

namespace fs = std::filesystem;

namespace {

void apply_overrides(const ScenarioOverrides& overrides, scenario::Scenario& s) {
  if (overrides.attribute) s.attribute = true;
  scenario::MeasureSpec& m = s.measure;
  if (overrides.precision) {
    const auto precision = scenario::parse_precision(*overrides.precision);
    if (!precision)
      throw InputError(
          fmt::format("--precision {} is not a precision: give the interval's "
                      "half-width between 0.5% and 50%, e.g. --precision 5%",
                      printable(*overrides.precision)));
    m.precision = *precision;
  }
  if (overrides.budget_s) {
    if (*overrides.budget_s < 10)
      throw InputError(
          "--budget must be at least 10 (seconds): a switchback stage needs a few "
          "blocks of each configuration");
    m.budget_s = *overrides.budget_s;
  }
  if (overrides.design) {
    if (*overrides.design != "auto" && *overrides.design != "isolated")
      throw InputError(
          fmt::format("--design {} is not a design: use auto (switchback where the "
                      "knobs allow it) or isolated (separate runs)",
                      printable(*overrides.design)));
    m.switchback = *overrides.design == "auto";
  }
  if (overrides.pooler) s.pooler = overrides.pooler;
}

}  // namespace

PreparedScenario prepare_scenario(const fs::path& file, const ScenarioOverrides& overrides,
                                  const TargetChooser& choose_target) {
  PreparedScenario p;
  p.scenario = scenario::load_scenario(file);
  apply_overrides(overrides, p.scenario);
  p.catalog = knobs::Catalog::load_default();
  p.target = choose_target(p.scenario.target);
  // A sweep of server.memory/cpus starts the server in its group (docs/envelope.md).
  p.target.envelope = scenario::run_envelope(p.scenario, p.target);
  p.server = server::open_target(p.target);
  pg::Connection conn = pg::Connection::open(p.server->conninfo());
  knobs::ServerSettings settings = knobs::ServerSettings::read(conn);
  p.plan = scenario::make_plan(p.scenario, p.catalog, settings);
  return p;
}

RunOptions run_options_for(const PreparedScenario& prepared) {
  RunOptions options;
  options.target = prepared.target;
  return options;
}

fs::path default_out_dir(const std::string& scenario_name) {
  // Every kind of name that ends up here was checked where it was read (with its file and
  // line); this is the last guard that no name leads out of results/.
  if (std::string why = unsafe_file_name_reason(scenario_name); !why.empty())
    throw InputError(
        fmt::format("the results folder name \"{}\" {}", printable(scenario_name), why));
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return fs::path("results") / fmt::format("{}-{}", scenario_name, buf);
}

fs::path results_folder(const std::string& out, const std::string& name) {
  const fs::path dir = out.empty() ? default_out_dir(name) : fs::path(out);
  require_output_folder(dir, "the results folder",
                        "give --out a folder that only you (or root) can write, or run pgslow "
                        "from a folder of your own.");
  return dir;
}

results::Run run_prepared(PreparedScenario& p, RunOptions options, const fs::path& workdir,
                          const fs::path& out_dir, Progress& progress,
                          const ResultsOutput& output) {
  options.target = p.target;
  // Two lines: a workdir's path would push one past the table's width.
  progress.note(fmt::format("pgslow run {}: {} stages, about {:.0f} s of measuring",
                            p.scenario.name, p.plan.stages.size(), p.plan.estimated_seconds));
  progress.note("  on " + p.server->describe());
  results::Run run;
  try {
    run_plan(p.plan, *p.server, p.catalog, workdir, options, progress, run);
  } catch (const apply::Interrupted& e) {
    // run_plan restored the configuration before this (also when the signal came during the
    // final restore); the exit code is 130/143 all the same. The one message main prints says
    // where the stages so far are.
    if (run.stages.empty()) throw;
    if (output.write) output.write(run, out_dir);
    if (output.show_partial) output.show_partial(run);
    throw Error(e.code(), fmt::format("{}; configuration restored; results so far in {}", e.what(),
                                      out_dir.string()));
  }
  if (output.write) output.write(run, out_dir);
  return run;
}

void check_run(const results::Run& run, const fs::path& out_dir, const std::string& which) {
  std::size_t failed = 0;
  for (std::size_t i = 1; i < run.stages.size(); ++i) failed += run.stages[i].error.empty() ? 0 : 1;
  // Named first, also when every stage failed this way: its message says what to do.
  for (const auto& stage : run.stages)
    if (stage.failure == results::StageFailure::kStoppedEarly)
      throw RuntimeError(fmt::format("{}stage '{}' {} (the configuration is restored)", which,
                                     stage.name, stage.error));
  if (!run.stages.empty() && !run.stages.front().error.empty())
    throw RuntimeError(fmt::format(
        "{}the baseline stage failed: {}; nothing could be compared (the configuration is "
        "restored)",
        which, run.stages.front().error));
  if (run.stages.size() > 1 && failed == run.stages.size() - 1)
    throw RuntimeError(
        fmt::format("{}every changed stage failed ({} of {}); each stage's reason is in the "
                    "table's notes above, the logs in {} (the configuration is restored)",
                    which, failed, run.stages.size() - 1, (out_dir / "logs").string()));
  for (const auto& e : run.expectations) {
    if (!e.passed) {
      throw Error(kExitExpectation,
                  fmt::format("{}expectation failed: {} (measured: {})", which, e.text, e.detail));
    }
  }
}

results::VersionRuns run_versions(std::vector<VersionPoint>& versions, const RunOptions& options,
                                  const fs::path& workdir, const fs::path& out_dir,
                                  Progress& progress, const ResultsOutput& output,
                                  const std::function<void(const VersionPoint&)>& on_version) {
  auto cluster = [&](std::size_t i) {
    return dynamic_cast<server::ManagedCluster*>(versions[i].prepared.server.get());
  };
  results::VersionRuns runs;
  for (std::size_t i = 0; i < versions.size(); ++i) {
    for (std::size_t j = 0; j < versions.size(); ++j) {
      if (j == i || cluster(j) == nullptr || !cluster(j)->is_running()) continue;
      spdlog::info("stopping the PostgreSQL {} cluster while PostgreSQL {} is measured",
                   versions[j].major, versions[i].major);
      cluster(j)->stop();
    }
    if (cluster(i) != nullptr && !cluster(i)->is_running()) cluster(i)->start();
    if (on_version) on_version(versions[i]);
    runs.runs.push_back(run_prepared(versions[i].prepared, options, workdir,
                                     out_dir / fmt::format("pg{}", versions[i].major), progress,
                                     output));
  }
  for (std::size_t i = 0; i < versions.size(); ++i) {
    if (cluster(i) != nullptr && !cluster(i)->is_running()) cluster(i)->start();
  }
  create_output_folders(out_dir, "the results folder");
  if (output.write_versions) output.write_versions(runs, out_dir);
  return runs;
}

}  // namespace pgslow::experiment
