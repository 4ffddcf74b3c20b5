// The pooler settings table and --pooler (docs/pooler.md), without a PgBouncer.

#include "server/pooler.h"

#include <gtest/gtest.h>

#include "common/errors.h"

namespace pgslow::server {
namespace {

TEST(PoolerSetting, AcceptsTheTableAndRefusesWithTheReason) {
  EXPECT_FALSE(check_pooler_setting("pool_mode", "transaction", "1.18.0"));
  EXPECT_FALSE(check_pooler_setting("default_pool_size", "10", "1.18.0"));
  auto mode = check_pooler_setting("pool_mode", "txn", "");
  ASSERT_TRUE(mode);
  EXPECT_NE(mode->find("session, transaction, statement"), std::string::npos) << *mode;
  auto size = check_pooler_setting("default_pool_size", "0", "");
  ASSERT_TRUE(size);
  EXPECT_NE(size->find("outside 1..10000"), std::string::npos) << *size;
  EXPECT_TRUE(check_pooler_setting("default_pool_size", "ten", ""));
  auto unknown = check_pooler_setting("listen_addr", "*", "");
  ASSERT_TRUE(unknown);
  EXPECT_NE(unknown->find("unknown pooler setting"), std::string::npos) << *unknown;
}

TEST(PoolerSetting, MaxPreparedStatementsOnlyWhereTheVersionHasIt) {
  auto old = check_pooler_setting("max_prepared_statements", "100", "1.18.0");
  ASSERT_TRUE(old);
  EXPECT_NE(old->find("needs PgBouncer 1.21"), std::string::npos) << *old;
  EXPECT_NE(old->find("1.18.0"), std::string::npos) << *old;
  EXPECT_FALSE(check_pooler_setting("max_prepared_statements", "100", "1.21.0"));
  EXPECT_FALSE(check_pooler_setting("max_prepared_statements", "100", "1.24.1"));
  EXPECT_TRUE(version_at_least("1.18.0", "1.18"));
  EXPECT_FALSE(version_at_least("1.9.0", "1.18"));
}

TEST(PoolerOption, ModeAndSettingsOrAConninfo) {
  PoolerSpec plain = parse_pooler_option("pgbouncer");
  EXPECT_TRUE(plain.managed());
  EXPECT_TRUE(plain.settings.empty());
  PoolerSpec tx = parse_pooler_option("pgbouncer:transaction,default_pool_size=10");
  EXPECT_EQ(tx.settings.at("pool_mode"), "transaction");
  EXPECT_EQ(tx.settings.at("default_pool_size"), "10");
  EXPECT_EQ(tx.describe(), "pgbouncer (transaction, default_pool_size 10)");
  PoolerSpec external = parse_pooler_option("host=/run/pgbouncer port=6432");
  EXPECT_FALSE(external.managed());
  EXPECT_EQ(external.conninfo, "host=/run/pgbouncer port=6432");
  EXPECT_THROW(parse_pooler_option("pgbouncer:fast"), InputError);
  EXPECT_THROW(parse_pooler_option("pgbouncer,default_pool_size"), InputError);
  EXPECT_THROW(parse_pooler_option("odyssey"), InputError);
}

}  // namespace
}  // namespace pgslow::server
