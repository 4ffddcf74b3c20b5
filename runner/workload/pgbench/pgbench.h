#pragma once
// pgbench's built-in scripts on pgbench's schema, so pgslow and pgbench run identical work
// side by side: tables, sizes per scale and uniform random inputs as in pgbench
// (src/bin/pgbench/pgbench.c), and a loader whose tables `pgbench` accepts as if
// `pgbench -i -s N` had made them.

#include <memory>

#include "workload/workload.h"

namespace pgslow::workload {

std::unique_ptr<Workload> make_tpcb_like();    // "tpcb-like": pgbench's default script
std::unique_ptr<Workload> make_select_only();  // "select-only": pgbench -S
// "range-aggregate": count/sum/avg over 10,000 consecutive accounts (server-bound)
std::unique_ptr<Workload> make_range_aggregate();
// "script": pgbench-compatible script files (workload/script/)
std::unique_ptr<Workload> make_script_workload();

// pgbench's tables, as `pgbench -i -s SCALE` makes them: the workloads that run on them
// share one template database.
class PgbenchTables : public Workload {
 public:
  std::string data_fingerprint(const WorkloadParams& params) const override;
  void load(const std::string& conninfo, const WorkloadParams& params,
            Progress& progress) const override;
};
// Scale between 1 and 20000 (options are each workload's own business).
std::vector<ConfigError> validate_pgbench_scale(const WorkloadParams& params);
// Row counts of branches, tellers and accounts for the scale.
std::vector<CheckResult> check_pgbench_sizes(pg::Connection& conn, int scale);

}  // namespace pgslow::workload
