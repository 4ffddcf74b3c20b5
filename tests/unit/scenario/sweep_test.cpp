#include "scenario/sweep.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "report/curve.h"

namespace pgslow::scenario {
namespace {

// A stage's load knobs as its plan sets them on the driver's load.
results::LoadSettings planned_load(const StageSpec& stage) {
  return apply_load({}, stage.load);
}

std::string all(const std::vector<ConfigError>& problems) {
  std::string out;
  for (const auto& p : problems) out += p.str() + "\n";
  return out;
}

TEST(Sweep, OneDimensionExpandsIntoOneStagePerValueWithTheFixedLoad) {
  std::vector<ConfigError> problems;
  Scenario s = parse_scenario(R"(
workload: select-only
sweep:
  pool_size: [1, 5, 150]
  load: {clients: 200}
)",
                              "s.yaml", problems);
  ASSERT_TRUE(problems.empty()) << all(problems);
  ASSERT_EQ(s.sweep.dimensions, std::vector<std::string>{"pool_size"});
  ASSERT_EQ(s.stages.size(), 3u);
  EXPECT_EQ(s.stages[0].name, "pool_size 1");
  EXPECT_EQ(s.stages[2].name, "pool_size 150");
  for (const auto& st : s.stages) {
    EXPECT_TRUE(st.sweep_point);
    EXPECT_EQ(planned_load(st).clients, 200);
  }
  EXPECT_EQ(planned_load(s.stages[1]).pool_size, 5);
}

// The pooler sweep (docs/pooler.md): the same pool sizes in the driver's pool and through
// pgslow's PgBouncer, one curve per path; anything else is refused at its line.
TEST(Sweep, ThePoolerIsADimensionOfTwoPaths) {
  std::vector<ConfigError> problems;
  Scenario s = parse_scenario(R"(
workload: select-only
sweep:
  pool_size: [2, 10]
  pooler: [driver, pgbouncer]
  load: {clients: 200}
)",
                              "s.yaml", problems);
  ASSERT_TRUE(problems.empty()) << all(problems);
  ASSERT_EQ(s.stages.size(), 4u);
  EXPECT_EQ(s.stages[0].name, "pool_size 2, pooler driver");
  EXPECT_EQ(planned_load(s.stages[0]).pooler, "driver");
  EXPECT_EQ(s.stages[3].name, "pool_size 10, pooler pgbouncer");
  EXPECT_EQ(planned_load(s.stages[3]).pooler, "pgbouncer");
  EXPECT_EQ(planned_load(s.stages[3]).pool_size, 10);

  problems.clear();
  parse_scenario("workload: select-only\nsweep:\n  pooler: [odyssey]\n", "s.yaml", problems);
  const std::string text = all(problems);
  EXPECT_NE(text.find("s.yaml:3:"), std::string::npos) << text;
  EXPECT_NE(text.find("is not a pooler"), std::string::npos) << text;
}

TEST(Sweep, TwoDimensionsAndRelativeRatesThenTheStagesList) {
  std::vector<ConfigError> problems;
  Scenario s = parse_scenario(R"(
workload: select-only
sweep:
  rate: [25%, 75%]
  clients: [8, 256]
stages:
  - name: fix
    load: {rate: 1000}
)",
                              "s.yaml", problems);
  ASSERT_TRUE(problems.empty()) << all(problems);
  ASSERT_EQ(s.stages.size(), 5u);
  EXPECT_EQ(s.stages[0].name, "rate 25%, clients 8");
  EXPECT_EQ(s.stages[1].name, "rate 75%, clients 8");
  EXPECT_EQ(s.stages[3].name, "rate 75%, clients 256");
  EXPECT_EQ(planned_load(s.stages[3]).rate_percent, 75);
  EXPECT_EQ(planned_load(s.stages[3]).rate, 0);
  EXPECT_EQ(planned_load(s.stages[3]).clients, 256);
  EXPECT_EQ(s.stages[4].name, "fix");
  EXPECT_FALSE(s.stages[4].sweep_point);
  EXPECT_EQ(planned_load(s.stages[4]).rate, 1000);
}

TEST(Sweep, BadValuesNameFileLineAndReason) {
  std::vector<ConfigError> problems;
  parse_scenario("workload: select-only\nsweep:\n  clients: [1, -3]\n  rate: [fast]\n", "s.yaml",
                 problems);
  const std::string text = all(problems);
  EXPECT_NE(text.find("s.yaml:3"), std::string::npos) << text;
  EXPECT_NE(text.find("sweep.clients"), std::string::npos) << text;
  EXPECT_NE(text.find("s.yaml:4"), std::string::npos) << text;
  EXPECT_NE(text.find("not a rate"), std::string::npos) << text;
}

// 3000 x 3000 values in a small file expanded into nine million stages (std::bad_alloc): the
// sweep is bounded, and says so at its line with the count and the limit.
TEST(Sweep, TooManyPointsAreRefusedAtTheSweepsLine) {
  std::string clients;
  std::string pool;
  for (int i = 1; i <= 3000; ++i) {
    clients += (i == 1 ? "" : ",") + std::to_string(i);
    pool += (i == 1 ? "" : ",") + std::to_string(i - 1);
  }
  std::vector<ConfigError> problems;
  Scenario s = parse_scenario(
      "workload: select-only\nsweep:\n  clients: [" + clients + "]\n  pool_size: [" + pool + "]\n",
      "big.yaml", problems);
  const std::string text = all(problems);
  EXPECT_NE(text.find("big.yaml:3"), std::string::npos) << text;
  EXPECT_NE(text.find("9000000 points (3000 x 3000)"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(kMaxSweepPoints)), std::string::npos) << text;
  EXPECT_TRUE(s.stages.empty());

  // At the limit it expands.
  problems.clear();
  s = parse_scenario("workload: select-only\nsweep:\n  clients: [" +
                         clients.substr(0, clients.find(",101,")) + "]\n  pool_size: [" +
                         pool.substr(0, pool.find(",10,")) + "]\n",
                     "ok.yaml", problems);
  EXPECT_TRUE(problems.empty()) << all(problems);
  EXPECT_EQ(s.stages.size(), kMaxSweepPoints);
}

TEST(Sweep, ThreeDimensionsOrNoneAreRefused) {
  std::vector<ConfigError> problems;
  parse_scenario(
      "workload: select-only\nsweep:\n  clients: [1]\n  pool_size: [1]\n  workers: [1]\n", "s.yaml",
      problems);
  EXPECT_NE(all(problems).find("3 dimensions"), std::string::npos) << all(problems);
  problems.clear();
  parse_scenario("workload: select-only\nsweep:\n  load: {clients: 3}\n", "s.yaml", problems);
  EXPECT_NE(all(problems).find("varies nothing"), std::string::npos) << all(problems);
}

TEST(Sweep, AKnobIsADimensionWhosePointsSetIt) {
  std::vector<ConfigError> problems;
  Scenario s = parse_scenario(R"(
workload: select-only
sweep:
  shared_buffers: [128MB, 32MB, 512kB]
)",
                              "s.yaml", problems);
  ASSERT_TRUE(problems.empty()) << all(problems);
  ASSERT_EQ(s.sweep.dimensions, std::vector<std::string>{"shared_buffers"});
  ASSERT_EQ(s.stages.size(), 3u);
  EXPECT_EQ(s.stages[1].name, "shared_buffers 32MB");
  ASSERT_EQ(s.stages[1].settings.size(), 1u);
  EXPECT_EQ(s.stages[1].settings[0].name, "shared_buffers");
  EXPECT_EQ(s.stages[1].settings[0].value, "32MB");
  // The value's own line: the server's verdict on it points there.
  EXPECT_EQ(s.stages[1].settings[0].where.line, 4);
  EXPECT_EQ(s.stages[2].sweep_values.at("shared_buffers"), "512kB");
  EXPECT_TRUE(s.stages[2].load.empty());
}

TEST(Sweep, ARangeInAKnobsUnitOnALogScale) {
  std::vector<ConfigError> problems;
  Scenario s = parse_scenario(R"(
workload: select-only
sweep:
  work_mem: {from: 64MB, to: 64kB, steps: 6, scale: log}
  clients: {from: 1, to: 4, steps: 6}
)",
                              "s.yaml", problems);
  ASSERT_TRUE(problems.empty()) << all(problems);
  std::vector<std::string> work_mem, clients;
  for (const auto& v : s.sweep.values[0]) work_mem.push_back(v.text);
  for (const auto& v : s.sweep.values[1]) clients.push_back(v.text);
  EXPECT_EQ(work_mem, (std::vector<std::string>{"64MB", "16MB", "4MB", "1MB", "256kB", "64kB"}));
  // Linear 1, 1.6, 2.2, 2.8, 3.4, 4 as whole clients, each once.
  EXPECT_EQ(clients, (std::vector<std::string>{"1", "2", "3", "4"}));
  ASSERT_EQ(s.stages.size(), 24u);  // a curve over work_mem per number of clients
  EXPECT_EQ(s.stages[7].name, "work_mem 16MB, clients 2");
  EXPECT_EQ(planned_load(s.stages[7]).clients, 2);
  EXPECT_EQ(s.stages[7].settings[0].value, "16MB");
}

TEST(Sweep, RangeValuesAreRoundedAsAPersonWritesThem) {
  std::string error;
  auto v = range_values("10MB", "1MB", 3, true, error);
  ASSERT_TRUE(v) << error;
  EXPECT_EQ(*v, (std::vector<std::string>{"10MB", "3200kB", "1MB"}));  // 3.16MB
  v = range_values("128MB", "1MB", 4, false, error);
  ASSERT_TRUE(v) << error;
  EXPECT_EQ(*v, (std::vector<std::string>{"128MB", "86MB", "43MB", "1MB"}));
  v = range_values("1s", "10min", 3, true, error);
  ASSERT_TRUE(v) << error;
  EXPECT_EQ(*v, (std::vector<std::string>{"1s", "24s", "10min"}));
  v = range_values("1.1", "4", 4, false, error);
  ASSERT_TRUE(v) << error;
  EXPECT_EQ(*v, (std::vector<std::string>{"1.1", "2.1", "3", "4"}));
  v = range_values("25%", "100%", 4, false, error);
  ASSERT_TRUE(v) << error;
  EXPECT_EQ(*v, (std::vector<std::string>{"25%", "50%", "75%", "100%"}));
  EXPECT_FALSE(range_values("64MB", "10s", 3, false, error));
  EXPECT_NE(error.find("not in one kind of unit"), std::string::npos) << error;
  EXPECT_FALSE(range_values("0", "64", 3, true, error));
  EXPECT_NE(error.find("log scale"), std::string::npos) << error;
}

TEST(Sweep, AnUnknownKnobOrABadRangeNamesFileLineAndAFix) {
  std::vector<ConfigError> problems;
  parse_scenario("workload: select-only\nsweep:\n  shared_bufers: [128MB, 8MB]\n", "s.yaml",
                 problems);
  std::string text = all(problems);
  EXPECT_NE(text.find("s.yaml:3"), std::string::npos) << text;
  EXPECT_NE(
      text.find("'shared_bufers' is neither a load dimension, the server's envelope nor a knob"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("did you mean 'shared_buffers'?"), std::string::npos) << text;
  EXPECT_EQ(text.find("varies nothing"), std::string::npos) << text;

  problems.clear();
  parse_scenario(
      "workload: select-only\nsweep:\n  work_mem: {from: 64MB, to: 10s, steps: 1, scale: x}\n",
      "s.yaml", problems);
  text = all(problems);
  EXPECT_NE(text.find("s.yaml:3"), std::string::npos) << text;
  EXPECT_NE(text.find("sweep.work_mem.steps = 1 is out of range"), std::string::npos) << text;
  EXPECT_NE(text.find("x is not a scale"), std::string::npos) << text;

  problems.clear();
  parse_scenario("workload: select-only\nsweep:\n  clients: {from: 0, to: 8, steps: 3}\n", "s.yaml",
                 problems);
  text = all(problems);
  EXPECT_NE(text.find("sweep.clients = 0 (of the range) is out of range"), std::string::npos)
      << text;
}

// A new load dimension is one row: this test adds one (clients sharing a pool, written
// "200/10"), and a sweep over it parses, expands and draws a curve, with nothing else changed.
TEST(Sweep, ANewDimensionIsOneRow) {
  add_load_dimension(load_row(
      "pooled_clients",
      [](std::string_view written) {
        int clients = 0, pool = 0;
        char tail = 0;
        const std::string text(written);
        if (std::sscanf(text.c_str(), "%d/%d%c", &clients, &pool, &tail) != 2 || clients < 1 ||
            pool < 1)
          return SweepParse{{}, "is not clients/pool", "write e.g. 200/10"};
        return SweepParse{std::to_string(clients) + "/" + std::to_string(pool), {}, {}};
      },
      [](const SweepValue& v, results::LoadSettings& load) {
        load.clients = std::stoi(v.text);
        load.pool_size = std::stoi(v.text.substr(v.text.find('/') + 1));
      }));
  std::vector<ConfigError> problems;
  Scenario s = parse_scenario(R"(
workload: select-only
sweep:
  pooled_clients: [200/10, 200/50, 400/50]
  workers: [2]
)",
                              "s.yaml", problems);
  ASSERT_TRUE(problems.empty()) << all(problems);
  ASSERT_EQ(s.stages.size(), 3u);
  EXPECT_EQ(s.stages[2].name, "pooled_clients 400/50, workers 2");
  EXPECT_EQ(planned_load(s.stages[2]).clients, 400);
  EXPECT_EQ(planned_load(s.stages[2]).pool_size, 50);
  EXPECT_EQ(planned_load(s.stages[2]).workers, 2);

  // A stage's load: takes it too, and a bad value is an error at its line.
  parse_scenario("workload: select-only\nstages:\n  - name: a\n    load: {pooled_clients: lots}\n",
                 "s.yaml", problems);
  EXPECT_NE(all(problems).find("s.yaml:4"), std::string::npos) << all(problems);
  EXPECT_NE(all(problems).find("is not clients/pool"), std::string::npos) << all(problems);

  // The report draws the curve from the points' values, as run.cpp records them.
  results::Run run;
  run.sweep = s.sweep.dimensions;
  double tps = 1000;
  for (const auto& st : s.stages) {
    results::StageResult r;
    r.name = st.name;
    r.sweep_point = st.sweep_point;
    r.sweep_values = st.sweep_values;
    results::Measurement m;
    m.tps = tps += 100;
    m.latency.mean_us = 1000;
    r.repeats.push_back(m);
    run.stages.push_back(r);
  }
  const auto curves = report::sweep_curves(run);
  ASSERT_EQ(curves.size(), 1u);
  EXPECT_EQ(curves[0].dimension, "pooled_clients");
  EXPECT_EQ(curves[0].series, "workers 2");
  ASSERT_EQ(curves[0].points.size(), 3u);
  EXPECT_EQ(report::curve_table(curves[0]).rows[1][0], "200/50");
  EXPECT_EQ(report::describe_knee(curves[0]).rfind("peak 1,300 TPS at pooled clients 400/50", 0),
            0u)
      << report::describe_knee(curves[0]);
}

constexpr std::uint64_t kMiB = 1024ull * 1024;

// server.memory as a dimension: each point is a stage of its own envelope, the values read as
// the `server:` envelope reads them; with a knob it makes a family of curves like any pair.
TEST(Sweep, TheServersMemoryIsADimensionAndPairsWithAKnob) {
  std::vector<ConfigError> problems;
  Scenario s = parse_scenario(R"(
workload: select-only
sweep:
  shared_buffers: [128MB, 8MB]
  server.memory: [256MB, 64MB]
)",
                              "s.yaml", problems);
  ASSERT_TRUE(problems.empty()) << all(problems);
  ASSERT_EQ(s.sweep.dimensions, (std::vector<std::string>{"shared_buffers", "server.memory"}));
  ASSERT_NE(s.sweep.envelope_dimension(), nullptr);
  ASSERT_EQ(s.stages.size(), 4u);
  EXPECT_EQ(s.stages[0].name, "shared_buffers 128MB, server.memory 256MB");
  EXPECT_EQ(s.stages[3].name, "shared_buffers 8MB, server.memory 64MB");
  EXPECT_EQ(s.stages[3].envelope.memory_bytes, 64 * kMiB);
  EXPECT_FALSE(s.stages[3].envelope.cpus);
  EXPECT_EQ(s.stages[3].sweep_values.at("server.memory"), "64MB");
  ASSERT_EQ(s.stages[3].settings.size(), 1u);
  EXPECT_EQ(s.stages[3].settings[0].value, "8MB");
  // The stage's envelope over the run's: the run's CPUs stay.
  server::Envelope run;
  run.memory_bytes = 512 * kMiB;
  run.cpus = 1;
  const server::Envelope stage = s.stages[3].envelope.over(run);
  EXPECT_EQ(stage.memory_bytes, 64 * kMiB);
  EXPECT_EQ(stage.cpus, 1);
  EXPECT_EQ(stage.describe(), "memory 64MB, cpus 1");
}

TEST(Sweep, TheServersCpusAndAMemoryRangeAreDimensions) {
  std::vector<ConfigError> problems;
  Scenario s = parse_scenario(R"(
workload: select-only
sweep:
  server.memory: {from: 256MB, to: 64MB, steps: 3, scale: log}
  server.cpus: [1, 0.5]
)",
                              "s.yaml", problems);
  ASSERT_TRUE(problems.empty()) << all(problems);
  ASSERT_EQ(s.stages.size(), 6u);
  EXPECT_EQ(s.stages[1].name, "server.memory 128MB, server.cpus 1");
  EXPECT_EQ(s.stages[1].envelope.memory_bytes, 128 * kMiB);
  EXPECT_EQ(s.stages[4].envelope.cpus, 0.5);
  EXPECT_TRUE(s.stages[4].load.empty());
  EXPECT_TRUE(s.stages[4].settings.empty());
}

// The same refusals as the `server:` envelope's, at the value's line; not a load setting.
TEST(Sweep, AnEnvelopeValueTheServerCannotHaveIsRefusedAtItsLine) {
  std::vector<ConfigError> problems;
  parse_scenario(
      "workload: select-only\nsweep:\n  server.memory: [256MB, 16MB]\n  server.cpus: [fast]\n",
      "s.yaml", problems);
  const std::string text = all(problems);
  EXPECT_NE(text.find("s.yaml:3"), std::string::npos) << text;
  EXPECT_NE(text.find("sweep.server.memory = '16MB' is refused: 16MB is too little for a server"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("s.yaml:4"), std::string::npos) << text;
  EXPECT_NE(text.find("is not a number of CPUs"), std::string::npos) << text;

  problems.clear();
  parse_scenario("workload: select-only\nstages:\n  - name: a\n    load: {server.memory: 64MB}\n",
                 "s.yaml", problems);
  EXPECT_NE(all(problems).find("s.yaml:4"), std::string::npos) << all(problems);

  problems.clear();
  parse_scenario("workload: select-only\nsweep:\n  server.memroy: [64MB]\n", "s.yaml", problems);
  EXPECT_NE(all(problems).find("did you mean 'server.memory'?"), std::string::npos)
      << all(problems);
}

// Only the managed cluster has an envelope pgslow makes: the refusal names the sweep's line,
// in the file (a target of its own) and when the command line picks another target.
TEST(Sweep, AnEnvelopeSweepNeedsTheManagedCluster) {
  std::vector<ConfigError> problems;
  parse_scenario(R"(workload: select-only
target:
  kind: command
  conninfo: "host=db"
  allow_changes: true
sweep:
  server.memory: [256MB, 64MB]
)",
                 "s.yaml", problems);
  const std::string text = all(problems);
  EXPECT_NE(text.find("s.yaml:7"), std::string::npos) << text;
  EXPECT_NE(text.find("only for the managed cluster"), std::string::npos) << text;
  EXPECT_NE(text.find("command"), std::string::npos) << text;

  problems.clear();
  Scenario s = parse_scenario("workload: select-only\nsweep:\n  server.memory: [256MB, 64MB]\n",
                              "s.yaml", problems);
  ASSERT_TRUE(problems.empty()) << all(problems);
  server::TargetSpec pgctl;
  pgctl.kind = server::TargetKind::kPgctl;
  try {
    run_envelope(s, pgctl);
    FAIL() << "a pgctl target got an envelope sweep";
  } catch (const InputError& e) {
    const std::string why = e.what();
    EXPECT_NE(why.find("s.yaml:3"), std::string::npos) << why;
    EXPECT_NE(why.find("pgctl"), std::string::npos) << why;
  }
}

// The run's envelope: the scenario's own values stay; a swept field it gives none of is
// unlimited in the group, so the server starts in it and each stage can set its limit.
TEST(Sweep, TheRunsEnvelopeHoldsTheSweptFieldsUnlimitedWhenTheScenarioGivesNone) {
  std::vector<ConfigError> problems;
  Scenario s = parse_scenario(
      "workload: select-only\nserver: {cpus: 1}\nsweep:\n  server.memory: [256MB, 64MB]\n",
      "s.yaml", problems);
  ASSERT_TRUE(problems.empty()) << all(problems);
  server::Envelope e = run_envelope(s, s.target);
  EXPECT_EQ(e.memory_bytes, server::Envelope::kUnlimitedMemory);
  EXPECT_EQ(e.cpus, 1);
  EXPECT_EQ(e.describe(), "memory unlimited, cpus 1");
  EXPECT_FALSE(e.empty());

  s = parse_scenario(
      "workload: select-only\nserver: {memory: 512MB}\nsweep:\n  server.memory: [256MB]\n",
      "s.yaml", problems);
  EXPECT_EQ(run_envelope(s, s.target).memory_bytes, 512 * kMiB);

  // Without an envelope sweep the target's envelope is the run's, empty or not.
  s = parse_scenario("workload: select-only\nsweep:\n  clients: [1, 2]\n", "s.yaml", problems);
  EXPECT_TRUE(run_envelope(s, s.target).empty());
}

}  // namespace
}  // namespace pgslow::scenario
