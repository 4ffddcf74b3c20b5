#pragma once
// The experiment layer's scenario loop (docs/architecture.md): `pgslow run`, lessons and
// mysteries measure a plan here. Each planned stage is measured
// through the one seam, stage::LabSession (apply, reset, evidence, workload); the session
// restores the configuration at the end, also on error or Ctrl-C. The result is a results::Run
// that every renderer reads.

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/progress.h"
#include "driver/driver.h"
#include "knobs/catalog.h"
#include "results/model.h"
#include "scenario/plan.h"
#include "scenario/scenario.h"
#include "server/server_control.h"
#include "server/target.h"
#include "stage/lab_session.h"
#include "workload/dataset.h"
#include "workload/workload.h"

namespace pgslow::stage {

struct RunOptions {
  // The target as specified, recorded in the journal so another process can recover it.
  std::optional<server::TargetSpec> target;
  std::optional<double> warmup_s;  // override the scenario's
  std::optional<double> duration_s;
  std::optional<int> repeats;
  int workers = 0;
  int max_tries = 0;  // 0: the workload's default
  bool allow_partial = false;
  // -M; unset: the scenario's measure.protocol.
  std::optional<driver::Protocol> protocol;
  bool check_data = false;        // --check-data, on top of the scenario's measure.check_data
  bool no_wait_sampling = false;  // --no-wait-sampling, on top of measure.wait_sampling: off
  // What attributions judge by (--metric); unset: the scenario's measure.metric.
  std::optional<results::Metric> metric;
  // The axis --precision watches (results/axes.h precision_reached): an axis key, or "auto".
  std::string precision_axis = "auto";
  // --pooler: over the scenario's `pooler:` (docs/pooler.md).
  std::optional<server::PoolerSpec> pooler;
};

// How the scenario's configurations are measured (its measure section, `options` overriding)
// on the target `options` names, journaled in `workdir`.
LabOptions make_lab_options(const scenario::Scenario& scenario, const RunOptions& options,
                            const std::filesystem::path& workdir);

// Runs every stage of the plan on `server`, restores the configuration and evaluates the
// expectations, filling `run` as it goes (stages that failed carry their error). On an
// interrupt or error the configuration is restored and the exception propagates; `run` then
// holds the stages measured so far.
void run_plan(const scenario::Plan& plan, server::ServerControl& server,
              const knobs::Catalog& catalog, const std::filesystem::path& workdir,
              const RunOptions& options, Progress& progress, results::Run& run);

// The runs an attribution made itself that measure what the run measures anyway: the
// reference configuration (interleaved baseline runs) and the whole stage (its repeats).
struct AttributionRuns {
  std::vector<results::Measurement> reference;  // in time order
  bool last_was_reference = false;              // the attribution's last run was one of them
  std::vector<results::StageResult> stage;
};

// Adds `more` runs of the same stage configuration as repeats of `stage`; the evidence stays
// the median repeat's (taken from the run that holds it).
void add_repeats(results::StageResult& stage, const std::vector<results::StageResult>& more);

// Names each knob's part in a measured stage (plan.stages[index].attribute), judged by
// `metric`: bisect's attribution through stage::LabMeasurer over the lab session, reusing the
// stage's runs and `known_good` (the reference configuration's runs nearest in time) as the
// levels. The runs
// of the reference and of the whole stage it made itself are returned in `runs`: run_plan
// counts them as interleaved baseline runs and as the stage's repeats.
results::Attribution attribute_stage(const scenario::Plan& plan, std::size_t index,
                                     const results::StageResult& reference,
                                     const results::StageResult& stage,
                                     const knobs::Catalog& catalog, int repeats,
                                     results::Metric metric, LabSession& lab,
                                     const std::vector<results::Measurement>& known_good,
                                     AttributionRuns& runs, Progress& progress);

// Fills Run::expectations from the stages' TPS; true when all passed.
bool evaluate_expectations(const scenario::Scenario& scenario, results::Run& run);

// cores, memory, kernel, hostname of this machine.
results::Machine this_machine();

}  // namespace pgslow::stage
