// Stock-Level (clause 2.8): counts recently sold items whose stock is below a threshold.
// Read-only, 1 card of 23 (4.3%), and the heaviest reader: a join of the district's last 20 orders'
// lines (~200 rows) with STOCK, so it shows the cost of plans, buffer misses and visibility
// checks on freshly updated rows.

#include "workload/tpcc/stock_level.h"

#include <fmt/format.h>

namespace pgslow::workload::tpcc {

pg::Params SlGetNextOrderId::params() const {
  return {param(w_id), param(d_id)};
}
pg::Params SlCountLowStock::params() const {
  return {param(w_id), param(d_id), param(next_o_id), param(threshold)};
}

std::vector<StatementDef> stock_level_statements() {
  return {
      {"sl_get_next_order_id", "SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2"},
      // 2.8.2.2: distinct items of the last 20 orders with S_QUANTITY below the threshold.
      {"sl_count_low_stock",
       "SELECT count(DISTINCT s_i_id) FROM order_line JOIN stock "
       "ON s_w_id = ol_w_id AND s_i_id = ol_i_id "
       "WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id < $3 AND ol_o_id >= $3 - 20 "
       "AND s_quantity < $4"},
  };
}

StockLevelInput draw_stock_level(Rng& rng, const Terminal& t) {
  // 2.8.1: the terminal's own district; the threshold is random within [10 .. 20].
  return StockLevelInput{.w_id = t.w_id, .d_id = t.d_id, .threshold = rng.uniform(10, 20)};
}

Task<TxStatus> run_stock_level(Session& s, const StockLevelInput& in, const std::string& begin) {
  co_await s.query(begin);
  const pg::Result district = co_await s.execute(
      "sl_get_next_order_id", SlGetNextOrderId{.w_id = in.w_id, .d_id = in.d_id}.params());
  if (district.rows() == 0) {
    const std::string message =
        missing_row(fmt::format("Stock-Level (warehouse {}, district {})", in.w_id, in.d_id),
                    fmt::format("DISTRICT row (warehouse {}, district {})", in.w_id, in.d_id));
    co_await abandon(s, message);
  }
  co_await s.execute("sl_count_low_stock", SlCountLowStock{.w_id = in.w_id,
                                                           .d_id = in.d_id,
                                                           .next_o_id = district.get_int64(0, 0),
                                                           .threshold = in.threshold}
                                               .params());
  co_await s.query("COMMIT");
  co_return TxStatus::kCommitted;
}

}  // namespace pgslow::workload::tpcc
