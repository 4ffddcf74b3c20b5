#pragma once
// Payment (clause 2.5): its inputs, how a terminal draws them, its statements and
// their parameters, and the coroutine that runs it.

#include <cstdint>
#include <string>
#include <vector>

#include "workload/tpcc/statements.h"
#include "workload/tpcc/terminal.h"
#include "workload/workload.h"

namespace pgslow::workload::tpcc {

struct PaymentInput {
  std::int64_t w_id = 0, d_id = 0;
  std::int64_t c_w_id = 0, c_d_id = 0;
  CustomerChoice customer;
  std::int64_t amount_cents = 0;
};
PaymentInput draw_payment(Rng& rng, const Terminal& t);
std::vector<StatementDef> payment_statements();
Task<TxStatus> run_payment(Session& s, const PaymentInput& in, const std::string& begin);

// The parameters of its prepared statements, one struct per statement.
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

}  // namespace pgslow::workload::tpcc
