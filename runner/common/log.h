#pragma once
// Diagnostics go through spdlog to stderr; results go to stdout. `--verbose` shows debug
// lines, `--quiet` only warnings and errors.

#include <spdlog/spdlog.h>

namespace pgslow {

enum class Verbosity { kQuiet, kNormal, kVerbose };
void init_logging(Verbosity verbosity);

}  // namespace pgslow
