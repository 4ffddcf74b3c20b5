#pragma once
// TPC-C-lite: the TPC-C schema, data and five transactions, with terminals' keying and think
// times available (off by default); the spec's measurement rules are checked, not enforced.
// docs/tpcc-lite.md describes it; the files of this folder follow CockroachDB's
// pkg/workload/tpcc layout (one file per transaction, the mix and the checks as tables).

#include <memory>

#include "workload/workload.h"

namespace pgslow::workload::tpcc {

// Registered as "tpcc-lite". WorkloadParams::scale is the number of warehouses.
std::unique_ptr<workload::Workload> make_tpcc_lite();

// The headline figures of a run (docs/tpcc-lite.md defines each): when every row of the run's
// audit passes (audit.h), "tpmC" (the New-Order rate, rolled-back ones included, 5.4.2) and
// NOPM; otherwise NOPM alone ("NOPM (spec-like terminals)" with the spec's terminals), its
// warning naming the rows that failed; failed New-Orders; NOPM cross-checked against
// sum(D_NEXT_O_ID); Delivery's skipped Deliveries and districts (2.7.4.2); and how many audit
// rows passed.
std::vector<results::HeadlineFigure> headline_figures(const RunCounts& run);

}  // namespace pgslow::workload::tpcc
