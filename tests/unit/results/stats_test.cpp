#include "results/stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace pgslow::results {
namespace {

TEST(Stats, MedianOddEvenAndEmpty) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(Stats, MinMaxMeanStddev) {
  const std::vector<double> v = {2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(min_of(v), 2);
  EXPECT_DOUBLE_EQ(max_of(v), 9);
  EXPECT_DOUBLE_EQ(mean(v), 5);
  EXPECT_NEAR(stddev(v), 2.138, 1e-3);  // sample stddev (n - 1)
  EXPECT_DOUBLE_EQ(stddev({5}), 0);
  EXPECT_DOUBLE_EQ(min_of({}), 0);
}

TEST(Stats, RelativeSpreadIsRangeOverMedian) {
  EXPECT_DOUBLE_EQ(relative_spread({90, 100, 110}), 0.2);
  EXPECT_DOUBLE_EQ(relative_spread({100}), 0);
}

TEST(Stats, FormatNumberKeepsThreeSignificantDigits) {
  EXPECT_EQ(format_number(7082.4), "7,082");
  EXPECT_EQ(format_number(1234567), "1,234,567");
  EXPECT_EQ(format_number(98.04), "98.0");
  EXPECT_EQ(format_number(0.8712), "0.871");
  EXPECT_EQ(format_number(0.016), "0.0160");
  EXPECT_EQ(format_number(99.96), "100");
  EXPECT_EQ(format_number(-12.34), "-12.3");
  EXPECT_EQ(format_number(0), "0");
  EXPECT_EQ(format_number(NAN), "n/a");
}

TEST(Stats, FormatQuantityShortensMillionsForATableCell) {
  EXPECT_EQ(format_quantity(52.38), "52.4");
  EXPECT_EQ(format_quantity(99'999), "99,999");
  EXPECT_EQ(format_quantity(927'319), "927k");
  EXPECT_EQ(format_quantity(999'700), "1.00M");
  EXPECT_EQ(format_quantity(1'006'117), "1.01M");
  EXPECT_EQ(format_quantity(3.2e9), "3.20G");
  EXPECT_EQ(format_quantity(NAN), "n/a");
}

TEST(Stats, FormatPercent) {
  EXPECT_EQ(format_percent(0.999), "99.9%");
  EXPECT_EQ(format_percent(0.9999), "99.99%");
  EXPECT_EQ(format_percent(0.7052), "70.5%");
  EXPECT_EQ(format_percent(1.0), "100.0%");
}

TEST(Stats, FormatLatencyAndSize) {
  EXPECT_EQ(format_latency_us(812), "812 µs");
  EXPECT_EQ(format_latency_us(12345), "12.3 ms");
  EXPECT_EQ(format_latency_us(4.56e6), "4.56 s");
  EXPECT_EQ(format_size(512), "512 B");
  EXPECT_EQ(format_size(1536), "1.50 kB");
  EXPECT_EQ(format_size(412.0 * 1024 * 1024), "412 MB");
}

TEST(Stats, FormatSeconds) {
  EXPECT_EQ(format_seconds(2.5), "2.5 s");
  EXPECT_EQ(format_seconds(45), "45 s");
  EXPECT_EQ(format_seconds(120), "2 min");
  EXPECT_EQ(format_seconds(125), "2 min 5 s");
  EXPECT_EQ(format_seconds(3780), "1 h 3 min");
}

TEST(Stats, FormatChangeWordsSmallAndLargeChanges) {
  EXPECT_EQ(format_change(1.04), "+4.0%");
  EXPECT_EQ(format_change(0.9), "-10.0%");
  EXPECT_EQ(format_change(0.149), "-85.1% (6.7x slower)");
  EXPECT_EQ(format_change(0.002), "500x slower");
  EXPECT_EQ(format_change(0.016 / 7082), "442,625x slower");
  EXPECT_EQ(format_change(2.5), "2.5x faster");
  EXPECT_EQ(format_change(0), "-100% (nothing completed)");
  EXPECT_EQ(format_change(NAN), "n/a");
}

}  // namespace
}  // namespace pgslow::results

namespace pgslow::results {
namespace {

TEST(Interval, WhatWithinNoiseCouldHaveSeenGrowsWithTheNoiseAndExceedsTheHalfWidth) {
  // Many degrees of freedom: the normal quantiles, 1.96 + 0.84 = 2.80 standard errors.
  const Interval quiet = log_ratio_interval(0.0, 0.02, 1e6);
  EXPECT_NEAR(quiet.detectable(), std::exp(2.8016 * 0.02) - 1, 1e-3);
  EXPECT_GT(quiet.detectable(), quiet.half_width());
  const Interval noisy = log_ratio_interval(0.0, 0.10, 1e6);
  EXPECT_GT(noisy.detectable(), 3 * quiet.detectable());
  // Few degrees of freedom: t's heavier tails make the same noise see less.
  EXPECT_GT(log_ratio_interval(0.0, 0.02, 3).detectable(), quiet.detectable());
  // No interval, nothing to claim.
  EXPECT_EQ(log_ratio_interval(0.0, 0.0, 4).detectable(), 0.0);
  // The estimate does not move it: it is a property of the noise.
  EXPECT_NEAR(log_ratio_interval(0.1, 0.02, 1e6).detectable(), quiet.detectable(), 1e-9);
}

}  // namespace
}  // namespace pgslow::results
