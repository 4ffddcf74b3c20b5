#include <gtest/gtest.h>

#include "workload/tpcc/tpcc.h"

namespace pgslow::workload::tpcc {
namespace {

TEST(Workload, ValidateDerivesTenClientsPerWarehouse) {
  const auto w = make_tpcc_lite();
  WorkloadParams p;
  p.scale = 3;
  p.clients = 0;
  EXPECT_TRUE(w->validate(p).empty());
  EXPECT_EQ(p.clients, 30);
  p.clients = 4;
  EXPECT_TRUE(w->validate(p).empty());
  EXPECT_EQ(p.clients, 4);
}

TEST(Workload, ValidateNamesTheParameter) {
  const auto w = make_tpcc_lite();
  WorkloadParams p;
  p.scale = 0;
  p.options["colour"] = "red";
  const auto problems = w->validate(p);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].message.find("workload.scale (warehouses) must be at least 1"),
            std::string::npos);
  EXPECT_NE(problems[1].message.find("colour"), std::string::npos);
  p.scale = 1;
  p.options = {{"load_connections", "x"}};
  ASSERT_EQ(w->validate(p).size(), 1u);
  EXPECT_NE(w->validate(p)[0].message.find("load_connections"), std::string::npos);
}

TEST(Workload, TypesFingerprintAndClients) {
  const auto w = make_tpcc_lite();
  EXPECT_EQ(w->name(), "tpcc-lite");
  EXPECT_EQ(w->transaction_types({}),
            (std::vector<std::string>{"new_order", "payment", "order_status", "delivery",
                                      "stock_level"}));
  WorkloadParams p;
  p.scale = 2;
  EXPECT_EQ(w->data_fingerprint(p), "tpcc-lite:v1:warehouses=2");
  auto client = w->make_client(p, 3);
  std::array<int, 5> seen{};
  for (int i = 0; i < 1000; ++i) {
    const auto type = client->choose();
    ASSERT_LT(type, 5u);
    ++seen[type];
    EXPECT_EQ(client->think_time_us(), 0);  // off by default
  }
  for (int n : seen) EXPECT_GT(n, 0);
  p.think_time = true;
  auto thinking = w->make_client(p, 0);
  thinking->choose();
  EXPECT_GE(thinking->think_time_us(), 2'000'000);
}

}  // namespace
}  // namespace pgslow::workload::tpcc
