#include "workload/tpcc/mix.h"

#include <algorithm>
#include <cmath>

namespace pgslow::workload::tpcc {

const std::array<MixEntry, 5>& mix() {
  // Cards: 10/10/1/1/1 of 23 (New-Order 43.5%, Payment 43.5%, the others 4.3%), which meets
  // 5.2.3's minimums (New-Order none: it is the measured rate) in every deck. Keying and think
  // times: clause 5.2.5.7. p90 limits: clause 5.2.5.3.
  static const std::array<MixEntry, 5> entries = {{
      {TxKind::kNewOrder, "new_order", 10, 18, 12, 0, 5},
      {TxKind::kPayment, "payment", 10, 3, 12, 43, 5},
      {TxKind::kOrderStatus, "order_status", 1, 2, 10, 4, 5},
      {TxKind::kDelivery, "delivery", 1, 2, 5, 4, 5},
      {TxKind::kStockLevel, "stock_level", 1, 2, 5, 4, 20},
  }};
  return entries;
}

std::size_t Deck::deal(Rng& rng) {
  if (next_ == kDeckSize) {
    std::size_t n = 0;
    for (std::size_t type = 0; type < mix().size(); ++type)
      for (int c = 0; c < mix()[type].cards; ++c) cards_[n++] = type;
    // Fisher-Yates with the terminal's own stream, so a seed deals the same hands.
    for (int i = kDeckSize - 1; i > 0; --i)
      std::swap(cards_[static_cast<std::size_t>(i)],
                cards_[static_cast<std::size_t>(rng.uniform(0, i))]);
    next_ = 0;
  }
  return cards_[static_cast<std::size_t>(next_++)];
}

std::int64_t keying_time_us(const MixEntry& entry) {
  return static_cast<std::int64_t>(entry.keying_seconds * 1e6);
}

std::int64_t think_time_us(Rng& rng, const MixEntry& entry) {
  // r in (0, 1]: log(r) is finite.
  const double r = 1.0 - rng.uniform01();
  const double think =
      std::min(-std::log(r) * entry.mean_think_seconds, 10 * entry.mean_think_seconds);
  return static_cast<std::int64_t>(think * 1e6);
}

}  // namespace pgslow::workload::tpcc
