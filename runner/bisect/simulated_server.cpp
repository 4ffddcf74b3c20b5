#include "bisect/simulated_server.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/errors.h"

namespace pgslow::bisect {

SimulatedServer::SimulatedServer(SimulatedModel model)
    : model_(std::move(model)),
      rng_(model_.seed),
      cost_rng_(model_.seed * 6364136223846793005ULL + 1) {}

double SimulatedServer::expected_tps(const std::set<std::string>& changed) const {
  double tps = model_.base_tps;
  for (const auto& k : model_.knobs)
    if (changed.count(k.name) != 0) tps *= k.factor;
  for (const auto& i : model_.interactions)
    if (changed.count(i.a) != 0 && changed.count(i.b) != 0) tps *= i.factor;
  return tps;
}

double SimulatedServer::cliff_factor(const std::vector<Setting>& changes) const {
  double f = 1;
  for (const auto& s : changes)
    for (const auto& c : model_.cliffs) {
      if (c.name != s.name || c.cliff <= 0) continue;
      const knobs::ParsedValue v = knobs::parse_real(s.value, c.unit);
      if (!v.ok())
        throw InputError(fmt::format("simulated {} = '{}': {}", s.name, s.value, *v.error));
      if (v.number < c.cliff)
        f *= c.factor * std::pow(c.per_halving, std::log2(c.cliff / std::max(v.number, 1e-9)));
    }
  return f;
}

std::vector<double> SimulatedServer::measure(const std::vector<Setting>& changes, int repeats) {
  std::set<std::string> changed;
  for (const auto& s : changes) changed.insert(s.name);
  double tps = expected_tps(changed) * cliff_factor(changes);
  double cpu_per_tx = model_.base_cpu_per_tx_s;
  double p99 = model_.base_p99_us;
  for (const auto& k : model_.knobs)
    if (changed.count(k.name) != 0) {
      cpu_per_tx *= k.cpu_factor;
      p99 *= k.p99_factor;
    }
  std::normal_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> cost_unit(0.0, 1.0);
  std::vector<double> samples;
  for (int i = 0; i < repeats; ++i) {
    // Drift: the machine's speed changes run by run, the same for every configuration.
    const int drifted = std::max(0, runs_ + i - model_.drift_after_runs);
    const bool hogged = runs_ + i >= model_.drift_after_runs && model_.noise_after_drift > 0;
    const double sigma = hogged ? model_.noise_after_drift : model_.noise;
    const bool in_burst = std::find(model_.burst_runs.begin(), model_.burst_runs.end(),
                                    runs_ + i) != model_.burst_runs.end();
    const double burst = in_burst ? model_.burst_log : 0.0;
    // The machine's speed this run, relative to its own: throughput follows it, latency
    // inversely.
    const double speed = std::exp(model_.drift_per_run * drifted + burst + sigma * unit(rng_));
    results::Measurement run;
    run.duration_s = 10;
    run.tps = tps * speed;
    run.committed =
        static_cast<std::uint64_t>(std::llround(std::max(1.0, run.tps * run.duration_s)));
    run.latency.p99_us = p99 / speed;
    if (model_.server_cpu)
      run.server_cpu_s = static_cast<double>(run.committed) * cpu_per_tx *
                         std::exp(model_.cpu_noise * cost_unit(cost_rng_));
    samples.push_back(search_sample_of(model_.metric, run));
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
