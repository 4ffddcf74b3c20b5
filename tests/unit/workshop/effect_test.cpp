// The effect of a lesson or mystery: the report's comparison of two stages (a ratio with a
// 95% interval from batch means of the per-second samples), and Little's law.

#include <gtest/gtest.h>

#include <random>

#include "report/workshop.h"
#include "results/summary.h"

namespace pgslow::report {
namespace {

StageResult stage(double tps, double noise, int seconds, std::uint64_t seed, int clients = 8) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0, noise);
  Measurement m;
  for (int i = 0; i < seconds; ++i) m.tps_per_second.push_back(tps + n(rng));
  m.tps = tps;
  m.committed = static_cast<std::uint64_t>(tps * seconds);
  m.latency.mean_us = clients / tps * 1e6;
  StageResult s;
  s.load.clients = clients;
  s.repeats.push_back(m);
  return s;
}

TEST(Effect, ASlowdownHasAnIntervalAroundItsRatio) {
  const Effect e = measure_effect(stage(1000, 30, 30, 1), stage(4000, 100, 30, 2));
  ASSERT_TRUE(e.known);
  EXPECT_NEAR(e.ratio, 0.25, 0.01);
  EXPECT_LT(e.interval.low, e.ratio);
  EXPECT_GT(e.interval.high, e.ratio);
  EXPECT_LT(e.interval.high, 1);
  EXPECT_EQ(e.verdict, Verdict::kSlower);
  EXPECT_EQ(e.transactions, 30000u);
  EXPECT_NE(describe_effect(e).find("4.0x slower"), std::string::npos) << describe_effect(e);
  EXPECT_NE(describe_effect(e).find("30,000 vs 120,000 transactions"), std::string::npos)
      << describe_effect(e);
}

TEST(Effect, NoiseAloneIsWithinNoise) {
  int within = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const Effect e =
        measure_effect(stage(1000, 80, 30, seed * 2), stage(1000, 80, 30, seed * 2 + 1));
    if (e.verdict == Verdict::kWithinNoise) ++within;
  }
  EXPECT_GE(within, 34);  // a 95% interval: about 38 of 40
}

// One idea, one place: the reveal states what the run's report states for the same stages.
TEST(Effect, AgreesWithTheReportsComparison) {
  const StageResult a = stage(900, 60, 30, 7);
  const StageResult b = stage(1000, 60, 30, 8);
  const Effect e = measure_effect(a, b);
  const Change c = compare_stages(a, b);
  EXPECT_DOUBLE_EQ(e.ratio, c.ratio);
  EXPECT_DOUBLE_EQ(e.interval.low, c.interval.low);
  EXPECT_DOUBLE_EQ(e.interval.high, c.interval.high);
  EXPECT_EQ(e.verdict, verdict_of(c.interval));
}

TEST(Effect, AStageThatDidNotRunIsNotMeasured) {
  EXPECT_FALSE(measure_effect(StageResult{}, stage(1000, 10, 10, 1)).known);
}

TEST(Latency, LittlesLawForAClosedLoop) {
  const LatencyCheck c = latency_check(stage(2000, 10, 10, 3, 10));
  EXPECT_NEAR(c.littles_law_us, 5000, 1);
  EXPECT_NEAR(c.mean_us, 5000, 1);
}

}  // namespace
}  // namespace pgslow::report
