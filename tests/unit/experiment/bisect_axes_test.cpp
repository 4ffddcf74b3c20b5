// A bisect's configurations on every axis (experiment::add_bisect_axes) on the simulated lab:
// bad, the culprit's group and the culprit alone against good, from the runs the measurer
// recorded, where the search itself judged by TPS alone.

#include <gtest/gtest.h>

#include <map>

#include "experiment/bisect_experiment.h"
#include "experiment/lab_measurer.h"
#include "experiment/simulated_lab.h"
#include "search/bisector.h"
#include "search/simulated_server.h"

namespace pgslow::experiment {
namespace {

std::map<std::string, results::Interval> by_axis(const std::vector<results::AxisEffect>& axes) {
  std::map<std::string, results::Interval> out;
  for (const auto& e : axes) out[e.axis] = e.interval;
  return out;
}

TEST(BisectAxes, BadAndTheCulpritAloneAreComparedWithGoodOnEveryAxis) {
  // `slow` halves TPS and doubles the CPU per transaction; `wal` only writes 50% more WAL.
  search::SimulatedModel model;
  model.base_tps = 1000;
  model.noise = 0.01;
  model.cpu_noise = 0.01;
  model.base_per_tx = {{"wal_bytes", 2000}};
  model.knobs = {{"slow", 0.5, false, 2.0}, {"wal", 1.0, false, 1.0, 1.0, {{"wal_bytes", 1.5}}}};
  model.seed = 11;
  SimulatedLab lab(model);
  const search::SimulatedServer sim(model);
  const std::vector<search::Candidate> candidates = sim.candidates();
  Trial base;
  base.timing.warmup_s = 0;
  base.timing.duration_s = 10;
  LabMeasurer measurer(lab, base, results::Metric::kTps);
  lab.prepare();
  search::Result r = search::Bisector(measurer, candidates).run();
  ASSERT_EQ(r.culprits.size(), 1u);
  ASSERT_EQ(r.culprits.front().knobs, std::vector<std::string>{"slow"});

  add_bisect_axes(r, candidates, measurer);
  auto bad = by_axis(r.axes);
  ASSERT_TRUE(bad.count("tps") && bad.count("cpu_per_tx") && bad.count("wal_bytes"));
  EXPECT_LT(bad["tps"].high, 1);
  EXPECT_GT(bad["cpu_per_tx"].low, 1);
  // The WAL the search never looked at: bad writes more of it per transaction.
  EXPECT_GT(bad["wal_bytes"].low, 1);
  EXPECT_NEAR(bad["wal_bytes"].ratio, 1.5, 0.1);

  const auto& group = r.culprits.front();
  ASSERT_EQ(group.solo.size(), 1u);
  auto alone = by_axis(group.solo.front().axes);
  ASSERT_TRUE(alone.count("cpu_per_tx"));
  EXPECT_NEAR(alone["cpu_per_tx"].ratio, 2.0, 0.2);
  EXPECT_GT(alone["cpu_per_tx"].low, 1);
  EXPECT_FALSE(group.axes.empty());

  // Bad without the culprit is `wal` alone: nothing on TPS, half as much WAL again.
  auto rest = by_axis(r.remaining_axes);
  ASSERT_TRUE(rest.count("wal_bytes") && rest.count("tps"));
  EXPECT_GT(rest["wal_bytes"].low, 1);
  EXPECT_LT(rest["tps"].low, 1);
  EXPECT_GT(rest["tps"].high, 1);
}

}  // namespace
}  // namespace pgslow::experiment
