#include "scenario/stage_measurer.h"

#include <fmt/format.h>

#include <algorithm>

#include "apply/interrupt.h"
#include "common/errors.h"
#include "common/strings.h"
#include "report/evidence_info.h"
#include "report/summary.h"

namespace pgslow::scenario {
namespace {

// A configuration's key: its changes by name, in name order.
std::string key_of(const std::vector<knobs::Setting>& changes) {
  std::vector<std::string> parts;
  for (const auto& s : changes) parts.push_back(to_lower(s.name) + "=" + s.value);
  std::sort(parts.begin(), parts.end());
  return join(parts, "\n");
}

// The evidence as the report compares it: per transaction, per minute, or as is (docs/evidence.md).
std::map<std::string, double> normalised(const report::StageResult& r) {
  std::map<std::string, double> out;
  for (const auto& [key, raw] : r.evidence) {
    if (key == "latency_p99") {
      out[key] = raw;
    } else if (report::evidence_info(key).scale != report::EvidenceScale::kDriver) {
      if (auto v = report::normalised_evidence(r, key)) out[key] = *v;
    }
  }
  return out;
}

}  // namespace

StageMeasurer::StageMeasurer(stage::LabSession& lab, std::string stage,
                             std::vector<knobs::Setting> reference, report::LoadSettings load,
                             report::Metric metric, Progress& progress)
    : lab_(lab),
      stage_(std::move(stage)),
      reference_(std::move(reference)),
      load_(load),
      metric_(metric),
      progress_(progress) {}

std::vector<double> StageMeasurer::measure(const std::vector<knobs::Setting>& changes,
                                           int repeats) {
  ++calls_;
  std::vector<std::string> names;
  for (const auto& s : changes) names.push_back(s.name);
  std::string what = changes.empty()       ? "the reference"
                     : changes.size() <= 3 ? join(names, ", ")
                                           : fmt::format("{} knobs", changes.size());
  progress_.note(fmt::format("  attribution {}: {} ({} run{})", calls_, what, repeats,
                             repeats == 1 ? "" : "s"));
  report::StageResult r = lab_.measure(
      {fmt::format("{} (attribution)", stage_), knobs::overlay(reference_, changes), {}}, load_,
      repeats);
  apply::InterruptGuard::throw_if_interrupted();
  if (!r.error.empty())
    throw RuntimeError(
        fmt::format("attributing {}: the reference with {}: {}", stage_, what, r.error));
  std::vector<double> samples;
  bisect::Observation& o = seen_[key_of(changes)];
  for (const auto& m : r.repeats) {
    samples.push_back(bisect::search_sample_of(metric_, m));
    o.transactions += m.committed + m.rolled_back;
  }
  o.evidence = normalised(r);
  last_was_reference_ = changes.empty();
  if (changes.empty())
    reference_runs_.insert(reference_runs_.end(), r.repeats.begin(), r.repeats.end());
  else if (!stage_key_.empty() && key_of(changes) == stage_key_)
    stage_runs_.push_back(r);
  return samples;
}

void StageMeasurer::seed(const std::vector<knobs::Setting>& changes,
                         const report::StageResult& runs) {
  if (!changes.empty()) stage_key_ = key_of(changes);
  bisect::Observation& o = seen_[key_of(changes)];
  for (const auto& m : runs.repeats) o.transactions += m.committed + m.rolled_back;
  o.evidence = normalised(runs);
}

bisect::Observation StageMeasurer::observe(const std::vector<knobs::Setting>& changes) const {
  auto it = seen_.find(key_of(changes));
  return it == seen_.end() ? bisect::Observation{} : it->second;
}

}  // namespace pgslow::scenario
