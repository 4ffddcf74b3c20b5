#include "workload/tpcc/mix.h"

#include <gtest/gtest.h>

#include <array>

namespace pgslow::workload::tpcc {
namespace {

TEST(Mix, WeightsSumTo100AndMeetTheSpecMinimums) {
  int total = 0;
  for (const auto& e : mix()) total += e.weight;
  EXPECT_EQ(total, 100);
  // Clause 5.2.3: at least 43% Payment and 4% of each of the light three.
  EXPECT_GE(mix()[1].weight, 43);
  for (std::size_t i = 2; i < mix().size(); ++i) EXPECT_GE(mix()[i].weight, 4);
  EXPECT_EQ(mix()[0].name, "new_order");
}

TEST(Mix, DrawsFollowTheWeights) {
  Rng rng(11);
  std::array<int, 5> counts{};
  constexpr int kDraws = 100'000;
  for (int i = 0; i < kDraws; ++i) ++counts[draw_from_mix(rng)];
  for (std::size_t i = 0; i < mix().size(); ++i)
    EXPECT_NEAR(100.0 * counts[i] / kDraws, mix()[i].weight, 0.6) << mix()[i].name;
}

TEST(Mix, WaitTimeIsKeyingPlusTruncatedThinkTime) {
  Rng rng(12);
  const MixEntry& new_order = mix()[0];
  double sum = 0;
  constexpr int kDraws = 20'000;
  for (int i = 0; i < kDraws; ++i) {
    const auto us = wait_time_us(rng, new_order);
    ASSERT_GE(us, 18'000'000);                // keying 18 s
    ASSERT_LE(us, 18'000'000 + 120'000'000);  // think time at most 10 x 12 s
    sum += static_cast<double>(us - 18'000'000);
  }
  EXPECT_NEAR(sum / kDraws / 1e6, 12.0, 0.5);  // mean think time 12 s
}

}  // namespace
}  // namespace pgslow::workload::tpcc
