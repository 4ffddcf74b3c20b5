// Mystery mode without a server: the answer is deterministic per seed, decoys come from
// difficulty 2, clues name no setting, guesses are scored.

#include "workshop/mystery.h"

#include <gtest/gtest.h>

#include <sstream>

namespace pgslow::workshop {
namespace {

const knobs::Catalog& catalog() {
  static const knobs::Catalog c = knobs::Catalog::load_default();
  return c;
}

TEST(Mystery, TheSameSeedHidesTheSameAnswer) {
  for (int d = 1; d <= 3; ++d) {
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      const MysteryAnswer a = choose_mystery(d, seed, catalog());
      const MysteryAnswer b = choose_mystery(d, seed, catalog());
      EXPECT_EQ(a.label, b.label);
      EXPECT_FALSE(a.culprits.empty());
      EXPECT_FALSE(a.key.empty());
      EXPECT_EQ(a.decoys.size(), d == 1 ? 0u : d == 2 ? 2u : 3u);
      for (const auto& decoy : a.decoys) {
        for (const auto& c : a.culprits) EXPECT_NE(decoy.name, c.name);
      }
    }
  }
  EXPECT_THROW(choose_mystery(4, 1, catalog()), InputError);
}

TEST(Mystery, RedactNamesNoKnobAndNoPreset) {
  const MysteryAnswer a = choose_mystery(2, 7, catalog());
  const std::string text =
      "HINT:  Consider increasing the configuration parameter \"max_wal_size\". tiny-cache, "
      "shared_buffers=2MB, "
      "autovacuum_runs stays, whatever differs from the default, " +
      a.label;
  const std::string out = redact(text, catalog(), a);
  EXPECT_EQ(out.find("max_wal_size"), std::string::npos) << out;
  EXPECT_EQ(out.find("tiny-cache"), std::string::npos) << out;
  EXPECT_EQ(out.find("shared_buffers"), std::string::npos) << out;
  EXPECT_NE(out.find("autovacuum_runs"), std::string::npos) << out;  // an evidence key, not a knob
  EXPECT_NE(out.find("the default"), std::string::npos) << out;
}

TEST(Mystery, GuessesAreScored) {
  MysteryAnswer a;
  a.culprits = {{"enable_indexscan", "off", {}},
                {"enable_bitmapscan", "off", {}},
                {"enable_indexonlyscan", "off", {}}};
  a.key = {"enable_indexscan", "enable_bitmapscan"};
  EXPECT_FALSE(score_guess(a, {"work_mem"}).solved);
  EXPECT_EQ(score_guess(a, {"work_mem"}).text.rfind("NOT IT", 0), 0u);
  EXPECT_EQ(score_guess(a, {"enable_indexscan"}).text.rfind("CLOSE", 0), 0u);
  EXPECT_TRUE(score_guess(a, {"ENABLE_INDEXSCAN", "enable_bitmapscan", "work_mem"}).solved);
}

// Naming every knob pgslow knows finds every cause, and must not solve it: each wrong name
// costs (precision), the cause must be named whole (recall).
TEST(Mystery, AShotgunGuessOfEveryKnobIsNotSolved) {
  for (int d = 1; d <= 3; ++d) {
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
      const MysteryAnswer a = choose_mystery(d, seed, catalog());
      const GuessScore all = score_guess(a, catalog().knob_names());
      EXPECT_FALSE(all.solved) << a.label;
      EXPECT_EQ(all.recall, 1.0);
      EXPECT_LT(all.precision, 0.2);
      EXPECT_EQ(all.text.rfind("TOO BROAD", 0), 0u) << all.text;
      EXPECT_NE(all.text.find("every wrong name costs"), std::string::npos) << all.text;
      EXPECT_TRUE(score_guess(a, a.key).solved) << a.label;
    }
  }
  EXPECT_GE(catalog().knob_names().size(), 80u);
}

TEST(Mystery, OneKeyKnobAndOneWrongNameIsNotSolved) {
  MysteryAnswer a;
  a.culprits = {{"shared_buffers", "2MB", {}}};
  a.key = {"shared_buffers"};
  const GuessScore g = score_guess(a, {"shared_buffers", "work_mem"});
  EXPECT_FALSE(g.solved);
  EXPECT_DOUBLE_EQ(g.precision, 0.5);
  EXPECT_TRUE(score_guess(a, {"shared_buffers"}).solved);
  EXPECT_EQ(score_guess(a, {"shared_buffers"}).text.rfind("SOLVED", 0), 0u);
}

}  // namespace
}  // namespace pgslow::workshop
