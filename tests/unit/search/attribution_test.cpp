// Per-knob attribution against the seeded simulated server: who is named, with how many runs,
// under noise and drift.

#include "search/attribution.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "good_again.h"
#include "report/attribution_view.h"
#include "report/json.h"
#include "search/simulated_server.h"

namespace pgslow::search {
namespace {

SimulatedKnob& knob(SimulatedModel& m, const std::string& name) {
  for (auto& k : m.knobs)
    if (k.name == name) return k;
  throw std::runtime_error("no knob " + name);
}

struct Outcome {
  Attributed a;
  int runs = 0;  // runs the server made
};

Outcome run(const SimulatedModel& m, AttributionOptions o = {}) {
  SimulatedServer sim(m);
  o.stage = "stage";
  o.reference = "baseline";
  Outcome out{attribute(sim, sim.candidates(), o), 0};
  out.runs = sim.runs();
  EXPECT_EQ(out.a.attribution.extra_runs, out.runs);
  return out;
}

const results::KnobEffect& effect(const results::Attribution& a, const std::string& name) {
  for (const auto& k : a.knobs)
    for (const auto& n : k.knobs)
      if (n == name) return k;
  throw std::runtime_error("no effect for " + name);
}

// The levels (3 runs of the reference, 3 of the stage), two tests per halving, the remainder.
// Good measured again (drift control, good_again()) comes on top.
int bound(int n) {
  return 6 + 2 * static_cast<int>(std::ceil(std::log2(n))) + 1;
}

TEST(Attribution, OneCulpritAmong2And8And32IsTheCauseWithFewRuns) {
  int cases = 0;
  int covered = 0;  // the culprit's interval holds its true effect
  for (int n : {2, 8, 32}) {
    for (int c = 0; c < n; c += std::max(1, n / 8)) {
      SimulatedModel m = harmless_model(n, static_cast<std::uint64_t>(1000 + n * 37 + c));
      std::string culprit = m.knobs[static_cast<std::size_t>(c)].name;
      knob(m, culprit).factor = 0.07;  // wal-hell's 15x
      Outcome o = run(m);
      const results::Attribution& a = o.a.attribution;
      const results::KnobEffect& k = effect(a, culprit);
      EXPECT_EQ(k.verdict, "the cause") << n << " " << culprit;
      ASSERT_TRUE(k.alone.has_value());
      EXPECT_NEAR(k.alone->ratio, 0.07, 0.07 * 0.05);
      ++cases;
      covered += k.alone->low < 0.07 && 0.07 < k.alone->high ? 1 : 0;
      ASSERT_TRUE(k.without.has_value());
      EXPECT_GT(k.without->high, 0.95);  // the stage without it: back near the baseline
      int harmless = 0;
      for (const auto& e : a.knobs)
        if (e.knobs[0] != culprit) {
          EXPECT_EQ(e.verdict, "no measurable effect") << e.knobs[0];
          EXPECT_FALSE(e.alone.has_value()) << "harmless knobs get no run of their own";
          ++harmless;
        }
      EXPECT_EQ(harmless, n - 1);
      // The harmless knobs together: their interval holds their true (tiny) joint effect.
      double rest = 1;
      for (const auto& h : m.knobs)
        if (h.name != culprit) rest *= h.factor;
      ASSERT_TRUE(a.harmless.has_value());
      EXPECT_LE(a.harmless->low, rest) << n << " " << culprit;
      EXPECT_GE(a.harmless->high, rest) << n << " " << culprit;
      EXPECT_LE(o.runs - good_again(o.a.search), bound(n)) << n << " " << culprit;
      EXPECT_LE(good_again(o.a.search), 2) << "good before and after the remainder";
      EXPECT_NE(a.headline.find(culprit + " = b is the cause"), std::string::npos) << a.headline;
      EXPECT_NE(a.headline.find(fmt::format("{} other knob", n - 1)), std::string::npos)
          << a.headline;
    }
  }
  // 95% intervals: one miss in 18 is chance (IntervalsCoverTheTrueEffect counts coverage).
  EXPECT_GE(covered, cases - 1);
  // 32 knobs, one culprit: far fewer runs than one per knob, drift control included.
  SimulatedModel m = harmless_model(32, 5);
  knob(m, "k17").factor = 0.07;
  EXPECT_LE(run(m).runs, 6 + 11 + 2);
}

TEST(Attribution, ReusesTheStageAndBaselineRunsItIsGiven) {
  SimulatedModel m = harmless_model(8, 21);
  knob(m, "k02").factor = 0.1;
  AttributionOptions o;
  o.search.known_good = {1000, 990};
  o.search.known_bad = {100};
  Outcome out = run(m, o);
  EXPECT_EQ(effect(out.a.attribution, "k02").verdict, "the cause");
  // 1 good and 2 bad runs to top up, not 6; good measured again for drift on top.
  const int again = good_again(out.a.search);
  EXPECT_LE(out.runs - again, 3 + 2 * 3 + 1);
  EXPECT_EQ(out.a.good_samples.size(), 3u + static_cast<std::size_t>(again));
  EXPECT_EQ(out.a.good_samples[0], 1000);
}

TEST(Attribution, APairSlowOnlyTogether) {
  SimulatedModel m = harmless_model(8, 12);
  m.interactions.push_back({"k02", "k05", 0.1});
  const results::Attribution a = run(m).a.attribution;
  EXPECT_EQ(effect(a, "k02").verdict, "only with k05 = b");
  EXPECT_EQ(effect(a, "k05").verdict, "only with k02 = b");
  EXPECT_GT(effect(a, "k02").alone->high, 0.9);
  EXPECT_EQ(effect(a, "k00").verdict, "no measurable effect");
  EXPECT_NE(a.headline.find("slow only together"), std::string::npos) << a.headline;
}

TEST(Attribution, TwoIndependentCulpritsEachContribute) {
  SimulatedModel m = harmless_model(16, 31);
  knob(m, "k03").factor = 0.25;
  knob(m, "k11").factor = 0.4;
  const results::Attribution a = run(m).a.attribution;
  EXPECT_EQ(effect(a, "k03").verdict, "contributes");
  EXPECT_EQ(effect(a, "k11").verdict, "contributes");
  EXPECT_NEAR(effect(a, "k03").alone->ratio, 0.25, 0.02);
  EXPECT_NEAR(effect(a, "k03").without->ratio, 0.4, 0.03);
  EXPECT_EQ(effect(a, "k07").verdict, "no measurable effect");
  // Independent effects multiply up to the stage's: no interaction to report.
  EXPECT_EQ(a.note, "");
  // The bigger one first.
  EXPECT_EQ(a.knobs[0].knobs[0], "k03");
}

TEST(Attribution, EitherOfTwoIsEnough) {
  // planner-sabotage: random_page_cost or cpu_index_tuple_cost alone prices every index scan
  // out; both together are no worse.
  SimulatedModel m = harmless_model(2, 41);
  knob(m, "k00").factor = 0.01;
  knob(m, "k01").factor = 0.01;
  m.interactions.push_back({"k00", "k01", 100});
  const results::Attribution a = run(m).a.attribution;
  EXPECT_EQ(effect(a, "k00").verdict, "the cause");
  EXPECT_EQ(effect(a, "k01").verdict, "the cause");
  EXPECT_NE(effect(a, "k00").note.find("still"), std::string::npos);
  EXPECT_NE(a.headline.find("each the cause alone"), std::string::npos) << a.headline;
}

TEST(Attribution, KnobsTheCatalogPairsAreOneUnit) {
  SimulatedModel m = harmless_model(6, 51);
  m.knobs[1].name = "commit_delay";
  m.knobs[4].name = "commit_siblings";
  m.interactions.push_back({"commit_delay", "commit_siblings", 0.07});
  AttributionOptions o;
  o.together = {{"commit_delay", "commit_siblings"}};
  const results::Attribution a = run(m, o).a.attribution;
  const results::KnobEffect& k = effect(a, "commit_siblings");
  EXPECT_EQ(k.knobs, (std::vector<std::string>{"commit_delay", "commit_siblings"}));
  EXPECT_EQ(k.verdict, "the cause");
  EXPECT_EQ(a.knobs.size(), 5u);  // 6 knobs, one pair
  EXPECT_NE(a.headline.find("commit_delay = b + commit_siblings = b is the cause"),
            std::string::npos)
      << a.headline;
}

TEST(Attribution, AStageWithoutEffectHasNothingToBlame) {
  SimulatedModel m = harmless_model(8, 61);
  const results::Attribution a = run(m).a.attribution;
  for (const auto& k : a.knobs) EXPECT_EQ(k.verdict, "no measurable effect");
  EXPECT_NE(a.headline.find("no measurable effect (could see ±"), std::string::npos) << a.headline;
  EXPECT_EQ(run(m).runs, 6);  // the levels only
}

TEST(Attribution, NoiseNearTheThresholdNeverBlamesAHarmlessKnob) {
  // A culprit just beyond the 10% an attribution needs and runs with 4% noise: across seeds,
  // no harmless knob is ever called a cause, and the culprit is named or the stage left
  // unattributed, never someone else.
  int named = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    SimulatedModel m = harmless_model(8, seed);
    m.noise = 0.04;
    knob(m, "k05").factor = 0.8;
    const results::Attribution a = run(m).a.attribution;
    for (const auto& k : a.knobs) {
      if (k.knobs[0] == "k05") {
        named += k.verdict == "the cause" || k.verdict == "contributes" ? 1 : 0;
        continue;
      }
      EXPECT_NE(k.verdict, "the cause") << seed << " " << k.knobs[0] << ": " << a.headline;
      EXPECT_NE(k.verdict, "contributes") << seed << " " << k.knobs[0] << ": " << a.headline;
    }
  }
  EXPECT_GE(named, 30);  // a 20% effect over 4% noise is found nearly always
}

TEST(Attribution, SlowDriftDoesNotMakeAHarmlessKnobTheCause) {
  // Machine load creeping up: each run 0.3% slower than the one before. Bisect's own drift
  // handling is the measurement seam's (issue #10); attribution must at least never name a
  // harmless knob as the cause of a strong effect.
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SimulatedModel m = harmless_model(10, seed);
    m.noise = 0.03;
    m.drift_per_run = -0.003;
    knob(m, "k07").factor = 0.07;
    const results::Attribution a = run(m).a.attribution;
    EXPECT_EQ(effect(a, "k07").verdict, "the cause") << seed << ": " << a.headline;
    for (const auto& k : a.knobs) {
      if (k.knobs[0] != "k07") {
        EXPECT_NE(k.verdict, "the cause") << seed << ": " << a.headline;
      }
    }
  }
}

TEST(Attribution, IntervalsCoverTheTrueEffect) {
  // 95% intervals from the runs' own spread: over many seeds the culprit's interval holds its
  // true factor about 95% of the time (allow 85%: 60 trials, few runs per interval).
  int covered = 0;
  const int trials = 60;
  for (int seed = 1; seed <= trials; ++seed) {
    SimulatedModel m = harmless_model(4, static_cast<std::uint64_t>(seed) * 3);
    m.noise = 0.03;
    for (auto& k : m.knobs) k.factor = 1.0;
    knob(m, "k02").factor = 0.3;
    const results::KnobEffect k = effect(run(m).a.attribution, "k02");
    covered += k.alone->low <= 0.3 && 0.3 <= k.alone->high ? 1 : 0;
  }
  EXPECT_GE(covered, trials * 85 / 100);
}

TEST(Attribution, TableAndJsonCarryEveryKnob) {
  SimulatedModel m = harmless_model(8, 71);
  knob(m, "k06").factor = 0.1;
  const results::Attribution a = run(m).a.attribution;
  const std::string table = report::attribution_table(a).render();
  EXPECT_NE(table.find("k06 = b"), std::string::npos) << table;
  EXPECT_NE(table.find("as a group"), std::string::npos) << table;
  nlohmann::json j = report::attribution_json(a);
  EXPECT_EQ(j["knobs"].size(), 8u);
  EXPECT_EQ(j["knobs"][0]["verdict"], "the cause");
  EXPECT_TRUE(j["knobs"][1]["alone"].is_null());
}

TEST(Attribution, TooNoisyToSplitWithinTheBudgetSaysSo) {
  SimulatedModel m = harmless_model(10, 81);
  m.noise = 0.3;
  knob(m, "k04").factor = 0.5;
  AttributionOptions o;
  o.max_runs = 8;
  Outcome out = run(m, o);
  EXPECT_LE(out.runs, 8);
  const results::Attribution& a = out.a.attribution;
  ASSERT_EQ(a.knobs.size(), 10u);
  for (const auto& k : a.knobs)
    EXPECT_EQ(k.verdict, "not attributed (over the budget of 8 runs)") << a.headline;
  EXPECT_NE(a.headline.find("too much to split 10 knobs within 8 runs"), std::string::npos)
      << a.headline;
}

TEST(Attribution, AnEffectTooSmallForTheNoiseStopsTheSearchEarly) {
  // The quick scenario's checkpoint-storm on a quiet 2-core machine: a stage 14% slower, runs
  // that vary 8%. With at most 3 runs per configuration no half can be judged against a
  // threshold 7% away; the level runs may underestimate the noise, but once the search's own
  // repeated runs show it, the search stops instead of spending its whole budget on ambiguous
  // verdicts (which once blamed harmless pairs as "slow only together").
  int stopped = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SimulatedModel m = harmless_model(5, 900 + seed);
    knob(m, "k02").factor = 0.86;
    m.noise = 0.08;
    AttributionOptions o;
    o.search.max_repeats = 3;
    o.max_runs = 17;
    Outcome out = run(m, o);
    const results::Attribution& a = out.a.attribution;
    for (const auto& k : a.knobs) {
      if (k.knobs[0] == "k02") continue;
      EXPECT_NE(k.verdict, "the cause") << seed << ": " << a.headline;
      EXPECT_NE(k.verdict, "contributes") << seed << ": " << a.headline;
      EXPECT_EQ(k.verdict.find("only with"), std::string::npos) << seed << ": " << a.headline;
    }
    if (!out.a.search.too_noisy) continue;
    ++stopped;
    EXPECT_LT(out.runs, o.max_runs) << seed << ": stopped before the budget";
    for (const auto& k : a.knobs)
      EXPECT_EQ(k.verdict, "not attributed (runs too noisy to split)") << a.headline;
    EXPECT_NE(a.headline.find("too much to split 5 knobs"), std::string::npos) << a.headline;
  }
  EXPECT_GE(stopped, 6);
}

TEST(Attribution, ExpectedRunsForPlan) {
  EXPECT_EQ(expected_attribution_runs(1, 1, 3), 0);
  EXPECT_EQ(expected_attribution_runs(10, 1, 2), 2 + 8 + 1 + 2);
  EXPECT_EQ(expected_attribution_runs(2, 3, 3), 0 + 2 + 1 + 2);
}

}  // namespace
}  // namespace pgslow::search
