#include "scenario/scenario.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/paths.h"
#include "common/strings.h"
#include "scenario/sweep.h"

namespace pgslow::scenario {
namespace {

Scenario parse(const std::string& text, std::vector<ConfigError>& problems) {
  return parse_scenario(text, "s.yaml", problems);
}

std::string all(const std::vector<ConfigError>& problems) {
  std::string out;
  for (const auto& p : problems) out += p.str() + "\n";
  return out;
}

TEST(ParseDuration, UnitsAndBareSeconds) {
  EXPECT_DOUBLE_EQ(*parse_duration("5s"), 5);
  EXPECT_DOUBLE_EQ(*parse_duration("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(*parse_duration("2min"), 120);
  EXPECT_DOUBLE_EQ(*parse_duration("1h"), 3600);
  EXPECT_DOUBLE_EQ(*parse_duration("12"), 12);
  EXPECT_DOUBLE_EQ(*parse_duration(" 1.5 s "), 1.5);
  EXPECT_FALSE(parse_duration("fast"));
  EXPECT_FALSE(parse_duration("5 parsecs"));
  EXPECT_FALSE(parse_duration("-3s"));
  EXPECT_FALSE(parse_duration(""));
}

// A file that cannot run still has its stages' knobs and presets checked (no server needed):
// every problem at once, in line order, each named once.
TEST(ParseScenario, AFileThatCannotRunStillHasItsKnobsCheckedInLineOrder) {
  std::vector<ConfigError> problems;
  parse(
      "workload: tpcb-like\n"        // 1
      "stages:\n"                    // 2
      "  - name: typo\n"             // 3
      "    settings:\n"              // 4
      "      shared_bufers: 1MB\n"   // 5
      "  - name: preset\n"           // 6
      "    presets: [tiny-cahce]\n"  // 7
      "measure:\n"                   // 8
      "  repeats: 0\n",              // 9
      problems);
  ASSERT_EQ(problems.size(), 3u) << all(problems);
  EXPECT_EQ(problems[0].where.line, 5) << all(problems);
  EXPECT_NE(problems[0].message.find("shared_bufers"), std::string::npos) << all(problems);
  EXPECT_EQ(problems[1].where.line, 7) << all(problems);
  EXPECT_NE(problems[1].message.find("tiny-cahce"), std::string::npos) << all(problems);
  EXPECT_EQ(problems[2].where.line, 9) << all(problems);
  EXPECT_NE(problems[2].message.find("repeats"), std::string::npos) << all(problems);
}

// Its workload's name is checked too (no server needed), once.
TEST(ParseScenario, AFileThatCannotRunStillHasItsWorkloadNameChecked) {
  std::vector<ConfigError> problems;
  parse(
      "workload: tpcb-lite\n"  // 1
      "stages:\n"              // 2
      "  - name: fine\n"       // 3
      "    settings:\n"        // 4
      "      work_mem: 4MB\n"  // 5
      "measure:\n"             // 6
      "  repeats: 0\n",        // 7
      problems);
  ASSERT_EQ(problems.size(), 2u) << all(problems);
  EXPECT_EQ(problems[0].where.line, 1) << all(problems);
  EXPECT_NE(problems[0].message.find("unknown workload \"tpcb-lite\""), std::string::npos)
      << all(problems);
  EXPECT_EQ(problems[1].where.line, 7) << all(problems);
}

// A file that can run is left to the checks against the server: nothing is added.
TEST(ParseScenario, AFileThatCanRunGetsNoOfflineProblems) {
  std::vector<ConfigError> problems;
  parse("workload: tpcb-like\nstages:\n  - name: typo\n    settings:\n      shared_bufers: 1MB\n",
        problems);
  EXPECT_TRUE(problems.empty()) << all(problems);
}

TEST(ParseScenario, FullExample) {
  std::vector<ConfigError> problems;
  Scenario s = parse(R"(
name: demo
description: what to expect
workload:
  name: tpcb-like
  scale: 10
  clients: 8
measure:
  warmup: 3s
  duration: 10s
  repeats: 3
mode: isolated
baseline:
  settings:
    work_mem: 4MB
stages:
  - name: cache
    presets: [tiny-cache]
    settings:
      shared_buffers: 2MB
  - name: crowd
    load:
      clients: 50
      pool_size: 5
      connect_per_transaction: true
      rate: 1000
expect:
  - stage: cache
    slower_than_baseline: 2x
  - stage: crowd
    within_baseline: 10%
)",
                     problems);
  ASSERT_TRUE(problems.empty()) << all(problems);
  EXPECT_EQ(s.name, "demo");
  EXPECT_EQ(s.workload.name, "tpcb-like");
  EXPECT_EQ(s.workload.scale, 10);
  EXPECT_EQ(s.workload.clients, 8);
  EXPECT_DOUBLE_EQ(s.measure.warmup_s, 3);
  EXPECT_DOUBLE_EQ(s.measure.duration_s, 10);
  EXPECT_EQ(s.measure.repeats, 3);
  EXPECT_EQ(s.mode, Mode::kIsolated);
  ASSERT_EQ(s.baseline.size(), 1u);
  EXPECT_EQ(s.baseline[0].name, "work_mem");
  ASSERT_EQ(s.stages.size(), 2u);
  EXPECT_EQ(s.stages[0].presets[0].name, "tiny-cache");
  EXPECT_EQ(s.stages[0].settings[0].value, "2MB");
  EXPECT_EQ(s.stages[0].settings[0].where.line, 20);
  const results::LoadSettings load = apply_load({}, s.stages[1].load);
  EXPECT_EQ(load.clients, 50);
  EXPECT_EQ(load.pool_size, 5);
  EXPECT_TRUE(load.connect_per_transaction);
  EXPECT_DOUBLE_EQ(load.rate, 1000);
  EXPECT_EQ(s.stages[1].load.find("pool_size")->where.line, 24);  // where it is written
  ASSERT_EQ(s.expect.size(), 2u);
  EXPECT_DOUBLE_EQ(s.expect[0].value, 2);
  EXPECT_DOUBLE_EQ(s.expect[1].value, 0.10);
  EXPECT_EQ(s.target.kind, server::TargetKind::kManaged);
}

TEST(ParseScenario, EveryProblemIsCollectedWithItsLine) {
  std::vector<ConfigError> problems;
  parse(R"(name: bad
workload:
  name: tpcb-like
  scael: 10
measure:
  duration: forever
stages:
  - name: a
    settings:
      shared_buffers: 8MB
  - name: a
    presets: tiny-cache
expect:
  - stage: planner
    slower_than_baseline: 10
)",
        problems);
  std::string text = all(problems);
  // The typo, with a suggestion and the line it is on.
  EXPECT_NE(text.find("s.yaml:4:3"), std::string::npos) << text;
  EXPECT_NE(text.find("scale"), std::string::npos) << text;
  EXPECT_NE(text.find("not a duration"), std::string::npos) << text;
  EXPECT_NE(text.find("s.yaml:6:"), std::string::npos) << text;
  EXPECT_NE(text.find("used twice"), std::string::npos) << text;
  EXPECT_NE(text.find("stage 'planner'"), std::string::npos) << text;
  EXPECT_GE(problems.size(), 4u);
}

TEST(ParseScenario, MissingWorkloadAndStages) {
  std::vector<ConfigError> problems;
  parse("name: empty\n", problems);
  std::string text = all(problems);
  EXPECT_NE(text.find("no workload"), std::string::npos) << text;
  EXPECT_NE(text.find("no stages"), std::string::npos) << text;
}

TEST(ParseScenario, ExpectNeedsExactlyOneAssertion) {
  std::vector<ConfigError> problems;
  parse(R"(workload: select-only
stages:
  - name: a
    settings: {work_mem: 64kB}
expect:
  - stage: a
  - stage: a
    slower_than_baseline: fast
)",
        problems);
  std::string text = all(problems);
  EXPECT_NE(text.find("exactly one of"), std::string::npos) << text;
  EXPECT_NE(text.find("not a factor"), std::string::npos) << text;
}

TEST(ParseScenario, CommandTargetNeedsItsFields) {
  std::vector<ConfigError> problems;
  Scenario s = parse(R"(target:
  kind: command
  conninfo: "host=localhost port=5432"
  allow_changes: true
workload: select-only
stages:
  - name: a
    settings: {work_mem: 64kB}
)",
                     problems);
  EXPECT_EQ(s.target.kind, server::TargetKind::kCommand);
  EXPECT_TRUE(s.target.allow_changes);
  EXPECT_TRUE(problems.empty()) << all(problems);
  EXPECT_EQ(s.target.conninfo, "host=localhost port=5432");
}

TEST(ParseScenario, CommandTargetWithApplyAndRestoreCommands) {
  std::vector<ConfigError> problems;
  Scenario s = parse(R"(target:
  kind: command
  conninfo: "host=db.example port=5432"
  apply: /usr/local/bin/cnpg-apply.sh
  restore: /usr/local/bin/cnpg-restore.sh
  allow_changes: true
workload: select-only
stages:
  - name: a
    settings: {work_mem: 64kB}
)",
                     problems);
  EXPECT_TRUE(problems.empty()) << all(problems);
  EXPECT_EQ(s.target.apply_command, "/usr/local/bin/cnpg-apply.sh");
  EXPECT_EQ(s.target.restore_command, "/usr/local/bin/cnpg-restore.sh");
}

// Each kind takes only its own fields; the error names the line and what the kind takes.
TEST(ParseScenario, AFieldOfAnotherKindIsAnErrorWithItsLine) {
  std::vector<ConfigError> problems;
  parse(R"(target:
  kind: pgctl
  data_dir: /var/lib/postgresql/15/main
  apply: ./apply.sh
workload: select-only
stages:
  - name: a
    settings: {work_mem: 64kB}
)",
        problems);
  EXPECT_NE(all(problems).find("s.yaml:4"), std::string::npos) << all(problems);
  EXPECT_NE(all(problems).find("a pgctl target takes no apply"), std::string::npos)
      << all(problems);
  problems.clear();
  parse(R"(target: {kind: command, conninfo: "host=x", restore: ./r.sh}
workload: select-only
stages:
  - name: a
    settings: {work_mem: 64kB}
)",
        problems);
  EXPECT_NE(all(problems).find("restore command goes with an apply command"), std::string::npos)
      << all(problems);
}

TEST(ParseScenario, StageThatChangesNothingIsAnError) {
  std::vector<ConfigError> problems;
  parse("workload: select-only\nstages:\n  - name: idle\n", problems);
  EXPECT_NE(all(problems).find("changes nothing"), std::string::npos) << all(problems);
}

TEST(ParseScenario, AttributeForAllOrPerStage) {
  std::vector<ConfigError> problems;
  Scenario s = parse(R"(workload: {name: select-only}
attribute: true
stages:
  - name: a
    presets: [wal-hell]
  - name: b
    presets: [checkpoint-storm]
    attribute: false
  - name: c
    presets: [planner-sabotage]
    attribute: maybe
)",
                     problems);
  EXPECT_TRUE(s.attribute);
  ASSERT_EQ(s.stages.size(), 3u);
  EXPECT_FALSE(s.stages[0].attribute.has_value());
  EXPECT_EQ(s.stages[1].attribute, false);
  ASSERT_EQ(problems.size(), 1u) << all(problems);
  EXPECT_NE(problems[0].str().find("s.yaml:11"), std::string::npos) << all(problems);
}

TEST(ParseScenario, TheMetricAttributionsJudgeByIsAMeasureFieldCheckedWithItsLine) {
  std::vector<ConfigError> problems;
  Scenario s = parse(
      "workload: select-only\nmeasure:\n  metric: cpu_per_tx\nstages:\n  - name: a\n"
      "    presets: [wal-hell]\n",
      problems);
  EXPECT_TRUE(problems.empty()) << all(problems);
  EXPECT_EQ(s.measure.metric, results::Metric::kCpuPerTx);

  problems.clear();
  s = parse(
      "workload: select-only\nmeasure:\n  repeats: 2\n  metric: latency\nstages:\n  - name: a\n"
      "    presets: [wal-hell]\n",
      problems);
  ASSERT_EQ(problems.size(), 1u) << all(problems);
  EXPECT_NE(problems[0].str().find("s.yaml:4"), std::string::npos) << all(problems);
  EXPECT_NE(problems[0].str().find("unknown measure.metric"), std::string::npos) << all(problems);
  EXPECT_NE(problems[0].str().find("tps, p99, cpu_per_tx, wal_bytes_per_tx"), std::string::npos)
      << all(problems);
  EXPECT_EQ(s.measure.metric, results::Metric::kTps);
}

TEST(ParseScenario, ANameThatIsAPathIsRefusedWithItsLine) {
  for (const char* name : {"/tmp/evil", "../../etc", "a/b", "..", "x..y", ".hidden", "a\\\\b"}) {
    SCOPED_TRACE(name);
    std::vector<ConfigError> problems;
    parse(std::string("name: \"") + name +
              "\"\nworkload: tpcc\nstages:\n  - name: s\n"
              "    settings: {work_mem: 1MB}\n",
          problems);
    ASSERT_FALSE(problems.empty());
    EXPECT_NE(all(problems).find("s.yaml:1"), std::string::npos) << all(problems);
    EXPECT_NE(all(problems).find("scenario name"), std::string::npos) << all(problems);
  }
  std::vector<ConfigError> problems;
  parse("name: ok-name_1.2\nworkload: tpcc\nstages:\n  - name: s\n    settings: {work_mem: 1MB}\n",
        problems);
  EXPECT_TRUE(problems.empty()) << all(problems);
}

TEST(ParseScenario, ControlCharactersInNamesAreRefused) {
  std::vector<ConfigError> problems;
  parse(
      "name: x\nworkload: tpcc\nstages:\n  - name: \"a\\e[31mred\"\n"
      "    settings: {work_mem: 1MB}\n",
      problems);
  EXPECT_NE(all(problems).find("s.yaml:4"), std::string::npos) << all(problems);
  EXPECT_NE(all(problems).find("control characters"), std::string::npos) << all(problems);
}

TEST(ParseScenario, NotYamlAtAll) {
  std::vector<ConfigError> problems;
  parse(std::string("\x00\x01\x02 binary", 10), problems);
  ASSERT_FALSE(problems.empty());
  problems.clear();
  parse("stages: [a, b\n", problems);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].str().find("s.yaml:"), std::string::npos);
}

// Every scenario in the library parses without problems.
TEST(ScenarioLibrary, EveryFileParses) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(PGSLOW_SOURCE_DIR) / "scenarios";
  int count = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().extension() != ".yaml") continue;
    if (e.path().parent_path().filename() == "lessons") continue;  // lesson files (workshop tests)
    ++count;
    std::vector<ConfigError> problems;
    parse_scenario(read_file(e.path()), e.path().string(), problems);
    EXPECT_FALSE(has_errors(problems)) << all(problems);
  }
  EXPECT_GE(count, 1);
}

// `server:` gives the managed cluster's server an envelope (docs/envelope.md).
TEST(ParseScenario, TheServerSectionGivesTheEnvelope) {
  std::vector<ConfigError> problems;
  Scenario s = parse(
      "workload: tpcb-like\n"
      "server:\n"
      "  memory: 512MB\n"
      "  cpus: 1.5\n"
      "  cpuset: \"1\"\n"
      "stages: [{name: a, settings: {work_mem: 4MB}}]\n",
      problems);
  EXPECT_TRUE(problems.empty()) << all(problems);
  EXPECT_EQ(s.target.envelope.memory_bytes, 512ull * 1024 * 1024);
  EXPECT_DOUBLE_EQ(s.target.envelope.cpus, 1.5);
  EXPECT_EQ(s.target.envelope.cpuset, "1");
  EXPECT_EQ(s.target.envelope.describe(), "memory 512MB, cpus 1.5, cpuset 1");
}

TEST(ParseScenario, WithoutAServerSectionThereIsNoEnvelope) {
  std::vector<ConfigError> problems;
  Scenario s = parse(
      "workload: tpcb-like\n"
      "stages: [{name: a, settings: {work_mem: 4MB}}]\n",
      problems);
  EXPECT_TRUE(s.target.envelope.empty());
  EXPECT_EQ(s.target.envelope.describe(), "");
}

// Each bad field is named at its line, with what to write instead.
TEST(ParseScenario, BadServerFieldsAreNamedAtTheirLines) {
  std::vector<ConfigError> problems;
  parse(
      "workload: tpcb-like\n"  // 1
      "server:\n"              // 2
      "  memory: lots\n"       // 3
      "  cpus: -1\n"           // 4
      "  cpuset: \"512\"\n"    // 5
      "  swap: 1GB\n"          // 6
      "stages: [{name: a, settings: {work_mem: 4MB}}]\n",
      problems);
  ASSERT_EQ(problems.size(), 4u) << all(problems);
  std::string text = all(problems);
  EXPECT_NE(text.find("s.yaml:3"), std::string::npos) << text;
  EXPECT_NE(text.find("server.memory: \"lots\" is not an amount of memory"), std::string::npos)
      << text;
  EXPECT_NE(text.find("s.yaml:4"), std::string::npos) << text;
  EXPECT_NE(text.find("server.cpus"), std::string::npos) << text;
  EXPECT_NE(text.find("s.yaml:5"), std::string::npos) << text;
  EXPECT_NE(text.find("CPU 512 does not exist"), std::string::npos) << text;
  EXPECT_NE(text.find("s.yaml:6"), std::string::npos) << text;
  EXPECT_NE(text.find("swap"), std::string::npos) << text;
}

TEST(ParseScenario, AServerTooSmallToRunIsRefused) {
  std::vector<ConfigError> problems;
  parse(
      "workload: tpcb-like\nserver: {memory: 8MB}\n"
      "stages: [{name: a, settings: {work_mem: 4MB}}]\n",
      problems);
  ASSERT_EQ(problems.size(), 1u) << all(problems);
  EXPECT_EQ(problems[0].where.line, 2);
  EXPECT_NE(problems[0].message.find("too little"), std::string::npos) << all(problems);
}

TEST(EnvelopeValues, MemoryCpusAndCpusets) {
  std::string why;
  EXPECT_EQ(server::parse_envelope_memory("1.5GB", &why), 1536ull * 1024 * 1024);
  EXPECT_EQ(server::parse_envelope_memory("64 mb", &why), 64ull * 1024 * 1024);
  EXPECT_FALSE(server::parse_envelope_memory("64", &why));
  EXPECT_NE(why.find("a number and a unit"), std::string::npos) << why;
  EXPECT_EQ(server::parse_envelope_cpus("2", &why), 2.0);
  EXPECT_FALSE(server::parse_envelope_cpus("0", &why));
  EXPECT_FALSE(server::parse_envelope_cpus("1.5x", &why));
  EXPECT_EQ(server::parse_cpuset("0", &why), std::vector<int>{0});
  EXPECT_FALSE(server::parse_cpuset("1-0", &why));
  EXPECT_FALSE(server::parse_cpuset("a", &why));
  server::Envelope e;
  e.memory_bytes = 200ull * 1024 * 1024;
  EXPECT_EQ(e.describe(), "memory 200MB");
}

// `pooler:` (docs/pooler.md): PgBouncer's settings checked against the table, each problem at
// its line; an external pooler needs its conninfo and takes no settings.
TEST(ParseScenario, PoolerBlockIsValidatedWithItsLines) {
  std::vector<ConfigError> problems;
  Scenario s = parse(
      "name: p\n"
      "workload: {name: select-only, scale: 1}\n"
      "pooler:\n"
      "  kind: pgbouncer\n"
      "  pool_mode: transaction\n"
      "  default_pool_size: 5\n",
      problems);
  EXPECT_EQ(all(problems).find("pooler"), std::string::npos) << all(problems);
  ASSERT_TRUE(s.pooler);
  EXPECT_TRUE(s.pooler->managed());
  EXPECT_EQ(s.pooler->settings.at("pool_mode"), "transaction");
  EXPECT_EQ(s.pooler->settings.at("default_pool_size"), "5");
  EXPECT_EQ(s.pooler->where.line, 4);

  problems.clear();
  parse(
      "name: p\n"
      "workload: {name: select-only, scale: 1}\n"
      "pooler:\n"
      "  pool_mode: transactional\n"
      "  default_pool_size: 0\n"
      "  listen_port: 7\n",
      problems);
  const std::string text = all(problems);
  EXPECT_NE(text.find("s.yaml:4:"), std::string::npos) << text;
  EXPECT_NE(text.find("transactional"), std::string::npos) << text;
  EXPECT_NE(text.find("s.yaml:5:"), std::string::npos) << text;
  EXPECT_NE(text.find("s.yaml:6:"), std::string::npos) << text;

  problems.clear();
  parse(
      "name: p\n"
      "workload: {name: select-only, scale: 1}\n"
      "pooler: {kind: external, pool_mode: session}\n",
      problems);
  const std::string external = all(problems);
  EXPECT_NE(external.find("needs its conninfo"), std::string::npos) << external;
  EXPECT_NE(external.find("pgslow does not change an external pooler"), std::string::npos)
      << external;
}

}  // namespace
}  // namespace pgslow::scenario
