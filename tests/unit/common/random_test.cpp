#include "common/random.h"

#include <gtest/gtest.h>

#include <cmath>

namespace pgslow {
namespace {

TEST(Random, SameSeedSameSequence) {
  Random a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    std::uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    differs = differs || x != c.next();
  }
  EXPECT_TRUE(differs);
}

TEST(Random, UniformStaysInRangeAndHitsBothEnds) {
  Random r(7);
  bool lo = false, hi = false;
  for (int i = 0; i < 100000; ++i) {
    auto v = r.uniform(-5000, 5000);
    ASSERT_GE(v, -5000);
    ASSERT_LE(v, 5000);
    lo = lo || v == -5000;
    hi = hi || v == 5000;
  }
  EXPECT_TRUE(lo);
  EXPECT_TRUE(hi);
  EXPECT_EQ(r.uniform(3, 3), 3);
}

// The fixed-rate schedule draws Poisson arrivals: exponential gaps with the given mean, so
// that P(gap > mean) = 1/e.
TEST(Random, ExponentialGapsArePoissonArrivals) {
  Random r(11);
  const double mean = 1000;
  const int n = 200000;
  double sum = 0;
  int above = 0;
  for (int i = 0; i < n; ++i) {
    double g = r.exponential(mean);
    ASSERT_GE(g, 0);
    sum += g;
    above += g > mean ? 1 : 0;
  }
  EXPECT_NEAR(sum / n, mean, mean * 0.01);
  EXPECT_NEAR(static_cast<double>(above) / n, std::exp(-1.0), 0.005);
}

}  // namespace
}  // namespace pgslow
