#pragma once
// Options several commands share, defined once.

#include <CLI/CLI.hpp>
#include <optional>

#include "driver/driver.h"
#include "report/model.h"

namespace pgslow::cli {

// --protocol/-M simple|extended|prepared, like pgbench -M (run and bench).
void add_protocol_option(CLI::App* cmd, driver::Protocol& protocol);

// --metric tps|cpu_per_tx|p99: what a search judges by (bisect, run's attributions); an unknown
// name is refused with the valid ones. `what` ends the help text ("default tps").
void add_metric_option(CLI::App* cmd, std::optional<report::Metric>& metric,
                       const std::string& what);

}  // namespace pgslow::cli
