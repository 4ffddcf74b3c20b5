// The console's interval column beside the verdict: the interval of the axis the verdict names
// (a cost, the tail), TPS's otherwise.

#include <gtest/gtest.h>

#include "report/axes_view.h"

namespace pgslow::report {
namespace {

AxisChange change(const Axis& axis, double ratio, double low, double high) {
  Interval i;
  i.ratio = ratio;
  i.low = low;
  i.high = high;
  i.df = 10;
  i.known = true;
  return {&axis, change_of(i), true};
}

StageSummary summary(std::vector<AxisChange> axes) {
  StageSummary s;
  s.ran = true;
  s.vs_baseline = axes.front().change;  // TPS first, as summarize() lists them
  s.axes = std::move(axes);
  s.verdict = axes_verdict(s.axes);
  return s;
}

TEST(VerdictInterval, ACostVerdictCarriesItsAxisAndInterval) {
  const StageSummary s =
      summary({change(kTpsAxis, 0.95, 0.8, 1.13), change(kCpuAxis, 1.11, 1.02, 1.22)});
  EXPECT_EQ(s.verdict.cell, "costs +11.0% CPU/tx");
  EXPECT_EQ(s.verdict.axis, &kCpuAxis);
  EXPECT_EQ(verdict_interval(s), "CPU/tx +11.0% [+2.0%, +22.0%]");
}

TEST(VerdictInterval, ATailVerdictCarriesTheLatencysInterval) {
  const StageSummary s =
      summary({change(kTpsAxis, 0.97, 0.8, 1.1), change(*find_axis("p99"), 1.5, 1.3, 1.7)});
  EXPECT_EQ(verdict_interval(s).rfind("p99 ", 0), 0u) << verdict_interval(s);
}

TEST(VerdictInterval, ASlowerOrQuietStageKeepsTpssInterval) {
  const StageSummary slower =
      summary({change(kTpsAxis, 0.8, 0.7, 0.9), change(kCpuAxis, 1.11, 1.02, 1.22)});
  EXPECT_EQ(slower.verdict.axis, &kTpsAxis);
  EXPECT_EQ(verdict_interval(slower), "[-30.0%, -10.0%]");
  const StageSummary quiet =
      summary({change(kTpsAxis, 1.0, 0.9, 1.1), change(kCpuAxis, 1.0, 0.95, 1.05)});
  EXPECT_EQ(quiet.verdict.axis, nullptr);
  EXPECT_EQ(verdict_interval(quiet), "[-10.0%, +10.0%]");
}

}  // namespace
}  // namespace pgslow::report
