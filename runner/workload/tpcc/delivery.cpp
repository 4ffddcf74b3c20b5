// Delivery (clause 2.7): delivers the oldest undelivered order of each of the warehouse's ten
// districts, in one transaction as BenchBase runs it (the spec allows a deferred, queued
// execution). 4.3% of the deck but the heaviest writer per call: it deletes from the head of
// NEW-ORDER (the table's dead-tuple churn), updates ~100 order lines and ten customers.

#include "workload/tpcc/delivery.h"

#include <fmt/format.h>

#include "workload/tpcc/constants.h"

namespace pgslow::workload::tpcc {

pg::Params DelTakeOldestNewOrder::params() const {
  return {param(w_id), param(d_id)};
}
pg::Params DelHasNewOrder::params() const {
  return {param(w_id), param(d_id)};
}
pg::Params DelUpdateOrder::params() const {
  return {param(w_id), param(d_id), param(o_id), param(carrier_id)};
}
pg::Params DelUpdateOrderLines::params() const {
  return {param(w_id), param(d_id), param(o_id)};
}
pg::Params DelUpdateCustomer::params() const {
  return {param(w_id), param(d_id), param(c_id), amount};
}

std::vector<StatementDef> delivery_statements() {
  return {
      // 2.7.4.2: the undelivered order with the lowest id, deleted in the same statement.
      {"del_take_oldest_new_order",
       "DELETE FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 AND no_o_id = "
       "(SELECT min(no_o_id) FROM new_order WHERE no_w_id = $1 AND no_d_id = $2) "
       "RETURNING no_o_id"},
      {"del_has_new_order",
       "SELECT EXISTS (SELECT 1 FROM new_order WHERE no_w_id = $1 AND no_d_id = $2)"},
      {"del_update_order",
       "UPDATE orders SET o_carrier_id = $4 WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3 "
       "RETURNING o_c_id"},
      {"del_update_order_lines",
       "WITH delivered AS (UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP "
       "WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3 RETURNING ol_amount) "
       "SELECT coalesce(sum(ol_amount), 0) FROM delivered"},
      {"del_update_customer",
       "UPDATE customer SET c_balance = c_balance + $4, c_delivery_cnt = c_delivery_cnt + 1 "
       "WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3 RETURNING c_id"},
  };
}

DeliveryInput draw_delivery(Rng& rng, const Terminal& t) {
  return DeliveryInput{.w_id = t.w_id, .carrier_id = rng.uniform(1, 10)};  // 2.7.1.2
}

namespace {
std::string where(const DeliveryInput& in) {
  return fmt::format("Delivery (warehouse {}, carrier {})", in.w_id, in.carrier_id);
}
}  // namespace

Task<TxStatus> run_delivery(Session& s, const DeliveryInput& in, const std::string& begin,
                            DeliveryTally& tally) {
  co_await s.query(begin);
  std::uint64_t skipped = 0;
  for (std::int64_t d_id = 1; d_id <= kDistrictsPerWarehouse; ++d_id) {
    // Under READ COMMITTED a concurrent Delivery may take the same oldest order first: our
    // DELETE waits for it and then finds the row gone. 2.7.4.2 allows a skip only when the
    // district has no undelivered order, so we look again: while one is left, a fresh DELETE
    // (which sees the other's commit) takes the next oldest. Each lost race means another
    // Delivery committed an order of this district, so the loop ends. (Under REPEATABLE READ
    // or SERIALIZABLE the race is a serialization failure and the driver retries instead.)
    pg::Result taken;
    for (;;) {
      taken = co_await s.execute("del_take_oldest_new_order",
                                 DelTakeOldestNewOrder{.w_id = in.w_id, .d_id = d_id}.params());
      if (taken.rows() > 0) break;
      const pg::Result left = co_await s.execute(
          "del_has_new_order", DelHasNewOrder{.w_id = in.w_id, .d_id = d_id}.params());
      if (left.get(0, 0) != "t") break;
    }
    if (taken.rows() == 0) {
      ++skipped;  // 2.7.4.2: no undelivered order in the district
      continue;
    }
    const std::int64_t o_id = taken.get_int64(0, 0);
    const pg::Result order = co_await s.execute(
        "del_update_order",
        DelUpdateOrder{.w_id = in.w_id, .d_id = d_id, .o_id = o_id, .carrier_id = in.carrier_id}
            .params());
    // 2.7.4.2: the order of a NEW-ORDER row exists (3.3.2.5), and so does its customer.
    if (order.rows() == 0) {
      const std::string message = missing_row(
          where(in),
          fmt::format("ORDER row (warehouse {}, district {}, order {})", in.w_id, d_id, o_id));
      co_await abandon(s, message);
    }
    const pg::Result amount = co_await s.execute(
        "del_update_order_lines",
        DelUpdateOrderLines{.w_id = in.w_id, .d_id = d_id, .o_id = o_id}.params());
    // Named before the co_await: GCC 12 destroys a string-holding temporary in it twice.
    const DelUpdateCustomer update_customer{.w_id = in.w_id,
                                            .d_id = d_id,
                                            .c_id = order.get_int64(0, 0),
                                            .amount = std::string(amount.get(0, 0))};
    const pg::Result customer = co_await s.execute("del_update_customer", update_customer.params());
    if (customer.rows() == 0) {
      const std::string message = missing_row(
          where(in), fmt::format("CUSTOMER row (warehouse {}, district {}, customer {})", in.w_id,
                                 d_id, update_customer.c_id));
      co_await abandon(s, message);
    }
  }
  co_await s.query("COMMIT");
  // Counted once committed: a retried attempt counts once.
  tally.districts += static_cast<std::uint64_t>(kDistrictsPerWarehouse);
  tally.skipped += skipped;
  if (skipped > 0) ++tally.deliveries_with_skip;
  co_return TxStatus::kCommitted;
}

}  // namespace pgslow::workload::tpcc
