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

}  // namespace pgslow::workload
