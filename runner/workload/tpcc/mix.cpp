#include "workload/tpcc/mix.h"

#include <algorithm>
#include <cmath>

namespace pgslow::workload::tpcc {

const std::array<MixEntry, 5>& mix() {
  // Weights: the usual 45/43/4/4/4, which meets 5.2.3's minimums (Payment >= 43%,
  // the others >= 4%). Keying and think times: clause 5.2.5.7.
  static const std::array<MixEntry, 5> entries = {{
      {TxKind::kNewOrder, "new_order", 45, 18, 12},
      {TxKind::kPayment, "payment", 43, 3, 12},
      {TxKind::kOrderStatus, "order_status", 4, 2, 10},
      {TxKind::kDelivery, "delivery", 4, 2, 5},
      {TxKind::kStockLevel, "stock_level", 4, 2, 5},
  }};
  return entries;
}

std::size_t draw_from_mix(Rng& rng) {
  int total = 0;
  for (const auto& e : mix()) total += e.weight;
  auto pick = rng.uniform(1, total);
  for (std::size_t i = 0; i < mix().size(); ++i) {
    pick -= mix()[i].weight;
    if (pick <= 0) return i;
  }
  return 0;
}

std::int64_t wait_time_us(Rng& rng, const MixEntry& entry) {
  // r in (0, 1]: log(r) is finite.
  const double r = 1.0 - rng.uniform01();
  const double think =
      std::min(-std::log(r) * entry.mean_think_seconds, 10 * entry.mean_think_seconds);
  return static_cast<std::int64_t>((entry.keying_seconds + think) * 1e6);
}

}  // namespace pgslow::workload::tpcc
