// `pgslow mystery fix` without a server: the share of the lost performance a fix recovers, the
// changes that did nothing, and the scoreboard's order, on simulated stages with noise.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/paths.h"
#include "report/registry.h"
#include "report/workshop.h"
#include "tests/unit/workshop/simulated_stage.h"
#include "workshop/mystery.h"
#include "workshop/record.h"

namespace pgslow::workshop {
namespace {

using report::testing::stage;

std::vector<knobs::Setting> changes(std::initializer_list<const char*> names) {
  std::vector<knobs::Setting> out;
  for (const char* n : names) out.push_back({n, "on", {}});
  return out;
}

// A fault that costs 4x: the healthy server at 1,000 TPS, the broken one at 250.
report::FixResult fix_at(double tps, std::uint64_t seed,
                         std::initializer_list<const char*> names = {"enable_indexscan"},
                         std::vector<double> without_tps = {}) {
  std::vector<results::StageResult> without;
  for (std::size_t i = 0; i < without_tps.size(); ++i)
    without.push_back(stage(without_tps[i], 20, 30, seed * 10 + 3 + i));
  return score_fix(changes(names), stage(1000, 40, 30, seed * 10),
                   stage(250, 10, 30, seed * 10 + 1), stage(tps, tps * 0.04, 30, seed * 10 + 2),
                   without);
}

TEST(Fix, RecoveringTheWholeFaultIsAllOfIt) {
  const report::FixResult f = fix_at(1000, 1);
  ASSERT_TRUE(f.recovered.known);
  EXPECT_NEAR(f.recovered.share, 1.0, 0.05);
  EXPECT_LT(f.recovered.low, 1.0);
  EXPECT_GT(f.recovered.high, 1.0);
  EXPECT_EQ(f.vs_healthy.verdict, results::Verdict::kWithinNoise);
  EXPECT_EQ(f.vs_broken.verdict, results::Verdict::kFaster);
  EXPECT_EQ(f.did_nothing(), 0u);
}

// On the log scale of throughput: from 250 to 500 TPS is half of the way back to 1,000.
TEST(Fix, HalfTheWayBackOnTheLogScaleIsHalf) {
  const report::FixResult f = fix_at(500, 2);
  ASSERT_TRUE(f.recovered.known);
  EXPECT_NEAR(f.recovered.share, 0.5, 0.05);
  EXPECT_LT(f.recovered.high, 1.0);
  EXPECT_NE(report::rendered(f, "console").find("recovered 50% ["), std::string::npos)
      << report::rendered(f, "console");
}

// A bound just below zero reads "0%", never "-0%".
TEST(Fix, AShareThatRoundsToZeroReadsZero) {
  EXPECT_EQ(report::describe_recovered({true, 0.03, -0.004, 0.06}), "3% [0%, 6%]");
}

TEST(Fix, AFaultWithinNoiseHasNoShareToRecover) {
  const report::FixResult f = score_fix(changes({"work_mem"}), stage(1000, 60, 30, 5),
                                        stage(990, 60, 30, 6), stage(1000, 60, 30, 7), {});
  EXPECT_FALSE(f.recovered.known);
  EXPECT_NE(report::describe_recovered(f.recovered).find("within noise"), std::string::npos);
}

// Leave one out: the whole fix against the fix without each change. Two of the three changes
// cost nothing when left out.
TEST(Fix, ChangesThatDidNothingAreCountedAndNamed) {
  const report::FixResult f =
      fix_at(1000, 3, {"enable_indexscan", "work_mem", "jit"}, {250, 1000, 1000});
  ASSERT_EQ(f.changes.size(), 3u);
  EXPECT_FALSE(f.changes[0].did_nothing);
  EXPECT_NEAR(f.changes[0].share.share, 1.0, 0.1);
  EXPECT_TRUE(f.changes[1].did_nothing);
  EXPECT_TRUE(f.changes[2].did_nothing);
  EXPECT_EQ(f.did_nothing(), 2u);
  const std::string text = report::rendered(f, "console");
  EXPECT_NE(text.find("2 of its 3 changes did nothing"), std::string::npos) << text;
}

// Measurably faster with it, but by less than a tenth of the loss: drift between two short
// runs is that large, so the change is not credited.
TEST(Fix, ATinyMeasuredGainIsNotCredited) {
  const report::FixResult f = fix_at(1000, 14, {"enable_indexscan", "jit"}, {250, 940});
  ASSERT_EQ(f.changes.size(), 2u);
  EXPECT_EQ(f.changes[1].without.verdict, results::Verdict::kFaster);
  EXPECT_LT(f.changes[1].share.high, 0.1);
  EXPECT_TRUE(f.changes[1].did_nothing);
  EXPECT_FALSE(f.changes[0].did_nothing);
}

// Two changes that only work together (index access priced at 1e300 needs both costs back):
// leaving either out loses everything, so neither is called useless.
TEST(Fix, ChangesThatOnlyWorkTogetherBothCount) {
  const report::FixResult f =
      fix_at(1000, 4, {"random_page_cost", "cpu_index_tuple_cost"}, {250, 250});
  EXPECT_EQ(f.did_nothing(), 0u);
  EXPECT_NE(report::rendered(f, "console").find("each of its 2 changes counted"),
            std::string::npos);
}

// A DBA's order: the right fix, then the same recovery with needless knobs (a shotgun), then a
// partial fix. The shotgun's estimate is the higher here, within noise of the right one's.
TEST(Fix, RankedByRecoveryThenByFewerKnobs) {
  report::FixResult right = fix_at(1000, 7, {"enable_indexscan", "enable_bitmapscan"}, {600, 600});
  right.who = "right";
  report::FixResult shotgun =
      fix_at(1030, 8, {"enable_indexscan", "enable_bitmapscan", "work_mem", "jit"},
             {600, 600, 1030, 1030});
  shotgun.who = "shotgun";
  report::FixResult partial = fix_at(500, 9, {"enable_indexscan"});
  partial.who = "partial";
  report::FixResult refused;
  refused.who = "refused";
  refused.refused = {"shared_buffers=1TB: the server refuses it"};
  ASSERT_GT(shotgun.recovered.share, right.recovered.share);
  const report::FixScoreboard board = report::rank_fixes({partial, refused, shotgun, right});
  ASSERT_EQ(board.fixes.size(), 4u);
  EXPECT_EQ(board.fixes[0].who, "right");
  EXPECT_EQ(board.fixes[1].who, "shotgun");
  EXPECT_EQ(board.fixes[2].who, "partial");
  EXPECT_EQ(board.fixes[3].who, "refused");  // not run: last, unranked
  const std::string text = report::rendered(board, "console");
  EXPECT_NE(text.find("not run"), std::string::npos) << text;
}

// A clearly better recovery ranks first even when it touches more knobs.
TEST(Fix, AClearlyBetterFixRanksFirstWhateverItsKnobs) {
  report::FixResult many =
      fix_at(1000, 11, {"enable_indexscan", "enable_bitmapscan", "jit"}, {600, 600, 1000});
  many.who = "many";
  report::FixResult one = fix_at(400, 12, {"enable_indexscan"});
  one.who = "one";
  const report::FixScoreboard board = report::rank_fixes({one, many});
  EXPECT_EQ(board.fixes[0].who, "many");
}

// The scoreboard lives in the mystery file: a fix read back says what it said.
TEST(Fix, ReadBackFromJsonSaysTheSame) {
  const report::FixResult f = fix_at(700, 13, {"enable_indexscan", "jit"}, {250, 700});
  const report::FixResult back = report::fix_from_json(report::fix_to_json(f), "mystery.json");
  EXPECT_EQ(report::rendered(back, "console"), report::rendered(f, "console"));
  EXPECT_EQ(report::rendered(back, "json"), report::rendered(f, "json"));
}

}  // namespace
}  // namespace pgslow::workshop

namespace pgslow::workshop {
namespace {

// The instructor's record grows across commands; one pgslow cannot read is refused, untouched.
TEST(Record, AnUnreadableRecordIsRefusedAndKept) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "pgslow-record";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  add_to_record(dir, [](report::SessionRecord& r) { r.mysteries.push_back({}); });
  const report::SessionRecord twice =
      add_to_record(dir, [](report::SessionRecord& r) { r.mysteries.push_back({}); });
  EXPECT_EQ(twice.mysteries.size(), 2u);
  EXPECT_TRUE(std::filesystem::exists(dir / "record.md"));
  { std::ofstream(dir / "record.json") << "{\"lessons\": 3}"; }
  try {
    add_to_record(dir, [](report::SessionRecord&) {});
    FAIL() << "an unreadable record was written over";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("record.json"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_file(dir / "record.json"), "{\"lessons\": 3}");
  std::filesystem::remove_all(dir);
}

// As root: a --record folder the server's user (here: nobody) could write is refused, and
// nothing is written into it.
TEST(Record, AFolderAnotherUserCanWriteIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "pgslow-theirs";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
  try {
    add_to_record(dir, [](report::SessionRecord& r) { r.mysteries.push_back({}); });
    FAIL() << "a folder another user can write was used";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--record folder"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "record.json"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pgslow::workshop
