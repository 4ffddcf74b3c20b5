#pragma once
// Stock-Level (clause 2.8): its inputs, how a terminal draws them, its statements and
// their parameters, and the coroutine that runs it.

#include <cstdint>
#include <string>
#include <vector>

#include "workload/tpcc/statements.h"
#include "workload/tpcc/terminal.h"
#include "workload/workload.h"

namespace pgslow::workload::tpcc {

struct StockLevelInput {
  std::int64_t w_id = 0, d_id = 0;
  std::int64_t threshold = 0;
};
StockLevelInput draw_stock_level(Rng& rng, const Terminal& t);
std::vector<StatementDef> stock_level_statements();
Task<TxStatus> run_stock_level(Session& s, const StockLevelInput& in, const std::string& begin);

// The parameters of its prepared statements, one struct per statement.
struct SlGetNextOrderId {  // sl_get_next_order_id
  int64_t w_id, d_id;
  pg::Params params() const;
};
struct SlCountLowStock {  // sl_count_low_stock
  int64_t w_id, d_id, next_o_id, threshold;
  pg::Params params() const;
};

}  // namespace pgslow::workload::tpcc
