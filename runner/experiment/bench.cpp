#include "experiment/bench.h"

#include "apply/interrupt.h"
#include "common/errors.h"
#include "experiment/lab_session.h"
#include "knobs/catalog.h"
#include "pg/connection.h"

namespace pgslow::experiment {

results::BenchResult run_bench(server::ServerControl& server, const workload::Workload& workload,
                               const workload::WorkloadParams& params, const BenchOptions& options,
                               Progress& progress) {
  // A session that changes no configuration.
  LabOptions lab_options;
  lab_options.changes_configuration = false;
  lab_options.reset_data = options.reset_data;
  lab_options.workdir = options.workdir;
  lab_options.pooler = options.pooler;
  // Only a session that changes the configuration reads the catalog: bench starts without
  // parsing it (tens of milliseconds of CPU, counted against the driver by vs-pgbench).
  const knobs::Catalog catalog{};
  LabSession lab(server, catalog, workload, params, lab_options, progress);
  lab.prepare();
  Trial trial = options.trial;
  trial.configuration = {"bench", {}, {}, std::nullopt};  // no configuration change
  results::BenchResult result;
  result.workload = workload.name();
  result.scale = params.scale;
  results::StageResult r = lab.measure(trial);
  result.interrupted = apply::InterruptGuard::interrupted();
  if (r.repeats.empty() || (!r.error.empty() && !result.interrupted)) throw RuntimeError(r.error);
  result.measurement = r.repeats.front();
  result.load = r.load;
  result.reset_seconds = r.reset_seconds;
  result.reset_method = lab.reset_method();
  if (options.pooler) {
    result.pooler = options.pooler->describe();
    for (const auto& [key, value] : r.evidence) {
      if (key.starts_with("pooler_")) result.pooler_evidence[key] = value;
    }
  }
  progress.note("");
  if (!options.reset_data) {
    pg::Connection c = pg::Connection::open(server.conninfo());
    auto v = c.query_value("SELECT pg_database_size(current_database())");
    result.data_bytes = v ? std::stoull(*v) : 0;
  } else {
    result.data_bytes = lab.data_bytes();
  }
  return result;
}

}  // namespace pgslow::experiment
