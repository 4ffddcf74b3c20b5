#include "server_state.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "apply/bytes.h"
#include "common/paths.h"
#include "pg/connection.h"
#include "tests/support/cluster_fixture.h"

namespace pgslow::testing {

ServerState server_state() {
  ServerState s;
  s.auto_conf_sha256 = apply::sha256_hex(read_file(cluster_auto_conf()));
  pg::Connection conn = pg::Connection::open(conninfo());
  pg::Result r = conn.exec("SELECT name, setting FROM pg_settings");
  for (int i = 0; i < r.rows(); ++i)
    s.settings[std::string(r.get(i, 0))] = std::string(r.get(i, 1));
  return s;
}

void expect_restored(const ServerState& before) {
  const ServerState after = server_state();
  EXPECT_EQ(before.auto_conf_sha256, after.auto_conf_sha256);
  EXPECT_EQ(before.settings, after.settings);
  EXPECT_FALSE(std::filesystem::exists(cluster_workdir() / "journal.json"));
}

}  // namespace pgslow::testing
