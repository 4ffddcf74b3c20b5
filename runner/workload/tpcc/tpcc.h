#pragma once
// TPC-C-lite: the TPC-C schema, data and five transactions, without terminals' keying and
// think times (available, off by default) and without the spec's measurement rules.
// docs/tpcc-lite.md describes it; the files of this folder follow CockroachDB's
// pkg/workload/tpcc layout (one file per transaction, the mix and the checks as tables).

#include <memory>

#include "workload/workload.h"

namespace pgslow::workload::tpcc {

// Registered as "tpcc-lite". WorkloadParams::scale is the number of warehouses.
std::unique_ptr<workload::Workload> make_tpcc_lite();

// The headline figures of a run (docs/tpcc-lite.md defines each): tpmC, every New-Order per
// minute with the rolled-back ones (5.4.2); NOPM, committed New-Orders per minute; Delivery's
// skipped districts in % (warned about above 1%, 5.4.5); and a type's share of the mix when it
// falls below 5.2.3's minimum.
std::vector<results::HeadlineFigure> headline_figures(const RunCounts& run);

}  // namespace pgslow::workload::tpcc
