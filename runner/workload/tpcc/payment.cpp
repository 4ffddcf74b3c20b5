// Payment (clause 2.5): records a customer's payment. Light read-write, 10 of the deck's 23 cards
// (43.5%). Every Payment of a warehouse updates the same warehouse row (W_YTD) and one of ten
// district rows, so it is the hot-row, lock-queue transaction; it also appends to HISTORY (no
// index) and finds 60% of its customers through the last-name index.

#include "workload/tpcc/payment.h"

#include <fmt/format.h>

#include "workload/tpcc/constants.h"

namespace pgslow::workload::tpcc {

pg::Params PayUpdateWarehouse::params() const {
  return {param(w_id), cents(amount_cents)};
}
pg::Params PayUpdateDistrict::params() const {
  return {param(w_id), param(d_id), cents(amount_cents)};
}
pg::Params PayGetCustomersByName::params() const {
  return {param(w_id), param(d_id), last_name};
}
pg::Params PayUpdateCustomer::params() const {
  return {param(w_id), param(d_id), param(c_id), cents(amount_cents), bad_credit_data};
}
pg::Params PayInsertHistory::params() const {
  return {param(c_id), param(c_d_id),       param(c_w_id), param(d_id),
          param(w_id), cents(amount_cents), data};
}

std::vector<StatementDef> payment_statements() {
  return {
      {"pay_update_warehouse",
       "UPDATE warehouse SET w_ytd = w_ytd + $2 WHERE w_id = $1 "
       "RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip"},
      {"pay_update_district",
       "UPDATE district SET d_ytd = d_ytd + $3 WHERE d_w_id = $1 AND d_id = $2 "
       "RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip"},
      // 2.5.2.2: all customers of that last name, sorted by C_FIRST; the middle one is taken.
      {"pay_get_customers_by_name",
       "SELECT c_id FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3 "
       "ORDER BY c_first"},
      // 2.5.2.2: for bad credit (BC), the payment's keys and amount go in front of C_DATA,
      // which keeps its first 500 characters.
      {"pay_update_customer",
       "UPDATE customer SET c_balance = c_balance - $4, c_ytd_payment = c_ytd_payment + $4, "
       "c_payment_cnt = c_payment_cnt + 1, c_data = CASE WHEN c_credit = 'BC' "
       "THEN left($5 || c_data, 500) ELSE c_data END "
       "WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3 "
       "RETURNING c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, "
       "c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance, "
       "CASE WHEN c_credit = 'BC' THEN left(c_data, 200) END"},
      {"pay_insert_history",
       "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, "
       "h_data) VALUES ($1, $2, $3, $4, $5, CURRENT_TIMESTAMP, $6, $7)"},
  };
}

PaymentInput draw_payment(Rng& rng, const Terminal& t) {
  PaymentInput in;
  in.w_id = t.w_id;
  in.d_id = rng.uniform(1, kDistrictsPerWarehouse);  // 2.5.1.1
  // 2.5.1.2: 85% pay at home; 15% through a remote warehouse and a random district.
  if (t.warehouses == 1 || rng.percent(85)) {
    in.c_w_id = in.w_id;
    in.c_d_id = in.d_id;
  } else {
    do {
      in.c_w_id = rng.uniform(1, t.warehouses);
    } while (in.c_w_id == in.w_id);
    in.c_d_id = rng.uniform(1, kDistrictsPerWarehouse);
  }
  in.customer = draw_customer(rng, t, 60);      // 2.5.1.2: 60% by last name
  in.amount_cents = rng.uniform(100, 500'000);  // 2.5.1.3: [1.00 .. 5,000.00]
  return in;
}

namespace {
std::string where(const PaymentInput& in) {
  return fmt::format("Payment (warehouse {}, district {})", in.w_id, in.d_id);
}
}  // namespace

Task<TxStatus> run_payment(Session& s, const PaymentInput& in, const std::string& begin) {
  // Structs with strings are named before the co_await that uses them, never temporaries
  // inside it: GCC 12 destroys such temporaries twice.
  co_await s.query(begin);
  const pg::Result warehouse = co_await s.execute(
      "pay_update_warehouse",
      PayUpdateWarehouse{.w_id = in.w_id, .amount_cents = in.amount_cents}.params());
  if (warehouse.rows() == 0) {
    const std::string message =
        missing_row(where(in), fmt::format("WAREHOUSE row (warehouse {})", in.w_id));
    co_await abandon(s, message);
  }
  const pg::Result district = co_await s.execute(
      "pay_update_district",
      PayUpdateDistrict{.w_id = in.w_id, .d_id = in.d_id, .amount_cents = in.amount_cents}
          .params());
  if (district.rows() == 0) {
    const std::string message = missing_row(
        where(in), fmt::format("DISTRICT row (warehouse {}, district {})", in.w_id, in.d_id));
    co_await abandon(s, message);
  }

  std::int64_t c_id = in.customer.c_id;
  if (c_id == 0) {
    const PayGetCustomersByName by_name{
        .w_id = in.c_w_id, .d_id = in.c_d_id, .last_name = in.customer.c_last};
    const pg::Result found = co_await s.execute("pay_get_customers_by_name", by_name.params());
    // Every district holds all 1,000 last names (4.3.3.1): none found is a fault of the data.
    if (found.rows() == 0) {
      const std::string message =
          missing_row(where(in), fmt::format("CUSTOMER rows named {} (warehouse {}, district {})",
                                             in.customer.c_last, in.c_w_id, in.c_d_id));
      co_await abandon(s, message);
    }
    // 2.5.2.2: the customer at position n/2 rounded up, counting from 1.
    c_id = found.get_int64((found.rows() + 1) / 2 - 1, 0);
  }
  const PayUpdateCustomer update_customer{
      .w_id = in.c_w_id,
      .d_id = in.c_d_id,
      .c_id = c_id,
      .amount_cents = in.amount_cents,
      .bad_credit_data = std::to_string(c_id) + " " + std::to_string(in.c_d_id) + " " +
                         std::to_string(in.c_w_id) + " " + std::to_string(in.d_id) + " " +
                         std::to_string(in.w_id) + " " + cents(in.amount_cents) + " | "};
  const pg::Result customer = co_await s.execute("pay_update_customer", update_customer.params());
  if (customer.rows() == 0) {
    const std::string message =
        missing_row(where(in), fmt::format("CUSTOMER row (warehouse {}, district {}, customer {})",
                                           in.c_w_id, in.c_d_id, c_id));
    co_await abandon(s, message);
  }
  // 2.5.2.2: H_DATA is W_NAME and D_NAME separated by four spaces.
  const PayInsertHistory history{
      .c_id = c_id,
      .c_d_id = in.c_d_id,
      .c_w_id = in.c_w_id,
      .d_id = in.d_id,
      .w_id = in.w_id,
      .amount_cents = in.amount_cents,
      .data = std::string(warehouse.get(0, 0)) + "    " + std::string(district.get(0, 0))};
  co_await s.execute("pay_insert_history", history.params());
  co_await s.query("COMMIT");
  co_return TxStatus::kCommitted;
}

}  // namespace pgslow::workload::tpcc
