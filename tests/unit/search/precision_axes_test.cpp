// --precision over the axes, on the seeded simulated server: a switchback stage whose TPS never
// gets narrow enough (a noisy machine) but whose CPU per transaction does stops on CPU/tx with
// `auto`; asked to watch TPS it goes on to the budget; asked to watch a cost axis it stops on
// that axis.

#include <gtest/gtest.h>

#include "results/switchback.h"
#include "search/simulated_server.h"
#include "tests/support/simulated_runs.h"

namespace pgslow::search {
namespace {

// TPS swings 20% from one block to the next and a neighbour steals half the CPU now and then;
// the knob leaves TPS alone and costs 15% CPU and 30% WAL per transaction.
SimulatedModel noisy_machine(std::uint64_t seed) {
  SimulatedModel m;
  m.seed = seed;
  m.noise = 0.2;
  m.neighbour_share = 0.5;
  m.cpu_noise = 0.005;
  m.base_per_tx = {{"wal_bytes", 2000}};
  m.counter_noise = 0.01;
  SimulatedKnob costly{"costly", 1.0};
  costly.cpu_factor = 1.15;
  costly.per_tx_factors = {{"wal_bytes", 1.3}};
  m.knobs = {costly};
  return m;
}

results::SwitchbackDesign design(std::string axis) {
  return testing::precision_design(std::move(axis), 30);
}

// The run as SwitchbackControl drives it, each block from the simulator.
results::Switchback drive(SimulatedServer& sim, const results::SwitchbackDesign& d) {
  results::SwitchbackRun run(d);
  const std::vector<Setting> stage{{"costly", "b", {}}};
  for (int b = 0;; ++b) {
    const bool on = b % 2 == 1;
    if (run.add(sim.block(on ? stage : std::vector<Setting>{}, d.block_s - d.settle_s, on))) break;
  }
  return run.result();
}

// The watched axis's interval at the run's last look, and TPS's.
struct Last {
  results::Interval watched;
  results::Interval tps;
};
Last last_look(const results::Switchback& s, std::string_view key) {
  Last out;
  for (const auto& a : results::switchback_axes(s.blocks, results::switchback_confidence(s))) {
    if (a.axis->key == key) out.watched = a.interval;
    if (a.axis == &results::kTpsAxis) out.tps = a.interval;
  }
  return out;
}

TEST(PrecisionAxes, AutoStopsOnCpuWhenTpsNeverResolves) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SimulatedServer sim(noisy_machine(seed));
    const results::SwitchbackDesign d = design("auto");
    const results::Switchback s = drive(sim, d);
    EXPECT_EQ(s.stopped, "precision") << "seed " << seed;
    EXPECT_LT(s.blocks.size(), 61u) << "seed " << seed << ": stopped before the budget";
    const Last l = last_look(s, "cpu_per_tx");
    ASSERT_TRUE(l.watched.known);
    EXPECT_LE(l.watched.half_width(), 0.05) << "seed " << seed;
    EXPECT_GT(l.tps.half_width(), 0.05) << "seed " << seed << ": TPS did not get there";
    EXPECT_LT(l.watched.low, 1.15);
    EXPECT_GT(l.watched.high, 1.15);
  }
}

TEST(PrecisionAxes, WatchingTpsGoesOnToTheBudget) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    SimulatedServer sim(noisy_machine(seed));
    const results::SwitchbackDesign d = design("tps");
    const results::Switchback s = drive(sim, d);
    EXPECT_EQ(s.stopped, "budget") << "seed " << seed;
    EXPECT_EQ(s.blocks.size(), 61u) << "seed " << seed;  // 30 stage blocks between 31
  }
}

TEST(PrecisionAxes, ANamedCostAxisStopsOnIt) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SimulatedServer sim(noisy_machine(seed));
    const results::SwitchbackDesign d = design("wal_bytes");
    const results::Switchback s = drive(sim, d);
    EXPECT_EQ(s.stopped, "precision") << "seed " << seed;
    const Last l = last_look(s, "wal_bytes");
    ASSERT_TRUE(l.watched.known);
    EXPECT_LE(l.watched.half_width(), 0.05) << "seed " << seed;
    EXPECT_LT(l.watched.low, 1.3);
    EXPECT_GT(l.watched.high, 1.3);
  }
}

}  // namespace
}  // namespace pgslow::search
