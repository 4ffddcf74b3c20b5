// The managed cluster and the other targets against a real server: start, restart, reload,
// failure with the server's own error text, crash recovery.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "common/clock.h"
#include "common/errors.h"
#include "common/paths.h"
#include "common/process.h"
#include "pg/connection.h"
#include "server/target.h"
#include "tests/support/cluster_fixture.h"

namespace pgslow {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::cluster;

int postmaster_pid() {
  auto s = cluster().status();
  EXPECT_TRUE(s.pid.has_value());
  return s.pid.value_or(0);
}

std::string show(const std::string& setting) {
  auto conn = pg::Connection::open(testing::conninfo());
  return conn.query_value("SHOW " + setting).value_or("");
}

// Waits (polling) for a condition another process brings about; fails after 30 s.
template <typename F>
void eventually(F&& condition, const char* what) {
  const auto deadline = now_us() + 30'000'000;
  while (!condition()) {
    ASSERT_LT(now_us(), deadline) << "timed out waiting until " << what;
    std::this_thread::sleep_for(20ms);
  }
}

TEST(ManagedCluster, AcceptsQueriesOnItsPrivateSocket) {
  auto conn = pg::Connection::open(testing::conninfo());
  EXPECT_EQ(conn.query_value("SELECT 1"), "1");
  EXPECT_GE(conn.major_version(), 15);
  EXPECT_EQ(show("listen_addresses"), "127.0.0.1");
  EXPECT_NE(cluster().port(), 5432);
  EXPECT_EQ(fs::status(cluster().socket_dir()).permissions() & fs::perms::others_all,
            fs::perms::none);
  EXPECT_TRUE(cluster().allows_changes());
}

TEST(ManagedCluster, SecondStartIsANoOp) {
  int pid = postmaster_pid();
  cluster().start();
  EXPECT_EQ(postmaster_pid(), pid);
}

TEST(ManagedCluster, StatusDescribesTheRunningServer) {
  auto s = cluster().status();
  EXPECT_TRUE(s.initialized);
  EXPECT_TRUE(s.running);
  EXPECT_FALSE(s.version.empty());
  EXPECT_EQ(s.port, cluster().port());
  EXPECT_GT(s.size_bytes, 1u << 20);
  EXPECT_TRUE(s.uptime.has_value());
  EXPECT_EQ(s.data_dir, *cluster().data_dir());
}

TEST(ManagedCluster, ReloadAppliesASighupSetting) {
  auto conn = pg::Connection::open(testing::conninfo());
  conn.exec("ALTER SYSTEM SET log_min_duration_statement = '1234ms'");
  cluster().reload();
  // pg_reload_conf() only signals; a new session reads the new value once the postmaster
  // has processed SIGHUP.
  eventually([] { return show("log_min_duration_statement") == "1234ms"; }, "the reload");
  conn.exec("ALTER SYSTEM RESET log_min_duration_statement");
  cluster().reload();
}

TEST(ManagedCluster, RestartAppliesAPostmasterSetting) {
  int pid = postmaster_pid();
  {
    auto conn = pg::Connection::open(testing::conninfo());
    conn.exec("ALTER SYSTEM SET max_connections = 42");
  }
  cluster().restart(60s);
  EXPECT_NE(postmaster_pid(), pid);
  EXPECT_EQ(show("max_connections"), "42");
  {
    auto conn = pg::Connection::open(testing::conninfo());
    conn.exec("ALTER SYSTEM RESET max_connections");
  }
  cluster().restart(60s);
  EXPECT_EQ(show("max_connections"), "100");
}

TEST(ManagedCluster, RestartWithABadSettingThrowsTheServersOwnError) {
  fs::path conf = *cluster().data_dir() / "postgresql.conf";
  std::string original = read_file(conf);
  {
    std::ofstream out(conf, std::ios::app);
    out << "shared_buffers = 'banana'\n";
  }
  try {
    cluster().restart(30s);
    ADD_FAILURE() << "the restart should have failed";
  } catch (const RuntimeError& e) {
    std::string message = e.what();
    // The server's FATAL line, from its log.
    EXPECT_NE(message.find("invalid value for parameter \"shared_buffers\""), std::string::npos)
        << message;
  }
  EXPECT_FALSE(cluster().is_running());
  // Once the setting is gone the cluster starts again.
  std::ofstream(conf, std::ios::trunc) << original;
  cluster().start();
  EXPECT_EQ(show("shared_buffers"), "128MB");
}

TEST(ManagedCluster, RestartAlsoStartsAStoppedServer) {
  cluster().stop();
  EXPECT_FALSE(cluster().is_running());
  cluster().stop();  // a no-op
  cluster().restart(60s);
  EXPECT_TRUE(cluster().is_running());
  EXPECT_EQ(show("server_version_num").substr(0, 2),
            std::to_string(pg::Connection::open(testing::conninfo()).major_version()));
}

TEST(ManagedCluster, RecoversFromAKilledPostmaster) {
  int pid = postmaster_pid();
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  eventually([] { return !cluster().is_running(); }, "the postmaster is gone");
  EXPECT_TRUE(fs::exists(*cluster().data_dir() / "postmaster.pid"));  // stale
  cluster().start();
  auto conn = pg::Connection::open(testing::conninfo());
  EXPECT_EQ(conn.query_value("SELECT 1"), "1");
}

TEST(ManagedCluster, AStalePidFileNamingAnotherLiveProcessIsRemoved) {
  cluster().stop();
  // A pid reused by an unrelated process (ours): PostgreSQL alone would refuse to start.
  std::ofstream(*cluster().data_dir() / "postmaster.pid")
      << ::getpid() << "\n"
      << cluster().data_dir()->string() << "\n0\n"
      << cluster().port() << "\n";
  EXPECT_FALSE(cluster().is_running());
  cluster().start();
  EXPECT_TRUE(cluster().is_running());
}

// Listens on `port` of 127.0.0.1 while alive.
struct PortBlocker {
  int fd = -1;
  explicit PortBlocker(int port) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ::listen(fd, 1);
  }
  ~PortBlocker() { ::close(fd); }
};

TEST(ManagedCluster, APortTakenWhileStoppedMovesTheClusterToAnotherPort) {
  cluster().stop();
  int old_port = cluster().port();
  PortBlocker blocker(old_port);
  {
    // A port the user fixed is not moved: a clear error instead.
    server::ManagedOptions fixed;
    fixed.workdir = cluster().cluster_dir().parent_path();
    fixed.port = old_port;
    server::ManagedCluster same(fixed);
    try {
      same.start();
      ADD_FAILURE() << "a taken fixed port should fail";
    } catch (const RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find("taken"), std::string::npos) << e.what();
    }
  }
  cluster().start();
  EXPECT_NE(cluster().port(), old_port);
  EXPECT_EQ(show("port"), std::to_string(cluster().port()));
}

// ---- issue #52: what root hands the server, and what it takes from it ----

// /proc/PID/environ, one variable a line (postgres adds PGDATA, PGLOCALEDIR, PGSYSCONFDIR).
std::string environment_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : text) c = c == '\0' ? '\n' : c;
  return "\n" + text;  // each variable between two newlines
}

// Sets an environment variable of this process for a scope.
struct ScopedEnv {
  const char* name;
  ScopedEnv(const char* n, const char* value) : name(n) { ::setenv(n, value, 1); }
  ~ScopedEnv() { ::unsetenv(name); }
};

TEST(ManagedCluster, RootsEnvironmentReachesNeitherTheServerNorItsPrograms) {
  if (!running_as_root()) GTEST_SKIP() << "needs root: the server then runs as another user";
  const ScopedEnv aws("AWS_SECRET_ACCESS_KEY", "aws-s3cret-52");
  const ScopedEnv password("PGPASSWORD", "pg-s3cret-52");  // and our logins still work
  const ScopedEnv path("PATH", "/root/s3cret-52-bin:/usr/sbin:/usr/bin:/sbin:/bin");
  cluster().stop();
  cluster().start();
  const std::string postmaster = environment_of(postmaster_pid());
  ASSERT_NE(postmaster, "\n");
  EXPECT_EQ(postmaster.find("s3cret-52"), std::string::npos) << postmaster;
  EXPECT_NE(postmaster.find(std::string("\nPATH=") + kSystemPath + "\n"), std::string::npos)
      << postmaster;
  EXPECT_NE(postmaster.find("\nUSER=postgres\n"), std::string::npos) << postmaster;
  // What a SQL superuser's program sees: COPY ... FROM PROGRAM runs it as the server's user.
  auto conn = pg::Connection::open(testing::conninfo());
  conn.exec("CREATE TEMP TABLE seen(line text)");
  conn.exec("COPY seen FROM PROGRAM 'env'");
  const std::string program =
      conn.query_value("SELECT string_agg(line, E'\\n') FROM seen").value_or("");
  EXPECT_NE(program.find("PATH="), std::string::npos) << program;
  EXPECT_EQ(program.find("s3cret-52"), std::string::npos) << program;
}

// Resident memory at its peak since the last reset, in MB.
long peak_rss_mb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmHWM:")) return std::atol(line.c_str() + 6) / 1024;
  }
  return -1;
}

TEST(ManagedCluster, AnOwnSessionReadsWholeResultsUnderItsCapAndStopsPastIt) {
  auto conn = pg::Connection::open(testing::conninfo());
  // Under the cap, as PQexec: the last statement's result, every row, NULLs kept.
  pg::Result r = conn.exec("SELECT 1; SELECT g, NULL::text AS n FROM generate_series(1, 5000) g");
  ASSERT_EQ(r.rows(), 5000);
  EXPECT_EQ(r.get(4999, r.column("g")), "5000");
  EXPECT_TRUE(r.is_null(4999, r.column("n")));
  EXPECT_EQ(conn.exec("SELECT 1 WHERE false").rows(), 0);
  EXPECT_EQ(conn.exec_params("SELECT $1::int + 1", {std::string("41")}).get(0, 0), "42");
  conn.prepare("pgslow_test_cap", "SELECT generate_series(1, $1::int)");
  EXPECT_EQ(conn.exec_prepared("pgslow_test_cap", {std::string("300")}).rows(), 300);
  EXPECT_THROW(conn.exec("SELECT 1/0"), pg::Error);
  EXPECT_EQ(conn.query_value("SELECT 'still usable'"), "still usable");

  // 1,500 rows of 1 MB: the finding's fake server sent this and apply reached 1.56 GB.
  std::ofstream("/proc/self/clear_refs") << "5";  // resets VmHWM
  try {
    conn.exec("SELECT repeat('x', 1000000) FROM generate_series(1, 1500)");
    ADD_FAILURE() << "read it all";
  } catch (const pg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than 100000 rows or 32 MB"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(cluster().socket_dir().string()), std::string::npos)
        << e.what();
  }
  const long peak = peak_rss_mb();
  std::printf("peak RSS while the server sent 1,500 MB: %ld MB\n", peak);
  EXPECT_LT(peak, 160) << "MB";
  EXPECT_FALSE(conn.is_open());
  EXPECT_EQ(pg::Connection::open(testing::conninfo()).query_value("SELECT 1"), "1");
}

TEST(Targets, ManagedTargetOpensTheRunningCluster) {
  server::TargetSpec spec;
  spec.kind = server::TargetKind::kManaged;
  spec.workdir = cluster().cluster_dir().parent_path();
  auto target = server::open_target(spec);
  EXPECT_EQ(target->conninfo(), cluster().conninfo());
  EXPECT_TRUE(target->allows_changes());
  EXPECT_EQ(target->data_dir(), cluster().data_dir());
}

TEST(Targets, PgctlTargetRestartsTheDataDirectoryAsItsOwner) {
  server::TargetSpec spec;
  spec.kind = server::TargetKind::kPgctl;
  spec.data_dir = *cluster().data_dir();
  spec.log_file = *cluster().log_file();
  auto target = server::open_target(spec);
  EXPECT_FALSE(target->allows_changes());  // not without allow_changes
  EXPECT_EQ(pg::with_database(target->conninfo(), "postgres"),
            pg::with_database(cluster().conninfo(), "postgres"));
  int pid = postmaster_pid();
  target->restart(60s);
  EXPECT_NE(postmaster_pid(), pid);
  target->reload();
  EXPECT_EQ(pg::Connection::open(target->conninfo()).query_value("SELECT 1"), "1");
}

TEST(Targets, PgctlTargetNeedsADataDirectory) {
  server::TargetSpec spec;
  spec.kind = server::TargetKind::kPgctl;
  EXPECT_THROW(server::open_target(spec), InputError);
  spec.data_dir = "/nonexistent/data";
  EXPECT_THROW(server::open_target(spec), InputError);
}

TEST(Targets, CommandTargetRunsTheUsersRestartAndWaitsForANewServer) {
  std::string pg_ctl = shell_quote({(cluster().pg_bin() / "pg_ctl").string(), "restart", "-D",
                                    cluster().data_dir()->string(), "-l",
                                    cluster().log_file()->string(), "-m", "fast", "-w"});
  std::string as_owner = running_as_root() ? "runuser -u postgres -- " : "";
  server::TargetSpec spec;
  spec.kind = server::TargetKind::kCommand;
  spec.conninfo = cluster().conninfo();
  spec.restart_command = as_owner + pg_ctl;
  spec.reload_command = "echo reloaded";
  spec.allow_changes = true;
  auto target = server::open_target(spec);
  EXPECT_TRUE(target->allows_changes());
  int pid = postmaster_pid();
  target->restart(60s);
  EXPECT_NE(postmaster_pid(), pid);
  target->reload();

  spec.restart_command = "echo broken >&2; exit 3";
  auto broken = server::open_target(spec);
  try {
    broken->restart(10s);
    ADD_FAILURE() << "a failing restart command should throw";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("broken"), std::string::npos) << e.what();
  }
  spec.conninfo.clear();
  EXPECT_THROW(server::open_target(spec), InputError);
}

}  // namespace
}  // namespace pgslow
