// The pooler in the path with the built pgslow (docs/pooler.md): the clients go through
// pgslow's own PgBouncer and the report names its wait; prepared statements through transaction
// mode are caught by the probe before the run; PgBouncer killed mid-run is named and the server
// restored; pgslow killed mid-run leaves a PgBouncer that the next command stops.

#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "common/clock.h"
#include "common/paths.h"
#include "common/process.h"
#include "server/pgbouncer.h"
#include "server/pooler.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/pgslow_process.h"

namespace pgslow {
namespace {

namespace fs = std::filesystem;
using testing::cluster;

fs::path workdir() {
  return cluster().cluster_dir().parent_path();
}

using testing::pgslow;
using testing::unwrapped;

// The pid pooler.state names (0 when there is none).
int pooler_state_pid() {
  std::ifstream in(workdir() / "pooler.state");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("pid=")) return std::stoi(line.substr(4));
  }
  return 0;
}

void wait_until_gone(int pid) {
  const auto deadline = now_us() + 30'000'000;
  while (server::is_live_pgbouncer(pid) && now_us() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// A test that fails half-way leaves no PgBouncer behind: the one its pgslow left is stopped.
class Pooler : public ::testing::Test {
 protected:
  void TearDown() override { server::stop_left_over_pgbouncer(workdir()); }
};

// A select-only scenario through pgslow's PgBouncer in transaction mode, pool of 2, whose one
// stage sets random_page_cost (a reload).
fs::path pooled_scenario(const std::string& name, int duration_s) {
  const fs::path file = workdir() / (name + ".yaml");
  write_file_durably(file, "name: " + name +
                               "\nworkload:\n  name: select-only\n  scale: 1\n  clients: 8\n"
                               "pooler:\n  kind: pgbouncer\n  pool_mode: transaction\n"
                               "  default_pool_size: 2\n"
                               "measure:\n  warmup: 0s\n  duration: " +
                               std::to_string(duration_s) +
                               "s\n  design: isolated\nstages:\n  - name: " + name +
                               "\n    settings:\n      random_page_cost: 1.5\n");
  return file;
}

// A pool of 2 for 8 clients: the clients' wait for a server connection is what the report
// names, and PgBouncer is gone afterwards.
TEST_F(Pooler, BenchThroughPgBouncerNamesTheClientsWait) {
  cluster();
  ProcessResult r = pgslow({"bench", "-w", "select-only", "-s", "1", "-c", "8", "-T", "2", "-M",
                            "extended", "--pooler", "pgbouncer:transaction,default_pool_size=2"});
  ASSERT_TRUE(r.ok()) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m,
                                std::regex(R"(pooler +pgbouncer \(transaction, default_pool_size )"
                                           R"(2\): clients waited ([0-9.]+) ms per transaction)")))
      << r.output;
  EXPECT_GT(std::stod(m[1].str()), 0.0) << r.output;
  // The server connections it held at the end: never more than its pool (one may be between
  // uses at that instant).
  std::smatch servers;
  ASSERT_TRUE(std::regex_search(r.output, servers, std::regex(R"(([0-9]+) server connections)")))
      << r.output;
  EXPECT_GE(std::stoi(servers[1].str()), 1) << r.output;
  EXPECT_LE(std::stoi(servers[1].str()), 2) << r.output;
  std::smatch pid;
  ASSERT_TRUE(std::regex_search(r.output, pid,
                                std::regex(R"(PgBouncer [0-9.]+ is running \(pid )"
                                           R"(([0-9]+))")))
      << r.output;
  EXPECT_FALSE(server::is_live_pgbouncer(std::stoi(pid[1].str())));
  EXPECT_FALSE(fs::exists(workdir() / "pooler.state"));
}

// A run whose clients go through PgBouncer names it in its header and in report.json, so a
// reader of the results folder knows the figures include the pooler.
TEST_F(Pooler, ARunThroughPgBouncerNamesItInItsReport) {
  cluster();
  const fs::path file = pooled_scenario("pooler-named", 1);
  const fs::path out = workdir() / "pooler-named-out";
  ProcessResult r = pgslow({"run", file.string(), "-M", "extended", "--out", out.string()});
  ASSERT_TRUE(r.ok()) << r.output;
  const std::string named = "pgbouncer (transaction, default_pool_size 2)";
  EXPECT_NE(read_file(out / "report.json").find("\"pooler\": \"" + named + "\""),
            std::string::npos);
  EXPECT_NE(read_file(out / "report.md").find(named), std::string::npos);
}

// A PgBouncer setting as a stage's knob (docs/pooler.md, "Pooler settings as knobs"): the stage
// runs through the same PgBouncer as the baseline with a pool of 1, and names it as its knob
// line. A pool's size is one PgBouncer takes live on RELOAD, so the stage is a switchback run
// that switches the pool between blocks: each block has its own pooler wait, and the pool of 1
// blocks' clients wait where the default pool's (20 for 8 clients) never do.
TEST_F(Pooler, APoolerSettingIsAStagesKnobSwitchedBackAndForth) {
  cluster();
  const fs::path file = workdir() / "pooler-knob.yaml";
  write_file_durably(file,
                     "name: pooler-knob\n"
                     "workload:\n  name: select-only\n  scale: 1\n  clients: 8\n"
                     "pooler:\n  kind: pgbouncer\n  pool_mode: transaction\n"
                     "measure:\n  warmup: 0s\n  duration: 2s\n  protocol: extended\n"
                     "  pairs: 3\n"
                     "mode: isolated\n"
                     "stages:\n  - name: one server connection\n"
                     "    load: {pgbouncer.default_pool_size: 1}\n");
  const fs::path out = workdir() / "pooler-knob-out";
  ProcessResult r = pgslow({"run", file.string(), "--detail", "--out", out.string()});
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_TRUE(
      std::regex_search(r.output, std::regex(R"(knob +pgbouncer\.default_pool_size 20 → 1)")))
      << r.output;
  EXPECT_NE(r.output.find("measured  switchback"), std::string::npos) << r.output;
  const auto json = nlohmann::json::parse(read_file(out / "report.json"));
  const auto& stage = json.at("stages").at(1);
  EXPECT_EQ(stage.at("changes").at(0).at("apply_by"), "pooler reload") << stage.dump(1);
  const auto& blocks = stage.at("switchback").at("blocks");
  ASSERT_EQ(blocks.size(), 7u) << stage.dump(1);
  double most_reference_wait = 0, least_stage_wait = 1e300;
  int reference_blocks = 0, stage_blocks = 0;
  for (const auto& b : blocks) {
    // The first block follows the data reset: its evidence belongs to no configuration.
    if (!b.contains("per_tx") || !b.at("per_tx").contains("pooler_wait_ms")) continue;
    const double wait = b.at("per_tx").at("pooler_wait_ms").get<double>();
    if (b.at("stage").get<bool>()) {
      ++stage_blocks;
      least_stage_wait = std::min(least_stage_wait, wait);
    } else {
      ++reference_blocks;
      most_reference_wait = std::max(most_reference_wait, wait);
    }
  }
  // Every block but the first has its own wait: 3 of the pool of 1, 3 of the default pool.
  EXPECT_EQ(stage_blocks, 3) << blocks.dump(1);
  EXPECT_EQ(reference_blocks, 3) << blocks.dump(1);
  EXPECT_GT(least_stage_wait, most_reference_wait) << blocks.dump(1);
  EXPECT_FALSE(fs::exists(workdir() / "pooler.state"));
}

// Debian's PgBouncer (1.18) has no protocol-level prepared statements in transaction mode: the
// probe finds it before the workload runs, says it is the pooler, and the run falls back to
// unnamed statements (no statement fails).
TEST_F(Pooler, PreparedStatementsThroughTransactionModeAreFoundBeforeTheRun) {
  cluster();
  const std::string version = server::pgbouncer_version();
  if (server::version_at_least(version, "1.21")) GTEST_SKIP() << "PgBouncer " << version;
  ProcessResult r = pgslow({"bench", "-w", "select-only", "-s", "1", "-c", "4", "-T", "2", "-M",
                            "prepared", "--pooler", "pgbouncer:transaction,default_pool_size=1"});
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_NE(r.output.find("A probe before the run saw it"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the driver's fallback"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("failed ("), std::string::npos) << r.output;
  EXPECT_TRUE(r.output.find("already exists") != std::string::npos ||
              r.output.find("does not exist") != std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("not a slow server"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tps "), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(workdir() / "pooler.state"));
}

// PgBouncer killed with -9 one second into a workload on the changed server: that stage fails
// naming PgBouncer, the next starts a new one, and the server's random_page_cost is back.
TEST_F(Pooler, PgBouncerKilledMidRunIsNamedAndTheServerRestored) {
  cluster();
  const std::string before = testing::show_setting("random_page_cost");
  const fs::path file = pooled_scenario("pooler-killed", 4);
  testing::PgslowProcess p(
      {"--workdir", workdir().string(), "run", file.string(), "-M", "extended", "--out",
       (workdir() / "pooler-killed-out").string()},
      {"PGSLOW_CRASH_AT=workload", "PGSLOW_CRASH_SIGNAL=STOP", "PGSLOW_CRASH_AFTER_MS=1000"});
  ASSERT_TRUE(p.wait_until_stopped()) << p.output();
  const int pid = pooler_state_pid();
  ASSERT_TRUE(server::is_live_pgbouncer(pid)) << p.output();
  ::kill(pid, SIGKILL);
  wait_until_gone(pid);
  p.signal_and_continue(SIGCONT);
  // Every later workload on the changed server stops there too: let each go on.
  for (int more = 0; more < 10 && p.wait_until_stopped(std::chrono::seconds(60)); ++more) {
    p.signal_and_continue(SIGCONT);
  }
  p.wait();
  const std::string out = p.output();
  // The stage's error is a footnote of the table, which wraps.
  const std::string said = unwrapped(out);
  EXPECT_NE(said.find("PgBouncer (pid " + std::to_string(pid) + ")"), std::string::npos) << out;
  EXPECT_NE(said.find("died during the run"), std::string::npos) << out;
  EXPECT_NE(out.find("starting it again"), std::string::npos) << out;
  EXPECT_EQ(testing::show_setting("random_page_cost"), before);
  EXPECT_FALSE(fs::exists(workdir() / "journal.json")) << out;
  EXPECT_FALSE(fs::exists(workdir() / "pooler.state")) << out;
}

// pgslow killed with -9 mid-run: its PgBouncer (with the run's pool_mode and pool size) and the
// journal of the server's changes are both left; the next command (recover) puts the server
// back and stops that PgBouncer.
TEST_F(Pooler, KilledRunLeavesAPgBouncerTheNextCommandStops) {
  cluster();
  const std::string before = testing::show_setting("random_page_cost");
  const fs::path file = pooled_scenario("pooler-kill9", 4);
  ProcessResult killed =
      pgslow({"run", file.string(), "-M", "extended", "--out", (workdir() / "kill9-out").string()},
             {"PGSLOW_CRASH_AT=workload", "PGSLOW_CRASH_AFTER_MS=1000"});
  ASSERT_EQ(killed.signal, 9) << killed.output;
  ASSERT_TRUE(fs::exists(workdir() / "journal.json")) << "the kill left no journal to repair";
  const int pid = pooler_state_pid();
  ASSERT_TRUE(server::is_live_pgbouncer(pid)) << killed.output;

  ProcessResult recovered = pgslow({"recover"});
  ASSERT_TRUE(recovered.ok()) << recovered.output;
  wait_until_gone(pid);
  EXPECT_FALSE(server::is_live_pgbouncer(pid)) << recovered.output;
  EXPECT_FALSE(fs::exists(workdir() / "pooler.state"));
  EXPECT_EQ(testing::show_setting("random_page_cost"), before);
}

}  // namespace
}  // namespace pgslow
