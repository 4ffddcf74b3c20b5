#pragma once
// New-Order (clause 2.4): its inputs, how a terminal draws them, its statements and
// their parameters, and the coroutine that runs it.

#include <cstdint>
#include <string>
#include <vector>

#include "workload/tpcc/statements.h"
#include "workload/tpcc/terminal.h"
#include "workload/workload.h"

namespace pgslow::workload::tpcc {

struct NewOrderLine {
  std::int64_t i_id = 0;
  std::int64_t supply_w_id = 0;
  std::int64_t quantity = 0;
};
struct NewOrderInput {
  std::int64_t w_id = 0, d_id = 0, c_id = 0;
  std::vector<NewOrderLine> lines;  // sorted by (supply warehouse, item): stock lock order
  bool rollback = false;            // the last item id is unused (2.4.1.4)
};
NewOrderInput draw_new_order(Rng& rng, const Terminal& t);
std::vector<StatementDef> new_order_statements();
Task<TxStatus> run_new_order(Session& s, const NewOrderInput& in, const std::string& begin);

// The parameters of its prepared statements, one struct per statement.
struct NoGetCustomer {  // no_get_customer: customer discount and credit, warehouse tax
  int64_t w_id, d_id, c_id;
  pg::Params params() const;
};
struct NoUpdateDistrict {  // no_update_district: takes the order id, returns D_TAX
  int64_t w_id, d_id;
  pg::Params params() const;
};
struct NoInsertOrder {  // no_insert_order
  int64_t w_id, d_id, o_id, c_id, ol_cnt;
  bool all_local;
  pg::Params params() const;
};
struct NoInsertNewOrder {  // no_insert_new_order
  int64_t w_id, d_id, o_id;
  pg::Params params() const;
};
struct NoGetItems {  // no_get_items: price, name and data of all the order's items
  std::vector<int64_t> item_ids;
  pg::Params params() const;
};
struct NoUpdateStock {  // no_update_stock: locks, updates and returns one stock row
  int64_t supply_w_id, i_id, quantity, d_id;
  bool remote;
  pg::Params params() const;
};
struct NoInsertOrderLines {  // no_insert_order_lines: all the order's lines at once
  int64_t w_id, d_id, o_id;
  std::vector<int64_t> numbers, item_ids, supply_w_ids, quantities, amounts_cents;
  std::vector<std::string> dist_infos;
  pg::Params params() const;
};

}  // namespace pgslow::workload::tpcc
