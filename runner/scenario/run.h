#pragma once
// `pgslow run`: the stage loop of ARCHITECTURE.md's data flow. For each planned stage: apply
// the stage's configuration (journal first), reset the data from the template, snapshot the
// evidence, run the workload, snapshot again; always restore the configuration at the end,
// also on error or Ctrl-C. The result is a report::Run that every renderer reads.

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "apply/applier.h"
#include "common/progress.h"
#include "knobs/catalog.h"
#include "report/model.h"
#include "scenario/plan.h"
#include "server/server_control.h"
#include "server/target.h"
#include "workload/dataset.h"
#include "workload/workload.h"

namespace pgslow::scenario {

// How one configuration is measured: the seam `pgslow run` and `pgslow bisect` share.
struct MeasureOptions {
  double warmup_s = 5;
  double duration_s = 30;
  int repeats = 1;
  int workers = 0;      // driver threads; 0: one per core
  int max_tries = 1;    // attempts per transaction for serialization failures and deadlocks
  bool allow_partial = false;
};

// Measures configurations on one server and one data set: apply (through the journal),
// reset the data, snapshot evidence, run the workload `repeats` times, snapshot again.
class StageExecutor {
 public:
  StageExecutor(server::ServerControl& server, apply::Applier& applier,
                const workload::Workload& workload, workload::WorkloadParams params,
                workload::Dataset& dataset, MeasureOptions options, Progress& progress);

  // Applies `settings` (the whole configuration on top of the original), then measures.
  // A configuration the server rejects (fails to start, values differ after apply) gives a
  // StageResult with `error` set; the applier has already put the original back. Interrupts
  // (SIGINT/SIGTERM) propagate as apply::Interrupted after the measurement stops.
  report::StageResult run_stage(const std::string& name, const std::vector<knobs::Setting>& settings,
                                const report::LoadSettings& load);

 private:
  report::Measurement measure_once(const report::LoadSettings& load, report::StageResult& stage);
  std::map<std::string, double> last_evidence_;

  server::ServerControl& server_;
  apply::Applier& applier_;
  const workload::Workload& workload_;
  workload::WorkloadParams params_;
  workload::Dataset& dataset_;
  MeasureOptions options_;
  Progress& progress_;
};

struct RunOptions {
  // The target as specified, recorded in the journal so another process can recover it.
  std::optional<server::TargetSpec> target;
  std::optional<double> warmup_s;    // override the scenario's
  std::optional<double> duration_s;
  std::optional<int> repeats;
  int workers = 0;
  int max_tries = 1;
  bool allow_partial = false;
};

// Runs every stage of the plan on `server`, restores the configuration and evaluates the
// expectations, filling `run` as it goes (stages that failed carry their error). On an
// interrupt or error the configuration is restored and the exception propagates; `run` then
// holds the stages measured so far.
void run_plan(const Plan& plan, server::ServerControl& server, const knobs::Catalog& catalog,
              const std::filesystem::path& workdir, const RunOptions& options, Progress& progress,
              report::Run& run);

// Fills Run::expectations from the stages' TPS; true when all passed.
bool evaluate_expectations(const Scenario& scenario, report::Run& run);

// The median of the repeats' TPS (0 without repeats).
double stage_tps(const report::StageResult& stage);

// cores, memory, kernel, hostname of this machine.
report::Machine this_machine();

}  // namespace pgslow::scenario
