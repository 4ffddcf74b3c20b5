#pragma once
// The views render the results model (runner/results/, namespace pgslow::results): its names
// are theirs to use unqualified, and report::StageResult still names results::StageResult.

#include "results/model.h"

namespace pgslow::report {
using namespace pgslow::results;
}  // namespace pgslow::report
