#include "bisect/lab_measurer.h"

#include <fmt/format.h>

#include "apply/interrupt.h"

namespace pgslow::bisect {

LabMeasurer::LabMeasurer(stage::LabSession& lab, std::vector<knobs::Setting> good,
                         report::Metric metric, report::LoadSettings load)
    : lab_(lab), good_(std::move(good)), metric_(metric), load_(load) {}

std::vector<double> LabMeasurer::measure(const std::vector<knobs::Setting>& changes, int repeats) {
  stage::Configuration configuration;
  configuration.name =
      fmt::format("bisect: good + {} change{}", changes.size(), changes.size() == 1 ? "" : "s");
  configuration.settings = knobs::overlay(good_, changes);
  report::StageResult r = lab_.measure(configuration, load_, repeats);
  apply::InterruptGuard::throw_if_interrupted();
  std::vector<double> samples;
  for (const auto& m : r.repeats) samples.push_back(search_sample_of(metric_, m));
  if (!r.error.empty()) {
    // Rejected, or a run failed: what was measured stands, the rest counts as slow.
    while (static_cast<int>(samples.size()) < repeats) samples.push_back(kRejectedTps);
  }
  results_.push_back(std::move(r));
  return samples;
}

}  // namespace pgslow::bisect
