// Snapshots on the real managed server: each test does one thing that must move one counter.

#include <gtest/gtest.h>

#include <filesystem>

#include "evidence/evidence.h"
#include "evidence/wait_sampler.h"
#include "knobs/evidence_keys.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/evidence_wait.h"

namespace pgslow::evidence {
namespace {

// A database with a table of ~440 pages, cloned fresh per test so its blocks start outside
// shared_buffers.
class EvidenceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto admin = pg::Connection::open(pgslow::testing::conninfo());
    admin.exec("DROP DATABASE IF EXISTS evidence_template");
    admin.exec("CREATE DATABASE evidence_template");
    auto tpl = pg::Connection::open(pgslow::testing::conninfo("evidence_template"));
    tpl.exec(
        "CREATE TABLE items AS SELECT g AS id, md5(g::text) AS payload "
        "FROM generate_series(1, 50000) g");
    tpl.exec("CREATE INDEX ON items (id)");
  }

  void SetUp() override {
    conninfo_ = pgslow::testing::clone_database("evidence_template");
    conn_ = pg::Connection::open(conninfo_);
    database_ = *conn_.query_value("SELECT current_database()");
    options_.database = database_;
    options_.data_dir = pgslow::testing::cluster().data_dir();
    options_.log_file = pgslow::testing::cluster().log_file();
  }

  // Runs `sql` in a connection of its own that then exits: a backend flushes its statistics
  // when it exits, so the next snapshot sees them.
  void in_own_backend(const std::vector<std::string>& sql) {
    auto worker = pg::Connection::open(conninfo_);
    const std::string pid = *worker.query_value("SELECT pg_backend_pid()");
    for (const auto& s : sql) worker.exec(s);
    worker.close();
    // The postmaster reaps the backend asynchronously; its statistics are flushed when it
    // leaves pg_stat_activity, but its /proc/PID/io reaches the postmaster's only once it is
    // reaped, i.e. when /proc/PID is gone (a zombie still has one). Wait for both.
    for (int i = 0; i < 500; ++i) {
      const bool listed =
          *conn_.query_value("SELECT count(*) FROM pg_stat_activity WHERE datname = " +
                             conn_.quote_literal(database_) + " AND pid <> pg_backend_pid()") !=
          "0";
      if (!listed && !std::filesystem::exists("/proc/" + pid)) return;
      conn_.exec("SELECT pg_sleep(0.01)");
    }
  }

  std::map<std::string, double> around(const std::vector<std::string>& sql) {
    const Snapshot before = take_snapshot(conn_, options_);
    in_own_backend(sql);
    const Snapshot after = take_snapshot(conn_, options_);
    return delta(before, after);
  }

  std::string conninfo_;
  std::string database_;
  pg::Connection conn_;
  SnapshotOptions options_;
};

TEST_F(EvidenceTest, EveryKeyIsAnEvidenceKeyAndTheLocalOnesArePresent) {
  const auto d = around({"SELECT count(*) FROM items"});
  for (const auto& [key, value] : d) {
    EXPECT_TRUE(knobs::is_evidence_key(key)) << key;
    EXPECT_GE(value, 0) << key;
  }
  for (const char* key : {"blocks_read", "blocks_hit", "buffer_hit_ratio", "checkpoints_requested",
                          "buffers_backend", "wal_bytes", "wal_fpi", "temp_files", "seq_scans",
                          "dead_tuples", "read_syscalls", "write_bytes", "log_bytes"}) {
    EXPECT_EQ(d.count(key), 1u) << key;
  }
}

TEST_F(EvidenceTest, ReadingAColdTableMovesBlocksReadAndReadSyscalls) {
  const auto d = around({"SELECT count(*) FROM items"});
  // The clone's pages are not in shared_buffers yet: the scan reads them (~440 pages).
  EXPECT_GE(d.at("blocks_read"), 300);
  EXPECT_LT(d.at("buffer_hit_ratio"), 0.9);
  EXPECT_GE(d.at("seq_scans"), 1);
  EXPECT_GE(d.at("seq_tup_read"), 50000);
  // Each block read is a read syscall of that backend, which exited before the second
  // snapshot: its counters reached the sum through the postmaster, which reaped it. From 17 a
  // sequential scan reads up to io_combine_limit blocks (128kB: 16 blocks) per call (by the
  // backend, or by an I/O worker on 18's default io_method).
  double blocks_per_read = 1;
  if (conn_.major_version() >= 17) {
    blocks_per_read = std::stod(
        *conn_.query_value("SELECT setting FROM pg_settings WHERE name = 'io_combine_limit'"));
  }
  EXPECT_GE(d.at("read_syscalls"), d.at("blocks_read") / blocks_per_read * 0.9);
}

TEST_F(EvidenceTest, CheckpointMovesCheckpointsRequested) {
  const Snapshot before = take_snapshot(conn_, options_);
  in_own_backend({"CHECKPOINT"});
  const auto d =
      pgslow::testing::delta_once_moved(conn_, options_, before, "checkpoints_requested");
  EXPECT_GE(d.at("checkpoints_requested"), 1);
}

TEST_F(EvidenceTest, SortWithTinyWorkMemMovesTempFiles) {
  const auto d =
      around({"SET work_mem = '64kB'", "SELECT payload FROM items ORDER BY payload OFFSET 49999"});
  EXPECT_GE(d.at("temp_files"), 1);
  EXPECT_GT(d.at("temp_bytes"), 1e6);
}

TEST_F(EvidenceTest, WritesMoveWalAndDeadTuples) {
  const auto d = around({"UPDATE items SET payload = 'x' WHERE id <= 1000"});
  EXPECT_GE(d.at("wal_records"), 1000);
  EXPECT_GT(d.at("wal_bytes"), 0);
  EXPECT_GE(d.at("dead_tuples"), 1000);
}

TEST_F(EvidenceTest, RollbacksAndLogGrowth) {
  const auto d = around({"BEGIN", "SELECT 1", "ROLLBACK",
                         "DO $$BEGIN RAISE LOG 'pgslow evidence test: log growth'; END$$"});
  EXPECT_GE(d.at("rollbacks"), 1);
  EXPECT_GT(d.at("log_bytes"), 30);
}

TEST_F(EvidenceTest, WithoutALocalServerTheProcKeysAreAbsentNotZero) {
  options_.data_dir.reset();
  options_.log_file.reset();
  const auto d = around({"SELECT 1"});
  EXPECT_EQ(d.count("read_syscalls"), 0u);
  EXPECT_EQ(d.count("log_bytes"), 0u);
  EXPECT_EQ(d.count("blocks_hit"), 1u);
}

TEST_F(EvidenceTest, StatsResetBetweenSnapshotsDropsTheDatabaseKeys) {
  const Snapshot before = take_snapshot(conn_, options_);
  in_own_backend({"SELECT count(*) FROM items", "SELECT pg_stat_reset()"});
  const auto d = delta(before, take_snapshot(conn_, options_));
  EXPECT_EQ(d.count("blocks_read"), 0u);
  EXPECT_EQ(d.count("seq_scans"), 0u);
  EXPECT_EQ(d.count("checkpoints_requested"), 1u);  // pg_stat_bgwriter was not reset
}

// In the run's database, and in every database (bench --no-reset samples with none named).
TEST_F(EvidenceTest, LockWaitSamplerCountsABlockedBackend) {
  for (const std::string& database : {database_, std::string()}) {
    SCOPED_TRACE("database '" + database + "'");
    LockWaitSampler sampler(conninfo_, database, std::chrono::milliseconds(20));
    options_.lock_waits = &sampler;
    sampler.start();
    const Snapshot before = take_snapshot(conn_, options_);
    auto holder = pg::Connection::open(conninfo_);
    holder.exec("BEGIN");
    holder.exec("LOCK TABLE items IN ACCESS EXCLUSIVE MODE");
    auto waiter = pg::Connection::open(conninfo_);
    waiter.send_query("SELECT count(*) FROM items");
    // Wait (bounded) until the sampler has seen the waiter blocked several times.
    for (int i = 0; i < 1000 && sampler.backend_seconds() < 0.1; ++i) {
      conn_.exec("SELECT pg_sleep(0.01)");
    }
    holder.exec("COMMIT");
    while (waiter.next_result()) {
    }
    sampler.stop();
    const auto d = delta(before, take_snapshot(conn_, options_));
    EXPECT_GE(d.at("lock_waits"), 0.1);
    EXPECT_GT(sampler.samples(), 0u);
    options_.lock_waits = nullptr;
  }
}

// The lock-wait sampler's own connection carries the evidence name, so the wait profile does
// not count its readings as the workload's CPU.
TEST_F(EvidenceTest, TheLockWaitSamplersConnectionIsNamedAsEvidence) {
  const std::string count_named =
      std::string("SELECT count(*) FROM pg_stat_activity WHERE application_name = '") +
      kEvidenceApplicationName + "'";
  const std::string before = conn_.query_value(count_named).value_or("");
  LockWaitSampler sampler(conninfo_, database_);
  sampler.open();
  EXPECT_EQ(std::stoi(conn_.query_value(count_named).value_or("0")), std::stoi(before) + 1);
  sampler.stop();
}

// commit_delay's sleep, which PostgreSQL 15 to 18 do not report (the sleeper shows active with
// no wait event), is read from /proc on a local server: a reading given the postmaster names it,
// one without the postmaster, or while commit_delay is off, leaves it as CPU.
TEST_F(EvidenceTest, CommitDelaysUnreportedSleepIsReadFromProc) {
  auto sleeper = pg::Connection::open(conninfo_);
  if (sleeper.major_version() >= 19) GTEST_SKIP() << "this server reports the sleep itself";
  sleeper.exec("CREATE TABLE commits (n int)");
  sleeper.exec("SET commit_delay = 100000");  // 100 ms before each commit's flush
  sleeper.exec("SET commit_siblings = 0");
  // The readers see commit_delay as the stage's server-wide setting would show it: on for
  // one, off (the default) for the other.
  auto delay_on = pg::Connection::open(conninfo_ + " options='-c commit_delay=100000'");
  auto delay_off = pg::Connection::open(conninfo_);
  name_evidence_connection(delay_on);
  name_evidence_connection(delay_off);
  const std::optional<int> postmaster = postmaster_pid_of(*options_.data_dir);
  ASSERT_TRUE(postmaster.has_value());
  sleeper.send_query(
      "DO $$ BEGIN FOR i IN 1..40 LOOP INSERT INTO commits VALUES (i); COMMIT; END LOOP; END $$");
  auto count = [](const std::map<std::string, std::uint64_t>& seen, const std::string& wait) {
    const auto it = seen.find(wait);
    return it == seen.end() ? std::uint64_t{0} : it->second;
  };
  std::uint64_t from_proc = 0;
  std::uint64_t without_postmaster = 0, with_delay_off = 0, cpu_without_postmaster = 0;
  // Bounded: the loop sleeps about 4 s in all, nearly all of it in the delay.
  for (int i = 0; i < 3000 && from_proc == 0; ++i)
    from_proc += count(waits_now(delay_on, database_, postmaster), results::kCommitDelayFromProc);
  for (int i = 0; i < 20; ++i) {
    const auto seen = waits_now(delay_on, database_);
    without_postmaster += count(seen, results::kCommitDelayFromProc);
    cpu_without_postmaster += count(seen, "CPU");
    with_delay_off +=
        count(waits_now(delay_off, database_, postmaster), results::kCommitDelayFromProc);
  }
  while (sleeper.next_result()) {
  }
  EXPECT_EQ(from_proc, 1u);  // one sleeper, seen by a reading given the postmaster
  EXPECT_EQ(without_postmaster, 0u);
  EXPECT_EQ(with_delay_off, 0u);
  EXPECT_GT(cpu_without_postmaster, 0u);  // the same sleep, as pg_stat_activity alone shows it
}

}  // namespace
}  // namespace pgslow::evidence
