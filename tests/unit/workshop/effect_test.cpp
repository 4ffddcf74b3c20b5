// The effect of a lesson or mystery: the report's comparison of two stages (a ratio with a
// 95% interval from batch means of the per-second samples), and Little's law.

#include <gtest/gtest.h>

#include <cmath>

#include "report/workshop.h"
#include "results/summary.h"
#include "tests/unit/workshop/simulated_stage.h"

namespace pgslow::report {
namespace {

using testing::stage;

TEST(Effect, ASlowdownHasAnIntervalAroundItsRatio) {
  const Effect e = measure_effect(stage(1000, 30, 30, 1), stage(4000, 100, 30, 2));
  ASSERT_TRUE(e.known);
  EXPECT_NEAR(e.ratio, 0.25, 0.01);
  EXPECT_LT(e.interval.low, e.ratio);
  EXPECT_GT(e.interval.high, e.ratio);
  EXPECT_LT(e.interval.high, 1);
  EXPECT_EQ(e.verdict, Verdict::kSlower);
  EXPECT_EQ(e.transactions, 30000u);
  EXPECT_NE(describe_effect(e).find("4.0x slower"), std::string::npos) << describe_effect(e);
  EXPECT_NE(describe_effect(e).find("30,000 vs 120,000 transactions"), std::string::npos)
      << describe_effect(e);
}

// An interval Holm's rule stated above 95% says the level it was stated at.
TEST(Effect, AnIntervalSaysTheLevelItWasStatedAt) {
  Effect e = measure_effect(stage(1000, 30, 30, 1), stage(4000, 100, 30, 2));
  ASSERT_TRUE(e.known);
  EXPECT_NE(describe_effect(e).find("(95% interval"), std::string::npos) << describe_effect(e);
  e.interval = at_confidence(e.interval, 0.975);
  EXPECT_NE(describe_effect(e).find("(97.5% interval"), std::string::npos) << describe_effect(e);
  EXPECT_EQ(format_confidence(0.99444), "99.4%");
}

TEST(Effect, NoiseAloneIsWithinNoise) {
  int within = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const Effect e =
        measure_effect(stage(1000, 80, 30, seed * 2), stage(1000, 80, 30, seed * 2 + 1));
    if (e.verdict == Verdict::kWithinNoise) ++within;
  }
  EXPECT_GE(within, 34);  // a 95% interval: about 38 of 40
}

// A reveal within noise says when the run count, not the machine, limited it: below three
// degrees of freedom Student's t is 4.3 or more, so it names --repeats; a resolved effect and
// a noise estimate with enough runs say nothing more.
TEST(Effect, WithinNoiseOnOneDegreeOfFreedomNamesRepeats) {
  Effect e;
  e.known = true;
  e.ratio = 0.9;
  e.verdict = Verdict::kWithinNoise;
  e.interval = results::log_ratio_interval(std::log(0.9), 0.2, 1);
  EXPECT_NE(few_runs_hint(e).find("1 degree of freedom"), std::string::npos) << few_runs_hint(e);
  EXPECT_NE(few_runs_hint(e).find("--repeats 3"), std::string::npos) << few_runs_hint(e);
  e.interval = results::log_ratio_interval(std::log(0.9), 0.2, 2);
  EXPECT_NE(few_runs_hint(e).find("2 degrees of freedom"), std::string::npos) << few_runs_hint(e);
  e.interval = results::log_ratio_interval(std::log(0.9), 0.2, 3);
  EXPECT_EQ(few_runs_hint(e), "");
  e.interval = results::log_ratio_interval(std::log(0.1), 0.2, 1);
  e.verdict = Verdict::kSlower;
  EXPECT_EQ(few_runs_hint(e), "");
}

// One idea, one place: the reveal states what the run's report states for the same stages.
TEST(Effect, AgreesWithTheReportsComparison) {
  const StageResult a = stage(900, 60, 30, 7);
  const StageResult b = stage(1000, 60, 30, 8);
  const Effect e = measure_effect(a, b);
  const Change c = compare_stages(a, b);
  EXPECT_DOUBLE_EQ(e.ratio, c.ratio);
  EXPECT_DOUBLE_EQ(e.interval.low, c.interval.low);
  EXPECT_DOUBLE_EQ(e.interval.high, c.interval.high);
  EXPECT_EQ(e.verdict, verdict_of(c.interval));
}

// A run with interleaved baselines: the reveal states the report's "vs baseline" (the baseline
// runs around the stage), not the stage against the first baseline run alone.
TEST(Effect, AgainstTheBaselineIsTheReportsVsBaseline) {
  report::Run run;
  run.mode = "isolated";
  run.stages = {stage(1000, 30, 30, 11), stage(500, 20, 30, 12), stage(600, 20, 30, 13)};
  for (std::size_t after : {1u, 2u}) {
    ReferenceRun ref;
    ref.after_stage = after;
    ref.tps = 800;  // the baseline drifted down after the first run
    ref.transactions = 24000;
    ref.duration_s = 30;
    for (int i = 0; i < 30; ++i) ref.tps_per_second.push_back(800 + (i % 2 == 0 ? 20 : -20));
    run.references.push_back(ref);
  }
  const auto summaries = summarize(run);
  ASSERT_TRUE(summaries[2].vs_baseline);
  const Effect e = effect_in_run(run, run.stages[2], run.stages[0]);
  ASSERT_TRUE(e.known);
  EXPECT_DOUBLE_EQ(e.ratio, summaries[2].vs_baseline->ratio);
  EXPECT_DOUBLE_EQ(e.interval.low, summaries[2].vs_baseline->interval.low);
  EXPECT_DOUBLE_EQ(e.interval.high, summaries[2].vs_baseline->interval.high);
  EXPECT_EQ(e.reference_transactions, summaries[2].vs_baseline->reference_transactions);
  // Every axis of the report's comparison, and its verdict naming the axis.
  EXPECT_EQ(e.axes.size(), summaries[2].axes.size());
  EXPECT_FALSE(e.axes.empty());
  EXPECT_EQ(e.axes_verdict.sentence, summaries[2].verdict.sentence);
  EXPECT_EQ(report::effect_axes_lines(e, 90).front(), "every axis: " + e.axes_verdict.sentence);
  EXPECT_NEAR(e.ratio, 0.75, 0.01);  // against the 800 TPS around it, not the first 1000
  EXPECT_NEAR(measure_effect(run.stages[2], run.stages[0]).ratio, 0.6, 0.01);
  // Against another stage there is no report comparison: the two stages' own runs.
  const Effect between = effect_in_run(run, run.stages[2], run.stages[1]);
  EXPECT_DOUBLE_EQ(between.ratio, measure_effect(run.stages[2], run.stages[1]).ratio);
  EXPECT_TRUE(between.axes.empty());
  EXPECT_TRUE(report::effect_axes_lines(between, 90).empty());
}

// Where the time went, in the reveal's evidence table: the stage's largest waits beside the
// reference's share of the same wait.
TEST(Reveal, WaitRowsPutTheStagesLargestWaitsBesideTheReferences) {
  StageResult a = stage(500, 20, 30, 14);
  StageResult b = stage(1000, 20, 30, 15);
  EXPECT_TRUE(wait_rows(a, b).empty());  // not sampled
  a.waits = WaitProfile{};
  a.waits->samples = 100;
  a.waits->backends = {{"IO:DataFileRead", 330}, {"Client:ClientRead", 600}, {"CPU", 70}};
  b.waits = WaitProfile{};
  b.waits->samples = 100;
  b.waits->backends = {{"IO:DataFileRead", 140}, {"Client:ClientRead", 860}};
  const auto rows = wait_rows(a, b, 2);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].label, "backend time in Client:ClientRead");
  EXPECT_EQ(rows[0].reference, "86%");
  EXPECT_EQ(rows[0].stage, "60%");
  EXPECT_EQ(rows[1].label, "backend time in IO:DataFileRead");
  EXPECT_EQ(rows[1].reference, "14%");
  EXPECT_EQ(rows[1].stage, "33%");
}

TEST(Effect, AStageThatDidNotRunIsNotMeasured) {
  EXPECT_FALSE(measure_effect(StageResult{}, stage(1000, 10, 10, 1)).known);
}

TEST(Latency, LittlesLawForAClosedLoop) {
  const LatencyCheck c = latency_check(stage(2000, 10, 10, 3, 10));
  EXPECT_NEAR(c.littles_law_us, 5000, 1);
  EXPECT_NEAR(c.mean_us, 5000, 1);
}

}  // namespace
}  // namespace pgslow::report
