#pragma once
// What the coverage tests of the seeded simulated server share (header-only: the unit tests
// link no cluster): a run laid out as `pgslow run` lays it out, from the simulator's runs, and
// the tally of how often an interval covers the truth.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "results/model.h"
#include "results/stats.h"
#include "results/switchback.h"
#include "search/simulated_server.h"

namespace pgslow::testing {

// A switchback stage measured to ±`precision` on `axis` (--metric): 4 s blocks that drop their
// first second, the first look after 4 pairs, at most `max_pairs`.
inline results::SwitchbackDesign precision_design(std::string axis, int max_pairs,
                                                  double precision = 0.05) {
  results::SwitchbackDesign d;
  d.block_s = 4;
  d.settle_s = 1;
  d.min_pairs = 4;
  d.max_pairs = max_pairs;
  d.precision = precision;
  d.axis = std::move(axis);
  return d;
}

// A run's measurement as an interleaved reference run (experiment::run_plan's).
inline results::ReferenceRun reference_of(const results::Measurement& m, std::size_t after) {
  results::ReferenceRun r;
  r.after_stage = after;
  r.tps = m.tps;
  r.transactions = m.committed;
  r.duration_s = m.duration_s;
  r.server_cpu_s = m.server_cpu_s;
  r.per_tx = m.per_tx;
  r.latency = m.latency;
  return r;
}

struct Layout {
  int baseline_runs = 1;  // the baseline stage's own runs
  int repeats = 1;        // each stage's runs, each followed by a baseline run
  double seconds = 10;
};

// As experiment::run_plan in an isolated run: the baseline, then each stage (knob "b" of the
// simulator's model) alternating with the baseline `repeats` times.
inline results::Run interleaved_run(search::SimulatedServer& sim,
                                    const std::vector<std::string>& stages, Layout layout = {}) {
  results::Run run;
  run.mode = "isolated";
  results::StageResult base;
  base.name = "baseline";
  for (int r = 0; r < layout.baseline_runs; ++r)
    base.repeats.push_back(sim.run({}, layout.seconds));
  run.stages.push_back(base);
  for (std::size_t i = 0; i < stages.size(); ++i) {
    results::StageResult st;
    st.name = stages[i];
    for (int r = 0; r < layout.repeats; ++r) {
      st.repeats.push_back(sim.run({{stages[i], "b", {}}}, layout.seconds));
      run.references.push_back(reference_of(sim.run({}, layout.seconds), i + 1));
    }
    run.stages.push_back(st);
  }
  return run;
}

// How often an interval covered the truth.
struct Coverage {
  int trials = 0;
  int covered = 0;
  void add(const results::Interval& interval, double truth) {
    ++trials;
    if (interval.low <= truth && truth <= interval.high) ++covered;
  }
  double share() const { return trials > 0 ? static_cast<double>(covered) / trials : 0; }
};

}  // namespace pgslow::testing
