#pragma once
// The experiment layer's scenario loop (docs/architecture.md): `pgslow run`, lessons and
// mysteries measure a plan here. measure_plan() is the policy: which trials, in which order
// (interleaved baselines, switchback, precision, attribution, relative rates), on any Lab
// (experiment/lab.h); run_plan() runs it on the live lab, experiment::LabSession, which restores
// the configuration at the end, also on error or Ctrl-C. The result is a results::Run that every
// renderer reads.

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/progress.h"
#include "driver/driver.h"
#include "experiment/lab.h"
#include "experiment/lab_session.h"
#include "experiment/trial.h"
#include "knobs/catalog.h"
#include "results/model.h"
#include "scenario/plan.h"
#include "scenario/scenario.h"
#include "server/server_control.h"
#include "server/target.h"
#include "workload/dataset.h"
#include "workload/workload.h"

namespace pgslow::experiment {

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
  bool keep_data = false;  // --keep-data: LabOptions::keep_data
};

// The one overlay rule of a run's timing: the command line over the scenario's measure section.
Timing make_timing(const scenario::Scenario& scenario, const RunOptions& options);

// The live lab's options for the scenario: the target `options` names, journaled in `workdir`,
// the pooler (--pooler over the scenario's).
LabOptions make_lab_options(const scenario::Scenario& scenario, const RunOptions& options,
                            const std::filesystem::path& workdir);

// A planned stage as a trial: its name, whole configuration and load, under `timing`; with
// `sweep_envelope` (a sweep of server.memory/cpus), its envelope over that one.
Trial trial_of(const scenario::PlannedStage& stage, const Timing& timing,
               const std::optional<server::Envelope>& sweep_envelope = std::nullopt);

// How measure_plan() measures a plan, beside the plan itself.
struct PlanPolicy {
  Timing timing;                                   // every trial's (make_timing)
  results::Metric metric = results::Metric::kTps;  // what attributions judge by
  // The axis --precision watches (results/axes.h precision_reached): an axis key, or "auto".
  std::string precision_axis = "auto";
  // A sweep of server.memory/cpus: every configuration carries its envelope over this one (the
  // server's when the run began); unset: no envelope sweep.
  std::optional<server::Envelope> sweep_envelope;
};

// The policy of a run, on any lab: prepares it, measures every stage of the plan (with its
// interleaved baseline runs, switchback blocks, precision rounds and attribution), puts the
// configuration back (Lab::finish) and evaluates the expectations, filling `run` as it goes
// (stages that failed carry their error). On an interrupt or error the lab restores
// (Lab::restore_after_error) and the exception propagates; `run` then holds the stages
// measured so far.
void measure_plan(const scenario::Plan& plan, Lab& lab, const knobs::Catalog& catalog,
                  const PlanPolicy& policy, Progress& progress, results::Run& run);

// measure_plan() on `server` through the live lab, after the checks that need the server (the
// workload's parameters, a metric the server can measure), with the run's header filled in.
void run_plan(const scenario::Plan& plan, server::ServerControl& server,
              const knobs::Catalog& catalog, const std::filesystem::path& workdir,
              const RunOptions& options, Progress& progress, results::Run& run);

// A prepared live lab for `scenario`'s workload on `server`, for a caller that schedules its
// own trials (the mystery: its stages one by one, the last one kept). `hidden`: the journal is
// sealed and names no setting (apply::Journal::hidden).
std::unique_ptr<LabSession> open_scenario_lab(server::ServerControl& server,
                                              const knobs::Catalog& catalog,
                                              const std::filesystem::path& workdir,
                                              const scenario::Scenario& scenario,
                                              const RunOptions& options, Progress& progress,
                                              bool hidden);

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
// `policy.metric`: bisect's attribution through experiment::LabMeasurer over the lab, reusing the
// stage's runs and `known_good` (the reference configuration's runs nearest in time) as the
// levels. The runs of the reference and of the whole stage it made itself are returned in
// `runs`: measure_plan counts them as interleaved baseline runs and as the stage's repeats.
results::Attribution attribute_stage(const scenario::Plan& plan, std::size_t index,
                                     const results::StageResult& reference,
                                     const results::StageResult& stage,
                                     const knobs::Catalog& catalog, const PlanPolicy& policy,
                                     Lab& lab, const std::vector<results::Measurement>& known_good,
                                     AttributionRuns& runs, Progress& progress);

// Fills Run::expectations from the stages' TPS; true when all passed.
bool evaluate_expectations(const scenario::Scenario& scenario, results::Run& run);

// cores, memory, kernel, hostname of this machine.
results::Machine this_machine();

}  // namespace pgslow::experiment
