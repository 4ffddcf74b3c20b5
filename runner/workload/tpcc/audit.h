#pragma once
// The audit of a run: the rules its New-Order rate must meet to be called tpmC, as one table
// of rows keyed by the spec's clause (like checks.cpp's table, but of the measurement), each
// measured from the run and passed or failed. docs/tpcc-lite.md lists them.

#include <cstddef>
#include <string>
#include <vector>

#include "workload/workload.h"

namespace pgslow::workload::tpcc {

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
  kCustomerLookups,  // Payment and Order-Status
  kLookupsByName,
  kCounters
};
const std::vector<std::string>& counter_names();

// The shortest measured interval whose New-Order figure can be called tpmC (the spec asks for
// 120 minutes of steady state, 5.5.1.1; tpcc-lite claims less, and says so).
inline constexpr double kMinMeasuredSeconds = 300;
// tpmC per warehouse at most: 10 terminals that each wait their keying and think times.
inline constexpr double kMaxTpmcPerWarehouse = 12.86;
// The share of a wait the driver must have waited of what the terminal asked for.
inline constexpr double kMinWaitedShare = 0.99;

// The allowed range of a rate drawn n times with probability p: p within 4 standard
// deviations (a draw further off means a wrong generator, not bad luck: 1 in 15,000).
struct Range {
  double low, high;
};
Range drawn_range(double p, double n);

// The rows, in the order docs/tpcc-lite.md lists them.
std::vector<results::AuditRow> audit_run(const RunCounts& run);

// "5.2.3 payment share at least 43%: 41.0% of 1,000" for each failed row.
std::vector<std::string> failed_rules(const std::vector<results::AuditRow>& rows);

}  // namespace pgslow::workload::tpcc
