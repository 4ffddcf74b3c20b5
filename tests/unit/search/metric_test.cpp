// Bisect and attribution judged by another metric than TPS (--metric cpu_per_tx|p99), on the
// seeded simulated server: a culprit that moves the cost of a transaction or the latency, but
// not throughput, is found by that metric; the result speaks in its terms.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/errors.h"
#include "report/attribution_view.h"
#include "report/bisect_view.h"
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

Result bisect(SimulatedModel model, results::Metric metric) {
  model.metric = metric;
  SimulatedServer sim(model);
  Options o;
  o.metric = metric;
  return Bisector(sim, sim.candidates(), o).run();
}

std::set<std::string> blamed(const Result& r) {
  std::set<std::string> out;
  for (const auto& g : r.culprits) out.insert(g.knobs.begin(), g.knobs.end());
  return out;
}

// A busy shared machine (runs vary 15%) and a knob that makes every transaction cost 60% more
// CPU while throughput stays where it was (the clients are the bottleneck): TPS cannot tell
// good from bad, the cost per transaction (1% noise: other load does not make a transaction do
// more work) names the knob.
TEST(BisectByMetric, CpuPerTxFindsACostlierKnobThatTpsCannotSee) {
  int found = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    SimulatedModel m = harmless_model(16, seed);
    m.noise = 0.15;
    knob(m, "k11").cpu_factor = 1.6;
    const Result by_tps = bisect(m, results::Metric::kTps);
    EXPECT_TRUE(blamed(by_tps).empty()) << seed << ": " << by_tps.conclusion;

    const Result by_cost = bisect(m, results::Metric::kCpuPerTx);
    EXPECT_EQ(by_cost.metric, results::Metric::kCpuPerTx);
    ASSERT_TRUE(by_cost.clearly_different) << seed << ": " << by_cost.conclusion;
    EXPECT_EQ(blamed(by_cost), std::set<std::string>{"k11"}) << seed << ": " << by_cost.conclusion;
    found += blamed(by_cost) == std::set<std::string>{"k11"} ? 1 : 0;
    // The conclusion and the renderings speak of the cost, not of an inverted number.
    EXPECT_NE(by_cost.conclusion.find("(CPU/tx 1."), std::string::npos) << by_cost.conclusion;
    if (seed == 1) {
      std::ostringstream console;
      const results::BisectResult shown = to_report(by_cost);
      report::render_bisect_console(shown, console);
      EXPECT_NE(console.str().find("judged by cpu_per_tx"), std::string::npos) << console.str();
      EXPECT_NE(console.str().find("ms CPU/tx"), std::string::npos) << console.str();
      const nlohmann::json j = report::bisect_to_json(shown);
      EXPECT_EQ(j["metric"], "cpu_per_tx");
      EXPECT_NEAR(j["good_cpu_per_tx"].get<double>(), 0.001, 0.0001);  // seconds per transaction
      EXPECT_GT(j["culprits"][0]["ratio"].get<double>(), 1.4);         // costlier: above 1
      EXPECT_FALSE(j.contains("good_tps"));
    }
  }
  EXPECT_EQ(found, 10);
}

// A knob that triples the p99 latency and leaves throughput 3% lower (below the 10% a bisect
// needs): TPS sees nothing to bisect, p99 names it.
TEST(BisectByMetric, P99FindsTheKnobThatMovesTheLatency) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    SimulatedModel m = harmless_model(12, seed + 100);
    m.noise = 0.03;
    knob(m, "k04").factor = 0.97;
    knob(m, "k04").p99_factor = 3;
    const Result by_tps = bisect(m, results::Metric::kTps);
    EXPECT_TRUE(blamed(by_tps).empty()) << seed << ": " << by_tps.conclusion;
    const Result by_p99 = bisect(m, results::Metric::kP99);
    EXPECT_EQ(blamed(by_p99), std::set<std::string>{"k04"}) << seed << ": " << by_p99.conclusion;
    EXPECT_NE(by_p99.conclusion.find("(p99 "), std::string::npos) << by_p99.conclusion;
  }
}

TEST(BisectByMetric, CpuPerTxWithoutCpuFiguresIsAClearError) {
  SimulatedModel m = harmless_model(4, 3);
  knob(m, "k01").cpu_factor = 2;
  m.server_cpu = false;  // as for a server reached by connection only
  try {
    bisect(m, results::Metric::kCpuPerTx);
    FAIL() << "a cost per transaction without the server's CPU time";
  } catch (const RuntimeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cpu_per_tx"), std::string::npos) << what;
    EXPECT_NE(what.find("--metric tps"), std::string::npos) << what;
  }
  results::Measurement run;
  run.tps = 100;
  run.committed = 1000;
  EXPECT_THROW(search_sample_of(results::Metric::kCpuPerTx, run), RuntimeError);
  run.server_cpu_s = 0.5;
  EXPECT_DOUBLE_EQ(search_sample_of(results::Metric::kCpuPerTx, run), 2000);  // 1 / 0.5 ms
}

// Attribution by cost: the culprit is the cause, its effect and the harmless group read as
// CPU per transaction, and the group says what the run could have seen.
TEST(BisectByMetric, AttributionByCpuPerTxSpeaksOfTheCost) {
  SimulatedModel m = harmless_model(8, 5);
  m.noise = 0.15;
  m.metric = results::Metric::kCpuPerTx;
  knob(m, "k02").cpu_factor = 2.5;
  SimulatedServer sim(m);
  AttributionOptions o;
  o.search.metric = results::Metric::kCpuPerTx;
  o.stage = "stage";
  o.reference = "baseline";
  const results::Attribution a = attribute(sim, sim.candidates(), o).attribution;
  EXPECT_EQ(a.metric, results::Metric::kCpuPerTx);
  EXPECT_EQ(a.headline.rfind("stage: CPU/tx 2.", 0), 0u) << a.headline;
  EXPECT_NE(a.headline.find("k02 = b is the cause"), std::string::npos) << a.headline;
  EXPECT_NE(a.headline.find("7 other knobs: no measurable effect (could see ±"), std::string::npos)
      << a.headline;
  const auto lines = report::attribution_lines(a, "");
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  EXPECT_NE(text.find("alone CPU/tx 2."), std::string::npos) << text;
  EXPECT_NE(text.find("judged by cpu_per_tx"), std::string::npos) << text;
}

TEST(Attribution, TheHarmlessGroupSaysWhatTheRunCouldHaveSeen) {
  // The same stage on a quiet and on a noisy machine: both call the rest harmless, but what
  // each could have seen differs, and the headline says it.
  auto could_see = [](double noise) {
    SimulatedModel m = harmless_model(8, 21);
    m.noise = noise;
    knob(m, "k03").factor = 0.05;
    SimulatedServer sim(m);
    AttributionOptions o;
    o.stage = "stage";
    const results::Attribution a = attribute(sim, sim.candidates(), o).attribution;
    EXPECT_TRUE(a.harmless.has_value()) << a.headline;
    EXPECT_NE(a.headline.find("no measurable effect (could see ±"), std::string::npos)
        << a.headline;
    return a.harmless ? a.harmless->detectable : 0.0;
  };
  const double quiet = could_see(0.01);
  const double noisy = could_see(0.12);
  EXPECT_GT(quiet, 0);
  EXPECT_LT(quiet, 0.1);
  EXPECT_GT(noisy, 3 * quiet);
}

}  // namespace
}  // namespace pgslow::search
