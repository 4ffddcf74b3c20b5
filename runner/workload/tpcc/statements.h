#pragma once
// The parameters of every prepared statement, one small struct per statement, so that a call
// site names each value (`NoUpdateDistrict{.w_id = w, .d_id = d}`) instead of building a
// positional list by hand. The SQL sits next to its struct's params() in the transaction's
// file; params() returns the values in the order of the SQL's $1, $2, ...

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pg/connection.h"
#include "workload/workload.h"

namespace pgslow::workload::tpcc {

using std::int64_t;

// --- New-Order (2.4) -------------------------------------------------------------------------

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

// --- Payment (2.5) ---------------------------------------------------------------------------

struct PayUpdateWarehouse {  // pay_update_warehouse
  int64_t w_id, amount_cents;
  pg::Params params() const;
};
struct PayUpdateDistrict {  // pay_update_district
  int64_t w_id, d_id, amount_cents;
  pg::Params params() const;
};
struct PayGetCustomersByName {  // pay_get_customers_by_name: ids ordered by C_FIRST
  int64_t w_id, d_id;
  std::string last_name;
  pg::Params params() const;
};
struct PayUpdateCustomer {  // pay_update_customer: balance, and C_DATA for bad credit
  int64_t w_id, d_id, c_id, amount_cents;
  std::string bad_credit_data;  // put in front of C_DATA when C_CREDIT = 'BC'
  pg::Params params() const;
};
struct PayInsertHistory {  // pay_insert_history
  int64_t c_id, c_d_id, c_w_id, d_id, w_id, amount_cents;
  std::string data;
  pg::Params params() const;
};

// --- Order-Status (2.6) ----------------------------------------------------------------------

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

// --- Delivery (2.7) --------------------------------------------------------------------------

struct DelTakeOldestNewOrder {  // del_take_oldest_new_order: deletes and returns it
  int64_t w_id, d_id;
  pg::Params params() const;
};
struct DelHasNewOrder {  // del_has_new_order: is any order of the district undelivered?
  int64_t w_id, d_id;
  pg::Params params() const;
};
struct DelUpdateOrder {  // del_update_order: sets the carrier, returns O_C_ID
  int64_t w_id, d_id, o_id, carrier_id;
  pg::Params params() const;
};
struct DelUpdateOrderLines {  // del_update_order_lines: sets delivery dates, sums amounts
  int64_t w_id, d_id, o_id;
  pg::Params params() const;
};
struct DelUpdateCustomer {  // del_update_customer
  int64_t w_id, d_id, c_id;
  std::string amount;  // sum(OL_AMOUNT) as the server printed it
  pg::Params params() const;
};

// --- Stock-Level (2.8) -----------------------------------------------------------------------

struct SlGetNextOrderId {  // sl_get_next_order_id
  int64_t w_id, d_id;
  pg::Params params() const;
};
struct SlCountLowStock {  // sl_count_low_stock
  int64_t w_id, d_id, next_o_id, threshold;
  pg::Params params() const;
};

// Text forms of parameter values.
inline std::optional<std::string> param(std::int64_t v) {
  return std::to_string(v);
}
inline std::optional<std::string> param(std::string v) {
  return v;
}
std::string cents(std::int64_t cents);                           // 12.34
std::string int_array(const std::vector<int64_t>& values);       // {1,2,3}
std::string cents_array(const std::vector<int64_t>& cents);      // {1.00,2.50}
std::string text_array(const std::vector<std::string>& values);  // {"a","b"}

}  // namespace pgslow::workload::tpcc
