// --direction on the seeded simulated server, under noise and drift: with `faster` the search
// finds the change of bad that makes it better (an advisor's one useful change among harmless
// ones), with `slower` it still finds the one that makes it worse; the flip happens in one
// place (results::search_sample), so every statistic of the search is the same code.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "report/bisect_view.h"
#include "results/metric.h"
#include "search/attribution.h"
#include "search/bisector.h"
#include "search/simulated_server.h"

namespace pgslow::search {
namespace {

SimulatedKnob& knob(SimulatedModel& m, const std::string& name) {
  for (auto& k : m.knobs)
    if (k.name == name) return k;
  throw std::runtime_error("no knob " + name);
}

results::Metric faster(results::Metric m) {
  m.better = true;
  return m;
}

Result bisect(SimulatedModel model, const results::Metric& metric) {
  model.metric = metric;
  SimulatedServer sim(model);
  Options o;
  o.metric = metric;
  return Bisector(sim, sim.candidates(), o).run();
}

std::set<std::string> found(const Result& r) {
  std::set<std::string> out;
  for (const auto& g : r.culprits) out.insert(g.knobs.begin(), g.knobs.end());
  return out;
}

// A busy machine: 4% noise per run, and from the 8th run on it gets 0.5% slower per run.
SimulatedModel busy(int n, std::uint64_t seed) {
  SimulatedModel m = harmless_model(n, seed);
  m.noise = 0.04;
  m.drift_per_run = -0.005;
  m.drift_after_runs = 8;
  return m;
}

TEST(BisectDirection, FasterFindsThePlantedHelperAmongHarmlessChanges) {
  int named = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    SimulatedModel m = busy(14, seed + 300);
    const std::string helper = fmt::format("k{:02}", static_cast<int>(seed % 14));
    knob(m, helper).factor = 1.4;  // 40% more TPS, like synchronous_commit = off
    const Result by_faster = bisect(m, faster(results::Metric::kTps));
    EXPECT_TRUE(by_faster.clearly_different) << seed << ": " << by_faster.conclusion;
    EXPECT_EQ(found(by_faster), std::set<std::string>{helper})
        << seed << ": " << by_faster.conclusion;
    named += found(by_faster) == std::set<std::string>{helper} ? 1 : 0;
    // In the metric's own terms: the helper's TPS is above good's, and the words say faster.
    EXPECT_NE(by_faster.conclusion.find("faster"), std::string::npos) << by_faster.conclusion;
    ASSERT_FALSE(by_faster.culprits.empty());
    const double tps_ratio = results::metric_ratio(by_faster.metric, by_faster.culprits[0].ratio);
    EXPECT_GT(tps_ratio, 1.25) << by_faster.conclusion;
    EXPECT_LT(tps_ratio, 1.6) << by_faster.conclusion;

    // Looking for what made it slower, a faster bad has nothing to blame.
    const Result by_slower = bisect(m, results::Metric::kTps);
    EXPECT_FALSE(by_slower.clearly_different) << seed << ": " << by_slower.conclusion;
    EXPECT_TRUE(found(by_slower).empty()) << by_slower.conclusion;
  }
  EXPECT_EQ(named, 10);
}

TEST(BisectDirection, SlowerStillFindsTheCulpritAndFasterFindsNothingThere) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    SimulatedModel m = busy(14, seed + 400);
    knob(m, "k07").factor = 0.6;
    const Result by_slower = bisect(m, results::Metric::kTps);
    EXPECT_EQ(found(by_slower), std::set<std::string>{"k07"}) << by_slower.conclusion;
    const Result by_faster = bisect(m, faster(results::Metric::kTps));
    EXPECT_TRUE(found(by_faster).empty()) << by_faster.conclusion;
    EXPECT_NE(by_faster.conclusion.find("not faster"), std::string::npos) << by_faster.conclusion;
  }
}

// p99 with --direction faster: a change that halves the latency is found, and reads "lower".
TEST(BisectDirection, FasterByP99FindsWhatLowersTheLatency) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    SimulatedModel m = busy(10, seed + 500);
    knob(m, "k02").p99_factor = 0.5;
    const Result r = bisect(m, faster(results::Metric::kP99));
    EXPECT_EQ(found(r), std::set<std::string>{"k02"}) << r.conclusion;
    ASSERT_FALSE(r.culprits.empty());
    // About half: "p99 -50.0%" or "p99 2.0x lower", never an inverted number.
    const std::string change = results::format_metric_change(r.metric, r.culprits[0].ratio);
    EXPECT_TRUE(change.starts_with("p99 -") || change.ends_with("x lower")) << change;
    EXPECT_LT(results::metric_ratio(r.metric, r.culprits[0].ratio), 0.65) << change;
  }
}

// --isolate with --direction faster: the advisor-style tally names the helper with its
// interval, the rest as no measurable effect; the same line in console, Markdown and JSON.
TEST(BisectDirection, TheAttributionTallySaysWhatHelped) {
  SimulatedModel m = busy(14, 77);
  knob(m, "k05").factor = 1.5;
  const results::Metric metric = faster(results::Metric::kTps);
  m.metric = metric;
  SimulatedServer sim(m);
  AttributionOptions o;
  o.search.metric = metric;
  o.stage = "pgtune.conf";
  o.reference = "default";
  Attributed a = attribute(sim, sim.candidates(), o);
  Result r = std::move(a.search);
  r.attribution = std::move(a.attribution);
  r.bad_label = "pgtune.conf";
  const results::BisectResult shown = to_report(r);
  const std::string tally = report::attribution_tally(shown);
  EXPECT_EQ(tally.find("pgtune.conf's 14 changes: 1 helped (k05 TPS +"), 0u) << tally;
  EXPECT_NE(tally.find("13 no measurable effect, 0 hurt"), std::string::npos) << tally;
  std::ostringstream console, markdown;
  report::render_bisect_console(shown, console);
  report::render_bisect_markdown(shown, markdown);
  EXPECT_NE(console.str().find(tally), std::string::npos) << console.str();
  EXPECT_NE(markdown.str().find(tally), std::string::npos) << markdown.str();
  const nlohmann::json j = report::bisect_to_json(shown);
  EXPECT_EQ(j["tally"], tally);
  EXPECT_EQ(j["direction"], "faster");
}

}  // namespace
}  // namespace pgslow::search
