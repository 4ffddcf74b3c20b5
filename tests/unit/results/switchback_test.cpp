// Switchback runs on a seeded simulated server, second by second: its speed drifts (a random
// walk and a trend), bursts of other load take a third of it for seconds at a time, each
// second's throughput has autocorrelated noise, and the stage's effect may build up slowly
// after a switch (carryover). The SwitchbackRun schedule and interval the live run uses must
// cover the true effect at their stated confidence, also when the run stops early at a
// precision.

#include "results/switchback.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace pgslow::results {
namespace {

struct Load {
  double tps = 2000;
  double effect = 0.93;      // stage TPS / reference TPS, once settled
  double cpu_effect = 1.08;  // stage CPU per transaction / reference's
  double noise = 0.06;       // per-second relative noise of throughput (AR(1), rho 0.5)
  double cpu_noise = 0.02;   // per second, independent
  double walk = 0.01;        // random-walk drift of the machine's speed, per sqrt(second)
  double trend = -0.002;     // and a steady trend, per second
  double burst_rate = 0.02;  // bursts of other load starting per second
  double burst_cut = 0.35;   // share of the speed a burst takes
  double carryover_s = 0.2;  // time constant of the stage's effect after a switch
};

struct Trial {
  Interval tps;
  Interval cpu;
  Switchback result;
};

// Drives `design` through the simulated load, 0.1 s at a time, as the live run drives it
// through the clock.
Trial simulate(const Load& load, const SwitchbackDesign& design, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0, 1);
  std::uniform_real_distribution<double> uniform(0, 1);
  const double dt = 0.1;
  SwitchbackRun run(design);
  double drift = 0, ar = 0, burst_left = 0;
  double level = 0;  // log effect now (approaches the block's target with carryover)
  SwitchbackBlock current;
  double tx = 0;
  int block = 0;
  for (double t = 0; t < 3600; t += dt) {
    const SwitchbackRun::Position p = run.at(t);
    if (p.block != block) {
      current.transactions = static_cast<std::uint64_t>(std::llround(tx));
      if (run.add(current)) break;
      current = {};
      tx = 0;
      block = p.block;
    }
    drift += load.walk * std::sqrt(dt) * gauss(rng) + load.trend * dt;
    ar = std::pow(0.5, dt) * ar + std::sqrt(1 - std::pow(0.25, dt)) * load.noise * gauss(rng);
    if (burst_left > 0) {
      burst_left -= dt;
    } else if (uniform(rng) < load.burst_rate * dt) {
      burst_left = 2 + 6 * uniform(rng);
    }
    const double target = p.stage ? std::log(load.effect) : 0;
    level = target + (level - target) * std::exp(-dt / load.carryover_s);
    const double cpu_level = level / std::log(load.effect) * std::log(load.cpu_effect);
    const double rate =
        load.tps * std::exp(drift + ar + level) * (burst_left > 0 ? 1 - load.burst_cut : 1);
    if (p.counting) {
      const double done = rate * dt;
      tx += done;
      current.seconds += dt;
      current.server_cpu_s +=
          done * 400e-6 * std::exp(cpu_level + load.cpu_noise * gauss(rng) / std::sqrt(dt));
      current.client_cpu_s += done * 40e-6;
    }
  }
  Trial trial;
  trial.result = run.result();
  const double c = switchback_confidence(trial.result);
  trial.tps = switchback_interval(trial.result.blocks, kTpsAxis, c);
  trial.cpu = switchback_interval(trial.result.blocks, kCpuAxis, c);
  return trial;
}

struct Coverage {
  double tps = 0, cpu = 0, slower = 0, precision_reached = 0, blocks = 0;
};

Coverage coverage(const Load& load, const SwitchbackDesign& design, int trials) {
  Coverage c;
  for (int i = 0; i < trials; ++i) {
    const Trial t = simulate(load, design, 1000 + static_cast<std::uint64_t>(i));
    c.tps += t.tps.known && t.tps.low <= load.effect && load.effect <= t.tps.high;
    c.cpu += t.cpu.known && t.cpu.low <= load.cpu_effect && load.cpu_effect <= t.cpu.high;
    c.slower += verdict_of(t.tps) == Verdict::kSlower;
    c.precision_reached += t.result.stopped == "precision";
    c.blocks += static_cast<double>(t.result.blocks.size());
  }
  c.tps /= trials;
  c.cpu /= trials;
  c.slower /= trials;
  c.precision_reached /= trials;
  c.blocks /= trials;
  return c;
}

TEST(Switchback, BlocksAlternateAndDropTheirSettlingTime) {
  SwitchbackRun run({.block_s = 4, .settle_s = 1});
  EXPECT_FALSE(run.at(0.5).stage);
  EXPECT_FALSE(run.at(0.5).counting);
  EXPECT_TRUE(run.at(1.5).counting);
  EXPECT_TRUE(run.at(4.2).stage);
  EXPECT_FALSE(run.at(4.2).counting);
  EXPECT_EQ(run.at(9).block, 2);
}

TEST(Switchback, RunsToItsBudgetAndEndsOnAReferenceBlock) {
  SwitchbackRun run({.block_s = 4, .settle_s = 1, .min_pairs = 3, .max_pairs = 5});
  int blocks = 0;
  while (!run.add({.stage = false, .seconds = 3, .transactions = 3000})) ++blocks;
  EXPECT_EQ(run.result().blocks.size(), 11u);
  EXPECT_FALSE(run.result().blocks.back().stage);
  EXPECT_EQ(run.result().stopped, "fixed");
}

TEST(Switchback, LooksAreFewAndEndAtTheBudget) {
  EXPECT_EQ(look_schedule({.min_pairs = 4, .max_pairs = 20, .precision = 0.05}),
            (std::vector<int>{4, 6, 9, 14, 20}));
  EXPECT_EQ(look_schedule({.min_pairs = 4, .max_pairs = 20}), (std::vector<int>{20}));
  // O'Brien and Fleming's spending: the first look (4 of 20 pairs) nearly spends nothing, the
  // last nearly all of the 5%, where an even split over the five looks stated each at 99%.
  const SwitchbackDesign d{.min_pairs = 4, .max_pairs = 20, .precision = 0.05};
  EXPECT_GT(look_confidence(d, 4), 0.9999);
  EXPECT_GT(look_confidence(d, 20), 0.95);
  EXPECT_LT(look_confidence(d, 20), 0.965);
  EXPECT_GE(look_confidence(d, 9), look_confidence(d, 14));
  EXPECT_EQ(look_confidence(d, 10), look_confidence(d, 9));  // between looks: the last one's
}

TEST(Switchback, FewerThanThreeStageBlocksGiveNoInterval) {
  std::vector<SwitchbackBlock> blocks{{false, 3, 3000}, {true, 3, 2800}, {false, 3, 3000}};
  EXPECT_FALSE(switchback_interval(blocks, kTpsAxis).known);
  EXPECT_FALSE(switchback_interval(blocks, kCpuAxis).known);  // not measured
}

TEST(Switchback, ALinearDriftCancels) {
  // Throughput falls 2% a block; the stage is exactly 5% slower than its neighbours' mean.
  std::vector<SwitchbackBlock> blocks;
  for (int k = 0; k < 21; ++k) {
    const double level = 3000 * std::exp(-0.02 * k) * (k % 2 ? 0.95 : 1);
    blocks.push_back({k % 2 == 1, 3, static_cast<std::uint64_t>(level * 3)});
  }
  const Interval i = switchback_interval(blocks, kTpsAxis);
  EXPECT_NEAR(i.ratio, 0.95, 0.002);
}

TEST(Switchback, CoversTheTrueEffectWithDriftAndBursts) {
  const Coverage c = coverage(Load{}, {.block_s = 4, .settle_s = 1, .max_pairs = 10}, 800);
  EXPECT_GE(c.tps, 0.93) << "TPS interval coverage";
  EXPECT_GE(c.cpu, 0.93) << "CPU/tx interval coverage";
}

TEST(Switchback, SeesASevenPercentEffectInTenPairs) {
  Load calm;
  calm.burst_rate = 0.005;
  const Coverage c = coverage(calm, {.block_s = 4, .settle_s = 1, .max_pairs = 10}, 200);
  EXPECT_GE(c.slower, 0.8) << "share of runs that call a 7% effect slower";
}

TEST(Switchback, CarryoverLongerThanTheSettlingTimeBiasesTheEffect) {
  // What the catalog's carryover guards against: a knob whose effect takes 5 s to build up,
  // measured in 4 s blocks, looks much smaller than it is, and the interval misses it.
  Load slow;
  slow.burst_rate = 0.005;
  slow.carryover_s = 5;
  const Coverage c = coverage(slow, {.block_s = 4, .settle_s = 1, .max_pairs = 10}, 200);
  EXPECT_LT(c.tps, 0.5);
}

TEST(Switchback, StoppingAtAPrecisionKeepsTheCoverage) {
  const SwitchbackDesign design{
      .block_s = 4, .settle_s = 1, .min_pairs = 4, .max_pairs = 30, .precision = 0.05};
  Load calm;
  calm.burst_rate = 0.005;
  const Coverage c = coverage(calm, design, 400);
  EXPECT_GE(c.tps, 0.95) << "coverage of the interval the run stopped with";
  EXPECT_GT(c.precision_reached, 0.5) << "most runs reach +-5% within the budget";
  EXPECT_LT(c.blocks, 61) << "and stop before it";
}

TEST(Switchback, StoppingAtAPrecisionWithoutTheCorrectionWouldNotCover) {
  // The same stopping rule with every look at the plain 95% (the naive way) stops at the first
  // lucky look: its coverage falls below 95%. The Bonferroni looks are what keeps it.
  int covered = 0;
  const int trials = 400;
  for (int i = 0; i < trials; ++i) {
    SwitchbackDesign design{.block_s = 4, .settle_s = 1, .min_pairs = 3, .max_pairs = 30};
    Load load;
    // Look after every pair at 95%, stop at +-5%.
    std::vector<SwitchbackBlock> blocks;
    Trial full = simulate(load, design, 1000 + static_cast<std::uint64_t>(i));
    Interval last;
    for (std::size_t n = 7; n <= full.result.blocks.size(); n += 2) {
      blocks.assign(full.result.blocks.begin(), full.result.blocks.begin() + static_cast<long>(n));
      last = switchback_interval(blocks, kTpsAxis, 0.95);
      if (last.known && last.half_width() <= 0.05) break;
    }
    covered += last.low <= load.effect && load.effect <= last.high;
  }
  const double naive = static_cast<double>(covered) / trials;
  const Coverage corrected = coverage(
      Load{}, {.block_s = 4, .settle_s = 1, .min_pairs = 4, .max_pairs = 30, .precision = 0.05},
      trials);
  EXPECT_LT(naive, corrected.tps);
}

}  // namespace
}  // namespace pgslow::results
