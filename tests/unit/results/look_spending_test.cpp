#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "results/stats.h"

namespace pgslow::results {
namespace {

// The z boundary a look's confidence stands for: Phi^-1(1 - (1 - confidence) / 2).
double boundary_of(double confidence) {
  return t_quantile(1 - (1 - confidence) / 2, INFINITY);
}

std::vector<double> boundaries_of(const std::vector<double>& confidences) {
  std::vector<double> out;
  for (double c : confidences) out.push_back(boundary_of(c));
  return out;
}

TEST(LookSpending, EmptyAndOneLook) {
  EXPECT_TRUE(spending_confidences({}).empty());
  EXPECT_EQ(spending_confidences({1.0}), std::vector<double>{0.95});
  EXPECT_EQ(spending_confidences({0.5}), std::vector<double>{0.95});
  EXPECT_EQ(spending_confidences({1.0}, 0.9), std::vector<double>{0.9});
}

TEST(LookSpending, MatchesPublishedOBrienFlemingBoundaries) {
  // Lan-DeMets O'Brien-Fleming-type spending, four equally spaced looks, two-sided 0.05
  // (Jennison and Turnbull; gsDesign and ldbounds give the same).
  const std::vector<double> z = boundaries_of(spending_confidences({0.25, 0.5, 0.75, 1}));
  ASSERT_EQ(z.size(), 4u);
  EXPECT_NEAR(z[0], 4.333, 0.02);
  EXPECT_NEAR(z[1], 2.963, 0.02);
  EXPECT_NEAR(z[2], 2.359, 0.02);
  EXPECT_NEAR(z[3], 2.014, 0.02);
}

TEST(LookSpending, FirstLookSpendsTheSpendingFunctionItself) {
  // Nothing was spent before the first look: it spends alpha(0.4), each side
  // 2 - 2 Phi(z_{0.9875} / sqrt(0.4)) with z_{0.9875} = 2.2414027276.
  const double side = std::erfc(2.2414027276 / std::sqrt(0.4) / std::sqrt(2.0));
  EXPECT_NEAR(1 - spending_confidences({0.4, 0.6, 0.9, 1})[0], 2 * side, 1e-9);
}

TEST(LookSpending, CrossesAnyBoundaryFivePercentOfTheTimeUnderNoEffect) {
  for (const std::vector<double>& fractions :
       {std::vector<double>{0.25, 0.5, 0.75, 1}, std::vector<double>{0.4, 0.6, 0.9, 1}}) {
    const std::vector<double> z = boundaries_of(spending_confidences(fractions));
    std::mt19937_64 random(20240611);
    std::normal_distribution<double> normal;
    const int paths = 200000;
    int crossed = 0;
    for (int p = 0; p < paths; ++p) {
      double s = 0;
      double t = 0;
      for (std::size_t k = 0; k < fractions.size(); ++k) {
        s += normal(random) * std::sqrt(fractions[k] - t);
        t = fractions[k];
        if (std::fabs(s / std::sqrt(t)) >= z[k]) {
          ++crossed;
          break;
        }
      }
    }
    EXPECT_NEAR(static_cast<double>(crossed) / paths, 0.05, 0.003) << fractions[0];
  }
}

TEST(LookSpending, EarlyLooksAreWiderAndTheLastIsNearTheNominalLevel) {
  const std::vector<double> c = spending_confidences({0.25, 0.5, 0.75, 1});
  ASSERT_EQ(c.size(), 4u);
  for (std::size_t k = 1; k < c.size(); ++k) EXPECT_LE(c[k], c[k - 1]) << k;
  for (std::size_t k = 0; k + 1 < c.size(); ++k) {
    EXPECT_GT(c[k], 0.95) << k;
    EXPECT_LT(c[k], 1.0) << k;
  }
  EXPECT_GE(c.back(), 0.95);
  EXPECT_LT(c.back(), 0.96);
  // Bonferroni would state every look at 1 - 0.05 / 4 = 98.75%.
  EXPECT_LT(c.back(), 1 - 0.05 / 4);
}

TEST(LookSpending, UnevenLooksStateTheLastNearNinetySixPointOne) {
  // Look 3 is close to the last (correlation sqrt(0.9)) and has spent 3.6% of the 5%: the last
  // spends the rest at 96.1% (z = 2.063), still well below Bonferroni's 98.75%.
  const std::vector<double> c = spending_confidences({0.4, 0.6, 0.9, 1});
  ASSERT_EQ(c.size(), 4u);
  for (std::size_t k = 1; k < c.size(); ++k) EXPECT_LE(c[k], c[k - 1]) << k;
  EXPECT_NEAR(boundary_of(c.back()), 2.063, 0.005);
  EXPECT_LT(c.back(), 1 - 0.05 / 4);
}

TEST(LookSpending, VeryCloseLooksStayMonotoneAndSpendTheRest) {
  // Two looks 1e-4 apart: the second may need a higher boundary than the first (they barely
  // differ, yet it must spend almost nothing), so the first is widened to match.
  const std::vector<double> c = spending_confidences({0.5, 0.5001, 1});
  ASSERT_EQ(c.size(), 3u);
  EXPECT_GE(c[0], c[1]);
  EXPECT_GE(c[1], c[2]);
  EXPECT_NEAR(c[2], spending_confidences({0.5, 1})[1], 1e-4);
  EXPECT_GE(c[2], 0.95);
}

TEST(LookSpending, RepeatedFractionIsTheSameLookAndSpendsNothing) {
  const std::vector<double> plain = spending_confidences({0.5, 1});
  const std::vector<double> repeated = spending_confidences({0.5, 0.5, 0.3, 1});
  ASSERT_EQ(repeated.size(), 4u);
  EXPECT_DOUBLE_EQ(repeated[0], plain[0]);
  EXPECT_DOUBLE_EQ(repeated[1], plain[0]);
  EXPECT_DOUBLE_EQ(repeated[2], plain[0]);
  EXPECT_NEAR(repeated[3], plain[1], 1e-9);
}

TEST(LookSpending, FractionsOutsideTheUnitIntervalAreClamped) {
  const std::vector<double> c = spending_confidences({-1, 0.5, 2});
  ASSERT_EQ(c.size(), 3u);
  EXPECT_GT(c[0], 0.999999);  // a look with almost no information spends almost nothing
  EXPECT_NEAR(c[2], spending_confidences({0.5, 1})[1], 1e-6);
  EXPECT_GE(c[2], 0.95);
}

}  // namespace
}  // namespace pgslow::results
