// pgslow's own PgBouncer in front of the shared managed cluster (docs/pooler.md): start,
// connect through it, change its settings by RELOAD, read its pools, stop; and the one a killed
// run left is stopped by the next start.

#include "server/pgbouncer.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <new>

#include "common/errors.h"
#include "common/process.h"
#include "pg/connection.h"
#include "pg/error.h"
#include "server/pooler.h"
#include "tests/support/cluster_fixture.h"

namespace pgslow {
namespace {

namespace fs = std::filesystem;

server::PgBouncerOptions options(std::map<std::string, std::string> settings = {}) {
  server::PgBouncerOptions o;
  o.workdir = testing::cluster_workdir();
  o.server_socket_dir = testing::cluster().socket_dir();
  o.server_port = testing::cluster().port();
  o.settings = std::move(settings);
  return o;
}

std::map<std::string, std::string> show_config(const server::PgBouncer& pooler) {
  auto admin = pg::Connection::open(pooler.admin_conninfo(), pg::SessionKind::kWorkload);
  pg::Result config = admin.exec("SHOW CONFIG");
  std::map<std::string, std::string> seen;
  for (int r = 0; r < config.rows(); ++r) {
    seen[std::string(config.get(r, config.column("key")))] =
        std::string(config.get(r, config.column("value")));
  }
  return seen;
}

TEST(PgBouncer, StartsConnectsThroughItAndStops) {
  server::PgBouncer pooler(options({{"pool_mode", "transaction"}}));
  pooler.start();
  ASSERT_TRUE(pooler.pid().has_value());
  const int pid = *pooler.pid();
  EXPECT_TRUE(server::is_live_pgbouncer(pid));
  EXPECT_FALSE(pooler.version().empty());
  // The folder and its socket are private to the server's user and root.
  struct stat st {};
  ASSERT_EQ(::stat(pooler.folder().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);

  auto conn = pg::Connection::open(pooler.conninfo("postgres"), pg::SessionKind::kWorkload);
  EXPECT_EQ(conn.query_value("SELECT 1"), "1");
  auto stats = pooler.stats("postgres");
  EXPECT_GE(stats.total_query_count, 1);
  EXPECT_GE(stats.servers_active + stats.servers_idle + stats.servers_used, 1);
  conn.close();

  pooler.stop();
  EXPECT_FALSE(server::is_live_pgbouncer(pid));
  EXPECT_FALSE(pooler.is_running());
  EXPECT_THROW(pg::Connection::open(pooler.conninfo("postgres"), pg::SessionKind::kWorkload),
               pg::Error);
}

// Issue #52: PgBouncer runs as the server's user and gets only the allow-list of pgslow's
// environment (common/process.h), never root's secrets; its console and its databases are
// reached with no password, whatever PGPASSWORD says.
TEST(PgBouncer, RootsEnvironmentDoesNotReachIt) {
  if (!running_as_root()) GTEST_SKIP() << "needs root: PgBouncer then runs as another user";
  struct ScopedEnv {
    const char* name;
    ScopedEnv(const char* n, const char* value) : name(n) { ::setenv(n, value, 1); }
    ~ScopedEnv() { ::unsetenv(name); }
  };
  const ScopedEnv aws("AWS_SECRET_ACCESS_KEY", "aws-s3cret-52");
  const ScopedEnv password("PGPASSWORD", "pg-s3cret-52");
  server::PgBouncer pooler(options());
  pooler.start();
  ASSERT_TRUE(pooler.pid().has_value());
  std::ifstream in("/proc/" + std::to_string(*pooler.pid()) + "/environ", std::ios::binary);
  std::string environ_text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : environ_text) c = c == '\0' ? '\n' : c;
  ASSERT_NE(environ_text, "");
  EXPECT_EQ(environ_text.find("s3cret-52"), std::string::npos) << environ_text;
  EXPECT_NE(environ_text.find(std::string("PATH=") + kSystemPath + "\n"), std::string::npos)
      << environ_text;
  EXPECT_NE(pooler.admin_conninfo().find("password=''"), std::string::npos);
  EXPECT_EQ(show_config(pooler).count("pool_mode"), 1u);
  auto conn = pg::Connection::open(pooler.conninfo("postgres"), pg::SessionKind::kWorkload);
  EXPECT_EQ(conn.query_value("SELECT 1"), "1");
}

TEST(PgBouncer, ReloadAppliesASettingAndReadsItBack) {
  server::PgBouncer pooler(options({{"default_pool_size", "20"}}));
  pooler.start();
  pooler.set({{"default_pool_size", "3"}, {"pool_mode", "statement"}});
  const auto seen = show_config(pooler);
  EXPECT_EQ(seen.at("default_pool_size"), "3");
  EXPECT_EQ(seen.at("pool_mode"), "statement");
}

// A stage's setting is put back by the next RELOAD without it: PgBouncer keeps a value whose
// line is gone, so pgslow writes the setting's default (docs/pooler.md).
TEST(PgBouncer, ASettingDroppedByTheNextReloadIsBackToItsDefault) {
  server::PgBouncer pooler(options({{"pool_mode", "transaction"}}));
  pooler.start();
  const auto before = show_config(pooler);
  pooler.set({{"pool_mode", "transaction"}, {"server_lifetime", "0"}, {"default_pool_size", "2"}});
  const auto stage = show_config(pooler);
  EXPECT_EQ(stage.at("server_lifetime"), "0");
  EXPECT_EQ(stage.at("default_pool_size"), "2");
  pooler.set({{"pool_mode", "transaction"}});
  const auto after = show_config(pooler);
  EXPECT_EQ(after.at("server_lifetime"), before.at("server_lifetime"));
  EXPECT_EQ(after.at("default_pool_size"), before.at("default_pool_size"));
  EXPECT_EQ(after.at("server_lifetime"), server::pooler_setting_value({}, "server_lifetime"));
  EXPECT_EQ(after.at("default_pool_size"), server::pooler_setting_value({}, "default_pool_size"));
  EXPECT_EQ(after.at("pool_mode"), "transaction");
}

TEST(PgBouncer, RefusesASettingThisVersionLacks) {
  const std::string version = server::pgbouncer_version();
  ASSERT_FALSE(version.empty());
  server::PgBouncer pooler(options({{"max_prepared_statements", "100"}}));
  if (server::version_at_least(version, "1.21")) {
    EXPECT_NO_THROW(pooler.start());
  } else {
    try {
      pooler.start();
      FAIL() << "max_prepared_statements accepted on PgBouncer " << version;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("needs PgBouncer 1.21"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(pooler.pid().has_value());
  }
}

TEST(PgBouncer, TheNextStartStopsOneAKilledRunLeft) {
  int left_pid = 0;
  {
    // A run killed with -9 never runs the destructor: this one is never destroyed either.
    alignas(server::PgBouncer) static unsigned char storage[sizeof(server::PgBouncer)];
    auto* first = new (storage) server::PgBouncer(options());
    first->start();
    left_pid = *first->pid();
  }
  ASSERT_TRUE(server::is_live_pgbouncer(left_pid));
  server::PgBouncer next(options());
  next.start();
  EXPECT_FALSE(server::is_live_pgbouncer(left_pid));
  EXPECT_NE(next.pid(), left_pid);
}

}  // namespace
}  // namespace pgslow
