#pragma once
// Order-Status (clause 2.6): its inputs, how a terminal draws them, its statements and
// their parameters, and the coroutine that runs it.

#include <cstdint>
#include <string>
#include <vector>

#include "workload/tpcc/statements.h"
#include "workload/tpcc/terminal.h"
#include "workload/workload.h"

namespace pgslow::workload::tpcc {

struct OrderStatusInput {
  std::int64_t w_id = 0, d_id = 0;
  CustomerChoice customer;
};
OrderStatusInput draw_order_status(Rng& rng, const Terminal& t);
std::vector<StatementDef> order_status_statements();
Task<TxStatus> run_order_status(Session& s, const OrderStatusInput& in, const std::string& begin);

// The parameters of its prepared statements, one struct per statement.
struct OsGetCustomersByName {  // os_get_customers_by_name
  int64_t w_id, d_id;
  std::string last_name;
  pg::Params params() const;
};
struct OsGetCustomer {  // os_get_customer
  int64_t w_id, d_id, c_id;
  pg::Params params() const;
};
struct OsGetLastOrder {  // os_get_last_order
  int64_t w_id, d_id, c_id;
  pg::Params params() const;
};
struct OsGetOrderLines {  // os_get_order_lines
  int64_t w_id, d_id, o_id;
  pg::Params params() const;
};

}  // namespace pgslow::workload::tpcc
