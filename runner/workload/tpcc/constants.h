#pragma once
// Cardinalities of the TPC-C database (clause 1.2 and 4.3.3.1), the one place they are named.

#include <cstdint>

namespace pgslow::workload::tpcc {

inline constexpr int kItems = 100'000;             // ITEM rows (4.3.3.1)
inline constexpr int kStockPerWarehouse = kItems;  // STOCK rows per warehouse
inline constexpr int kDistrictsPerWarehouse = 10;
inline constexpr int kTerminalsPerWarehouse = 10;  // 4.2.2: one per district
inline constexpr int kCustomersPerDistrict = 3'000;
inline constexpr int kOrdersPerDistrict = 3'000;   // initial ORDER rows per district
inline constexpr int kNewOrdersPerDistrict = 900;  // the last 900 orders are undelivered
inline constexpr int kFirstUndeliveredOrder = kOrdersPerDistrict - kNewOrdersPerDistrict + 1;
inline constexpr int kMinOrderLines = 5;  // O_OL_CNT is random within [5 .. 15]
inline constexpr int kMaxOrderLines = 15;
inline constexpr int kLastNames = 1'000;  // syllable numbers 000 .. 999 (4.3.2.3)

}  // namespace pgslow::workload::tpcc
