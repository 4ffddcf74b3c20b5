// A stage's verdict: TPS and the knobs' own axes tested first with most of the 5%
// (weighted_holm), TPS headlined when resolved, an axis nobody expected only an "also", ratios
// below 1 worded as "fewer", and a "could see" past ±100% saying what more runs would give.

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "results/summary.h"

namespace pgslow::results {
namespace {

// An interval of `ratio` whose standard error of the log is `se`, at 95%, on `df` degrees.
Interval interval_of(double ratio, double se, double df = 10) {
  return log_ratio_interval(std::log(ratio), se, df);
}

AxisChange axis(std::string_view key, double ratio, double se, bool own) {
  Change counts;
  counts.stage_samples = 2;
  counts.reference_samples = 3;
  counts.reference_value = 1;
  counts.stage_value = ratio;
  return {find_axis(key), change_of(interval_of(ratio, se), counts), own};
}

// The stage's axes with the weighted rule applied, as summarize() states them.
std::vector<AxisChange> tested(std::vector<AxisChange> axes) {
  std::vector<Interval*> own, others;
  for (auto& a : axes) (a.own ? own : others).push_back(&a.change.interval);
  weighted_holm(own, others);
  for (auto& a : axes) a.change = change_of(a.change.interval, a.change);
  return axes;
}

TEST(WeightedHolm, AnOwnAxisIsTestedAtMostOfTheErrorWhereHolmSplitsItNineWays) {
  // p about 0.02: called with two own axes (TPS and CPU/tx share 4.5%), never by Holm's
  // first step over nine axes (0.56%).
  std::vector<Interval> nine(9, interval_of(1.0, 0.05));
  nine[1] = interval_of(std::exp(2.75 * 0.05), 0.05);
  ASSERT_LT(p_value(nine[1]), 0.0225);
  ASSERT_GT(p_value(nine[1]), 0.0056);
  std::vector<Interval> holm_family = nine;
  std::vector<Interval*> all;
  for (auto& i : holm_family) all.push_back(&i);
  holm(all);
  EXPECT_EQ(verdict_of(holm_family[1]), Verdict::kWithinNoise);
  std::vector<Interval*> own = {&nine[0], &nine[1]};
  std::vector<Interval*> others;
  for (std::size_t k = 2; k < nine.size(); ++k) others.push_back(&nine[k]);
  weighted_holm(own, others);
  EXPECT_EQ(verdict_of(nine[1]), Verdict::kFaster);
}

TEST(WeightedHolm, KeepsTheFamilyWiseErrorAtFivePercentWithNoEffectAnywhere) {
  // 4,000 stages with nine axes and no effect: the share with any verdict stays near 5% (its
  // standard error is 0.34%).
  std::mt19937_64 rng(7);
  std::normal_distribution<double> z(0, 1);
  const double se = 0.05;
  int wrong = 0;
  const int stages = 4000;
  for (int s = 0; s < stages; ++s) {
    std::vector<Interval> axes;
    for (int k = 0; k < 9; ++k) axes.push_back(interval_of(std::exp(z(rng) * se), se, 1e9));
    std::vector<Interval*> own = {&axes[0], &axes[1]};
    std::vector<Interval*> others;
    for (int k = 2; k < 9; ++k) others.push_back(&axes[static_cast<std::size_t>(k)]);
    weighted_holm(own, others);
    bool any = false;
    for (const auto& i : axes) any = any || verdict_of(i) != Verdict::kWithinNoise;
    wrong += any ? 1 : 0;
  }
  EXPECT_LE(static_cast<double>(wrong) / stages, 0.05 + 0.012);
  EXPECT_GE(static_cast<double>(wrong) / stages, 0.03);  // not needlessly strict either
}

TEST(WeightedHolm, OnceTheOwnAxesAreCalledTheOthersGetTheWholeError) {
  Interval tps = interval_of(0.5, 0.02);
  Interval other = interval_of(std::exp(2.3 * 0.05), 0.05);  // p about 0.03
  weighted_holm({&tps}, {&other});
  EXPECT_EQ(verdict_of(tps), Verdict::kSlower);
  EXPECT_EQ(verdict_of(other), Verdict::kFaster);
  EXPECT_NEAR(other.confidence, 0.95, 1e-9);
}

TEST(AxesVerdict, ThroughputHeadlinesWhenResolvedWithTheOwnAxisBesideIt) {
  const auto axes = tested({axis("tps", 0.42, 0.05, true), axis("pooler_wait_ms", 9330, 0.2, true),
                            axis("blocks_read", 8.54, 0.1, false)});
  const AxesVerdict v = axes_verdict(axes);
  EXPECT_EQ(v.axis, &kTpsAxis);
  EXPECT_EQ(v.cell, axes[0].change.text);
  // A counter from (nearly) none reads as its two values, with the stage's value's interval.
  EXPECT_NE(v.sentence.find("pooler wait ms/tx 1.00 → 9,330 [5,"), std::string::npos) << v.sentence;
  EXPECT_NE(v.sentence.find("also 8.54x the buffer misses/tx"), std::string::npos) << v.sentence;
}

TEST(AxesVerdict, AnAxisNobodyExpectedNeverHeadlinesAlone) {
  const auto axes = tested({axis("tps", 1.01, 0.3, true), axis("cpu_per_tx", 1.02, 0.2, true),
                            axis("blocks_read", 8.54, 0.01, false)});
  const AxesVerdict v = axes_verdict(axes);
  EXPECT_EQ(v.axis, nullptr);
  EXPECT_EQ(v.cell.rfind("no measurable effect; also ", 0), 0u) << v.cell;
  EXPECT_EQ(v.cell.find("costs"), std::string::npos) << v.cell;
}

TEST(AxesVerdict, TheKnobsOwnAxisHeadlinesWhenThroughputIsWithinNoise) {
  const auto axes = tested({axis("tps", 0.99, 0.05, true), axis("cpu_per_tx", 1.14, 0.03, true)});
  const AxesVerdict v = axes_verdict(axes);
  EXPECT_EQ(v.axis, &kCpuAxis);
  EXPECT_EQ(v.cell, "costs +14.0% CPU/tx");
  EXPECT_NE(v.sentence.find("; TPS within noise"), std::string::npos) << v.sentence;
}

TEST(AxesVerdict, ValuesTooSmallToShowReadAsTheirRatio) {
  // A few bytes of server log per transaction against none: "0 B → 0 B" would say nothing.
  AxisChange log = axis("log_bytes", 40, 0.2, false);
  log.change.reference_value = 0.001;
  log.change.stage_value = 0.04;
  EXPECT_EQ(axis_values_text(log), "");
  const auto axes = tested({axis("tps", 1.0, 0.02, true), log});
  EXPECT_NE(axes_verdict(axes).sentence.find("40.0x the server log/tx"), std::string::npos)
      << axes_verdict(axes).sentence;
}

TEST(AxesVerdict, ARatioBelowOneReadsAsFewerNeverAsSaving) {
  const auto axes =
      tested({axis("tps", 1.0, 0.02, true), axis("read_syscalls", 0.051, 0.05, true)});
  const AxesVerdict v = axes_verdict(axes);
  EXPECT_EQ(v.cell.find("saves"), std::string::npos) << v.cell;
  EXPECT_EQ(v.cell, "uses 95% fewer read syscalls/tx");
  const auto wal = tested({axis("tps", 1.0, 0.02, true), axis("wal_bytes", 0.8, 0.02, true)});
  EXPECT_EQ(axes_verdict(wal).cell, "uses 20% less WAL/tx");
}

TEST(CouldSee, PastOneHundredPercentItSaysWhatMorePairsWouldGive) {
  Change counts;
  counts.stage_samples = 1;
  counts.reference_samples = 3;
  const Change wide = change_of(log_ratio_interval(std::log(0.9), 0.6, 2), counts);
  ASSERT_GT(wide.interval.detectable(), 1);
  EXPECT_NE(wide.text.find("more pairs would narrow it to ±"), std::string::npos) << wide.text;
  const Narrowing n = narrowing(wide.interval, 1, 3);
  EXPECT_GT(n.more_pairs, 0);
  EXPECT_LT(n.detectable, wide.interval.detectable());
  const Change narrow = change_of(log_ratio_interval(std::log(0.99), 0.02, 10), counts);
  EXPECT_EQ(narrow.text.find("more pair"), std::string::npos) << narrow.text;
}

TEST(CouldSee, AnAxisPastOneHundredPercentIsNamedAsTooFewRunsNeverWithItsFigure) {
  // An attribution's unit measured once: TPS narrow enough to state, CPU/tx and WAL/tx not.
  const auto axes = tested({axis("tps", 1.02, 0.02, true), axis("cpu_per_tx", 1.1, 2.0, true),
                            axis("wal_bytes", 0.9, 3.0, true)});
  const AxesVerdict v = axes_verdict(axes);
  EXPECT_EQ(v.cell, "no measurable effect");
  EXPECT_NE(v.sentence.find("could see TPS ±"), std::string::npos) << v.sentence;
  EXPECT_NE(v.sentence.find("too few runs to tell on CPU/tx, WAL/tx (past ±100%)"),
            std::string::npos)
      << v.sentence;
  EXPECT_EQ(v.sentence.find("CPU/tx ±"), std::string::npos) << v.sentence;
}

}  // namespace
}  // namespace pgslow::results
