#pragma once
// The seam between the search and the server. The search only ever asks "how good is the
// good configuration with these changes on top?"; everything that makes that true (apply the
// settings, restart or reload, reset the data from the template, run the workload) sits behind
// it. The live implementation is experiment/lab_measurer.h (the one adapter over
// experiment::LabSession, the one measuring seam), the simulated server is simulated_server.h.

#include <map>
#include <string>
#include <vector>

#include "results/metric.h"
#include "results/model.h"
#include "search/setting.h"
#include "server/server_control.h"

namespace pgslow::search {

// Measures one configuration: the good configuration with `changes` (a subset of the candidate
// changes) applied on top; returns one sample of the metric the search judges by per run, for
// `repeats` runs, where higher is better (search_sample_of).
class Measurer {
 public:
  virtual ~Measurer() = default;
  virtual std::vector<double> measure(const std::vector<Setting>& changes, int repeats) = 0;
};

// One run's sample by `metric` (results/metric.h: TPS, or a cost's reciprocal, in the search's
// direction); `evidence`: the run's own (an evidence metric per transaction). RuntimeError
// saying why when the run has no value for it (cpu_per_tx without the server's CPU time).
double search_sample_of(const results::Metric& metric, const results::Measurement& run,
                        const std::map<std::string, double>& evidence = {});

// Before any run: InputError when `metric` cannot be measured on `server` (cpu_per_tx needs
// the server's processes on this machine, to read their CPU time from /proc).
void require_measurable(const results::Metric& metric, const server::ServerControl& server);

}  // namespace pgslow::search
