#include "results/load_fields.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace pgslow::results {
namespace {

TEST(LoadFields, EveryRowHasItsOwnName) {
  std::set<std::string> names;
  int rows = 0;
  for_each_load_field([&](const auto& row) {
    names.insert(row.name);
    ++rows;
  });
  EXPECT_EQ(names.size(), static_cast<std::size_t>(rows));
  EXPECT_EQ(kLoadCsvColumns, 3);  // the CSV's columns do not move
}

TEST(LoadFields, ThePoolIsTheDriversUnlessPgBouncerHoldsIt) {
  LoadSettings load;
  load.clients = 16;
  EXPECT_FALSE(pooled(load));
  EXPECT_EQ(server_connections(load), 16);
  EXPECT_EQ(describe_pool(load), "");

  load.pool_size = 4;
  EXPECT_TRUE(driver_pooled(load));
  EXPECT_EQ(server_connections(load), 4);
  EXPECT_EQ(describe_pool(load), "pool of 4");

  load.pooler = "pgbouncer";
  EXPECT_TRUE(pooled(load));
  EXPECT_FALSE(driver_pooled(load));
  EXPECT_EQ(describe_pool(load), "PgBouncer pool of 4");
}

TEST(LoadFields, TheLoadInWordsNamesWhatIsSet) {
  LoadSettings load;
  load.clients = 8;
  EXPECT_EQ(describe_load(load), "8 clients");
  load.pool_size = 4;
  load.connect_per_transaction = true;
  load.rate_percent = 75;
  load.workers = 2;
  EXPECT_EQ(describe_load(load),
            "8 clients, pool of 4, a new connection per transaction, fixed rate 75% of the "
            "baseline's TPS, 2 driver threads");
}

}  // namespace
}  // namespace pgslow::results
