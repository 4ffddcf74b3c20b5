#include "workload/tpcc/random.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

namespace pgslow::workload::tpcc {
namespace {

TEST(Rng, SameSeedSameSequence) {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
  }
}

TEST(Rng, UniformStaysWithinBoundsAndReachesThem) {
  Rng rng(1);
  bool saw_lo = false, saw_hi = false;
  for (int i = 0; i < 10'000; ++i) {
    const auto v = rng.uniform(5, 15);
    ASSERT_GE(v, 5);
    ASSERT_LE(v, 15);
    saw_lo = saw_lo || v == 5;
    saw_hi = saw_hi || v == 15;
  }
  EXPECT_TRUE(saw_lo);
  EXPECT_TRUE(saw_hi);
}

TEST(NURand, StaysWithinRangeForEverySpecUse) {
  Rng rng(7);
  struct Use {
    std::int64_t a, x, y;
  };
  for (const Use u : {Use{255, 0, 999}, Use{1023, 1, 3000}, Use{8191, 1, 100'000}}) {
    for (std::int64_t c : {std::int64_t{0}, u.a / 2, u.a}) {
      for (int i = 0; i < 20'000; ++i) {
        const auto v = nurand(rng, u.a, u.x, u.y, c);
        ASSERT_GE(v, u.x);
        ASSERT_LE(v, u.y);
      }
    }
  }
}

TEST(NURand, IsNonUniform) {
  // Clause 2.1.6: the OR of two uniforms skews towards values with many bits set; the most
  // frequent customer id is drawn far more often than the uniform 1/3000.
  Rng rng(9);
  std::map<std::int64_t, int> counts;
  constexpr int kDraws = 300'000;
  for (int i = 0; i < kDraws; ++i) ++counts[nurand(rng, 1023, 1, 3000, 259)];
  int most = 0;
  for (const auto& [id, n] : counts) most = std::max(most, n);
  EXPECT_GT(most, 5 * kDraws / 3000);
  // ... and yet reaches most of the range.
  EXPECT_GT(counts.size(), 2900u);
}

TEST(NURandConstants, RunCLastObeysTheDeltaRule) {
  EXPECT_TRUE(is_valid_run_c_last(0, 65));
  EXPECT_TRUE(is_valid_run_c_last(200, 81));
  EXPECT_FALSE(is_valid_run_c_last(0, 64));
  EXPECT_FALSE(is_valid_run_c_last(0, 120));
  EXPECT_FALSE(is_valid_run_c_last(0, 96));
  EXPECT_FALSE(is_valid_run_c_last(150, 38));  // delta 112
  for (std::uint64_t seed = 1; seed < 200; ++seed) {
    const auto c = run_constants(seed);
    EXPECT_TRUE(is_valid_run_c_last(load_constants().c_last, c.c_last)) << seed;
    EXPECT_GE(c.c_last, 0);
    EXPECT_LE(c.c_last, 255);
    EXPECT_LE(c.c_id, 1023);
    EXPECT_LE(c.ol_i_id, 8191);
  }
  EXPECT_NE(run_constants(1).c_id, run_constants(2).c_id);
}

TEST(LastName, MatchesTheSpecExamples) {
  // Clause 4.3.2.3.
  EXPECT_EQ(last_name(371), "PRICALLYOUGHT");
  EXPECT_EQ(last_name(40), "BARPRESBAR");
  EXPECT_EQ(last_name(0), "BARBARBAR");
  EXPECT_EQ(last_name(999), "EINGEINGEING");
}

TEST(Strings, AStringLengthsAndCharacters) {
  Rng rng(3);
  int min_seen = 1000, max_seen = 0;
  for (int i = 0; i < 5'000; ++i) {
    const std::string s = a_string(rng, 26, 50);
    min_seen = std::min<int>(min_seen, static_cast<int>(s.size()));
    max_seen = std::max<int>(max_seen, static_cast<int>(s.size()));
    ASSERT_TRUE(std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c); }))
        << s;
  }
  EXPECT_EQ(min_seen, 26);
  EXPECT_EQ(max_seen, 50);
  EXPECT_EQ(a_string(rng, 24, 24).size(), 24u);
}

TEST(Strings, NStringIsDigits) {
  Rng rng(4);
  const std::string s = n_string(rng, 16, 16);
  EXPECT_EQ(s.size(), 16u);
  EXPECT_TRUE(std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }));
}

TEST(Strings, ZipIsFourDigitsThen11111) {
  Rng rng(5);
  std::string zip;
  append_zip(rng, zip);
  ASSERT_EQ(zip.size(), 9u);
  EXPECT_EQ(zip.substr(4), "11111");
  EXPECT_TRUE(
      std::all_of(zip.begin(), zip.begin() + 4, [](unsigned char c) { return std::isdigit(c); }));
}

TEST(Strings, ItemDataHasOriginalInAboutTenPercent) {
  Rng rng(6);
  int original = 0;
  constexpr int kRows = 20'000;
  for (int i = 0; i < kRows; ++i) {
    std::string data;
    append_item_data(rng, data);
    ASSERT_GE(data.size(), 26u);
    ASSERT_LE(data.size(), 50u);
    if (data.find("ORIGINAL") != std::string::npos) ++original;
  }
  EXPECT_NEAR(static_cast<double>(original) / kRows, 0.10, 0.01);
}

TEST(Cents, FormatsExactly) {
  EXPECT_EQ(format_cents(0), "0.00");
  EXPECT_EQ(format_cents(5), "0.05");
  EXPECT_EQ(format_cents(123456), "1234.56");
  EXPECT_EQ(format_cents(-1000), "-10.00");
}

}  // namespace
}  // namespace pgslow::workload::tpcc
