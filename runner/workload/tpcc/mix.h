#pragma once
// The transaction mix (clause 5.2.3) and the terminal's keying and think times (5.2.5.7), as
// one data table.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "workload/tpcc/random.h"

namespace pgslow::workload::tpcc {

enum class TxKind { kNewOrder, kPayment, kOrderStatus, kDelivery, kStockLevel };

struct MixEntry {
  TxKind kind;
  std::string_view name;      // as in the result table; "new_order" is what tpmC counts
  int weight;                 // percent of the mix
  double keying_seconds;      // fixed keying time before the transaction (5.2.5.7)
  double mean_think_seconds;  // mean of the exponential think time after it (5.2.5.7)
};

// In the order of Workload::transaction_types().
const std::array<MixEntry, 5>& mix();

// Draws an index into mix() by weight.
std::size_t draw_from_mix(Rng& rng);

// Keying plus think time of a transaction type in microseconds: think time is negative
// exponential with the table's mean, truncated at ten times the mean (5.2.5.4).
std::int64_t wait_time_us(Rng& rng, const MixEntry& entry);

}  // namespace pgslow::workload::tpcc
