#pragma once
// The seam between the search and the server. The search only ever asks "how fast is the
// good configuration with these changes on top?"; everything that makes that true (apply the
// settings, restart or reload, reset the data from the template, run the workload) sits behind
// it. The live implementation is lab_measurer.h (an adapter over stage::LabSession, the one
// measuring seam), the simulated server is simulated_server.h.

#include <vector>

#include "bisect/setting.h"

namespace pgslow::bisect {

// Measures one configuration: the good configuration with `changes` (a subset of the candidate
// changes) applied on top; returns throughput samples (TPS) of `repeats` runs.
class Measurer {
 public:
  virtual ~Measurer() = default;
  virtual std::vector<double> measure(const std::vector<Setting>& changes, int repeats) = 0;
};

}  // namespace pgslow::bisect
