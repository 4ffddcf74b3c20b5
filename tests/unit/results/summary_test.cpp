#include "results/summary.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "common/format.h"
#include "tests/unit/report/sample_run.h"

namespace pgslow::results {
namespace {

using report::testing::measurement;
using report::testing::sample_run;

StageResult stage_with(std::vector<double> tps) {
  StageResult s;
  s.name = "s";
  for (double t : tps) s.repeats.push_back(measurement(t, 60, 5));
  return s;
}

TEST(Summary, SingleRunsGetAnIntervalFromBatchMeans) {
  // One run each: only the within-run noise is known, from batch means of the per-second
  // series; the interval is stated and contains the estimate.
  const auto c = compare_stages(stage_with({104}), stage_with({100}));
  ASSERT_TRUE(c.interval.known);
  EXPECT_NEAR(c.ratio, 1.04, 1e-9);
  EXPECT_LT(c.interval.low, c.ratio);
  EXPECT_GT(c.interval.high, c.ratio);
  EXPECT_DOUBLE_EQ(c.interval.df, 4);
}

// One run of each with no per-second series to take batch means from: no noise was measured
// at all, so no interval is claimed (not a zero-width one that calls a 1% change "slower").
TEST(Summary, NoMeasuredNoiseGivesNoInterval) {
  Runs stage;
  stage.log_tps = {std::log(99.0)};
  Runs reference;
  reference.log_tps = {std::log(100.0)};
  const Change c = compare_runs(stage, reference);
  EXPECT_FALSE(c.interval.known);
  EXPECT_FALSE(c.measurable);
  EXPECT_EQ(verdict_of(c.interval), Verdict::kUnknown);
  EXPECT_EQ(c.text, "no interval");
  EXPECT_NEAR(c.ratio, 0.99, 1e-9);
}

TEST(Summary, TheVerdictFollowsTheInterval) {
  // Baseline repeats spread 20% (90..110): a 15% drop is inside the noise, and says how wide.
  const auto within = compare_stages(stage_with({85, 86, 84}), stage_with({90, 100, 110}));
  EXPECT_FALSE(within.measurable);
  EXPECT_EQ(verdict_of(within.interval), Verdict::kWithinNoise);
  EXPECT_EQ(within.text.rfind("within noise (could see ±", 0), 0u) << within.text;
  // Tight repeats: a 3% drop is measurable and called slower.
  const auto tight = compare_stages(stage_with({97, 97.1, 96.9}), stage_with({100, 100.1, 99.9}));
  EXPECT_TRUE(tight.measurable);
  EXPECT_EQ(tight.text, "-3.0% slower");
  const auto faster =
      compare_stages(stage_with({103, 103.1, 102.9}), stage_with({100, 100.1, 99.9}));
  EXPECT_EQ(faster.text, "+3.0% faster");
}

TEST(Summary, InterleavedReferencesGiveTheNoiseAndTheDrift) {
  results::Run run;
  run.mode = "isolated";
  run.stages.push_back(stage_with({100}));
  run.stages.push_back(stage_with({80}));
  run.stages.push_back(stage_with({100}));
  // The machine slows down 2% per reference run.
  for (std::size_t i = 1; i <= 2; ++i) {
    ReferenceRun ref;
    ref.after_stage = i;
    ref.tps = 100 * std::pow(0.98, static_cast<double>(i));
    ref.transactions = 6000;
    run.references.push_back(ref);
  }
  const Noise n = run_noise(run);
  EXPECT_EQ(n.runs, 3u);
  EXPECT_DOUBLE_EQ(n.df, 2);
  ASSERT_TRUE(n.drift);
  EXPECT_NEAR(*n.drift, 0.98 * 0.98 - 1, 1e-9);
  const auto sums = summarize(run);
  // Isolated: no "vs previous"; stage 2 is compared with the references around it (98, 96).
  EXPECT_FALSE(sums[1].vs_previous);
  ASSERT_TRUE(sums[2].vs_baseline);
  EXPECT_NEAR(sums[2].vs_baseline->ratio, 100 / std::sqrt(98.0 * 96.04), 1e-6);
  EXPECT_EQ(sums[2].vs_baseline->reference_transactions, 12000u);
}

// The header says when a stage's interval rests on fewer than three degrees of freedom: one
// run of each stage and three of the baseline give two. Three repeats of the stage add two
// more, and a switchback stage brings its own blocks.
TEST(Summary, FewRunsAreNamedOnlyWhenAStagesIntervalRestsOnThem) {
  results::Run run;
  run.mode = "isolated";
  run.stages.push_back(stage_with({100}));
  run.stages.push_back(stage_with({80}));
  for (std::size_t i = 1; i <= 2; ++i) {
    ReferenceRun ref;
    ref.after_stage = 1;
    ref.tps = 100 + static_cast<double>(i);
    ref.transactions = 6000;
    run.references.push_back(ref);
  }
  EXPECT_EQ(few_runs_note(run),
            "a stage's interval rests on 2 degrees of freedom: more --repeats narrow it");
  run.stages[1] = stage_with({80, 81, 79});
  EXPECT_EQ(few_runs_note(run), "");
  run.stages[1] = stage_with({80});
  run.stages[1].switchback = Switchback{};
  EXPECT_EQ(few_runs_note(run), "");
}

// A switchback stage's TPS cell shows the two figures its effect compares (each the geometric
// mean of its blocks), not the blocks' totals: blocks of unequal length make them differ.
TEST(Summary, ASwitchbackStagesTpsIsTheFigureItsEffectCompares) {
  results::Run run;
  run.mode = "isolated";
  run.stages.push_back(stage_with({100}));
  StageResult stage;
  stage.name = "more-clients";
  Switchback sb;
  sb.stopped = "fixed";
  const double tps[] = {1000, 800, 1100, 820, 1050, 790, 1000};
  const double seconds[] = {3, 3, 2, 3, 3, 2, 3};
  for (int b = 0; b < 7; ++b) {
    SwitchbackBlock block;
    block.stage = b % 2 == 1;
    block.seconds = seconds[b];
    block.transactions = static_cast<std::uint64_t>(tps[b] * seconds[b]);
    sb.blocks.push_back(block);
  }
  set_switchback_result(stage, sb, blocks_measurement(sb.blocks, true));
  run.stages.push_back(stage);
  const auto sums = summarize(run);
  ASSERT_TRUE(sums[1].vs_baseline) << sums[1].tps_text;
  EXPECT_DOUBLE_EQ(sums[1].tps, sums[1].vs_baseline->stage_value);
  EXPECT_DOUBLE_EQ(sums[1].reference_tps, sums[1].vs_baseline->reference_value);
  EXPECT_NEAR(sums[1].tps, std::cbrt(800.0 * 820 * 790), 1e-6);
  EXPECT_EQ(sums[1].tps_text, fmt::format("{} (reference {})", format_number(sums[1].tps),
                                          format_number(sums[1].reference_tps)));
}

TEST(Summary, MedianRepeatIsTheLowerMiddleByTps) {
  const auto s = stage_with({30, 10, 20, 40});
  EXPECT_DOUBLE_EQ(median_repeat(s)->tps, 20);
  EXPECT_EQ(median_repeat(StageResult{}), nullptr);
}

TEST(Summary, SampleRunStages) {
  const results::Run run = sample_run();
  const auto sums = summarize(run);
  ASSERT_EQ(sums.size(), 5u);
  EXPECT_TRUE(sums[0].ran);
  EXPECT_FALSE(sums[0].vs_baseline.has_value());
  EXPECT_EQ(sums[0].tps_text, "7,082 (6,950-7,190)");

  // tiny-cache against the baseline: geometric means of the repeats.
  ASSERT_TRUE(sums[1].vs_baseline);
  EXPECT_EQ(sums[1].vs_baseline->text, "-85.2% (6.7x slower)");
  // Stated at the level the weighted rule tested TPS at: TPS is the stage's own axis and takes
  // 90% of the 5% (p95 and p99 share the rest), so 95.5%, where Holm's rule over the three
  // gave it 98.3% (6.1–7.4x).
  EXPECT_EQ(interval_text(sums[1].vs_baseline), "6.3–7.2x slower");
  EXPECT_NEAR(sums[1].vs_baseline->interval.confidence, 0.955, 1e-9);
  EXPECT_EQ(sums[1].verdict.cell, "-85.2% (6.7x slower)");
  ASSERT_FALSE(sums[1].movers.empty());
  EXPECT_EQ(sums[1].movers[0].key, "buffer_hit_ratio");
  EXPECT_EQ(sums[1].movers[0].text, "hit ratio 99.9% → 70.5%");

  // wal-hell versus tiny-cache is inside the noise; checkpoints moved most.
  ASSERT_TRUE(sums[2].vs_previous);
  EXPECT_FALSE(sums[2].vs_previous->measurable) << sums[2].vs_previous->text;
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

// A stage through PgBouncer against a direct baseline (docs/pooler.md): the clients' wait in the
// pooler is the cause it names, the baseline having waited in none; other keys the baseline
// lacks are still left out.
TEST(Summary, APoolersWaitIsAMoverAgainstABaselineWithoutOne) {
  StageResult base = stage_with({100});
  StageResult s = stage_with({100});  // 6,000 transactions
  base.evidence = {{"blocks_read", 6000}};
  s.evidence = {{"blocks_read", 6000}, {"pooler_wait_ms", 150000}, {"wal_bytes", 1e9}};
  const auto moves = evidence_moves(s, base);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].key, "pooler_wait_ms");
  EXPECT_EQ(moves[0].text, "pooler wait ms/tx 0 → 25.0");
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

// The header names the reset's method and one reset's time (a stage's reset_seconds sums its
// repeats' resets), and says nothing of a reset a run did not make.
TEST(Summary, HeaderSaysHowTheDataWasResetAndWhatOneResetTook) {
  results::Run run;
  run.reset_method = "clone (PG18 file_copy_method=clone)";
  StageResult a = stage_with({100, 101});  // two repeats, two resets
  a.reset_seconds = 0.030;
  StageResult b = stage_with({100});
  b.reset_seconds = 0.015;
  run.stages = {a, b};
  EXPECT_EQ(describe_reset(run),
            "clone (PG18 file_copy_method=clone), 15.0 ms per reset, before each measured window");
  bool shown = false;
  for (const auto& [label, value] : run_facts(run)) shown = shown || label == "reset";
  EXPECT_TRUE(shown);
  run.reset_method.clear();
  for (const auto& [label, value] : run_facts(run)) EXPECT_NE(label, "reset");
}

// Each type's retries and the time they took, for every report format; none, nothing.
TEST(Summary, RetriesPerTypeWithTheirTime) {
  Measurement m;
  m.by_type.resize(3);
  m.by_type[0].name = "new_order";
  m.by_type[0].retries = 120;
  m.by_type[0].retry_time_us = 3.2e6;
  m.by_type[1].name = "payment";
  m.by_type[2].name = "delivery";
  m.by_type[2].retries = 2'380;
  m.by_type[2].retry_time_us = 76e6;
  EXPECT_EQ(describe_retries(m), "new_order 120 in " + format_seconds(3.2) +
                                     ", delivery 2,380 in " + format_seconds(76));
  m.by_type[0].retries = m.by_type[2].retries = 0;
  EXPECT_EQ(describe_retries(m), "");
}

}  // namespace
}  // namespace pgslow::results
