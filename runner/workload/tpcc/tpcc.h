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

}  // namespace pgslow::workload::tpcc
