// Each workload runs briefly at a tiny scale on the shared test cluster; the driver's modes
// (fixed rate, pool, connect per transaction, refused connections) on top.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "driver/driver.h"
#include "evidence/evidence.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/pgslow_process.h"
#include "workload/dataset.h"
#include "workload/registry.h"

namespace pgslow {
namespace {

using driver::DriverOptions;
using driver::Protocol;
using driver::run_workload;

std::uint64_t sum_by_type(const results::Measurement& m) {
  std::uint64_t n = 0;
  for (const auto& t : m.by_type) n += t.committed + t.rolled_back + t.failed;
  return n;
}

// A fresh clone of the workload's template (loaded on first use) on `server`.
std::string fresh(const std::string& server, const std::string& name, int scale = 1) {
  SilentProgress quiet;
  workload::WorkloadParams params;
  params.scale = scale;
  workload::Dataset ds(server, workload::find_workload(name), params);
  ds.load(quiet);
  return ds.reset().conninfo;
}

DriverOptions brief(int clients) {
  DriverOptions o;
  o.clients = clients;
  o.workers = 2;
  o.warmup_s = 0;
  o.duration_s = 1.5;
  return o;
}

class EachWorkload : public ::testing::TestWithParam<std::string> {};

TEST_P(EachWorkload, RunsAndItsCountsAndChecksAddUp) {
  const std::string name = GetParam();
  const workload::Workload& w = workload::find_workload(name);
  workload::WorkloadParams params;
  std::string db = fresh(testing::conninfo(), name);
  SilentProgress quiet;
  DriverOptions o = brief(4);
  results::Measurement m = run_workload(w, params, db, o, quiet);
  EXPECT_GT(m.committed, 0u);
  EXPECT_EQ(m.failed, 0u) << (m.failures_by_class.empty() ? ""
                                                          : m.failures_by_class.begin()->first);
  EXPECT_EQ(m.committed + m.rolled_back + m.failed, sum_by_type(m));
  EXPECT_EQ(m.clients_connected, 4);
  EXPECT_GT(m.tps, 0);
  EXPECT_GT(m.latency.p50_us, 0);
  EXPECT_LE(m.latency.p50_us, m.latency.p99_us);
  EXPECT_LE(m.latency.p99_us, m.latency.max_us);
  EXPECT_NEAR(m.duration_s, o.duration_s, 0.5);

  pg::Connection conn = pg::Connection::open(db);
  for (const auto& c : w.check(conn, params)) EXPECT_TRUE(c.passed) << c.clause << ": " << c.detail;
  // Every counted transaction is in the data; at most two per client more: one that straddled
  // the start of the window and one in flight at its end (committed, not counted).
  std::string table = name == "tpcb-like" ? "pgbench_history"
                      : name == "insert"  ? "pgslow_insert"
                                          : "";
  if (!table.empty()) {
    auto rows =
        static_cast<std::uint64_t>(std::stoll(*conn.query_value("SELECT count(*) FROM " + table)));
    EXPECT_GE(rows, m.committed);
    EXPECT_LE(rows, m.committed + 2 * static_cast<std::uint64_t>(o.clients));
  }
}

INSTANTIATE_TEST_SUITE_P(Workloads, EachWorkload,
                         ::testing::Values("tpcb-like", "select-only", "insert", "update-spread",
                                           "update-hot-row"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(Dataset, LoadIsSkippedWhenTheFingerprintMatches) {
  SilentProgress quiet;
  workload::WorkloadParams params;
  params.scale = 2;
  workload::Dataset ds(testing::conninfo(), workload::find_workload("update-spread"), params);
  ds.load(quiet);
  EXPECT_TRUE(ds.template_ready());
  EXPECT_FALSE(ds.load(quiet));       // up to date
  EXPECT_TRUE(ds.load(quiet, true));  // forced
  auto first = ds.reset();
  EXPECT_GE(first.seconds, 0);
  pg::Connection c = pg::Connection::open(first.conninfo);
  c.exec("DELETE FROM pgslow_spread WHERE id <= 10");
  c.close();
  auto second = ds.reset();  // drops the old clone: the deleted rows are back
  pg::Connection c2 = pg::Connection::open(second.conninfo);
  EXPECT_EQ(*c2.query_value("SELECT count(*) FROM pgslow_spread"), "2000");
  EXPECT_GT(ds.data_bytes(), 0u);
}

TEST(Dataset, ResetWithoutTemplateSaysToLoad) {
  workload::WorkloadParams params;
  params.scale = 77;
  workload::Dataset ds(testing::conninfo(), workload::find_workload("update-hot-row"), params);
  try {
    ds.reset();
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("pgslow load --workload update-hot-row --scale 77"),
              std::string::npos)
        << e.what();
  }
}

TEST(Driver, FixedRateLatencyIncludesScheduleLag) {
  std::string db = fresh(testing::conninfo(), "select-only");
  SilentProgress quiet;
  DriverOptions o = brief(4);
  o.rate = 400;
  results::Measurement m = run_workload(workload::find_workload("select-only"), {}, db, o, quiet);
  EXPECT_GT(m.committed, 0u);
  // Open loop: about rate x duration transactions, never far more.
  EXPECT_LT(static_cast<double>(m.committed), o.rate * o.duration_s * 2);
  EXPECT_GT(m.schedule_lag.max_us, 0);
  // Latency runs from the scheduled start, so it is never below the lag.
  EXPECT_GE(m.latency.mean_us, m.schedule_lag.mean_us);
  EXPECT_GE(m.latency.max_us, m.schedule_lag.max_us);
}

// The hooks at the window's start (the evidence snapshot) can take over a second on a saturated
// server while the clients go on. The per-second series must not read that as one second of
// twice the TPS and one of none: it feeds the within-run noise of every interval.
TEST(Driver, ASlowStartOfTheWindowLeavesNoEmptySecond) {
  std::string db = fresh(testing::conninfo(), "select-only");
  SilentProgress quiet;
  DriverOptions o = brief(2);
  o.warmup_s = 1;
  o.duration_s = 4;
  // Stands in for a snapshot query queued behind 200 backends on one CPU.
  o.on_measure_start = [] { std::this_thread::sleep_for(std::chrono::milliseconds(1300)); };
  results::Measurement m = run_workload(workload::find_workload("select-only"), {}, db, o, quiet);
  ASSERT_GE(m.tps_per_second.size(), 2u);
  for (double tps : m.tps_per_second) EXPECT_GT(tps, 0) << "a second with no transaction";
}

TEST(Driver, PoolReportsAcquireWait) {
  std::string db = fresh(testing::conninfo(), "update-hot-row");
  SilentProgress quiet;
  DriverOptions o = brief(8);
  o.pool_size = 2;
  results::Measurement m =
      run_workload(workload::find_workload("update-hot-row"), {}, db, o, quiet);
  EXPECT_GT(m.committed, 0u);
  EXPECT_EQ(m.failed, 0u);
  EXPECT_EQ(m.clients_connected, 8);
  // Eight clients on two connections: most wait for one; latency includes the wait.
  EXPECT_GT(m.pool_wait.p50_us, 0);
  EXPECT_GE(m.latency.max_us, m.pool_wait.max_us);
}

// One connection shared by six clients on three worker threads: it moves between the
// workers' epoll sets for every transaction (FIFO across workers), and nothing fails.
TEST(Driver, OneSharedPoolAcrossWorkerThreads) {
  std::string db = fresh(testing::conninfo(), "select-only");
  SilentProgress quiet;
  DriverOptions o = brief(6);
  o.workers = 3;
  o.pool_size = 1;
  results::Measurement m = run_workload(workload::find_workload("select-only"), {}, db, o, quiet);
  EXPECT_GT(m.committed, 100u);
  EXPECT_EQ(m.failed, 0u);
  EXPECT_EQ(m.connections_refused, 0);
  EXPECT_GT(m.pool_wait.p50_us, 0);
  EXPECT_GE(m.latency.max_us, m.pool_wait.max_us);
  EXPECT_EQ(m.reconnects, 0u);  // the one connection was handed on, never reopened
}

// pgbench -M: the same work through the simple, extended and prepared protocols.
TEST(Driver, EveryProtocolRunsTheWorkload) {
  for (Protocol protocol : {Protocol::kSimple, Protocol::kExtended, Protocol::kPrepared}) {
    std::string db = fresh(testing::conninfo(), "tpcb-like");
    SilentProgress quiet;
    DriverOptions o = brief(2);
    o.duration_s = 1;
    o.protocol = protocol;
    results::Measurement m = run_workload(workload::find_workload("tpcb-like"), {}, db, o, quiet);
    EXPECT_GT(m.committed, 0u) << driver::protocol_name(protocol);
    EXPECT_EQ(m.failed, 0u) << driver::protocol_name(protocol);
  }
}

TEST(Driver, ConnectPerTransaction) {
  std::string db = fresh(testing::conninfo(), "select-only");
  SilentProgress quiet;
  DriverOptions o = brief(2);
  o.connect_per_transaction = true;
  results::Measurement m = run_workload(workload::find_workload("select-only"), {}, db, o, quiet);
  EXPECT_GT(m.committed, 0u);
  EXPECT_EQ(m.failed, 0u);
  // Connect time is measured per connection: a connection takes longer than nothing.
  EXPECT_GT(m.connect_time.p50_us, 0);
  EXPECT_GE(m.connect_time.p99_us, m.connect_time.p50_us);
  pg::Connection c = pg::Connection::open(db);
  // Every transaction opened its own session: nothing stays connected afterwards.
  EXPECT_EQ(
      *c.query_value("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                     "AND pid <> pg_backend_pid()"),
      "0");
}

TEST(Driver, StopFlagEndsTheRunAtOnce) {
  std::string db = fresh(testing::conninfo(), "select-only");
  SilentProgress quiet;
  DriverOptions o = brief(2);
  o.duration_s = 600;
  std::atomic<bool> stop{true};
  results::Measurement m =
      run_workload(workload::find_workload("select-only"), {}, db, o, quiet, &stop);
  EXPECT_LT(m.duration_s, 5);
  EXPECT_EQ(m.committed + m.rolled_back + m.failed, sum_by_type(m));
}

TEST(Driver, RefusedConnectionsAreReportedWithTheirCount) {
  testing::TemporaryCluster small(
      {{"max_connections", "4"}, {"superuser_reserved_connections", "0"}});
  std::string db = fresh(small.get().conninfo(), "update-hot-row");
  const workload::Workload& w = workload::find_workload("update-hot-row");
  SilentProgress quiet;
  DriverOptions o = brief(8);
  o.duration_s = 1;
  try {
    run_workload(w, {}, db, o, quiet);
    FAIL() << "8 clients on max_connections=4 ran";
  } catch (const RuntimeError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("of 8 clients could not connect"), std::string::npos) << msg;
    EXPECT_NE(msg.find("max_connections"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--allow-partial"), std::string::npos) << msg;
  }
  o.allow_partial = true;
  results::Measurement m = run_workload(w, {}, db, o, quiet);
  EXPECT_EQ(m.clients_requested, 8);
  EXPECT_GT(m.clients_connected, 0);
  EXPECT_LT(m.clients_connected, 8);
  EXPECT_GT(m.committed, 0u);
}

// Two pgbench scripts, weights 3 and 1, in each protocol: both run in about that ratio, and
// their :variables reach the rows they write (substituted as text with -M simple, bound as
// parameters otherwise).
TEST(ScriptWorkload, WeightedScriptsRunAndSubstituteTheirVariables) {
  const auto dir = std::filesystem::temp_directory_path() / "pgslow_script_it";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "write.sql") << "\\set aid random(1, 100000 * :scale)\n"
                                      "\\set delta random_gaussian(-5000, 5000, 2.5)\n"
                                      "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)\n"
                                      "  VALUES (1, :client_id + 1, :aid, :delta, now());\n";
  std::ofstream(dir / "other.sql") << "\\set aid random_zipfian(1, 1000, 1.5)\n"
                                      "\\sleep 200 us\n"
                                      "BEGIN;\n"
                                      "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n"
                                      "INSERT INTO pgbench_history (tid, aid, delta) VALUES (2, "
                                      ":aid, 0); END;\n";
  const workload::Workload& w = workload::find_workload("script");
  for (Protocol protocol : {Protocol::kSimple, Protocol::kExtended, Protocol::kPrepared}) {
    SCOPED_TRACE(std::string(driver::protocol_name(protocol)));
    workload::WorkloadParams params;
    params.base_dir = dir;
    params.options["scripts"] = "write.sql@3, other.sql@1";
    auto problems = w.validate(params);
    ASSERT_FALSE(has_errors(problems)) << problems[0].str();
    std::string db = fresh(testing::conninfo(), "tpcb-like");  // the same tables and template
    SilentProgress quiet;
    DriverOptions o = brief(4);
    o.protocol = protocol;
    results::Measurement m = run_workload(w, params, db, o, quiet);
    EXPECT_EQ(m.failed, 0u) << (m.failures_by_class.empty() ? ""
                                                            : m.failures_by_class.begin()->first);
    ASSERT_EQ(m.by_type.size(), 2u);
    EXPECT_EQ(m.by_type[0].name, "write");
    EXPECT_EQ(m.by_type[1].name, "other");
    const double a = static_cast<double>(m.by_type[0].committed);
    const double b = static_cast<double>(m.by_type[1].committed);
    ASSERT_GT(b, 20) << "too few transactions to judge the weights";
    EXPECT_GT(a / b, 2.0);
    EXPECT_LT(a / b, 4.5);

    pg::Connection conn = pg::Connection::open(db);
    pg::Result r = conn.exec(
        "SELECT count(*) FILTER (WHERE tid = 1), count(*) FILTER (WHERE tid = 2), "
        "min(aid) FILTER (WHERE tid = 1), max(aid) FILTER (WHERE tid = 1), "
        "count(DISTINCT aid) FILTER (WHERE tid = 1), min(delta), max(delta), "
        "min(bid), max(bid), max(aid) FILTER (WHERE tid = 2) FROM pgbench_history");
    EXPECT_GE(static_cast<double>(r.get_int64(0, 0)), a);
    EXPECT_GE(static_cast<double>(r.get_int64(0, 1)), b);
    EXPECT_GE(r.get_int64(0, 2), 1);
    EXPECT_LE(r.get_int64(0, 3), 100000);
    EXPECT_GT(r.get_int64(0, 4), a / 2);  // random accounts, not one value repeated
    EXPECT_GE(r.get_int64(0, 5), -5000);
    EXPECT_LE(r.get_int64(0, 6), 5000);
    EXPECT_LT(r.get_int64(0, 5), 0);  // the gaussian around 0 reached both signs
    EXPECT_GE(r.get_int64(0, 7), 1);  // :client_id + 1
    EXPECT_LE(r.get_int64(0, 8), 4);
    EXPECT_LE(r.get_int64(0, 9), 1000);
  }
}

// Transactions longer than the window (#21): one that started in the warm-up and finishes in
// the window counts, with its whole latency; one still running when the window closes is
// reported as in flight, with how long it had run, not dropped in silence.
TEST(Driver, TransactionsLongerThanTheWindowAreCountedWhereTheyFinish) {
  const auto dir = std::filesystem::temp_directory_path() / "pgslow_long_tx_it";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "slow.sql") << "SELECT pg_sleep(1.5);\n";
  const workload::Workload& w = workload::find_workload("script");
  workload::WorkloadParams params;
  params.base_dir = dir;
  params.options["scripts"] = "slow.sql";
  ASSERT_FALSE(has_errors(w.validate(params)));
  SilentProgress quiet;
  DriverOptions o = brief(2);
  o.warmup_s = 0.5;  // the window is [0.5 s, 2.5 s]: each client's first transaction
  o.duration_s = 2;  // ends at 1.5 s inside it, its second (1.5 s to 3 s) is cut at 2.5 s
  results::Measurement m = run_workload(w, params, testing::conninfo(), o, quiet);
  EXPECT_EQ(m.committed, 2u) << "one per client, though each started in the warm-up";
  EXPECT_EQ(m.failed, 0u);
  EXPECT_GE(m.latency.max_us, 1.5e6);
  EXPECT_EQ(m.in_flight_at_end, 2u);
  EXPECT_GE(m.in_flight_longest_us, 0.5e6);
  EXPECT_LT(m.in_flight_longest_us, 1.5e6);
}

// The driver hands over its connections' server pids before the clock starts; /proc then
// tells each idle backend's memory (PSS), counted only for children of this postmaster.
// Issue 20's crashes, through the built binary: `pgslow check` of a scenario whose scripts
// nest an expression 10,000 deep (a stack overflow before), sleep longer than 64-bit
// microseconds, or hold a NUL byte names each file:line:column and exits 2.
TEST(ScriptWorkload, CheckRefusesDeepExpressionsHugeSleepsAndNulBytes) {
  const auto dir = std::filesystem::temp_directory_path() / "pgslow_script_limits_it";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "deep.sql") << "SELECT 1;\n\\set x " << std::string(10'000, '(') << "1"
                                  << std::string(10'000, ')') << "\nSELECT 2;\n";
  std::ofstream(dir / "sleep.sql") << "\\sleep 9223372036854775807 s\nSELECT 1;\n";
  std::ofstream(dir / "nul.sql", std::ios::binary) << std::string("SELECT 1;\nSELECT \0;\n", 20);
  std::ofstream(dir / "scripts.yaml") << "name: script-limits\n"
                                         "workload:\n"
                                         "  name: script\n"
                                         "  options:\n"
                                         "    scripts: [deep.sql, sleep.sql, nul.sql]\n"
                                         "stages:\n"
                                         "  - name: a\n"
                                         "    settings: {work_mem: 4MB}\n";
  const testing::Finished r =
      testing::run_pgslow({"--workdir", testing::cluster().cluster_dir().parent_path().string(),
                           "check", (dir / "scripts.yaml").string()});
  EXPECT_EQ(r.signal, 0) << r.output;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  for (const std::string& expected :
       {(dir / "deep.sql").string() + ":2:264: error: the expression nests deeper than 256 levels",
        (dir / "sleep.sql").string() + ":1:8: error: \\sleep 9223372036854775807 s is out of range",
        (dir / "nul.sql").string() + ":2:8: error: the script contains a NUL byte"})
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
}

TEST(Driver, IdleConnectionsMemoryIsReadPerBackend) {
  std::string db = fresh(testing::conninfo(), "select-only");
  SilentProgress quiet;
  DriverOptions o = brief(6);
  o.duration_s = 1;
  const auto postmaster = evidence::postmaster_pid_of(*testing::cluster().data_dir());
  ASSERT_TRUE(postmaster);
  std::optional<evidence::BackendMemory> memory;
  std::vector<int> pids;
  o.on_connected = [&](const std::vector<int>& p) {
    pids = p;
    memory = evidence::backend_memory(p, *postmaster);
  };
  run_workload(workload::find_workload("select-only"), {}, db, o, quiet);
  EXPECT_EQ(pids.size(), 6u);
  ASSERT_TRUE(memory);
  EXPECT_EQ(memory->backends, 6);
  const double per_backend = static_cast<double>(memory->pss_bytes) / memory->backends;
  EXPECT_GT(per_backend, 100e3);  // a backend holds its own catalog caches and stack at least
  EXPECT_LT(per_backend, 100e6);
  // Our own process is no child of the postmaster: not counted.
  EXPECT_FALSE(evidence::backend_memory({static_cast<int>(::getpid())}, *postmaster));
}

}  // namespace
}  // namespace pgslow
