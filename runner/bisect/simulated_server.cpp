#include "bisect/simulated_server.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pgslow::bisect {

SimulatedServer::SimulatedServer(SimulatedModel model)
    : model_(std::move(model)), rng_(model_.seed) {}

double SimulatedServer::expected_tps(const std::set<std::string>& changed) const {
  double tps = model_.base_tps;
  for (const auto& k : model_.knobs)
    if (changed.count(k.name) != 0) tps *= k.factor;
  for (const auto& i : model_.interactions)
    if (changed.count(i.a) != 0 && changed.count(i.b) != 0) tps *= i.factor;
  return tps;
}

std::vector<double> SimulatedServer::measure(const std::vector<Setting>& changes, int repeats) {
  std::set<std::string> changed;
  for (const auto& s : changes) changed.insert(s.name);
  double tps = expected_tps(changed);
  std::normal_distribution<double> unit(0.0, 1.0);
  std::vector<double> samples;
  for (int i = 0; i < repeats; ++i) {
    // Drift: the machine's speed changes run by run, the same for every configuration.
    const int drifted = std::max(0, runs_ + i - model_.drift_after_runs);
    const bool hogged = runs_ + i >= model_.drift_after_runs && model_.noise_after_drift > 0;
    const double sigma = hogged ? model_.noise_after_drift : model_.noise;
    const bool in_burst = std::find(model_.burst_runs.begin(), model_.burst_runs.end(),
                                    runs_ + i) != model_.burst_runs.end();
    const double burst = in_burst ? model_.burst_log : 0.0;
    samples.push_back(tps * std::exp(model_.drift_per_run * drifted + burst + sigma * unit(rng_)));
  }
  ++calls_;
  runs_ += repeats;
  return samples;
}

std::vector<Candidate> SimulatedServer::candidates() const {
  std::vector<Candidate> out;
  for (const auto& k : model_.knobs) {
    Candidate c;
    c.change.name = k.name;
    c.change.value = "b";
    c.good_value = "a";
    c.needs_restart = k.needs_restart;
    out.push_back(c);
  }
  return out;
}

SimulatedModel harmless_model(int n, std::uint64_t seed) {
  SimulatedModel m;
  m.seed = seed;
  std::mt19937_64 rng(seed * 7919 + 1);
  std::uniform_real_distribution<double> small(0.99, 1.01);
  for (int i = 0; i < n; ++i) m.knobs.push_back({fmt::format("k{:02}", i), small(rng), false});
  return m;
}

}  // namespace pgslow::bisect
