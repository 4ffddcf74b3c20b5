#include "workload/tpcc/audit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/format.h"
#include "workload/tpcc/constants.h"
#include "workload/tpcc/mix.h"

namespace pgslow::workload::tpcc {

const std::vector<std::string>& counter_names() {
  static const std::vector<std::string> names = {
      "delivery_districts", "delivery_skipped",   "deliveries_with_skip", "new_orders_drawn",
      "order_lines",        "remote_order_lines", "rollbacks_drawn",      "payments_drawn",
      "remote_payments",    "customer_lookups",   "lookups_by_name"};
  return names;
}

Range drawn_range(double p, double n) {
  if (n <= 0) return {p, p};
  const double sd = std::sqrt(p * (1 - p) / n);
  return {std::max(0.0, p - 4 * sd), std::min(1.0, p + 4 * sd)};
}

namespace {

using results::AuditRow;
using results::TxTypeResult;

std::uint64_t counter(const RunCounts& run, Counter c) {
  return c < run.counters.size() ? run.counters[c] : 0;
}

std::uint64_t finished(const TxTypeResult& t) {
  return t.committed + t.rolled_back;
}

// How many of the run's types have their row of the mix table (both in mix() order).
std::size_t typed(const RunCounts& run) {
  return std::min(run.by_type.size(), mix().size());
}

std::string percent(double share) {
  return fmt::format("{:.2f}%", 100 * share);
}

// A drawn rate: `hits` of `n` draws against probability p, within drawn_range.
AuditRow drawn_rate(std::string clause, std::string rule, double p, std::uint64_t hits,
                    std::uint64_t n) {
  if (n == 0) return {std::move(clause), std::move(rule), "none drawn in the window", false};
  const double share = static_cast<double>(hits) / static_cast<double>(n);
  const Range r = drawn_range(p, static_cast<double>(n));
  return {std::move(clause), std::move(rule),
          fmt::format("{} of {} ({}; allowed {} to {})", format_count(hits), format_count(n),
                      percent(share), percent(r.low), percent(r.high)),
          share >= r.low && share <= r.high};
}

// A rate that cannot be drawn on one warehouse (remote lines and Payments): none may be.
AuditRow remote_rate(const RunCounts& run, std::string clause, std::string rule, double p,
                     std::uint64_t hits, std::uint64_t n) {
  if (run.scale > 1) return drawn_rate(std::move(clause), std::move(rule), p, hits, n);
  return {std::move(clause), std::move(rule),
          fmt::format("{} of {} on one warehouse, where none can be", format_count(hits),
                      format_count(n)),
          hits == 0};
}

// The p90 of a type counting its failed transactions and those in flight at the end as slower
// than any: an upper bound read from the summary's percentiles; nullopt when more than all of
// the finished ones would have to be faster.
std::optional<double> p90_with_unfinished_us(const TxTypeResult& t, std::uint64_t in_flight) {
  const double n = static_cast<double>(finished(t));
  const double k = static_cast<double>(t.failed + in_flight);
  if (n == 0) return k > 0 ? std::nullopt : std::optional<double>(0);
  const double q = 0.9 * (n + k) / n;
  const auto& l = t.latency;
  if (q <= 0.90) return l.p90_us;
  if (q <= 0.95) return l.p95_us;
  if (q <= 0.99) return l.p99_us;
  if (q <= 0.999) return l.p999_us;
  if (q <= 1.0) return l.max_us;
  return std::nullopt;
}

void terminals(const RunCounts& run, std::vector<AuditRow>& rows) {
  const int wanted = std::max(1, run.scale) * kTerminalsPerWarehouse;
  rows.push_back({"4.2.2", "10 terminals per warehouse",
                  fmt::format("{} terminals for {} warehouse{}", run.clients, run.scale,
                              run.scale == 1 ? "" : "s"),
                  run.clients == wanted});
}

void waits(const RunCounts& run, std::vector<AuditRow>& rows) {
  const std::string rule = fmt::format("keying and think times waited (at least {:.0f}% of each)",
                                       100 * kMinWaitedShare);
  if (!run.think_time) {
    rows.push_back({"5.2.5.7", rule, "off (--think-time)", false});
    return;
  }
  auto share = [](double waited, double asked) { return asked > 0 ? waited / asked : 0.0; };
  const double keying = share(run.keying_waited_s, run.keying_asked_s);
  const double think = share(run.think_waited_s, run.think_asked_s);
  rows.push_back(
      {"5.2.5.7", rule,
       fmt::format("keying {} of {} asked ({}), think {} of {} ({})",
                   format_seconds(run.keying_waited_s), format_seconds(run.keying_asked_s),
                   percent(keying), format_seconds(run.think_waited_s),
                   format_seconds(run.think_asked_s), percent(think)),
       keying >= kMinWaitedShare && think >= kMinWaitedShare});
}

void shares(const RunCounts& run, std::vector<AuditRow>& rows) {
  std::uint64_t all = 0;
  for (const auto& t : run.by_type) all += finished(t);
  for (std::size_t i = 0; i < typed(run); ++i) {
    const double minimum = mix()[i].min_share_percent;
    if (minimum <= 0) continue;  // New-Order: the measured rate itself
    const TxTypeResult& t = run.by_type[i];
    const double share =
        all > 0 ? static_cast<double>(finished(t)) / static_cast<double>(all) : 0.0;
    rows.push_back(
        {"5.2.3", fmt::format("{} share at least {:.0f}%", t.name, minimum),
         fmt::format("{} of {} ({})", format_count(finished(t)), format_count(all), percent(share)),
         all > 0 && 100 * share >= minimum});
  }
}

void drawn_rates(const RunCounts& run, std::vector<AuditRow>& rows) {
  const std::uint64_t orders = counter(run, kNewOrdersDrawn);
  const std::uint64_t lines = counter(run, kOrderLines);
  // Lines per order: uniform 5 .. 15, mean 10, variance (11^2 - 1) / 12 = 10.
  if (orders == 0) {
    rows.push_back({"2.4.1.3", "order lines per New-Order 10 on average (5 to 15)",
                    "none drawn in the window", false});
  } else {
    const double mean = static_cast<double>(lines) / static_cast<double>(orders);
    const double tolerance = 4 * std::sqrt(10.0 / static_cast<double>(orders));
    rows.push_back({"2.4.1.3", "order lines per New-Order 10 on average (5 to 15)",
                    fmt::format("{:.2f} over {} New-Orders (allowed {:.2f} to {:.2f})", mean,
                                format_count(orders), 10 - tolerance, 10 + tolerance),
                    std::abs(mean - 10) <= tolerance});
  }
  rows.push_back(drawn_rate("2.4.1.4", "New-Orders rolled back by design 1%", 0.01,
                            counter(run, kRollbacksDrawn), orders));
  rows.push_back(remote_rate(run, "2.4.1.5", "order lines from a remote warehouse 1%", 0.01,
                             counter(run, kRemoteOrderLines), lines));
  rows.push_back(remote_rate(run, "2.5.1.2", "Payments through a remote warehouse 15%", 0.15,
                             counter(run, kRemotePayments), counter(run, kPaymentsDrawn)));
  rows.push_back(drawn_rate("2.5.1.2, 2.6.1.2",
                            "Payment and Order-Status customers by last name 60%", 0.60,
                            counter(run, kLookupsByName), counter(run, kCustomerLookups)));
}

void response_times(const RunCounts& run, std::vector<AuditRow>& rows) {
  for (std::size_t i = 0; i < typed(run); ++i) {
    const TxTypeResult& t = run.by_type[i];
    const double limit_s = mix()[i].p90_limit_seconds;
    const std::uint64_t in_flight = i < run.in_flight_by_type.size() ? run.in_flight_by_type[i] : 0;
    const auto p90 = p90_with_unfinished_us(t, in_flight);
    rows.push_back(
        {"5.2.5.3",
         fmt::format("{} p90 at most {:.0f} s, failed and in-flight ones counted as slower", t.name,
                     limit_s),
         fmt::format("{} ({} finished, {} failed, {} in flight at the end)",
                     p90 ? format_latency_us(*p90) : std::string("beyond the slowest finished"),
                     format_count(finished(t)), format_count(t.failed), format_count(in_flight)),
         p90.has_value() && *p90 <= limit_s * 1e6});
  }
}

void failures(const RunCounts& run, std::vector<AuditRow>& rows) {
  std::uint64_t failed = 0;
  for (const auto& t : run.by_type) failed += t.failed;
  const std::string tries =
      run.max_tries == 0 ? "retried until commit" : fmt::format("after {} tries", run.max_tries);
  rows.push_back({"pgslow", "no transaction failed after its retries",
                  fmt::format("{} failed ({})", format_count(failed), tries), failed == 0});
}

void delivery_skips(const RunCounts& run, std::vector<AuditRow>& rows) {
  const std::uint64_t districts = counter(run, kDeliveryDistricts);
  const double deliveries = static_cast<double>(districts) / kDistrictsPerWarehouse;
  const std::uint64_t with_skip = counter(run, kDeliveriesWithSkip);
  // More than 1% of the Deliveries, or more than one, whichever is greater.
  const double allowed = std::max(0.01 * deliveries, 1.0);
  rows.push_back({"2.7.4.2", "Deliveries with a skipped district at most 1% (or one)",
                  fmt::format("{} of {:.0f} Deliveries", format_count(with_skip), deliveries),
                  static_cast<double>(with_skip) <= allowed});
}

void ceiling(const RunCounts& run, std::vector<AuditRow>& rows) {
  const TxTypeResult* no = run.by_type.empty() ? nullptr : &run.by_type[0];
  const double minutes = run.duration_s / 60;
  const double rate =
      no != nullptr && minutes > 0 ? static_cast<double>(finished(*no)) / minutes : 0.0;
  const double most = kMaxTpmcPerWarehouse * std::max(1, run.scale);
  rows.push_back({"4.2.2", fmt::format("New-Orders/min at most 12.86 per warehouse ({:.2f})", most),
                  fmt::format("{}, efficiency {}% of the ceiling", format_number(rate, 4),
                              format_number(100 * rate / most, 4)),
                  rate <= most});
}

void interval(const RunCounts& run, std::vector<AuditRow>& rows) {
  rows.push_back({"5.5.1.1",
                  fmt::format("measured interval at least {} (the spec's 120 min is not claimed)",
                              format_seconds(kMinMeasuredSeconds)),
                  format_seconds(run.duration_s), run.duration_s >= kMinMeasuredSeconds});
}

// Steady state: every whole minute's New-Orders within 4 standard deviations of their mean
// (a Poisson count's: the terminals' think times make arrivals about Poisson), over at least
// two minutes; a ramp or a falling server shows as a minute off the mean.
void steady_state(const RunCounts& run, std::vector<AuditRow>& rows) {
  const std::string rule = "New-Orders per minute steady (each within 4 sd of the mean)";
  std::vector<double> counts;
  for (const auto& minute : run.per_minute)
    counts.push_back(minute.empty() ? 0.0 : static_cast<double>(minute[0]));
  if (counts.size() < 2) {
    rows.push_back({"5.5.1.1", rule,
                    fmt::format("{} whole minute{}: too few to judge", counts.size(),
                                counts.size() == 1 ? "" : "s"),
                    false});
    return;
  }
  double mean = 0;
  for (double c : counts) mean += c;
  mean /= static_cast<double>(counts.size());
  const double tolerance = 4 * std::sqrt(std::max(mean, 1.0));
  double worst = 0;
  for (double c : counts) worst = std::max(worst, std::abs(c - mean));
  rows.push_back({"5.5.1.1", rule,
                  fmt::format("{} minutes, mean {:.1f}, farthest {:.1f} off (allowed {:.1f})",
                              counts.size(), mean, worst, tolerance),
                  worst <= tolerance});
}

// The driver's count of New-Order commits between the two reads of sum(D_NEXT_O_ID) against
// the probe's rise: at least the sure ones, at most those plus the ones in flight at a read.
void cross_check(const RunCounts& run, std::vector<AuditRow>& rows) {
  const std::string rule = "sum(D_NEXT_O_ID) rose by the New-Orders committed between its reads";
  if (!run.probe_delta) {
    rows.push_back({"pgslow", rule,
                    run.probe_error.empty() ? "not read" : "not read: " + run.probe_error, false});
    return;
  }
  const double low = static_cast<double>(run.probe_sure);
  const double high = low + static_cast<double>(run.probe_in_flight);
  rows.push_back({"pgslow", rule,
                  fmt::format("rose by {:.0f}; the driver saw {:.0f} commit between the reads and "
                              "{} in flight at one",
                              *run.probe_delta, low, format_count(run.probe_in_flight)),
                  *run.probe_delta >= low && *run.probe_delta <= high});
}

}  // namespace

std::vector<results::AuditRow> audit_run(const RunCounts& run) {
  std::vector<AuditRow> rows;
  terminals(run, rows);
  waits(run, rows);
  shares(run, rows);
  drawn_rates(run, rows);
  response_times(run, rows);
  failures(run, rows);
  delivery_skips(run, rows);
  ceiling(run, rows);
  interval(run, rows);
  steady_state(run, rows);
  cross_check(run, rows);
  return rows;
}

std::vector<std::string> failed_rules(const std::vector<results::AuditRow>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows)
    if (!r.passed) out.push_back(fmt::format("{} ({}): {}", r.rule, r.clause, r.measured));
  return out;
}

}  // namespace pgslow::workload::tpcc
