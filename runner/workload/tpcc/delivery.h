#pragma once
// Delivery (clause 2.7): its inputs, how a terminal draws them, its statements and
// their parameters, and the coroutine that runs it.

#include <cstdint>
#include <string>
#include <vector>

#include "workload/tpcc/statements.h"
#include "workload/tpcc/terminal.h"
#include "workload/workload.h"

namespace pgslow::workload::tpcc {

struct DeliveryInput {
  std::int64_t w_id = 0;
  std::int64_t carrier_id = 0;
};
DeliveryInput draw_delivery(Rng& rng, const Terminal& t);
std::vector<StatementDef> delivery_statements();
// Districts committed Deliveries visited and those they skipped (2.7.4.2: no undelivered
// order), and the Deliveries that skipped at least one.
struct DeliveryTally {
  std::uint64_t districts = 0;
  std::uint64_t skipped = 0;
  std::uint64_t deliveries_with_skip = 0;
};
// Adds to `tally` once the transaction commits.
Task<TxStatus> run_delivery(Session& s, const DeliveryInput& in, const std::string& begin,
                            DeliveryTally& tally);

// The parameters of its prepared statements, one struct per statement.
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
struct DelUpdateCustomer {  // del_update_customer: returns C_ID when the customer exists
  int64_t w_id, d_id, c_id;
  std::string amount;  // sum(OL_AMOUNT) as the server printed it
  pg::Params params() const;
};

}  // namespace pgslow::workload::tpcc
