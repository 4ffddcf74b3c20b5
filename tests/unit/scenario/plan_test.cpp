#include "scenario/plan.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "report/plan_view.h"
#include "search/attribution.h"
#include "server/pgbouncer.h"
#include "server/pooler.h"

namespace pgslow::scenario {
namespace {

knobs::ServerSetting row(const std::string& name, const std::string& vartype,
                         const std::string& unit, const std::string& context,
                         const std::string& min, const std::string& max,
                         const std::string& setting) {
  knobs::ServerSetting s;
  s.name = name;
  s.vartype = vartype;
  s.unit = unit;
  s.context = context;
  s.min_val = min;
  s.max_val = max;
  s.setting = setting;
  s.boot_val = setting;
  s.reset_val = setting;
  s.source = "default";
  return s;
}

knobs::ServerSettings server15() {
  knobs::ServerSettings s;
  s.version_num = 150018;
  s.major = 15;
  for (auto r : {row("shared_buffers", "integer", "8kB", "postmaster", "16", "1073741823", "16384"),
                 row("work_mem", "integer", "kB", "user", "64", "2147483647", "4096"),
                 row("random_page_cost", "real", "", "user", "0", "1.79769e+308", "4")}) {
    s.by_name[r.name] = r;
  }
  return s;
}

knobs::Knob knob(const std::string& name, int since) {
  knobs::Knob k;
  k.name = name;
  k.category = "test";
  k.since = since;
  return k;
}

knobs::Catalog catalog() {
  knobs::Catalog c;
  c.add_knob(knob("shared_buffers", 9));
  c.add_knob(knob("work_mem", 9));
  c.add_knob(knob("random_page_cost", 9));
  c.add_knob(knob("summarize_wal", 17));
  knobs::Preset tiny;
  tiny.name = "tiny-cache";
  tiny.settings = {{"shared_buffers", "8MB", {"presets.yaml", 3, 5}}};
  c.add_preset(tiny);
  knobs::Preset wal;
  wal.name = "wal";
  wal.settings = {{"summarize_wal", "on", {"presets.yaml", 8, 5}}};
  c.add_preset(wal);
  return c;
}

Scenario three_stages(Mode mode) {
  Scenario s;
  s.file = "t.yaml";
  s.name = "t";
  s.workload.name = "select-only";
  s.workload.clients = 4;
  s.mode = mode;
  StageSpec cache;
  cache.name = "cache";
  cache.presets = {{"tiny-cache", {"t.yaml", 5, 15}}};
  StageSpec wal;
  wal.name = "wal";
  wal.presets = {{"wal", {"t.yaml", 7, 15}}};
  wal.settings = {{"work_mem", "64kB", {"t.yaml", 9, 7}}};
  wal.load.values["clients"] = {"16", {"t.yaml", 8, 3}};
  StageSpec planner;
  planner.name = "planner";
  planner.settings = {{"random_page_cost", "1e300", {"t.yaml", 12, 7}}};
  s.stages.push_back(std::move(cache));
  s.stages.push_back(std::move(wal));
  s.stages.push_back(std::move(planner));
  return s;
}

const results::KnobChange* change(const PlannedStage& st, const std::string& name) {
  for (const auto& c : st.changes) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// A scenario that sets no clients runs its workload's default: tpcc-lite's ten terminals per
// warehouse (4.2.2) on every stage, else 8.
TEST(MakePlan, ClientsLeftOutAreTheWorkloadsDefault) {
  Scenario s = three_stages(Mode::kIsolated);
  s.workload.name = "tpcc-lite";
  s.workload.scale = 4;
  s.workload.clients = 0;
  s.stages[1].load.values.erase("clients");
  Plan plan = make_plan(s, catalog(), server15());
  EXPECT_EQ(plan.scenario.workload.clients, 40);
  for (const auto& st : plan.stages) EXPECT_EQ(st.load.clients, 40) << st.name;
  s.workload.name = "select-only";
  EXPECT_EQ(make_plan(s, catalog(), server15()).scenario.workload.clients, 8);
  s.workload.clients = 3;
  EXPECT_EQ(make_plan(s, catalog(), server15()).stages.front().load.clients, 3);
}

TEST(MakePlan, CumulativeStagesAddUp) {
  Plan plan = make_plan(three_stages(Mode::kCumulative), catalog(), server15());
  ASSERT_EQ(plan.stages.size(), 4u);
  EXPECT_TRUE(plan.stages[0].is_baseline);
  EXPECT_TRUE(plan.stages[0].changes.empty());

  const PlannedStage& cache = plan.stages[1];
  const auto* sb = change(cache, "shared_buffers");
  ASSERT_NE(sb, nullptr);
  EXPECT_EQ(sb->old_value, "128MB");
  EXPECT_EQ(sb->new_value, "8MB");
  EXPECT_EQ(sb->apply_by, "restart");
  EXPECT_TRUE(cache.needs_restart);

  const PlannedStage& wal = plan.stages[2];
  ASSERT_EQ(wal.skipped.size(), 1u);
  EXPECT_EQ(wal.skipped[0].name, "summarize_wal");
  EXPECT_NE(wal.skipped[0].reason.find("17"), std::string::npos) << wal.skipped[0].reason;
  EXPECT_EQ(wal.settings.size(), 2u);  // shared_buffers carried over, work_mem added
  EXPECT_FALSE(wal.needs_restart);
  EXPECT_EQ(change(wal, "shared_buffers"), nullptr);
  ASSERT_NE(change(wal, "work_mem"), nullptr);
  EXPECT_EQ(change(wal, "work_mem")->apply_by, "reload");
  EXPECT_EQ(wal.load.clients, 16);

  const PlannedStage& planner = plan.stages[3];
  EXPECT_EQ(planner.settings.size(), 3u);
  EXPECT_EQ(planner.load.clients, 16);   // load knobs accumulate too
  EXPECT_TRUE(planner.skipped.empty());  // the skip was reported where it was asked for
}

TEST(MakePlan, IsolatedStagesStartFromTheBaseline) {
  Plan plan = make_plan(three_stages(Mode::kIsolated), catalog(), server15());
  ASSERT_EQ(plan.stages.size(), 4u);
  const PlannedStage& planner = plan.stages[3];
  ASSERT_EQ(planner.settings.size(), 1u);
  EXPECT_EQ(planner.settings[0].name, "random_page_cost");
  EXPECT_EQ(planner.load.clients, 4);
  // Isolated stages are compared with the baseline: only their own knobs show as changes.
  EXPECT_EQ(change(planner, "work_mem"), nullptr);
  ASSERT_EQ(planner.changes.size(), 1u);
  EXPECT_EQ(planner.changes[0].name, "random_page_cost");
  EXPECT_FALSE(planner.needs_restart);
  // The cache stage's restart knob goes back when the next stage runs without it.
  EXPECT_TRUE(plan.stages[2].needs_restart);
}

TEST(MakePlan, BothModesAddTheIsolatedStagesAfterTheCumulativeOnes) {
  Plan plan = make_plan(three_stages(Mode::kBoth), catalog(), server15());
  ASSERT_EQ(plan.stages.size(), 6u);
  EXPECT_EQ(plan.stages[4].name, "wal (alone)");
  EXPECT_EQ(plan.stages[5].name, "planner (alone)");
}

TEST(MakePlan, UnknownPresetAndOutOfRangeValueAreReportedTogether) {
  Scenario s = three_stages(Mode::kCumulative);
  s.stages[0].presets = {{"tiny-cahce", {"t.yaml", 5, 15}}};
  s.stages[2].settings = {{"work_mem", "1kB", {"t.yaml", 12, 7}}};
  try {
    make_plan(s, catalog(), server15());
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    std::string text = e.what();
    EXPECT_NE(text.find("t.yaml:5:15"), std::string::npos) << text;
    EXPECT_NE(text.find("tiny-cache"), std::string::npos) << text;  // the suggestion
    EXPECT_NE(text.find("t.yaml:12:7"), std::string::npos) << text;
    EXPECT_NE(text.find("work_mem"), std::string::npos) << text;
  }
}

// Keying and think times are waited only in the closed loop: a stage at a fixed rate under a
// workload with them is refused by the plan (and so by `check`), at the rate's line, before the
// baseline is measured, not by the driver at the stage.
TEST(MakePlan, AFixedRateStageWithThinkTimesIsRefusedAtItsLine) {
  Scenario s = three_stages(Mode::kCumulative);
  s.workload.name = "tpcc-lite";
  s.workload.clients = 0;
  s.stages[2].load.values["rate"] = {"50", {"t.yaml", 13, 11}};
  EXPECT_NO_THROW(make_plan(s, catalog(), server15()));  // no think times: a fixed rate is fine
  s.workload.think_time = true;
  for (bool offline : {false, true}) {
    SCOPED_TRACE(offline ? "offline" : "online");
    std::vector<ConfigError> problems;
    if (offline) {
      check_scenario_offline(s, catalog(), problems);
    } else {
      try {
        make_plan(s, catalog(), server15());
      } catch (const InputError& e) {
        problems = e.problems();
      }
    }
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].where.line, 13);
    EXPECT_NE(problems[0].message.find("stage 'planner' runs at a fixed rate, but "
                                       "workload.think_time is on"),
              std::string::npos)
        << problems[0].message;
  }
}

TEST(MakePlan, AttributionCostsExtraRunsOnlyWhereAStageHasSeveralKnobs) {
  Scenario s = three_stages(Mode::kIsolated);
  s.attribute = true;
  // Separate runs with and without attribution (without it, the wal stage would be switched
  // back): the two plans then differ in the attribution's runs alone.
  s.measure.switchback = false;
  s.stages[0].attribute = false;  // a stage may opt out
  s.stages[0].settings = {{"work_mem", "64kB", {"t.yaml", 6, 7}}};
  s.stages[1].settings.push_back({"random_page_cost", "1e300", {"t.yaml", 10, 7}});
  Plan plan = make_plan(s, catalog(), server15());
  EXPECT_FALSE(plan.stages[1].attribute) << "opted out";
  const PlannedStage& wal = plan.stages[2];
  ASSERT_GE(wal.changes.size(), 2u);
  EXPECT_TRUE(wal.attribute);
  EXPECT_EQ(wal.attribution_runs, search::expected_attribution_runs(wal.attribution_units, 1,
                                                                    attribution_level_repeats(1)));
  EXPECT_FALSE(plan.stages[3].attribute) << "one knob: nothing to attribute";
  EXPECT_EQ(plan.attribution_runs, wal.attribution_runs);
  EXPECT_GT(plan.attribution_seconds, 0);
  std::ostringstream out;
  report::render_plan_console(plan_result(plan), out);
  EXPECT_NE(out.str().find("of which attribution: about"), std::string::npos) << out.str();
  s.attribute = false;
  Plan without = make_plan(s, catalog(), server15());
  // The attribution's runs come on top, and its last run of the baseline stands in for the
  // interleaved one after the stage.
  const double reference_run = s.measure.repeats * (s.measure.warmup_s + s.measure.duration_s + 1) +
                               (wal.needs_restart ? 3.0 : 0.5);
  EXPECT_NEAR(plan.estimated_seconds - without.estimated_seconds,
              plan.attribution_seconds - reference_run, 1e-9);
}

TEST(MakePlan, PrintsWhatARunWouldDo) {
  Plan plan = make_plan(three_stages(Mode::kCumulative), catalog(), server15());
  std::ostringstream out;
  report::render_plan_console(plan_result(plan), out);
  std::string text = out.str();
  EXPECT_NE(text.find("shared_buffers"), std::string::npos);
  EXPECT_NE(text.find("128MB -> 8MB"), std::string::npos) << text;
  EXPECT_NE(text.find("skipped summarize_wal"), std::string::npos) << text;
  EXPECT_NE(text.find("Nothing was changed"), std::string::npos);
}

// A knob's sweep points are stages whose settings carry its values: checked against the
// server's range and unit like any stage's, each point of a restart knob measured in runs of
// its own, and a reload knob's points switched back and forth with the baseline.
TEST(MakePlan, AKnobSweepIsCheckedAgainstTheServerAndGetsItsDesign) {
  std::vector<ConfigError> problems;
  Scenario s = parse_scenario(R"(workload: select-only
mode: isolated
sweep:
  shared_buffers: [128MB, 32MB, 8MB]
)",
                              "t.yaml", problems);
  ASSERT_TRUE(problems.empty());
  Plan plan = make_plan(s, catalog(), server15());
  ASSERT_EQ(plan.stages.size(), 4u);
  EXPECT_TRUE(plan.stages[1].changes.empty());  // 128MB is the server's value
  EXPECT_EQ(plan.stages[2].sweep_values.at("shared_buffers"), "32MB");
  EXPECT_TRUE(plan.stages[2].needs_restart);
  EXPECT_FALSE(plan.stages[2].switchback);
  EXPECT_NE(plan.stages[2].design_why.find("shared_buffers needs a restart"), std::string::npos)
      << plan.stages[2].design_why;

  s = parse_scenario(R"(workload: select-only
mode: isolated
sweep:
  work_mem: {from: 4MB, to: 1MB, steps: 3, scale: log}
)",
                     "t.yaml", problems);
  ASSERT_TRUE(problems.empty());
  plan = make_plan(s, catalog(), server15());
  ASSERT_EQ(plan.stages.size(), 4u);
  EXPECT_EQ(plan.stages[2].name, "work_mem 2MB");
  EXPECT_TRUE(plan.stages[2].switchback) << plan.stages[2].design_why;

  // Below the server's minimum (shared_buffers: 16 pages of 8kB): an error at the value.
  s = parse_scenario("workload: select-only\nsweep:\n  shared_buffers: [8MB, 64kB]\n", "t.yaml",
                     problems);
  ASSERT_TRUE(problems.empty());
  try {
    make_plan(s, catalog(), server15());
    FAIL() << "64kB is below the minimum";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.yaml:3:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("shared_buffers"), std::string::npos) << e.what();
  }
}

TEST(Overlay, LaterWinsAndOrderIsKept) {
  auto out = knobs::overlay({{"a", "1", {}}, {"b", "2", {}}}, {{"B", "3", {}}, {"c", "4", {}}});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].value, "3");
  EXPECT_EQ(out[2].name, "c");
}

// A point of its own envelope is measured in runs of its own (the limit is set between runs),
// and the plan says which envelope each point gets.
TEST(MakePlan, AnEnvelopePointGetsSeparateRunsAndThePlanShowsItsEnvelope) {
  std::vector<ConfigError> problems;
  Scenario s = parse_scenario(R"(workload: select-only
mode: isolated
sweep:
  work_mem: [1MB]
  server.memory: [256MB, 64MB]
)",
                              "t.yaml", problems);
  ASSERT_TRUE(problems.empty());
  Plan plan = make_plan(s, catalog(), server15());
  ASSERT_EQ(plan.stages.size(), 3u);
  EXPECT_TRUE(plan.stages[0].envelope.empty());  // the baseline: the run's envelope
  EXPECT_EQ(plan.stages[2].envelope.memory_bytes, 64ull * 1024 * 1024);
  EXPECT_FALSE(plan.stages[2].switchback);
  EXPECT_NE(plan.stages[2].design_why.find("envelope of its own"), std::string::npos)
      << plan.stages[2].design_why;
  std::ostringstream out;
  report::render_plan_console(plan_result(plan), out);
  EXPECT_NE(out.str().find("the server's envelope: memory 64MB"), std::string::npos) << out.str();
  // The 64MB point sets the same knob as the 256MB one before it: its envelope differs, so it
  // is not "the same configuration as the one before".
  for (const auto& w : plan.stages[2].warnings)
    EXPECT_EQ(w.find("same configuration as the one before"), std::string::npos) << w;
}

// A PgBouncer setting is a knob of its stage (docs/pooler.md, "Pooler settings as knobs"): from a
// preset's `pooler:` part or the stage's `load:`, named against what the baseline's clients meet
// through the same PgBouncer, applied by RELOAD, and not split by an attribution.
TEST(MakePlan, APoolerSettingIsAKnobLineOfItsStageAppliedByReload) {
  std::vector<ConfigError> problems;
  Scenario s = parse_scenario(R"(workload: select-only
mode: isolated
pooler: {kind: pgbouncer, pool_mode: transaction}
attribute: true
stages:
  - name: small pool
    presets: [small-pool]
    settings: {work_mem: 1MB, random_page_cost: 2}
  - name: used once
    load: {pgbouncer.server_lifetime: 0}
  - name: session mode
    load: {pgbouncer.pool_mode: session}
  - name: more clients
    load: {clients: 32, pgbouncer.default_pool_size: 2}
)",
                              "t.yaml", problems);
  ASSERT_TRUE(problems.empty()) << problems.front().str();
  knobs::Catalog c = catalog();
  knobs::Preset small;
  small.name = "small-pool";
  small.pooler = {{"default_pool_size", "2", {"presets.yaml", 12, 7}}};
  c.add_preset(small);
  Plan plan = make_plan(s, c, server15());
  ASSERT_EQ(plan.stages.size(), 5u);
  EXPECT_TRUE(plan.stages[0].load.pooler_settings.empty());
  const results::KnobChange* pool = change(plan.stages[1], "pgbouncer.default_pool_size");
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->old_value, "20");  // PgBouncer's default: the run's pooler leaves it out
  EXPECT_EQ(pool->new_value, "2");
  EXPECT_EQ(pool->apply_by, results::kApplyByPooler);
  EXPECT_EQ(plan.stages[1].load.pooler_settings.at("default_pool_size"), "2");
  // The server's two knobs are attributed; the pooler's setting stays the stage's.
  EXPECT_TRUE(plan.stages[1].attribute);
  for (const auto& candidate : attribution_candidates(plan.stages[1]))
    EXPECT_NE(candidate.change.name, "pgbouncer.default_pool_size");
  const results::KnobChange* once = change(plan.stages[2], "pgbouncer.server_lifetime");
  ASSERT_NE(once, nullptr);
  EXPECT_EQ(once->old_value, "3600");
  EXPECT_EQ(once->new_value, "0");
  // Its load differs from the baseline's in a setting PgBouncer takes live on RELOAD: one run
  // switches it back and forth with the baseline's.
  EXPECT_TRUE(plan.stages[2].switchback) << plan.stages[2].design_why;
  EXPECT_NE(plan.stages[2].design_why.find("PgBouncer takes the pool's settings on RELOAD"),
            std::string::npos)
      << plan.stages[2].design_why;
  EXPECT_FALSE(plan.stages[2].attribute);  // one knob
  // A session-mode client keeps its server connection: pool_mode reaches new clients only.
  EXPECT_FALSE(plan.stages[3].switchback);
  EXPECT_NE(plan.stages[3].design_why.find("pool_mode reaches only new clients"), std::string::npos)
      << plan.stages[3].design_why;
  // In session mode a client keeps its server connection: a smaller pool never reaches it.
  problems.clear();
  Scenario session = parse_scenario(R"(workload: select-only
mode: isolated
pooler: {kind: pgbouncer}
stages:
  - name: small pool
    load: {pgbouncer.default_pool_size: 2}
)",
                                    "t.yaml", problems);
  ASSERT_TRUE(problems.empty()) << problems.front().str();
  const Plan session_plan = make_plan(session, c, server15());
  EXPECT_FALSE(session_plan.stages[1].switchback);
  EXPECT_NE(session_plan.stages[1].design_why.find("runs in session mode"), std::string::npos)
      << session_plan.stages[1].design_why;
  // A closed loop's client count switches too: the extra clients stand by between the stage's
  // blocks, their connections closed, and connect again at each switch to it.
  EXPECT_TRUE(plan.stages[4].switchback) << plan.stages[4].design_why;
  EXPECT_NE(plan.stages[4].design_why.find("the clients beyond the 8 of the smaller side stand by "
                                           "with their connection closed"),
            std::string::npos)
      << plan.stages[4].design_why;
  // A load the driver cannot switch gets separate runs, with the reason: a fixed rate's clients
  // keep a schedule; with allow_partial the refused clients are the stage's lesson (a run
  // connects once); TPC-C's keying and think times last seconds, and a client stands by only
  // between transactions.
  const std::pair<const char*, const char*> kept_apart[] = {
      {"workload: select-only\nstages:\n  - name: open loop\n    load: {rate: 500, clients: 16}\n",
       "its arrival rate differs"},
      {"workload: select-only\nallow_partial: true\nstages:\n  - name: too many\n    load: "
       "{clients: 40}\n",
       "allow_partial is on"},
      {"workload: {name: tpcc-lite, think_time: true}\nstages:\n  - name: more terminals\n    "
       "load: {clients: 20}\n",
       "keying and think times"}};
  for (const auto& [yaml, why] : kept_apart) {
    problems.clear();
    const Scenario apart = parse_scenario(yaml, "t.yaml", problems);
    ASSERT_TRUE(problems.empty()) << problems.front().str();
    const Plan apart_plan = make_plan(apart, c, server15());
    EXPECT_FALSE(apart_plan.stages[1].switchback) << yaml;
    EXPECT_NE(apart_plan.stages[1].design_why.find(why), std::string::npos)
        << apart_plan.stages[1].design_why;
  }
}

// The catalog's presets with a `pooler:` part give PgBouncer settings of the table, and the
// commands that change the server only refuse them with where to measure them.
TEST(Presets, APoolerPartIsPgBouncerSettingsOnly) {
  const knobs::Catalog c = knobs::Catalog::load(std::filesystem::path(PGSLOW_SOURCE_DIR) / "knobs");
  int with_pooler = 0;
  for (const auto& p : c.presets()) {
    for (const auto& s : c.expand_pooler(p)) {
      EXPECT_FALSE(server::check_pooler_setting(s.name, s.value, "")) << p.name << ": " << s.name;
      EXPECT_EQ(c.find(s.name), nullptr) << p.name << ": " << s.name << " is a server knob";
    }
    if (c.expand_pooler(p).empty()) continue;
    ++with_pooler;
    try {
      c.expand_for_server(p, "pgslow apply");
      FAIL() << p.name << " was expanded for the server";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("scenario stage"), std::string::npos) << e.what();
    }
  }
  EXPECT_GE(with_pooler, 2);
  ASSERT_NE(c.find_preset("pool-too-small"), nullptr);
  EXPECT_EQ(c.expand_pooler(*c.find_preset("pool-too-small")).at(0).name, "default_pool_size");
}

TEST(MakePlan, APoolerSettingNeedsPgslowsPgBouncerOnThePathAndItsVersion) {
  std::vector<ConfigError> problems;
  Scenario direct = parse_scenario(R"(workload: select-only
mode: isolated
stages:
  - name: session
    load: {pgbouncer.pool_mode: session}
)",
                                   "t.yaml", problems);
  ASSERT_TRUE(problems.empty()) << problems.front().str();
  try {
    make_plan(direct, catalog(), server15());
    FAIL() << "a PgBouncer setting for clients that reach the server directly was planned";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("t.yaml:5"), std::string::npos) << what;
    EXPECT_NE(what.find("directly"), std::string::npos) << what;
    EXPECT_NE(what.find("pooler: {kind: pgbouncer}"), std::string::npos) << what;
  }
  const std::string version = server::pgbouncer_version();
  if (version.empty() || server::version_at_least(version, "1.21"))
    GTEST_SKIP() << "needs a PgBouncer older than 1.21 (Debian 12's 1.18); this one: " << version;
  Scenario prepared = parse_scenario(R"(workload: select-only
mode: isolated
pooler: {kind: pgbouncer}
stages:
  - name: tracked
    load: {pgbouncer.max_prepared_statements: 100}
)",
                                     "t.yaml", problems);
  ASSERT_TRUE(problems.empty()) << problems.front().str();
  try {
    make_plan(prepared, catalog(), server15());
    FAIL() << "max_prepared_statements was planned on PgBouncer " << version;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("needs PgBouncer 1.21"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pgslow::scenario
