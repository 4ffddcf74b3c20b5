#include "search/simulated_server.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/errors.h"

namespace pgslow::search {

SimulatedServer::SimulatedServer(SimulatedModel model)
    : model_(std::move(model)),
      rng_(model_.seed),
      cost_rng_(model_.seed * 6364136223846793005ULL + 1),
      counter_rng_(model_.seed * 1442695040888963407ULL + 7),
      neighbour_rng_(model_.seed * 2862933555777941757ULL + 3) {}

double SimulatedServer::stolen(double from, double to) {
  if (!(model_.neighbour_share > 0) || !(to > from)) return 0;
  std::exponential_distribution<double> on(1 / model_.neighbour_on_s);
  std::exponential_distribution<double> off(1 / model_.neighbour_off_s);
  while (spells_.empty() || spells_.back().second < to) {
    const double start = (spells_.empty() ? 0 : spells_.back().second) + off(neighbour_rng_);
    spells_.emplace_back(start, start + on(neighbour_rng_));
  }
  double overlap = 0;
  for (const auto& [a, b] : spells_) overlap += std::max(0.0, std::min(b, to) - std::max(a, from));
  return overlap / (to - from);
}

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

results::Measurement SimulatedServer::one_run(const std::set<std::string>& changed, double tps,
                                              double seconds, Normal& unit, Normal& cost_unit) {
  double cpu_per_tx = model_.base_cpu_per_tx_s;
  double p99 = model_.base_p99_us;
  std::map<std::string, double> per_tx = model_.base_per_tx;
  for (const auto& k : model_.knobs)
    if (changed.count(k.name) != 0) {
      cpu_per_tx *= k.cpu_factor;
      p99 *= k.p99_factor;
      for (const auto& [key, f] : k.per_tx_factors)
        if (per_tx.count(key) != 0) per_tx[key] *= f;
    }
  // Drift: the machine's speed changes run by run, the same for every configuration.
  const int drifted = std::max(0, runs_ - model_.drift_after_runs);
  const bool hogged = runs_ >= model_.drift_after_runs && model_.noise_after_drift > 0;
  const double sigma = hogged ? model_.noise_after_drift : model_.noise;
  const bool in_burst = std::find(model_.burst_runs.begin(), model_.burst_runs.end(), runs_) !=
                        model_.burst_runs.end();
  const double burst = in_burst ? model_.burst_log : 0.0;
  // The machine's speed this run, relative to its own: throughput follows it, latency
  // inversely. A neighbour's spells take their share of it.
  const double steal = model_.neighbour_share * stolen(clock_s_, clock_s_ + seconds);
  const double speed =
      std::exp(model_.drift_per_run * drifted + burst + sigma * unit(rng_)) * (1 - steal);
  clock_s_ += seconds;
  results::Measurement run;
  run.duration_s = seconds;
  // What /proc shows of the neighbour: the share of the machine it took.
  if (model_.neighbour_share > 0) run.neighbour_cpu = steal;
  run.tps = tps * speed;
  run.committed = static_cast<std::uint64_t>(std::llround(std::max(1.0, run.tps * seconds)));
  run.latency.p99_us = p99 / speed;
  run.latency.p95_us = 0.6 * p99 / speed;
  if (model_.server_cpu)
    run.server_cpu_s = static_cast<double>(run.committed) * cpu_per_tx *
                       std::exp(model_.cpu_noise * cost_unit(cost_rng_));
  Normal counter_unit(0.0, 1.0);
  for (const auto& [key, v] : per_tx)
    run.per_tx[key] = v * std::exp(model_.counter_noise * counter_unit(counter_rng_));
  ++runs_;
  return run;
}

std::vector<double> SimulatedServer::measure(const std::vector<Setting>& changes, int repeats) {
  std::set<std::string> changed;
  for (const auto& s : changes) changed.insert(s.name);
  const double tps = expected_tps(changed) * cliff_factor(changes);
  // One pair of generators per call: the samples of a seed stay those the tests were written
  // against.
  Normal unit(0.0, 1.0);
  Normal cost_unit(0.0, 1.0);
  std::vector<double> samples;
  for (int i = 0; i < repeats; ++i) {
    measured_.push_back(one_run(changed, tps, 10, unit, cost_unit));
    samples.push_back(search_sample_of(model_.metric, measured_.back()));
  }
  ++calls_;
  return samples;
}

results::Measurement SimulatedServer::run(const std::vector<Setting>& changes, double seconds) {
  std::set<std::string> changed;
  for (const auto& s : changes) changed.insert(s.name);
  ++calls_;
  Normal unit(0.0, 1.0);
  Normal cost_unit(0.0, 1.0);
  return one_run(changed, expected_tps(changed) * cliff_factor(changes), seconds, unit, cost_unit);
}

results::SwitchbackBlock SimulatedServer::block(const std::vector<Setting>& changes, double seconds,
                                                bool stage) {
  const results::Measurement m = run(changes, seconds);
  results::SwitchbackBlock b;
  b.stage = stage;
  b.seconds = m.duration_s;
  b.transactions = m.committed;
  b.server_cpu_s = m.server_cpu_s;
  b.neighbour_cpu = m.neighbour_cpu;
  b.per_tx = m.per_tx;
  b.p95_us = m.latency.p95_us;
  b.p99_us = m.latency.p99_us;
  return b;
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

}  // namespace pgslow::search
