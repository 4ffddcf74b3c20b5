#pragma once
// Options several commands share, defined once.

#include <CLI/CLI.hpp>

#include "driver/driver.h"

namespace pgslow::cli {

// --protocol/-M simple|extended|prepared, like pgbench -M (run and bench).
void add_protocol_option(CLI::App* cmd, driver::Protocol& protocol);

}  // namespace pgslow::cli
