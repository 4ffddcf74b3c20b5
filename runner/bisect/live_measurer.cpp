#include "bisect/live_measurer.h"

#include <fmt/format.h>

#include "apply/interrupt.h"
#include "common/strings.h"

namespace pgslow::bisect {


LiveMeasurer::LiveMeasurer(apply::Applier& applier, workload::Dataset& dataset,
                           const workload::Workload& workload, workload::WorkloadParams params,
                           driver::DriverOptions options, std::vector<knobs::Setting> good,
                           Progress& progress)
    : applier_(applier),
      dataset_(dataset),
      workload_(workload),
      params_(std::move(params)),
      options_(options),
      good_(std::move(good)),
      progress_(progress) {}

std::vector<double> LiveMeasurer::measure(const std::vector<knobs::Setting>& changes, int repeats) {
  apply::InterruptGuard::throw_if_interrupted();
  std::vector<knobs::Setting> settings = knobs::overlay(good_, changes);
  apply::ApplyLabel label;
  label.stage =
      fmt::format("bisect: good + {} change{}", changes.size(), changes.size() == 1 ? "" : "s");
  label.command = "pgslow bisect";
  apply::ApplyResult applied = applier_.apply(settings, apply::Operation::kRun, label);
  ++applies_;
  if (applied.restarted) ++restarts_;
  std::vector<double> samples;
  for (int i = 0; i < repeats; ++i) {
    apply::InterruptGuard::throw_if_interrupted();
    // The same data for every run: bloat from the previous run must not count against this
    // configuration (ARCHITECTURE.md, "Data reset").
    workload::ResetResult reset = dataset_.reset();
    report::Measurement m = driver::run_workload(workload_, params_, reset.conninfo, options_,
                                                 progress_, apply::InterruptGuard::stop_flag());
    apply::InterruptGuard::throw_if_interrupted();
    samples.push_back(m.tps);
    measurements_.push_back(std::move(m));
  }
  return samples;
}

}  // namespace pgslow::bisect
