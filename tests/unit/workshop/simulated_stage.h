#pragma once
// A measured stage of a simulated server: one run of `seconds` per-second TPS samples around
// `tps` with normal noise, seeded, for the effect and fix tests.

#include <cstdint>
#include <random>

#include "results/model.h"

namespace pgslow::report::testing {

inline results::StageResult stage(double tps, double noise, int seconds, std::uint64_t seed,
                                  int clients = 8) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0, noise);
  results::Measurement m;
  for (int i = 0; i < seconds; ++i) m.tps_per_second.push_back(tps + n(rng));
  m.tps = tps;
  m.committed = static_cast<std::uint64_t>(tps * seconds);
  m.latency.mean_us = clients / tps * 1e6;
  results::StageResult s;
  s.load.clients = clients;
  s.repeats.push_back(m);
  return s;
}

}  // namespace pgslow::report::testing
