#include "workload/tpcc/generate.h"

#include <gtest/gtest.h>

#include "common/strings.h"
#include "workload/tpcc/constants.h"

namespace pgslow::workload::tpcc {
namespace {

// Calls `row` with the fields of every generated row (views into one buffer: the tables are
// large and a Debug build under ASan must still finish in seconds).
template <typename F>
std::int64_t for_each_row(Table table, int w_id, F row) {
  std::string all;
  RowBuffer out([&](std::string_view chunk) { all.append(chunk); }, 1 << 16);
  generate_rows(table, w_id, LoadContext{.warehouses = 1, .now = "2026-01-01 00:00:00"}, out);
  out.finish();
  std::vector<std::string_view> fields;
  std::int64_t rows = 0;
  std::string_view rest = all;
  while (!rest.empty()) {
    const std::size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(eol == std::string_view::npos ? rest.size() : eol + 1);
    fields.clear();
    for (std::size_t tab; (tab = line.find('\t')) != std::string_view::npos;
         line.remove_prefix(tab + 1))
      fields.push_back(line.substr(0, tab));
    fields.push_back(line);
    row(fields);
    ++rows;
  }
  return rows;
}

std::vector<std::vector<std::string>> rows_of(Table table, int w_id) {
  std::vector<std::vector<std::string>> rows;
  for_each_row(table, w_id, [&](const std::vector<std::string_view>& f) {
    rows.emplace_back(f.begin(), f.end());
  });
  return rows;
}

int to_int(std::string_view s) {
  return std::stoi(std::string(s));
}

std::size_t column_count(Table table) {
  return split(table_info(table).columns, ',').size();
}

TEST(Generate, RowCountsAndColumnsFollowClause4331) {
  for (Table t : {Table::kWarehouse, Table::kDistrict, Table::kCustomer, Table::kHistory,
                  Table::kOrders, Table::kNewOrder}) {
    const std::size_t columns = column_count(t);
    std::int64_t bad = 0;
    const std::int64_t rows = for_each_row(
        t, 1, [&](const std::vector<std::string_view>& f) { bad += f.size() != columns; });
    EXPECT_EQ(rows, expected_rows(t, 1)) << table_info(t).name;
    EXPECT_EQ(bad, 0) << table_info(t).name;
  }
}

TEST(Generate, OrdersAndOrderLinesAgreeOnLineCounts) {
  std::int64_t total = 0, wrong_carrier = 0;
  for_each_row(Table::kOrders, 1, [&](const std::vector<std::string_view>& o) {
    total += to_int(o[6]);
    // Orders from 2,101 on are undelivered: no carrier.
    const bool delivered = to_int(o[2]) < kFirstUndeliveredOrder;
    wrong_carrier += (o[5] == "\\N") == delivered;
  });
  EXPECT_EQ(wrong_carrier, 0);
  const std::size_t columns = column_count(Table::kOrderLine);
  std::int64_t bad = 0;
  const std::int64_t lines =
      for_each_row(Table::kOrderLine, 1,
                   [&](const std::vector<std::string_view>& f) { bad += f.size() != columns; });
  EXPECT_EQ(lines, total);
  EXPECT_EQ(bad, 0);
}

TEST(Generate, FirstThousandCustomersTakeEachLastNameOnce) {
  std::vector<std::string> last_names;
  int bad_credit = 0;
  const std::int64_t rows =
      for_each_row(Table::kCustomer, 1, [&](const std::vector<std::string_view>& c) {
        if (last_names.size() < 1000) last_names.emplace_back(c[5]);
        bad_credit += c[13] == "BC";
      });
  EXPECT_EQ(last_names[0], "BARBARBAR");
  EXPECT_EQ(last_names[371], "PRICALLYOUGHT");  // C_ID 372 takes number 371
  EXPECT_NEAR(static_cast<double>(bad_credit) / static_cast<double>(rows), 0.10, 0.02);
}

TEST(Generate, SameInputsSameRows) {
  EXPECT_EQ(rows_of(Table::kDistrict, 2), rows_of(Table::kDistrict, 2));
  EXPECT_NE(rows_of(Table::kDistrict, 1), rows_of(Table::kDistrict, 2));
}

}  // namespace
}  // namespace pgslow::workload::tpcc
