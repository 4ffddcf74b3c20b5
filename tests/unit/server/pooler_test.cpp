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

// A stage's path and its own PgBouncer settings over the run's pooler (docs/pooler.md).
TEST(StagePooler, TheStagesSettingsGoOverTheRunsPgBouncerOnly) {
  PoolerSpec run;
  run.settings["pool_mode"] = "transaction";
  auto met = stage_pooler(run, "", 0, {{"server_lifetime", "0"}});
  ASSERT_TRUE(met);
  EXPECT_EQ(met->settings.at("pool_mode"), "transaction");
  EXPECT_EQ(met->settings.at("server_lifetime"), "0");
  // A sweep's `pooler: pgbouncer` point sizes the pool; the stage's own setting wins over it.
  auto point = stage_pooler(std::nullopt, "pgbouncer", 8, {});
  ASSERT_TRUE(point);
  EXPECT_EQ(point->settings.at("pool_mode"), "transaction");
  EXPECT_EQ(point->settings.at("default_pool_size"), "8");
  EXPECT_EQ(stage_pooler(run, "pgbouncer", 8, {{"default_pool_size", "2"}})
                ->settings.at("default_pool_size"),
            "2");
  EXPECT_FALSE(stage_pooler(run, "driver", 8, {}));
  // Settings with no PgBouncer of pgslow's on the path: the clients would never meet them.
  EXPECT_THROW(stage_pooler(std::nullopt, "", 0, {{"pool_mode", "session"}}), InputError);
  EXPECT_THROW(stage_pooler(run, "driver", 0, {{"pool_mode", "session"}}), InputError);
  PoolerSpec external;
  external.kind = "external";
  external.conninfo = "host=/run/pgbouncer";
  EXPECT_THROW(stage_pooler(external, "", 0, {{"pool_mode", "session"}}), InputError);
}

// A change names the value before, PgBouncer's default when nothing set it (max_client_conn:
// pgslow's 1000), and only the settings that differ.
TEST(StagePooler, ChangesAreAgainstTheDefaultsWhereNothingSetThem) {
  const std::vector<std::string> names{"default_pool_size", "pool_mode", "max_client_conn"};
  auto changes =
      pooler_setting_changes({{"pool_mode", "transaction"}},
                             {{"pool_mode", "transaction"}, {"default_pool_size", "2"}}, names);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].name, "default_pool_size");
  EXPECT_EQ(changes[0].before, "20");
  EXPECT_EQ(changes[0].after, "2");
  EXPECT_EQ(pooler_setting_value({}, "max_client_conn"), "1000");
  EXPECT_EQ(pooler_setting_value({}, "pool_mode"), "session");
  EXPECT_EQ(pooler_setting_value({}, "server_lifetime"), "3600");
  // Every default is a value the table accepts.
  for (const auto& spec : pooler_settings())
    EXPECT_FALSE(check_pooler_setting(spec.name, spec.default_value, ""))
        << spec.name << " = " << spec.default_value;
}

}  // namespace
}  // namespace pgslow::server
