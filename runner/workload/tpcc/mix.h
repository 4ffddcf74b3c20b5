#pragma once
// The transaction mix (clause 5.2.3), the terminal's keying and think times (5.2.5.7) and the
// response time limits (5.2.5.3), as one data table, and the deck a terminal deals its transactions
// from.

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
  int cards;                  // cards in the deck of 23 (5.2.4.2)
  double keying_seconds;      // fixed keying time before the transaction (5.2.5.7)
  double mean_think_seconds;  // mean of the exponential think time after it (5.2.5.7)
  double min_share_percent;   // its least share of the measured transactions (5.2.3)
  double p90_limit_seconds;   // its 90th percentile response time at most (5.2.5.3)
};

// In the order of Workload::transaction_types().
const std::array<MixEntry, 5>& mix();

// The deck: 10 New-Order, 10 Payment and one card of each other type, 23 cards. Each terminal
// deals a shuffled deck to the end before it reshuffles (clause 5.2.4.2's card deck, as
// CockroachDB's tpcc does), so every deal of 23 holds New-Order and Payment 43.5% each and the
// others 4.3% each: 5.2.3's minimums (Payment 43%, the others 4%) hold over any run of whole
// decks, not just on average.
inline constexpr int kDeckSize = 23;

class Deck {
 public:
  // Returns the next card: an index into mix().
  std::size_t deal(Rng& rng);

 private:
  std::array<std::size_t, kDeckSize> cards_{};
  int next_ = kDeckSize;  // all dealt: shuffle before the first card
};

// The fixed keying time of a transaction type in microseconds, waited before it (5.2.5.7).
std::int64_t keying_time_us(const MixEntry& entry);

// The think time after a transaction in microseconds: negative exponential with the table's
// mean, truncated at ten times the mean (5.2.5.4).
std::int64_t think_time_us(Rng& rng, const MixEntry& entry);

}  // namespace pgslow::workload::tpcc
