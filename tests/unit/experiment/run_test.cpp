// run_plan's bookkeeping that needs no server: an attribution's runs of the whole stage become
// the stage's repeats, and the evidence stays the median repeat's.

#include "experiment/run.h"

#include <gtest/gtest.h>

#include "results/summary.h"

namespace pgslow::experiment {
namespace {

results::StageResult stage_with(double tps, double evidence, double seconds) {
  results::StageResult s;
  s.name = "wal-hell";
  results::Measurement m;
  m.tps = tps;
  m.duration_s = 5;
  s.repeats.push_back(m);
  s.evidence["wal_sync"] = evidence;
  s.evidence_seconds = seconds;
  return s;
}

TEST(AddRepeats, TheAttributionsRunsOfTheStageCountAsRepeats) {
  results::StageResult stage = stage_with(100, 1, 5.5);
  add_repeats(stage, {stage_with(200, 2, 6.5)});
  ASSERT_EQ(stage.repeats.size(), 2u);
  EXPECT_EQ(stage.repeats[1].tps, 200);
  // The median repeat of two is the lower one, the stage's own: its evidence stays.
  EXPECT_EQ(stage.evidence.at("wal_sync"), 1);
  EXPECT_EQ(stage.evidence_seconds, 5.5);
}

TEST(AddRepeats, EvidenceFollowsTheMedianRepeat) {
  results::StageResult stage = stage_with(100, 1, 5.5);
  add_repeats(stage, {stage_with(50, 2, 6.5)});
  ASSERT_EQ(stage.repeats.size(), 2u);
  // Now the median repeat is the added run (50 TPS): the evidence is that run's.
  EXPECT_EQ(results::median_repeat(stage)->tps, 50);
  EXPECT_EQ(stage.evidence.at("wal_sync"), 2);
  EXPECT_EQ(stage.evidence_seconds, 6.5);
}

TEST(AddRepeats, AFailedRunAddsNothing) {
  results::StageResult stage = stage_with(100, 1, 5.5);
  results::StageResult failed = stage_with(50, 2, 6.5);
  failed.error = "the server refused to start";
  add_repeats(stage, {failed});
  EXPECT_EQ(stage.repeats.size(), 1u);
  EXPECT_EQ(stage.evidence.at("wal_sync"), 1);
}

}  // namespace
}  // namespace pgslow::experiment
