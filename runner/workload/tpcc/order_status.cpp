// Order-Status (clause 2.6): a customer's balance and most recent order. Read-only, 1 card of
// 23 (4.3%); it reads through the last-name index (60%) and the orders-by-customer index, so it
// measures read latency on the hot part of the tables.

#include "workload/tpcc/order_status.h"

#include <fmt/format.h>

#include "workload/tpcc/constants.h"

namespace pgslow::workload::tpcc {

pg::Params OsGetCustomersByName::params() const {
  return {param(w_id), param(d_id), last_name};
}
pg::Params OsGetCustomer::params() const {
  return {param(w_id), param(d_id), param(c_id)};
}
pg::Params OsGetLastOrder::params() const {
  return {param(w_id), param(d_id), param(c_id)};
}
pg::Params OsGetOrderLines::params() const {
  return {param(w_id), param(d_id), param(o_id)};
}

std::vector<StatementDef> order_status_statements() {
  return {
      {"os_get_customers_by_name",
       "SELECT c_id, c_first, c_middle, c_last, c_balance FROM customer "
       "WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3 ORDER BY c_first"},
      {"os_get_customer",
       "SELECT c_first, c_middle, c_last, c_balance FROM customer "
       "WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3"},
      {"os_get_last_order",
       "SELECT o_id, o_carrier_id, o_entry_d FROM orders "
       "WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3 ORDER BY o_id DESC LIMIT 1"},
      {"os_get_order_lines",
       "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line "
       "WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3"},
  };
}

OrderStatusInput draw_order_status(Rng& rng, const Terminal& t) {
  OrderStatusInput in;
  in.w_id = t.w_id;
  in.d_id = rng.uniform(1, kDistrictsPerWarehouse);  // 2.6.1.2
  in.customer = draw_customer(rng, t, 60);           // 60% by last name
  return in;
}

Task<TxStatus> run_order_status(Session& s, const OrderStatusInput& in, const std::string& begin) {
  const std::string transaction =
      fmt::format("Order-Status (warehouse {}, district {})", in.w_id, in.d_id);
  co_await s.query(begin);
  std::int64_t c_id = in.customer.c_id;
  if (c_id == 0) {
    // Named before the co_await: GCC 12 destroys a string-holding temporary in it twice.
    const OsGetCustomersByName by_name{
        .w_id = in.w_id, .d_id = in.d_id, .last_name = in.customer.c_last};
    const pg::Result found = co_await s.execute("os_get_customers_by_name", by_name.params());
    // Every district holds all 1,000 last names (4.3.3.1).
    if (found.rows() == 0) {
      const std::string message =
          missing_row(transaction, fmt::format("CUSTOMER rows named {}", in.customer.c_last));
      co_await abandon(s, message);
    }
    // 2.6.2.2: position n/2 rounded up in C_FIRST order.
    c_id = found.get_int64((found.rows() + 1) / 2 - 1, 0);
  } else {
    const pg::Result found = co_await s.execute(
        "os_get_customer", OsGetCustomer{.w_id = in.w_id, .d_id = in.d_id, .c_id = c_id}.params());
    if (found.rows() == 0) {
      const std::string message = missing_row(
          transaction, fmt::format("CUSTOMER row (warehouse {}, district {}, customer {})", in.w_id,
                                   in.d_id, c_id));
      co_await abandon(s, message);
    }
  }
  const pg::Result order = co_await s.execute(
      "os_get_last_order", OsGetLastOrder{.w_id = in.w_id, .d_id = in.d_id, .c_id = c_id}.params());
  // Every customer has an order from the load (O_C_ID is a permutation, 4.3.3.1).
  if (order.rows() == 0) {
    const std::string message =
        missing_row(transaction, fmt::format("ORDER rows of customer {}", c_id));
    co_await abandon(s, message);
  }
  co_await s.execute(
      "os_get_order_lines",
      OsGetOrderLines{.w_id = in.w_id, .d_id = in.d_id, .o_id = order.get_int64(0, 0)}.params());
  co_await s.query("COMMIT");
  co_return TxStatus::kCommitted;
}

}  // namespace pgslow::workload::tpcc
