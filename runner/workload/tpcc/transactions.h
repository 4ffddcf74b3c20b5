#pragma once
// The five transactions (clause 2): for each, its inputs, how a terminal draws them, the
// statements it prepares and the coroutine that runs it. One file per transaction.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workload/tpcc/random.h"
#include "workload/workload.h"

namespace pgslow::workload::tpcc {

// The isolation level of the read-write transactions (workload option `isolation`, clause 3.4).
enum class Isolation { kReadCommitted, kRepeatableRead, kSerializable };

// Parses "read-committed", "repeatable-read" or "serializable"; nullopt otherwise.
std::optional<Isolation> parse_isolation(std::string_view text);

// The BEGIN a transaction runs with. `one_snapshot`: the transaction must read one snapshot
// (Order-Status, 2.6 and 3.4), so READ COMMITTED is raised to REPEATABLE READ READ ONLY.
std::string begin_sql(Isolation level, bool one_snapshot = false);

// What a terminal knows (clause 2.1.4 / 5.2.2): its home warehouse, its district for
// Stock-Level, and the run's NURand constants.
struct Terminal {
  int warehouses = 1;
  int w_id = 1;
  int d_id = 1;
  NURandConstants constants;
};

// Customer selection shared by Payment and Order-Status (2.5.1.2, 2.6.1.2).
struct CustomerChoice {
  std::int64_t c_id = 0;  // 0: select by last name
  std::string c_last;
};
CustomerChoice draw_customer(Rng& rng, const Terminal& t, int by_name_percent);

// --- New-Order (2.4) ---
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

// --- Payment (2.5) ---
struct PaymentInput {
  std::int64_t w_id = 0, d_id = 0;
  std::int64_t c_w_id = 0, c_d_id = 0;
  CustomerChoice customer;
  std::int64_t amount_cents = 0;
};
PaymentInput draw_payment(Rng& rng, const Terminal& t);
std::vector<StatementDef> payment_statements();
Task<TxStatus> run_payment(Session& s, const PaymentInput& in, const std::string& begin);

// --- Order-Status (2.6) ---
struct OrderStatusInput {
  std::int64_t w_id = 0, d_id = 0;
  CustomerChoice customer;
};
OrderStatusInput draw_order_status(Rng& rng, const Terminal& t);
std::vector<StatementDef> order_status_statements();
Task<TxStatus> run_order_status(Session& s, const OrderStatusInput& in, const std::string& begin);

// --- Delivery (2.7) ---
struct DeliveryInput {
  std::int64_t w_id = 0;
  std::int64_t carrier_id = 0;
};
DeliveryInput draw_delivery(Rng& rng, const Terminal& t);
std::vector<StatementDef> delivery_statements();
// Districts a committed Delivery visited and those it skipped (2.7.4.2: no undelivered order).
struct DeliveryTally {
  std::uint64_t districts = 0;
  std::uint64_t skipped = 0;
};
// Adds to `tally` once the transaction commits.
Task<TxStatus> run_delivery(Session& s, const DeliveryInput& in, const std::string& begin,
                            DeliveryTally& tally);

// --- Stock-Level (2.8) ---
struct StockLevelInput {
  std::int64_t w_id = 0, d_id = 0;
  std::int64_t threshold = 0;
};
StockLevelInput draw_stock_level(Rng& rng, const Terminal& t);
std::vector<StatementDef> stock_level_statements();
Task<TxStatus> run_stock_level(Session& s, const StockLevelInput& in, const std::string& begin);

// Parses NUMERIC text ("12.34", "5", "-0.5") into cents; exact for two decimals.
std::int64_t parse_cents(std::string_view text);

}  // namespace pgslow::workload::tpcc
