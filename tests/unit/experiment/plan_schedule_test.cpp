// The policy of a run (experiment::measure_plan) on the simulated lab, no server: which trials it
// asks for and in which order (interleaved baselines, alternating repeats, switchback,
// precision stopping, attribution reusing the stage's runs, relative rates), what a rejected
// configuration and an interrupt between trials leave, and that the lab is always restored.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "apply/interrupt.h"
#include "experiment/run.h"
#include "experiment/simulated_lab.h"
#include "results/summary.h"

namespace pgslow::experiment {
namespace {

using scenario::Plan;
using scenario::PlannedStage;

// The model: `slow` makes the server 2x slower, `harmless` does nothing; little noise.
search::SimulatedModel model(double noise = 0.01) {
  search::SimulatedModel m;
  m.base_tps = 1000;
  m.noise = noise;
  m.cpu_noise = noise;
  m.knobs = {{"slow", 0.5, false, 2.0, 2.0}, {"harmless", 1.0}};
  m.seed = 7;
  return m;
}

PlannedStage baseline() {
  PlannedStage st;
  st.name = "baseline";
  st.is_baseline = true;
  return st;
}

// A stage that sets `knobs` (each to "on") over the baseline.
PlannedStage stage(const std::string& name, const std::vector<std::string>& knobs) {
  PlannedStage st;
  st.name = name;
  for (const auto& k : knobs) {
    st.settings.push_back({k, "on", {"t.yaml", 1, 1}});
    st.changes.push_back({k, "off", "on", "reload"});
  }
  return st;
}

Plan plan_of(std::vector<PlannedStage> stages, int repeats = 1) {
  Plan p;
  p.scenario.name = "t";
  p.scenario.workload.name = "select-only";
  p.scenario.measure.repeats = repeats;
  p.server_major = 15;
  p.server_version = "15.0";
  p.stages = std::move(stages);
  return p;
}

PlanPolicy policy(int repeats = 1) {
  PlanPolicy p;
  p.timing.warmup_s = 0;
  p.timing.duration_s = 10;
  p.timing.repeats = repeats;
  return p;
}

std::vector<std::string> names(const SimulatedLab& lab) {
  std::vector<std::string> out;
  for (const auto& t : lab.trials()) out.push_back(t.configuration.name);
  return out;
}

struct Measured {
  SimulatedLab lab;
  results::Run run;
  explicit Measured(search::SimulatedModel m) : lab(std::move(m)) {}
};

void measure(Measured& m, const Plan& plan, const PlanPolicy& p) {
  SilentProgress quiet;
  const knobs::Catalog catalog{};
  measure_plan(plan, m.lab, catalog, p, quiet, m.run);
}

TEST(PlanSchedule, EveryStageIsFollowedByTheBaselineAndTheLabIsRestoredOnce) {
  Measured m(model());
  measure(m, plan_of({baseline(), stage("a", {"slow"}), stage("b", {"harmless"})}), policy());
  EXPECT_EQ(names(m.lab), (std::vector<std::string>{"baseline", "a", "baseline", "b", "baseline"}));
  ASSERT_EQ(m.run.stages.size(), 3u);
  ASSERT_EQ(m.run.references.size(), 2u);
  EXPECT_EQ(m.run.references[0].after_stage, 1u);
  EXPECT_EQ(m.run.references[1].after_stage, 2u);
  EXPECT_EQ(m.lab.finished(), 1);
  EXPECT_EQ(m.lab.restored_after_error(), 0);
  EXPECT_EQ(m.run.reset_method, "simulated");
  // The slow stage reads about half the baseline.
  const double ratio =
      results::median_repeat(m.run.stages[1])->tps / results::median_repeat(m.run.stages[0])->tps;
  EXPECT_NEAR(ratio, 0.5, 0.05);
}

TEST(PlanSchedule, TheLastSeparateStageTopsTheBaselineUpToThreeRuns) {
  Measured m(model());
  measure(m, plan_of({baseline(), stage("a", {"slow"})}), policy());
  // One baseline run, then the reference after the only stage makes it three.
  ASSERT_EQ(m.lab.runs().size(), 3u);
  EXPECT_EQ(m.lab.runs()[2], scenario::kMinBaselineRuns - 1);
  EXPECT_EQ(m.run.references.size(), 2u);
}

TEST(PlanSchedule, RepeatsAlternateWithTheBaselineInsteadOfRunningBackToBack) {
  Measured m(model());
  measure(m, plan_of({baseline(), stage("a", {"slow"})}, 3), policy(3));
  EXPECT_EQ(names(m.lab), (std::vector<std::string>{"baseline", "a", "baseline", "a", "baseline",
                                                    "a", "baseline"}));
  // Every trial after the baseline's first is one run.
  for (std::size_t i = 1; i < m.lab.runs().size(); ++i) EXPECT_EQ(m.lab.runs()[i], 1) << i;
  EXPECT_EQ(m.run.stages[1].repeats.size(), 3u);
  EXPECT_EQ(m.run.references.size(), 3u);
}

TEST(PlanSchedule, ASwitchbackStageIsOneTrialWithItsOwnReferenceBlocks) {
  Measured m(model());
  PlannedStage a = stage("a", {"slow"});
  results::SwitchbackDesign d;
  d.block_s = 4;
  d.settle_s = 1;
  d.min_pairs = d.max_pairs = 4;
  a.switchback = d;
  PlanPolicy p = policy();
  p.precision_axis = "cpu_per_tx";
  measure(m, plan_of({baseline(), a}), p);
  // No interleaved reference: the blocks hold the baseline.
  EXPECT_EQ(names(m.lab), (std::vector<std::string>{"baseline", "a"}));
  EXPECT_TRUE(m.run.references.empty());
  const results::StageResult& s = m.run.stages[1];
  ASSERT_TRUE(s.switchback.has_value());
  EXPECT_EQ(s.switchback->blocks.size(), 9u);  // reference first and last
  EXPECT_EQ(s.switchback->stopped, "fixed");
  ASSERT_EQ(s.repeats.size(), 1u);
  EXPECT_NEAR(s.repeats.front().tps, 500, 25);
}

TEST(PlanSchedule, PrecisionStopsAsSoonAsTheIntervalIsNarrowEnough) {
  Measured m(model(0.005));
  Plan plan = plan_of({baseline(), stage("a", {"slow"})}, 2);
  plan.scenario.measure.precision = 0.05;
  plan.scenario.measure.budget_s = 600;  // room for many pairs
  measure(m, plan, policy(2));
  const results::StageResult& s = m.run.stages[1];
  EXPECT_EQ(s.stopped, "precision");
  // The looks the budget allows: after 2 pairs (the repeats), then about 1.5x more each time,
  // up to 600 s / 22 s = 27 pairs. It stopped at one of them, long before the last.
  results::SwitchbackDesign d;
  d.precision = 0.05;
  d.min_pairs = 2;
  d.fewest_pairs = 2;  // separate runs look from 2 pairs on
  d.max_pairs = 27;
  const std::vector<int> looks = results::look_schedule(d);
  EXPECT_EQ(s.looks, static_cast<int>(looks.size()));
  const int pairs = static_cast<int>(s.repeats.size());
  EXPECT_NE(std::find(looks.begin(), looks.end(), pairs), looks.end()) << pairs;
  EXPECT_LT(pairs, looks.back());
  EXPECT_EQ(m.lab.trials().size(), 1u + 2u * static_cast<std::size_t>(pairs));
}

TEST(PlanSchedule, PrecisionSpendsTheBudgetWhenTheMachineIsTooNoisy) {
  Measured m(model(0.4));
  Plan plan = plan_of({baseline(), stage("a", {"harmless"})}, 2);
  plan.scenario.measure.precision = 0.01;
  plan.scenario.measure.budget_s = 10 * 2 * (10 + 1);  // ten pairs of 10 s runs
  measure(m, plan, policy(2));
  const results::StageResult& s = m.run.stages[1];
  EXPECT_EQ(s.stopped, "budget");
  EXPECT_EQ(s.repeats.size(), 10u);
}

TEST(PlanSchedule, ARelativeRateIsAShareOfTheBaselinesMeasuredThroughput) {
  Measured m(model());
  PlannedStage a = stage("a", {"harmless"});
  a.load.rate_percent = 50;
  measure(m, plan_of({baseline(), a}), policy());
  const double baseline_tps = results::median_repeat(m.run.stages[0])->tps;
  ASSERT_EQ(m.lab.trials().size(), 3u);
  EXPECT_DOUBLE_EQ(m.lab.trials()[1].load.rate, baseline_tps * 0.5);
  // The reference runs stay closed-loop.
  EXPECT_EQ(m.lab.trials()[2].load.rate, 0);
  EXPECT_NEAR(m.run.stages[1].repeats.front().tps, baseline_tps * 0.5, 1);
}

TEST(PlanSchedule, ARelativeRateWithoutABaselineEndsTheRunAndRestores) {
  Measured m(model());
  m.lab.reject("slow");
  PlannedStage base = stage("baseline", {"slow"});  // a baseline the server rejects
  PlannedStage a = stage("a", {"harmless"});
  a.load.rate_percent = 50;
  EXPECT_THROW(measure(m, plan_of({base, a}), policy()), RuntimeError);
  EXPECT_EQ(m.lab.restored_after_error(), 1);
  EXPECT_EQ(m.lab.finished(), 0);
  ASSERT_EQ(m.run.stages.size(), 1u);
  EXPECT_TRUE(rejected(m.run.stages[0]));
}

TEST(PlanSchedule, AConfigurationTheServerRejectsFailsItsStageAndTheRunGoesOn) {
  Measured m(model());
  m.lab.reject("slow");
  measure(m, plan_of({baseline(), stage("a", {"slow"}), stage("b", {"harmless"})}), policy());
  ASSERT_EQ(m.run.stages.size(), 3u);
  EXPECT_TRUE(rejected(m.run.stages[1]));
  EXPECT_TRUE(m.run.stages[1].repeats.empty());
  EXPECT_TRUE(m.run.stages[2].error.empty());
  EXPECT_FALSE(m.run.stages[2].repeats.empty());
  EXPECT_EQ(names(m.lab), (std::vector<std::string>{"baseline", "a", "baseline", "b", "baseline"}));
  EXPECT_EQ(m.lab.finished(), 1);
}

TEST(PlanSchedule, AnInterruptBetweenTrialsRestoresAndKeepsWhatWasMeasured) {
  Measured m(model());
  m.lab.interrupt_after(2);  // during the reference run after stage a
  EXPECT_THROW(
      measure(m, plan_of({baseline(), stage("a", {"slow"}), stage("b", {"harmless"})}), policy()),
      apply::Interrupted);
  apply::InterruptGuard::reset_for_tests();
  EXPECT_EQ(m.lab.restored_after_error(), 1);
  EXPECT_EQ(m.lab.finished(), 0);
  // Stage b never started; a and the baseline keep their measurements.
  EXPECT_EQ(names(m.lab), (std::vector<std::string>{"baseline", "a", "baseline"}));
  ASSERT_EQ(m.run.stages.size(), 2u);
  EXPECT_FALSE(m.run.stages[1].repeats.empty());
  EXPECT_GT(m.run.wall_seconds, 0);
}

// A stage of `slow` and `harmless`, attributed, after the baseline; two runs each.
void measure_attributed(Measured& m) {
  PlannedStage a = stage("a", {"slow", "harmless"});
  a.attribute = true;
  a.attribution_max_runs = 40;
  measure(m, plan_of({baseline(), a}, 2), policy(2));
}

TEST(PlanSchedule, AttributionReusesTheStagesRunsAndNamesTheCause) {
  Measured m(model());
  measure_attributed(m);
  const results::StageResult& s = m.run.stages[1];
  ASSERT_TRUE(s.attribution.has_value()) << (s.warnings.empty() ? "" : s.warnings.back());
  ASSERT_FALSE(s.attribution->knobs.empty());
  EXPECT_EQ(s.attribution->knobs.front().knobs, std::vector<std::string>{"slow"});
  EXPECT_EQ(s.attribution->knobs.front().verdict, "the cause");
  // The stage's first two runs are the search's starting level: the search never measures
  // the whole stage before it has measured something else.
  ASSERT_GE(m.lab.trials().size(), 3u);
  EXPECT_EQ(m.lab.trials()[1].configuration.name, "a");
  EXPECT_NE(m.lab.trials()[2].configuration.settings.size(), 2u);
  // The attribution's runs of the baseline count as the references after the stage.
  EXPECT_FALSE(m.run.references.empty());
  for (const auto& r : m.run.references) EXPECT_EQ(r.after_stage, 1u);
}

// The cause alone on every axis, from the runs the lab recorded: `slow` halves TPS and doubles
// the server's CPU per transaction, and its row says both with their intervals.
TEST(PlanSchedule, AKnobAloneIsComparedOnEveryAxis) {
  Measured m(model());
  measure_attributed(m);
  const results::StageResult& s = m.run.stages[1];
  ASSERT_TRUE(s.attribution.has_value());
  const results::KnobEffect& cause = s.attribution->knobs.front();
  ASSERT_EQ(cause.knobs, std::vector<std::string>{"slow"});
  std::map<std::string, results::Interval> axes;
  for (const auto& e : cause.axes) axes[e.axis] = e.interval;
  ASSERT_TRUE(axes.count("tps") && axes.count("cpu_per_tx"));
  EXPECT_LT(axes["tps"].high, 1);
  EXPECT_NEAR(axes["tps"].ratio, 0.5, 0.05);
  EXPECT_GT(axes["cpu_per_tx"].low, 1);
  EXPECT_NEAR(axes["cpu_per_tx"].ratio, 2.0, 0.2);
  // Holm's rule over the axes: the first step is stated beyond 95%.
  EXPECT_GT(std::max(axes["tps"].confidence, axes["cpu_per_tx"].confidence), 0.95);
}

// A knob the search blames for nothing (TPS does not move) still shows what it costs: the
// group without the cause, on every axis, writes half as much WAL again per transaction.
TEST(PlanSchedule, KnobsBlamedForNothingStillSayWhatTheyCost) {
  search::SimulatedModel costly = model();
  costly.base_per_tx = {{"wal_bytes", 2000}};
  costly.knobs.push_back({"wal", 1.0, false, 1.0, 1.0, {{"wal_bytes", 1.5}}});
  Measured m(costly);
  PlannedStage a = stage("a", {"slow", "wal"});
  a.attribute = true;
  a.attribution_max_runs = 40;
  measure(m, plan_of({baseline(), a}, 2), policy(2));
  const results::StageResult& s = m.run.stages[1];
  ASSERT_TRUE(s.attribution.has_value());
  ASSERT_TRUE(s.attribution->harmless.has_value());
  std::map<std::string, results::Interval> axes;
  for (const auto& e : s.attribution->harmless_axes) axes[e.axis] = e.interval;
  ASSERT_TRUE(axes.count("wal_bytes") && axes.count("tps"));
  EXPECT_GT(axes["wal_bytes"].low, 1);
  EXPECT_LE(axes["wal_bytes"].low, 1.5);  // the interval covers the truth
  EXPECT_GE(axes["wal_bytes"].high, 1.5);
  EXPECT_LT(axes["tps"].low, 1);
  EXPECT_GT(axes["tps"].high, 1);
}

}  // namespace
}  // namespace pgslow::experiment
