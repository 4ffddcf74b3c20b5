#pragma once
// The audit of a run: the rules its New-Order rate must meet to be called tpmC, as one table
// of rows keyed by the spec's clause (like checks.cpp's table, but of the measurement), each
// measured from the run and passed or failed. A row with too few draws to judge says "not
// enough draws (N of at least M)" and fails: the label is withheld, never given on luck.
// docs/tpcc-lite.md lists the rows.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "workload/workload.h"

namespace pgslow::workload::tpcc {

// Remote warehouses' spread is counted in this many bins of the other warehouses (audit.cpp).
inline constexpr std::size_t kSpreadBins = 10;
// Order lines per New-Order, 5 .. 15 (2.4.1.3): one counter per count.
inline constexpr std::size_t kLineCounts = 11;

// The clients' counters (Workload::counter_names()), summed over the measured transactions:
// Delivery's skips, and the inputs the terminals drew, so the audit can check their rates.
enum Counter : std::size_t {
  kDeliveryDistricts,
  kDeliverySkipped,
  kDeliveriesWithSkip,
  kNewOrdersDrawn,
  kOrderLines,
  kRemoteOrderLines,
  kRollbacksDrawn,
  kPaymentsDrawn,
  kRemotePayments,
  kPaymentsByName,
  kOrderStatusDrawn,
  kOrderStatusByName,
  kOrdersWith5Lines,  // kLineCounts counters: orders of 5, 6, ... 15 lines
  kRemoteLineBins = kOrdersWith5Lines + kLineCounts,   // kSpreadBins counters
  kRemotePaymentBins = kRemoteLineBins + kSpreadBins,  // kSpreadBins counters
  kCounters = kRemotePaymentBins + kSpreadBins
};
const std::vector<std::string>& counter_names();

// The bin of remote warehouse `remote` seen from `home` of `warehouses` (at least 2): its
// distance (remote - home) mod W, 1 .. W-1, cut into kSpreadBins bins of near-equal width.
std::size_t spread_bin(std::int64_t home, std::int64_t remote, int warehouses);

// The shortest measured interval whose New-Order figure can be called tpmC (5.5.1.1).
inline constexpr double kMinMeasuredSeconds = 120 * 60;
// tpmC per warehouse at most: 10 terminals that each wait their keying and think times.
inline constexpr double kMaxTpmcPerWarehouse = 12.86;
// The share of its keying time (5.2.5.7) a type's mean keying wait must reach.
inline constexpr double kMinWaitedShare = 0.99;

// A drawn rate's band from Clause 9.2.2.5, in hundredths of a percent (basis points).
struct Band {
  std::int64_t expected, low, high;
};
// The draws a band needs before it can be judged: enough that a right generator lands inside
// it but for 1 time in 15,000 (the band at least 4 standard deviations from the expected rate
// on its nearer side).
std::uint64_t min_draws(const Band& band);

// The rows, in the order docs/tpcc-lite.md lists them.
std::vector<results::AuditRow> audit_run(const RunCounts& run);

// "5.2.3 payment share at least 43%: 41.0% of 1,000" for each failed row.
std::vector<std::string> failed_rules(const std::vector<results::AuditRow>& rows);

}  // namespace pgslow::workload::tpcc
