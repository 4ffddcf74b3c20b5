#pragma once
// `pgslow bench` as an experiment (docs/architecture.md): one measurement of a workload with no
// configuration change, through the one measuring seam, from a fresh template clone unless the
// user runs it on a database as it is (like pgbench on tables `pgbench -i` made).

#include <filesystem>
#include <optional>

#include "common/progress.h"
#include "experiment/trial.h"
#include "results/bench.h"
#include "server/pooler.h"
#include "server/server_control.h"
#include "workload/workload.h"

namespace pgslow::experiment {

struct BenchOptions {
  // What to measure: no configuration change, the command line's load and timing (clients,
  // duration, warm-up, ramp, rate, pool, tries, protocol, seed, --check-data, wait sampling).
  Trial trial;
  bool reset_data = true;  // false: --no-reset
  std::filesystem::path workdir;
  std::optional<server::PoolerSpec> pooler;  // --pooler (docs/pooler.md)
};

// Measures `workload` once on `server`. RuntimeError with the run's error when it failed; an
// interrupted run returns what it measured, with `interrupted` set.
results::BenchResult run_bench(server::ServerControl& server, const workload::Workload& workload,
                               const workload::WorkloadParams& params, const BenchOptions& options,
                               Progress& progress);

}  // namespace pgslow::experiment
