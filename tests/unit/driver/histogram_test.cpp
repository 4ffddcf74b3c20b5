#include "driver/histogram.h"

#include <gtest/gtest.h>

#include <cmath>

namespace pgslow::driver {
namespace {

TEST(Histogram, BucketsAreExactBelow128AndContiguousAbove) {
  for (std::int64_t v = 0; v < 128; ++v) EXPECT_EQ(Histogram::index_of(v), v);
  // Every bucket starts where the previous one ends.
  for (int i = 1; i < Histogram::kBuckets; ++i)
    ASSERT_EQ(Histogram::bucket_low(i),
              Histogram::bucket_low(i - 1) + Histogram::bucket_width(i - 1))
        << i;
  // A value lands in the bucket that contains it, with under 1.6% relative width.
  for (std::int64_t v : {128LL, 129LL, 255LL, 256LL, 1000LL, 123456LL, 987654321LL}) {
    int i = Histogram::index_of(v);
    EXPECT_LE(Histogram::bucket_low(i), v);
    EXPECT_LT(v, Histogram::bucket_low(i) + Histogram::bucket_width(i));
    EXPECT_LE(static_cast<double>(Histogram::bucket_width(i)) / static_cast<double>(v), 1.0 / 64);
  }
  EXPECT_EQ(Histogram::index_of(std::int64_t{1} << 50), Histogram::kBuckets - 1);  // clamped
}

TEST(Histogram, PercentilesOfAUniformSpread) {
  Histogram h;
  for (int v = 1; v <= 10000; ++v) h.record(v);
  EXPECT_EQ(h.count(), 10000u);
  EXPECT_EQ(h.max(), 10000);
  EXPECT_EQ(h.min(), 1);
  EXPECT_NEAR(h.mean(), 5000.5, 1e-9);
  EXPECT_NEAR(h.percentile(0.5), 5000, 5000 * 0.016);
  EXPECT_NEAR(h.percentile(0.99), 9900, 9900 * 0.016);
  EXPECT_NEAR(h.percentile(0.999), 9990, 9990 * 0.016);
  EXPECT_EQ(h.percentile(1.0), 10000);  // never above the maximum
}

TEST(Histogram, SmallValuesAreExact) {
  Histogram h;
  for (int i = 0; i < 90; ++i) h.record(10);
  for (int i = 0; i < 10; ++i) h.record(100);
  EXPECT_EQ(h.percentile(0.5), 10);
  EXPECT_EQ(h.percentile(0.90), 10);
  EXPECT_EQ(h.percentile(0.91), 100);
  auto s = h.summary();
  EXPECT_EQ(s.p50_us, 10);
  EXPECT_EQ(s.p99_us, 100);
  EXPECT_EQ(s.max_us, 100);
}

TEST(Histogram, MergeEqualsRecordingEverythingInOne) {
  Histogram a, b, all;
  for (int v = 0; v < 5000; ++v) {
    std::int64_t x = (v * 7919) % 100000;
    (v % 2 ? a : b).record(x);
    all.record(x);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_EQ(a.min(), all.min());
  for (double q : {0.1, 0.5, 0.9, 0.99, 0.999}) EXPECT_EQ(a.percentile(q), all.percentile(q)) << q;
  a.clear();
  EXPECT_EQ(a.count(), 0u);
  EXPECT_EQ(a.percentile(0.5), 0);
  EXPECT_EQ(a.max(), 0);
}

TEST(Histogram, NegativeValuesCountAsZero) {
  Histogram h;
  h.record(-5);
  EXPECT_EQ(h.max(), 0);
  EXPECT_EQ(h.count(), 1u);
}

}  // namespace
}  // namespace pgslow::driver
