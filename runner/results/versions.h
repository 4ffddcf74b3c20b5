#pragma once
// `run --versions`: the same scenario's run on each version; report/versions_view.h renders them
// side by side.

#include <vector>

#include "results/model.h"

namespace pgslow::results {

// The runs, one per version, in the order they were run. Stages are matched by name; a stage
// a version did not run (or that failed on it) shows as such.
struct VersionRuns {
  std::vector<Run> runs;
};

}  // namespace pgslow::results
