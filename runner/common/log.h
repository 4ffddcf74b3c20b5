#pragma once
// Diagnostics go through spdlog to stderr; results go to stdout. `--verbose` shows debug
// lines, `--quiet` only warnings and errors.

#include <spdlog/spdlog.h>

namespace pgslow {

enum class Verbosity { kQuiet, kNormal, kVerbose };
void init_logging(Verbosity verbosity);

// Whether NO_COLOR is set and not empty (https://no-color.org): then nothing pgslow prints
// carries ANSI colors. Every colored output asks here.
bool no_color();

}  // namespace pgslow
