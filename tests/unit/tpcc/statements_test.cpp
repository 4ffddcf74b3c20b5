#include "workload/tpcc/statements.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "workload/tpcc/tpcc.h"
#include "workload/tpcc/transactions.h"

namespace pgslow::workload::tpcc {
namespace {

TEST(Params, FollowTheOrderOfTheSql) {
  EXPECT_EQ((NoGetCustomer{.w_id = 1, .d_id = 2, .c_id = 3}.params()), (pg::Params{"1", "2", "3"}));
  EXPECT_EQ((NoUpdateStock{.supply_w_id = 4, .i_id = 77, .quantity = 5, .d_id = 9, .remote = true}
                 .params()),
            (pg::Params{"4", "77", "5", "1", "9"}));
  EXPECT_EQ((PayUpdateCustomer{
                .w_id = 1, .d_id = 2, .c_id = 3, .amount_cents = 150'050, .bad_credit_data = "x"}
                 .params()),
            (pg::Params{"1", "2", "3", "1500.50", "x"}));
  EXPECT_EQ((SlCountLowStock{.w_id = 1, .d_id = 2, .next_o_id = 3001, .threshold = 15}.params()),
            (pg::Params{"1", "2", "3001", "15"}));
}

TEST(Params, ArraysAreArrayLiterals) {
  EXPECT_EQ(int_array({1, 2, 3}), "{1,2,3}");
  EXPECT_EQ(int_array({}), "{}");
  EXPECT_EQ(cents_array({100, 5}), "{1.00,0.05}");
  EXPECT_EQ(text_array({"ab", "c\"d"}), "{\"ab\",\"c\\\"d\"}");
}

TEST(Params, ParseCents) {
  EXPECT_EQ(parse_cents("12.34"), 1234);
  EXPECT_EQ(parse_cents("5"), 500);
  EXPECT_EQ(parse_cents("0.5"), 50);
  EXPECT_EQ(parse_cents("-10.00"), -1000);
}

// Every statement's highest $n matches the number of values its struct binds.
TEST(Statements, EachParamStructBindsAsManyValuesAsItsSqlUses) {
  std::map<std::string, std::size_t> bound = {
      {"no_get_customer", NoGetCustomer{}.params().size()},
      {"no_update_district", NoUpdateDistrict{}.params().size()},
      {"no_insert_order", NoInsertOrder{}.params().size()},
      {"no_insert_new_order", NoInsertNewOrder{}.params().size()},
      {"no_get_items", NoGetItems{}.params().size()},
      {"no_update_stock", NoUpdateStock{}.params().size()},
      {"no_insert_order_lines", NoInsertOrderLines{}.params().size()},
      {"pay_update_warehouse", PayUpdateWarehouse{}.params().size()},
      {"pay_update_district", PayUpdateDistrict{}.params().size()},
      {"pay_get_customers_by_name", PayGetCustomersByName{}.params().size()},
      {"pay_update_customer", PayUpdateCustomer{}.params().size()},
      {"pay_insert_history", PayInsertHistory{}.params().size()},
      {"os_get_customers_by_name", OsGetCustomersByName{}.params().size()},
      {"os_get_customer", OsGetCustomer{}.params().size()},
      {"os_get_last_order", OsGetLastOrder{}.params().size()},
      {"os_get_order_lines", OsGetOrderLines{}.params().size()},
      {"del_take_oldest_new_order", DelTakeOldestNewOrder{}.params().size()},
      {"del_has_new_order", DelHasNewOrder{}.params().size()},
      {"del_update_order", DelUpdateOrder{}.params().size()},
      {"del_update_order_lines", DelUpdateOrderLines{}.params().size()},
      {"del_update_customer", DelUpdateCustomer{}.params().size()},
      {"sl_get_next_order_id", SlGetNextOrderId{}.params().size()},
      {"sl_count_low_stock", SlCountLowStock{}.params().size()},
  };
  const auto workload = make_tpcc_lite();
  std::set<std::string> names;
  for (const auto& st : workload->statements({})) {
    EXPECT_TRUE(names.insert(st.name).second) << "duplicate statement " << st.name;
    ASSERT_TRUE(bound.count(st.name)) << st.name << " has no parameter struct in this test";
    std::size_t highest = 0;
    const std::regex placeholder(R"(\$(\d+))");
    for (auto it = std::sregex_iterator(st.sql.begin(), st.sql.end(), placeholder);
         it != std::sregex_iterator(); ++it)
      highest = std::max<std::size_t>(highest, std::stoul((*it)[1]));
    EXPECT_EQ(highest, bound[st.name]) << st.name;
  }
  EXPECT_EQ(names.size(), bound.size());
}

TEST(Draw, NewOrderInputsFollowClause241) {
  Terminal t{.warehouses = 3, .w_id = 2, .d_id = 1, .constants = run_constants(1)};
  Rng rng(5);
  int rollbacks = 0, remote_lines = 0, lines = 0;
  for (int i = 0; i < 5'000; ++i) {
    const NewOrderInput in = draw_new_order(rng, t);
    ASSERT_EQ(in.w_id, 2);
    ASSERT_GE(in.lines.size(), 5u);
    ASSERT_LE(in.lines.size(), 15u);
    std::set<std::int64_t> ids;
    for (std::size_t k = 0; k < in.lines.size(); ++k) {
      const auto& l = in.lines[k];
      ids.insert(l.i_id);
      ASSERT_GE(l.quantity, 1);
      ASSERT_LE(l.quantity, 10);
      if (k > 0) {
        ASSERT_LE(in.lines[k - 1].supply_w_id, l.supply_w_id);  // lock order
      }
      if (l.supply_w_id != 2) ++remote_lines;
      ++lines;
    }
    ASSERT_EQ(ids.size(), in.lines.size());
    const bool has_unused = ids.count(100'001) > 0;
    ASSERT_EQ(has_unused, in.rollback);
    rollbacks += in.rollback;
  }
  EXPECT_NEAR(rollbacks / 5000.0, 0.01, 0.005);
  EXPECT_NEAR(static_cast<double>(remote_lines) / lines, 0.01, 0.005);
}

TEST(Draw, PaymentIsRemoteFifteenPercentAndByNameSixty) {
  Terminal t{.warehouses = 2, .w_id = 1, .d_id = 1, .constants = run_constants(1)};
  Rng rng(8);
  int remote = 0, by_name = 0;
  constexpr int kDraws = 20'000;
  for (int i = 0; i < kDraws; ++i) {
    const PaymentInput in = draw_payment(rng, t);
    ASSERT_GE(in.amount_cents, 100);
    ASSERT_LE(in.amount_cents, 500'000);
    remote += in.c_w_id != in.w_id;
    by_name += in.customer.c_id == 0;
    if (in.customer.c_id == 0) {
      ASSERT_FALSE(in.customer.c_last.empty());
    }
  }
  EXPECT_NEAR(static_cast<double>(remote) / kDraws, 0.15, 0.01);
  EXPECT_NEAR(static_cast<double>(by_name) / kDraws, 0.60, 0.015);
}

TEST(Draw, StockLevelThresholdIsTenToTwenty) {
  Terminal t{.warehouses = 1, .w_id = 1, .d_id = 7, .constants = run_constants(1)};
  Rng rng(2);
  for (int i = 0; i < 1000; ++i) {
    const auto in = draw_stock_level(rng, t);
    ASSERT_EQ(in.d_id, 7);
    ASSERT_GE(in.threshold, 10);
    ASSERT_LE(in.threshold, 20);
  }
}

}  // namespace
}  // namespace pgslow::workload::tpcc
