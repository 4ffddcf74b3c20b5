#pragma once
// `pgslow run`: the stage loop of ARCHITECTURE.md's data flow. Each planned stage is measured
// through the one seam, stage::LabSession (apply, reset, evidence, workload); the session
// restores the configuration at the end, also on error or Ctrl-C. The result is a report::Run
// that every renderer reads.

#include <atomic>
#include <functional>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/progress.h"
#include "knobs/catalog.h"
#include "report/model.h"
#include "scenario/plan.h"
#include "server/server_control.h"
#include "server/target.h"
#include "stage/lab_session.h"
#include "workload/dataset.h"
#include "workload/workload.h"

namespace pgslow::scenario {

struct RunOptions {
  // The target as specified, recorded in the journal so another process can recover it.
  std::optional<server::TargetSpec> target;
  std::optional<double> warmup_s;  // override the scenario's
  std::optional<double> duration_s;
  std::optional<int> repeats;
  int workers = 0;
  int max_tries = 1;
  bool allow_partial = false;
  bool check_data = false;  // --check-data, on top of the scenario's measure.check_data
};

// The workload's parameters as the scenario gives them.
workload::WorkloadParams workload_params(const Scenario& scenario);
// How the scenario's configurations are measured (its measure section, `options` overriding)
// on the target `options` names, journaled in `workdir`.
stage::LabOptions make_lab_options(const Scenario& scenario, const RunOptions& options,
                                   const std::filesystem::path& workdir);

// Runs every stage of the plan on `server`, restores the configuration and evaluates the
// expectations, filling `run` as it goes (stages that failed carry their error). On an
// interrupt or error the configuration is restored and the exception propagates; `run` then
// holds the stages measured so far.
void run_plan(const Plan& plan, server::ServerControl& server, const knobs::Catalog& catalog,
              const std::filesystem::path& workdir, const RunOptions& options, Progress& progress,
              report::Run& run);

// Names each knob's part in a measured stage (plan.stages[index].attribute): bisect's
// attribution through a StageMeasurer over the lab session, reusing the stage's runs and the reference's
// (`reference_samples`, extended with the extra reference runs for the next stage).
report::Attribution attribute_stage(const Plan& plan, std::size_t index,
                                    const report::StageResult& reference,
                                    const report::StageResult& stage, const knobs::Catalog& catalog,
                                    int repeats, stage::LabSession& lab,
                                    std::vector<double>& reference_samples, Progress& progress);

// Fills Run::expectations from the stages' TPS; true when all passed.
bool evaluate_expectations(const Scenario& scenario, report::Run& run);

// cores, memory, kernel, hostname of this machine.
report::Machine this_machine();

}  // namespace pgslow::scenario
