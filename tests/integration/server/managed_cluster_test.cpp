#include <gtest/gtest.h>

#include "pg/connection.h"
#include "tests/support/cluster_fixture.h"

namespace pgslow {
namespace {

TEST(SharedCluster, AcceptsQueries) {
  auto conn = pg::Connection::open(testing::conninfo());
  EXPECT_EQ(conn.query_value("SELECT 1"), "1");
  EXPECT_GE(conn.major_version(), 15);
}

}  // namespace
}  // namespace pgslow
