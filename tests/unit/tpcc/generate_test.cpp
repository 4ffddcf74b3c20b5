#include "workload/tpcc/generate.h"

#include <gtest/gtest.h>

#include "common/strings.h"
#include "workload/tpcc/constants.h"

namespace pgslow::workload::tpcc {
namespace {

std::vector<std::vector<std::string>> rows_of(Table table, int w_id) {
  std::string all;
  RowBuffer out([&](std::string_view chunk) { all.append(chunk); }, 1 << 16);
  generate_rows(table, w_id, LoadContext{.warehouses = 1, .now = "2026-01-01 00:00:00"}, out);
  out.finish();
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : split(all, '\n'))
    if (!line.empty()) rows.push_back(split(line, '\t'));
  return rows;
}

std::size_t column_count(Table table) {
  return split(table_info(table).columns, ',').size();
}

TEST(Generate, RowCountsAndColumnsFollowClause4331) {
  for (Table t : {Table::kWarehouse, Table::kDistrict, Table::kCustomer, Table::kHistory,
                  Table::kOrders, Table::kNewOrder}) {
    const auto rows = rows_of(t, 1);
    EXPECT_EQ(static_cast<std::int64_t>(rows.size()), expected_rows(t, 1)) << table_info(t).name;
    for (const auto& r : rows) ASSERT_EQ(r.size(), column_count(t)) << table_info(t).name;
  }
}

TEST(Generate, OrdersAndOrderLinesAgreeOnLineCounts) {
  const auto orders = rows_of(Table::kOrders, 1);
  const auto lines = rows_of(Table::kOrderLine, 1);
  std::int64_t total = 0;
  for (const auto& o : orders) total += std::stoi(o[6]);
  EXPECT_EQ(static_cast<std::int64_t>(lines.size()), total);
  for (const auto& l : lines) ASSERT_EQ(l.size(), column_count(Table::kOrderLine));
  // Orders from 2,101 on are undelivered: no carrier, no delivery date, non-zero amount.
  for (const auto& o : orders) {
    const bool delivered = std::stoi(o[2]) < kFirstUndeliveredOrder;
    ASSERT_EQ(o[5] == "\\N", !delivered);
  }
}

TEST(Generate, FirstThousandCustomersTakeEachLastNameOnce) {
  const auto customers = rows_of(Table::kCustomer, 1);
  EXPECT_EQ(customers[0][5], "BARBARBAR");
  EXPECT_EQ(customers[371][5], "PRICALLYOUGHT");  // C_ID 372 takes number 371
  int bad_credit = 0;
  for (const auto& c : customers) bad_credit += c[13] == "BC";
  EXPECT_NEAR(static_cast<double>(bad_credit) / static_cast<double>(customers.size()), 0.10, 0.02);
}

TEST(Generate, SameInputsSameRows) {
  EXPECT_EQ(rows_of(Table::kDistrict, 2), rows_of(Table::kDistrict, 2));
  EXPECT_NE(rows_of(Table::kDistrict, 1), rows_of(Table::kDistrict, 2));
}

}  // namespace
}  // namespace pgslow::workload::tpcc
