#pragma once
// The initial database (clause 4.3.3.1), as COPY text rows. Every (table, warehouse) pair is
// generated independently from its own seed, so the loader can spread the work over
// connections in any order and still load the same data.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "workload/tpcc/random.h"

namespace pgslow::workload::tpcc {

enum class Table {
  kItem,
  kWarehouse,
  kDistrict,
  kStock,
  kCustomer,
  kHistory,
  kOrders,
  kNewOrder,
  kOrderLine
};

struct TableInfo {
  Table table;
  std::string_view name;
  std::string_view columns;  // the COPY column list, in generation order
  bool per_warehouse;        // false: generated once (ITEM)
};

// The nine tables, the loader's unit of work per warehouse.
const std::vector<TableInfo>& table_infos();
const TableInfo& table_info(Table table);

// Exact row count of a table after loading, or -1 for ORDER-LINE (5 to 15 lines per order).
std::int64_t expected_rows(Table table, int warehouses);

struct LoadContext {
  int warehouses = 1;
  std::string now;  // the load's timestamp (C_SINCE, H_DATE, O_ENTRY_D)
  NURandConstants constants = load_constants();
};

// Accumulates COPY text rows and hands the buffer to `flush` when it grows past `limit`.
class RowBuffer {
 public:
  RowBuffer(std::function<void(std::string_view)> flush, std::size_t limit = 1 << 18)
      : flush_(std::move(flush)), limit_(limit) {
    text.reserve(limit + 4096);
  }
  std::string text;  // append one row's fields here, then call end_row()
  void end_row();
  void finish();  // flushes what is left
  std::int64_t rows() const { return rows_; }

 private:
  std::function<void(std::string_view)> flush_;
  std::size_t limit_;
  std::int64_t rows_ = 0;
};

// Appends the rows of `table` for warehouse `w_id` (ignored for ITEM) to `out`.
void generate_rows(Table table, int w_id, const LoadContext& ctx, RowBuffer& out);

}  // namespace pgslow::workload::tpcc
