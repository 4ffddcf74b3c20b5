#include "experiment/lab_measurer.h"

#include <fmt/format.h>

#include <algorithm>

#include "apply/interrupt.h"
#include "common/errors.h"
#include "common/strings.h"
#include "results/evidence_info.h"
#include "results/summary.h"
#include "scenario/sweep.h"

namespace pgslow::experiment {
namespace {

// A configuration's key: its changes by name, in name order.
std::string key_of(const std::vector<knobs::Setting>& changes) {
  std::vector<std::string> parts;
  for (const auto& s : changes) parts.push_back(to_lower(s.name) + "=" + s.value);
  std::sort(parts.begin(), parts.end());
  return join(parts, "\n");
}

// The evidence as the report compares it: per transaction, per minute, or as is (docs/evidence.md).
std::map<std::string, double> normalised(const results::StageResult& r) {
  std::map<std::string, double> out;
  for (const auto& [key, raw] : r.evidence) {
    if (key == "latency_p99") {
      out[key] = raw;
    } else if (results::evidence_info(key).scale != results::EvidenceScale::kDriver) {
      if (auto v = results::normalised_evidence(r, key)) out[key] = *v;
    }
  }
  return out;
}

// "the reference", "wal_sync_method, commit_delay", "12 knobs".
std::string what_of(const std::vector<knobs::Setting>& changes) {
  std::vector<std::string> names;
  for (const auto& s : changes) names.push_back(s.name);
  return changes.empty()       ? "the reference"
         : changes.size() <= 3 ? join(names, ", ")
                               : fmt::format("{} knobs", changes.size());
}

// A change of server.memory or server.cpus is the machine's size, not a server setting (a cliff
// search over the server's memory): it becomes the configuration's envelope, on top of the
// session's own, read by the sweep's own row for that dimension, and leaves the settings.
void move_envelope_changes(Configuration& configuration, const server::Envelope& session) {
  auto& settings = configuration.settings;
  for (auto it = settings.begin(); it != settings.end();) {
    if (!scenario::is_envelope_dimension(it->name)) {
      ++it;
      continue;
    }
    const scenario::SweepDimension row = *scenario::find_sweep_dimension(it->name);
    if (const scenario::SweepParse parsed = row.parse(it->value); !parsed.error.empty())
      throw InputError(fmt::format("{} = {} {}", it->name, it->value, parsed.error));
    scenario::StageSpec point;
    row.apply({it->value, it->where}, point);
    configuration.envelope = point.envelope.over(configuration.envelope.value_or(session));
    it = settings.erase(it);
  }
}

}  // namespace

LabMeasurer::LabMeasurer(Lab& lab, Trial base, results::Metric metric, std::string name,
                         Progress* progress)
    : lab_(lab),
      base_(std::move(base)),
      metric_(std::move(metric)),
      name_(std::move(name)),
      progress_(progress) {}

results::StageResult LabMeasurer::measure_runs(const Trial& trial, int repeats,
                                               std::vector<double>& samples) {
  const bool per_run = results::needs_evidence(metric_) && repeats > 1;
  results::StageResult all;
  for (int done = 0; done < repeats;) {
    const int n = per_run ? 1 : repeats;
    results::StageResult r = lab_.measure(trial.with_repeats(n));
    apply::InterruptGuard::throw_if_interrupted();
    if (!r.error.empty()) return r;  // the caller applies the failure rule
    for (const auto& m : r.repeats) {
      // One run per call when per_run: the stage's evidence is that run's.
      samples.push_back(search::search_sample_of(metric_, m, r.evidence));
    }
    if (done == 0) {
      all = std::move(r);
    } else {
      all.repeats.insert(all.repeats.end(), r.repeats.begin(), r.repeats.end());
    }
    done += n;
  }
  return all;
}

std::vector<double> LabMeasurer::measure(const std::vector<knobs::Setting>& changes, int repeats) {
  ++calls_;
  const std::string what = what_of(changes);
  if (progress_ != nullptr)
    progress_->note(fmt::format("  {} {}: {} ({} run{})", name_, calls_, what, repeats,
                                repeats == 1 ? "" : "s"));
  Trial trial = base_;
  trial.configuration.name =
      fmt::format("{}: {} change{}", name_, changes.size(), changes.size() == 1 ? "" : "s");
  trial.configuration.settings = knobs::overlay(base_.configuration.settings, changes);
  move_envelope_changes(trial.configuration, lab_.original_envelope());
  std::vector<double> samples;
  results::StageResult r = measure_runs(trial, repeats, samples);
  if (!r.error.empty()) {
    if (!experiment::rejected(r))
      throw RuntimeError(fmt::format("{}: the reference with {}: {}", name_, what, r.error));
    // A measured outcome: worst for the user on this metric (the failure rule above).
    ++rejected_;
    samples.assign(static_cast<std::size_t>(repeats), results::rejected_sample(metric_));
    results_.push_back(std::move(r));
    last_was_reference_ = changes.empty();
    return samples;
  }
  search::Observation& o = seen_[key_of(changes)];
  for (const auto& m : r.repeats) o.transactions += m.committed + m.rolled_back;
  o.evidence = normalised(r);
  o.runs.insert(o.runs.end(), r.repeats.begin(), r.repeats.end());
  last_was_reference_ = changes.empty();
  if (changes.empty())
    reference_runs_.insert(reference_runs_.end(), r.repeats.begin(), r.repeats.end());
  else if (!stage_key_.empty() && key_of(changes) == stage_key_)
    stage_runs_.push_back(r);
  results_.push_back(std::move(r));
  return samples;
}

void LabMeasurer::seed(const std::vector<knobs::Setting>& changes,
                       const results::StageResult& runs) {
  if (!changes.empty()) stage_key_ = key_of(changes);
  search::Observation& o = seen_[key_of(changes)];
  for (const auto& m : runs.repeats) o.transactions += m.committed + m.rolled_back;
  o.evidence = normalised(runs);
  o.runs.insert(o.runs.end(), runs.repeats.begin(), runs.repeats.end());
}

search::Observation LabMeasurer::observe(const std::vector<knobs::Setting>& changes) const {
  auto it = seen_.find(key_of(changes));
  return it == seen_.end() ? search::Observation{} : it->second;
}

}  // namespace pgslow::experiment
