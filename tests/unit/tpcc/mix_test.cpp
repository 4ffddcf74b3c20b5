#include "workload/tpcc/mix.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace pgslow::workload::tpcc {
namespace {

std::vector<std::size_t> deal(std::uint64_t seed, int n) {
  Rng rng(seed);
  Deck deck;
  std::vector<std::size_t> out;
  for (int i = 0; i < n; ++i) out.push_back(deck.deal(rng));
  return out;
}

std::array<int, 5> count(const std::vector<std::size_t>& cards, std::size_t from, std::size_t n) {
  std::array<int, 5> c{};
  for (std::size_t i = from; i < from + n; ++i) ++c[cards[i]];
  return c;
}

TEST(Mix, TheDeckHas23CardsAndMeetsTheSpecMinimums) {
  int total = 0;
  for (const auto& e : mix()) total += e.cards;
  EXPECT_EQ(total, kDeckSize);
  // Clause 5.2.3: at least 43% Payment and 4% of each of the light three.
  EXPECT_GE(100.0 * mix()[1].cards / kDeckSize, 43.0);
  for (std::size_t i = 2; i < mix().size(); ++i)
    EXPECT_GE(100.0 * mix()[i].cards / kDeckSize, 4.0) << mix()[i].name;
  EXPECT_EQ(mix()[0].name, "new_order");
}

// Every deal of 23 (each shuffle) holds exactly 10/10/1/1/1, whatever the seed; so any
// stretch of 46 consecutive cards holds one whole deck and with it every minimum.
TEST(Mix, EveryWindowOf23HasTheMinimums) {
  for (std::uint64_t seed : {1u, 2u, 3u, 42u, 1000u}) {
    const auto cards = deal(seed, kDeckSize * 200);
    for (std::size_t d = 0; d < cards.size(); d += kDeckSize) {
      const auto c = count(cards, d, kDeckSize);
      ASSERT_EQ(c, (std::array<int, 5>{10, 10, 1, 1, 1})) << "seed " << seed << " deck " << d;
    }
    for (std::size_t from = 0; from + 2 * kDeckSize <= cards.size(); ++from) {
      const auto c = count(cards, from, 2 * kDeckSize);
      ASSERT_GE(c[1], 10) << from;
      for (std::size_t t = 2; t < 5; ++t) ASSERT_GE(c[t], 1) << from;
    }
  }
}

TEST(Mix, TheDeckIsShuffledAndTheSameSeedDealsTheSameHands) {
  EXPECT_EQ(deal(7, 500), deal(7, 500));
  EXPECT_NE(deal(7, 500), deal(8, 500));
  // Shuffled: the deals differ from one another.
  const auto cards = deal(9, kDeckSize * 2);
  EXPECT_NE(std::vector<std::size_t>(cards.begin(), cards.begin() + kDeckSize),
            std::vector<std::size_t>(cards.begin() + kDeckSize, cards.end()));
}

// 5.2.5.7: a fixed keying time before the transaction, a truncated exponential think time
// after it.
TEST(Mix, KeyingTimeIsFixedAndThinkTimeTruncatedExponential) {
  Rng rng(12);
  const MixEntry& new_order = mix()[0];
  EXPECT_EQ(keying_time_us(new_order), 18'000'000);  // keying 18 s
  double sum = 0;
  constexpr int kDraws = 20'000;
  for (int i = 0; i < kDraws; ++i) {
    const auto us = think_time_us(rng, new_order);
    ASSERT_GE(us, 0);
    ASSERT_LE(us, 120'000'000);  // think time at most 10 x 12 s
    sum += static_cast<double>(us);
  }
  EXPECT_NEAR(sum / kDraws / 1e6, 12.0, 0.5);  // mean think time 12 s
}

}  // namespace
}  // namespace pgslow::workload::tpcc
