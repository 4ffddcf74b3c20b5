// One PostgreSQL major version end to end (run once per version by the version matrix,
// PGSLOW_PG_VERSION): the server is that version, each figure is read from the view that
// version keeps it in, every scenario of the library passes `pgslow check`, and a short
// scenario with a restart-only knob runs and puts the configuration back.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "apply/bytes.h"
#include "common/paths.h"
#include "common/process.h"
#include "evidence/evidence.h"
#include "pg/connection.h"
#include "report/json.h"
#include "server/pg_versions.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/evidence_wait.h"

namespace pgslow {
namespace {

namespace fs = std::filesystem;
using testing::cluster;
using testing::conninfo;

int server_major() {
  static const int major = [] {
    auto conn = pg::Connection::open(conninfo());
    int m = conn.major_version();
    // The CI log's line per version (ctest -V, or the test's output on failure).
    std::cout << "PostgreSQL " << *conn.query_value("SHOW server_version") << " started from "
              << cluster().pg_bin().string() << "\n";
    return m;
  }();
  return major;
}

ProcessResult pgslow(std::vector<std::string> args) {
  std::vector<std::string> argv = {testing::pgslow_binary().string(), "--workdir",
                                   cluster().cluster_dir().parent_path().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions o;
  o.timeout = std::chrono::minutes(5);
  return run_process(argv, o);
}

TEST(Version, TheServerIsTheMajorVersionAsked) {
  const char* asked = std::getenv("PGSLOW_PG_VERSION");
  if (!asked || !*asked) GTEST_SKIP() << "run by the version matrix (PGSLOW_PG_VERSION)";
  EXPECT_EQ(server_major(), server::parse_major_version(asked));
  // One cluster per major: the default cluster (Debian's 15) is its version's.
  const int major = server::parse_major_version(asked);
  EXPECT_EQ(cluster().cluster_dir().filename(),
            fs::path(major == 15 ? std::string("cluster") : "cluster-" + std::string(asked)));
}

// pg_stat_bgwriter up to 16; pg_stat_checkpointer and pg_stat_io (backend writes) from 17;
// WAL writes and syncs in pg_stat_io from 18. Each figure must come from its version's view
// and move when the thing it counts happens.
TEST(Version, EvidenceIsReadFromTheViewThisVersionKeepsItIn) {
  const int major = server_major();
  auto conn = pg::Connection::open(conninfo());
  conn.exec("DROP TABLE IF EXISTS version_probe");
  conn.exec("CREATE TABLE version_probe (id int)");
  evidence::SnapshotOptions options;
  options.data_dir = cluster().data_dir();
  const evidence::Snapshot before = evidence::take_snapshot(conn, options);
  {
    // Its own backend: a backend flushes its I/O statistics when it exits.
    auto writer = pg::Connection::open(conninfo());
    writer.exec("INSERT INTO version_probe SELECT g FROM generate_series(1, 1000) g");
    writer.exec("CHECKPOINT");
  }
  // pg_stat_io and pg_stat_wal are flushed by the backend at exit; wait until it is gone.
  for (int i = 0; i < 500 && *conn.query_value("SELECT count(*) FROM pg_stat_activity WHERE "
                                               "backend_type = 'client backend' AND pid <> "
                                               "pg_backend_pid()") != "0";
       ++i) {
    conn.exec("SELECT pg_sleep(0.01)");
  }
  const evidence::Snapshot after = evidence::take_snapshot(conn, options);
  const auto d = pgslow::testing::delta_once_moved(conn, options, before, "checkpoints_requested");

  EXPECT_EQ(after.counters.at("checkpoints_requested").source,
            major >= 17 ? "pg_stat_checkpointer" : "pg_stat_bgwriter");
  EXPECT_EQ(after.counters.at("buffers_backend").source,
            major >= 17 ? "pg_stat_io" : "pg_stat_bgwriter");
  EXPECT_EQ(after.counters.at("wal_write").source, major >= 18 ? "pg_stat_io wal" : "pg_stat_wal");
  EXPECT_EQ(after.counters.at("wal_bytes").source, "pg_stat_wal");

  ASSERT_EQ(d.count("checkpoints_requested"), 1u);
  EXPECT_GE(d.at("checkpoints_requested"), 1);
  ASSERT_EQ(d.count("wal_write"), 1u);
  EXPECT_GE(d.at("wal_write"), 1);  // the commit's WAL flush
  EXPECT_GT(d.at("wal_bytes"), 0);
  // Reads by 18's I/O workers (io_method = worker, the default): /proc only, absent before 18.
  EXPECT_EQ(d.count("io_worker_reads"), major >= 18 ? 1u : 0u);
  // pg_stat_io exists from 16 on; 15 has none.
  EXPECT_EQ(*conn.query_value("SELECT count(*) FROM pg_catalog.pg_class WHERE relname = "
                              "'pg_stat_io'"),
            major >= 16 ? "1" : "0");
}

// The replay's I/O stage on 18: io_method = worker hands reads to the I/O workers, sync keeps
// them in the backend; io_worker_reads tells the two apart. Measured, not timed.
TEST(Version, IoMethodShowsInWhoReads) {
  if (server_major() < 18) GTEST_SKIP() << "io_method is new in PostgreSQL 18";
  auto conn = pg::Connection::open(conninfo());
  conn.exec("DROP TABLE IF EXISTS io_probe");
  conn.exec(
      "CREATE TABLE io_probe AS SELECT g, md5(g::text) AS m FROM generate_series(1, 200000) g");
  evidence::SnapshotOptions options;
  options.data_dir = cluster().data_dir();
  auto cold_scan = [&] {
    // A restart empties shared_buffers, so the scan reads every block (from the page cache).
    cluster().restart(std::chrono::seconds(60));
    auto c = pg::Connection::open(conninfo());
    const evidence::Snapshot before = evidence::take_snapshot(c, options);
    c.exec("SELECT count(*) FROM io_probe");
    const evidence::Snapshot after = evidence::take_snapshot(c, options);
    return evidence::delta(before, after);
  };
  const auto worker = cold_scan();
  ASSERT_EQ(*pg::Connection::open(conninfo()).query_value("SHOW io_method"), "worker");
  conn = pg::Connection::open(conninfo());
  conn.exec("ALTER SYSTEM SET io_method = 'sync'");
  const auto sync = cold_scan();
  conn = pg::Connection::open(conninfo());
  EXPECT_EQ(*conn.query_value("SHOW io_method"), "sync");
  conn.exec("ALTER SYSTEM RESET io_method");
  cluster().restart(std::chrono::seconds(60));
  ASSERT_EQ(worker.count("io_worker_reads"), 1u);
  ASSERT_EQ(sync.count("io_worker_reads"), 1u);
  EXPECT_GT(worker.at("io_worker_reads"), 10);
  EXPECT_EQ(sync.at("io_worker_reads"), 0);
  EXPECT_GT(sync.at("read_syscalls"), 10);
}

TEST(Version, EveryScenarioOfTheLibraryChecks) {
  server_major();
  int checked = 0;
  for (auto it = fs::recursive_directory_iterator(fs::path(PGSLOW_SOURCE_DIR) / "scenarios");
       it != fs::recursive_directory_iterator(); ++it) {
    const fs::directory_entry& entry = *it;
    // Workshop lesson files are not scenarios (the workshop unit tests read them).
    if (entry.is_directory() && entry.path().filename() == "lessons") {
      it.disable_recursion_pending();
      continue;
    }
    if (entry.path().extension() != ".yaml") continue;
    ProcessResult r = pgslow({"check", entry.path().string(), "--conninfo", conninfo()});
    EXPECT_TRUE(r.ok()) << entry.path() << "\n" << r.output;
    EXPECT_NE(r.output.find("scenario ok"), std::string::npos) << r.output;
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

// A restart-only knob (shared_buffers) and a reload knob on a tiny data set: the cluster of this
// version restarts, the stage is measured with evidence, and the configuration comes back.
TEST(Version, AShortScenarioRunsAndRestores) {
  server_major();
  const fs::path dir = cluster().cluster_dir().parent_path();
  const fs::path file = fs::path(PGSLOW_SOURCE_DIR) / "tests/integration/versions/short.yaml";
  auto auto_conf = [] {
    return apply::sha256_hex(read_file(*cluster().data_dir() / "postgresql.auto.conf"));
  };
  const std::string before = auto_conf();
  ProcessResult r = pgslow({"run", file.string(), "--out", (dir / "short-results").string()});
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(auto_conf(), before);
  auto conn = pg::Connection::open(conninfo());
  EXPECT_EQ(*conn.query_value("SHOW shared_buffers"), "128MB");

  results::Run run =
      report::read_json(read_file(dir / "short-results" / "report.json"), "report.json");
  EXPECT_EQ(run.server_major, server_major());
  ASSERT_EQ(run.stages.size(), 2u);
  for (const auto& st : run.stages) {
    ASSERT_FALSE(st.repeats.empty()) << st.name;
    EXPECT_GT(st.repeats[0].committed, 0u) << st.name;
    EXPECT_EQ(st.evidence.count("blocks_hit"), 1u) << st.name;
  }
}

}  // namespace
}  // namespace pgslow
