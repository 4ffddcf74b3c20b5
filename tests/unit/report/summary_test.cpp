#include "report/summary.h"

#include <gtest/gtest.h>

#include "tests/unit/report/sample_run.h"

namespace pgslow::report {
namespace {

using testing::measurement;
using testing::sample_run;

StageResult stage_with(std::vector<double> tps) {
  StageResult s;
  s.name = "s";
  for (double t : tps) s.repeats.push_back(measurement(t, 60, 5));
  return s;
}

TEST(Summary, SingleRepeatUsesTheDefaultNoiseBand) {
  const auto within = compare_stages(stage_with({104}), stage_with({100}));
  EXPECT_FALSE(within.measurable);
  EXPECT_DOUBLE_EQ(within.noise_band, kDefaultNoiseBand);
  EXPECT_EQ(within.text, "no measurable effect");
  const auto beyond = compare_stages(stage_with({94}), stage_with({100}));
  EXPECT_TRUE(beyond.measurable);
  EXPECT_EQ(beyond.text, "-6.0%");
}

TEST(Summary, RepeatsWidenTheNoiseBandToTheirSpread) {
  // Baseline repeats spread 20% (90..110): a 15% drop is inside the noise.
  const auto c = compare_stages(stage_with({85, 86, 84}), stage_with({90, 100, 110}));
  EXPECT_NEAR(c.noise_band, 0.2, 1e-9);
  EXPECT_FALSE(c.measurable);
  // Tight repeats: the floor applies, a 3% change is measurable.
  const auto tight = compare_stages(stage_with({97, 97, 97}), stage_with({100, 100, 100}));
  EXPECT_DOUBLE_EQ(tight.noise_band, kMinNoiseBand);
  EXPECT_TRUE(tight.measurable);
}

TEST(Summary, MedianRepeatIsTheLowerMiddleByTps) {
  const auto s = stage_with({30, 10, 20, 40});
  EXPECT_DOUBLE_EQ(median_repeat(s)->tps, 20);
  EXPECT_EQ(median_repeat(StageResult{}), nullptr);
}

TEST(Summary, SampleRunStages) {
  const report::Run run = sample_run();
  const auto sums = summarize(run);
  ASSERT_EQ(sums.size(), 5u);
  EXPECT_TRUE(sums[0].ran);
  EXPECT_FALSE(sums[0].vs_baseline.has_value());
  EXPECT_EQ(sums[0].tps_text, "7,082 (6,950-7,190)");

  // tiny-cache: 1,052 / 7,082.
  ASSERT_TRUE(sums[1].vs_baseline);
  EXPECT_EQ(sums[1].vs_baseline->text, "-85.1% (6.7x slower)");
  ASSERT_FALSE(sums[1].movers.empty());
  EXPECT_EQ(sums[1].movers[0].key, "buffer_hit_ratio");
  EXPECT_EQ(sums[1].movers[0].text, "hit ratio 99.9% → 70.5%");

  // wal-hell versus tiny-cache is inside the repeats' spread; checkpoints moved most.
  ASSERT_TRUE(sums[2].vs_previous);
  EXPECT_EQ(sums[2].vs_previous->text, "no measurable effect");
  bool saw_checkpoints = false;
  for (const auto& m : sums[2].movers) saw_checkpoints |= m.key == "checkpoints_requested";
  EXPECT_TRUE(saw_checkpoints);

  // planner rests on 12 transactions and says so.
  EXPECT_EQ(sums[3].transactions, 12u);
  EXPECT_TRUE(sums[3].few_transactions);
  EXPECT_EQ(sums[3].note, "12 transactions");

  // io-workers failed: no figures, and the next comparison skips it.
  EXPECT_FALSE(sums[4].ran);
  EXPECT_FALSE(sums[4].vs_baseline);
}

TEST(Summary, EvidenceIsNormalisedPerTransactionAndPerMinute) {
  StageResult s = stage_with({100});  // 6,000 transactions in 60 s
  s.evidence = {{"blocks_read", 12000}, {"checkpoints_requested", 4}, {"buffer_hit_ratio", 0.9}};
  EXPECT_DOUBLE_EQ(*normalised_evidence(s, "blocks_read"), 2);
  EXPECT_DOUBLE_EQ(*normalised_evidence(s, "checkpoints_requested"), 4);
  EXPECT_DOUBLE_EQ(*normalised_evidence(s, "buffer_hit_ratio"), 0.9);
  EXPECT_FALSE(normalised_evidence(s, "wal_bytes"));
  s.evidence_seconds = 120;  // a longer window: the rates halve
  EXPECT_DOUBLE_EQ(*normalised_evidence(s, "checkpoints_requested"), 2);
}

TEST(Summary, TinyCountsAreNotMovers) {
  StageResult base = stage_with({100});
  StageResult s = stage_with({100});
  base.evidence = {{"checkpoints_requested", 0}, {"temp_files", 0}};
  s.evidence = {{"checkpoints_requested", 1}, {"temp_files", 600}};
  const auto moves = evidence_moves(s, base);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].key, "temp_files");
}

TEST(Summary, SmallByteCountsAndInvisibleMovesAreNotMovers) {
  StageResult base = stage_with({100});
  StageResult s = stage_with({100});
  base.evidence = {{"log_bytes", 0}, {"read_bytes", 0}};
  s.evidence = {{"log_bytes", 900}, {"read_bytes", 73728}};  // both under 1 MiB
  EXPECT_TRUE(evidence_moves(s, base).empty());
  s.evidence = {{"log_bytes", 3e8}};  // 300 MB of log: a logging flood
  const auto moves = evidence_moves(s, base);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].text, "server log/tx 0 B → 48.8 kB");
}

TEST(Summary, DescribeChangeMarksRestarts) {
  EXPECT_EQ(describe_change({"shared_buffers", "128MB", "2MB", "restart"}),
            "shared_buffers 128MB → 2MB (restart)");
  EXPECT_EQ(describe_change({"work_mem", "", "64kB", "reload"}), "work_mem (default) → 64kB");
}

}  // namespace
}  // namespace pgslow::report
