#pragma once
// Loads the initial database (clause 4.3) into an empty database: tables, COPY in parallel
// by (table, warehouse), then keys and indexes, then ANALYZE.

#include <string>

#include "common/progress.h"

namespace pgslow::workload::tpcc {

struct LoadOptions {
  int warehouses = 1;
  // Loader connections. Each one keeps a server backend busy parsing COPY while this process
  // generates rows, so a few suffice; more only fight for the cores.
  int connections = 3;
};

void load_database(const std::string& conninfo, const LoadOptions& options, Progress& progress);

}  // namespace pgslow::workload::tpcc
