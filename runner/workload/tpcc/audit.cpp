#include "workload/tpcc/audit.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "common/format.h"
#include "workload/tpcc/constants.h"
#include "workload/tpcc/isolation.h"
#include "workload/tpcc/mix.h"

namespace pgslow::workload::tpcc {

const std::vector<std::string>& counter_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {
        "delivery_districts", "delivery_skipped",   "deliveries_with_skip", "new_orders_drawn",
        "order_lines",        "remote_order_lines", "rollbacks_drawn",      "payments_drawn",
        "remote_payments",    "payments_by_name",   "order_status_drawn",   "order_status_by_name"};
    for (std::size_t i = 0; i < kLineCounts; ++i)
      n.push_back(fmt::format("orders_with_{}_lines", kMinOrderLines + static_cast<int>(i)));
    for (std::size_t i = 0; i < kSpreadBins; ++i)
      n.push_back(fmt::format("remote_lines_bin_{}", i));
    for (std::size_t i = 0; i < kSpreadBins; ++i)
      n.push_back(fmt::format("remote_payments_bin_{}", i));
    return n;
  }();
  return names;
}

std::size_t spread_bin(std::int64_t home, std::int64_t remote, int warehouses) {
  const std::int64_t w = std::max(2, warehouses);
  const std::int64_t distance = ((remote - home) % w + w) % w;  // 1 .. W-1
  return static_cast<std::size_t>((std::max<std::int64_t>(distance, 1) - 1) *
                                  static_cast<std::int64_t>(kSpreadBins) / (w - 1));
}

namespace {

// Four standard deviations: a right generator lands further off 1 time in 15,787.
constexpr std::int64_t kSdSquared = 16;

// ceil(16 variance / half_width^2): draws that put the band's nearer edge 4 sd away.
std::uint64_t draws_for(std::int64_t variance, std::int64_t half_width) {
  const std::int64_t w2 = half_width * half_width;
  return static_cast<std::uint64_t>((kSdSquared * variance + w2 - 1) / w2);
}

}  // namespace

std::uint64_t min_draws(const Band& band) {
  return draws_for(band.expected * (10'000 - band.expected),
                   std::min(band.expected - band.low, band.high - band.expected));
}

namespace {

using results::AuditRow;
using results::TxTypeResult;

// Clause 9.2.2.5's bands, in basis points.
constexpr Band kRollbackBand{100, 90, 110};           // 2.4.1.4: 1%, 0.9 .. 1.1%
constexpr Band kRemoteLineBand{100, 95, 105};         // 2.4.1.5: 1%, 0.95 .. 1.05%
constexpr Band kRemotePaymentBand{1500, 1400, 1600};  // 2.5.1.2: 15%, 14 .. 16%
constexpr Band kByNameBand{6000, 5700, 6300};         // 2.5.1.2, 2.6.1.2: 60%, 57 .. 63%
// Lines per order (2.4.1.3): mean 10 within 9.5 .. 10.5, in tenths; uniform over 5 .. 15, so
// the variance is (11^2 - 1) / 12 = 10 lines^2, 1,000 in tenths^2.
constexpr std::int64_t kLinesMean = 100, kLinesHalfWidth = 5, kLinesVariance = 1000;

// The upper 1-in-15,787 points of chi-square with 1 .. 10 degrees of freedom: the same odds
// as the bands' 4 sd (with one degree of freedom it is 4^2).
constexpr std::array<double, 10> kChiSquareLimit = {16.00, 19.33, 22.06, 24.50, 26.77,
                                                    28.91, 30.96, 32.93, 34.85, 36.72};
// A chi-square test needs at least this many draws expected in every bin.
constexpr double kMinExpectedPerBin = 5;

// A p90 needs this many finished transactions: with fewer it is the slowest one or two.
constexpr std::uint64_t kMinFinishedForP90 = 10;
// Think-time draws a type's mean needs: its lower bound, mean (1 - 4 / sqrt(n)) (the
// exponential's sd is its mean), is then at least half the spec's mean.
constexpr std::uint64_t kMinThinkDraws = 64;
// Steady state: a mean this high (New-Orders per minute) before 4 sd exclude an empty minute.
constexpr double kMinSteadyMean = 16;

std::uint64_t counter(const RunCounts& run, std::size_t c) {
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

std::string basis_points(std::int64_t bp) {
  return fmt::format("{:.2f}%", static_cast<double>(bp) / 100);
}

std::string not_enough(std::uint64_t n, std::uint64_t needed) {
  return fmt::format("not enough draws ({} of at least {})", format_count(n), format_count(needed));
}

// A drawn rate: `hits` of `n` draws within the band, once n is enough to judge it.
AuditRow band_rate(std::string clause, std::string rule, const Band& band, std::uint64_t hits,
                   std::uint64_t n) {
  const std::uint64_t needed = min_draws(band);
  if (n < needed) return {std::move(clause), std::move(rule), not_enough(n, needed), false};
  const auto scaled = static_cast<std::int64_t>(hits) * 10'000;
  const auto draws = static_cast<std::int64_t>(n);
  return {std::move(clause), std::move(rule),
          fmt::format("{} of {} ({}; allowed {} to {})", format_count(hits), format_count(n),
                      percent(static_cast<double>(hits) / static_cast<double>(n)),
                      basis_points(band.low), basis_points(band.high)),
          scaled >= draws * band.low && scaled <= draws * band.high};
}

// A rate that cannot be drawn on one warehouse (remote lines and Payments): none may be.
AuditRow remote_rate(const RunCounts& run, std::string clause, std::string rule, const Band& band,
                     std::uint64_t hits, std::uint64_t n) {
  if (run.scale > 1) return band_rate(std::move(clause), std::move(rule), band, hits, n);
  return {std::move(clause), std::move(rule),
          fmt::format("{} of {} on one warehouse, where none can be", format_count(hits),
                      format_count(n)),
          hits == 0};
}

// Counts against expected shares (`weights`, summing to 1) by chi-square, once every bin of a
// share expects kMinExpectedPerBin draws; a draw in a bin of no share fails outright.
AuditRow uniform(std::string clause, std::string rule, const std::vector<std::uint64_t>& counts,
                 const std::vector<double>& weights) {
  std::uint64_t n = 0;
  double least = 1;
  std::size_t bins = 0;
  std::uint64_t impossible = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    n += counts[i];
    if (weights[i] > 0) {
      ++bins;
      least = std::min(least, weights[i]);
    } else {
      impossible += counts[i];
    }
  }
  // (Less a hair: 5 / (1 / 11) must be 55, not 55.000000000000007 rounded up.)
  const auto needed = static_cast<std::uint64_t>(std::ceil(kMinExpectedPerBin / least - 1e-9));
  if (n < needed) return {std::move(clause), std::move(rule), not_enough(n, needed), false};
  double chi2 = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (weights[i] <= 0) continue;
    const double expected = weights[i] * static_cast<double>(n);
    const double off = static_cast<double>(counts[i]) - expected;
    chi2 += off * off / expected;
  }
  const double limit = kChiSquareLimit[std::clamp<std::size_t>(bins, 2, 11) - 2];
  return {
      std::move(clause), std::move(rule),
      fmt::format("chi-square {:.2f} over {} bins of {} draws{} (allowed up to {:.2f})", chi2, bins,
                  format_count(n),
                  impossible > 0 ? fmt::format(", {} where none can be", impossible) : "", limit),
      impossible == 0 && chi2 <= limit};
}

// The remote warehouses of `first` .. first + kSpreadBins counters, spread over the other
// warehouses (2.4.1.5, 2.5.1.2: chosen at random among them).
AuditRow spread(const RunCounts& run, std::string clause, std::string rule, std::size_t first) {
  std::vector<std::uint64_t> counts(kSpreadBins);
  for (std::size_t b = 0; b < kSpreadBins; ++b) counts[b] = counter(run, first + b);
  std::vector<double> weights(kSpreadBins, 0);
  const auto others = static_cast<double>(run.scale - 1);
  for (int d = 1; d < run.scale; ++d) weights[spread_bin(0, d, run.scale)] += 1 / others;
  return uniform(std::move(clause), std::move(rule), counts, weights);
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

// 3.4: the read-write transactions at a level that excludes the phenomena 3.4.0.1 lists for
// them (PostgreSQL's repeatable read and serializable); Order-Status reads one snapshot and
// Stock-Level is read only at every level (tpcc.cpp).
void isolation(const RunCounts& run, std::vector<AuditRow>& rows) {
  const Isolation level = isolation_option(run.options);
  const auto it = run.options.find("isolation");
  rows.push_back({"3.4",
                  "read-write transactions at repeatable read or serializable (Order-Status in "
                  "one snapshot, Stock-Level read only)",
                  it == run.options.end() ? "read-committed (the default)" : it->second,
                  level != Isolation::kReadCommitted});
}

// 5.2.5.7: each type's mean keying time at least its keying time (a fixed wait) and its mean
// think time at least the spec's mean, less 4 sd of a mean of n exponential draws.
void waits(const RunCounts& run, std::vector<AuditRow>& rows) {
  if (!run.think_time) {
    rows.push_back({"5.2.5.7", "keying and think times waited", "off (--think-time)", false});
    return;
  }
  for (std::size_t i = 0; i < typed(run); ++i) {
    const MixEntry& e = mix()[i];
    const RunCounts::TypeWaits w =
        i < run.waits_by_type.size() ? run.waits_by_type[i] : RunCounts::TypeWaits{};
    std::string rule = fmt::format("{} mean keying at least {:g} s, mean think at least {:g} s",
                                   e.name, e.keying_seconds, e.mean_think_seconds);
    const std::uint64_t draws = std::min(w.keyings, w.thinks);
    if (draws < kMinThinkDraws) {
      rows.push_back({"5.2.5.7", std::move(rule), not_enough(draws, kMinThinkDraws), false});
      continue;
    }
    const auto keyings = static_cast<double>(w.keyings);
    const auto thinks = static_cast<double>(w.thinks);
    const double think_floor = e.mean_think_seconds * (1 - 4 / std::sqrt(thinks));
    rows.push_back(
        {"5.2.5.7", std::move(rule),
         fmt::format("keying {:.2f} s over {}, think {:.2f} s over {} (allowed from "
                     "{:.2f} s and {:.2f} s)",
                     w.keying_s / keyings, format_count(w.keyings), w.think_s / thinks,
                     format_count(w.thinks), kMinWaitedShare * e.keying_seconds, think_floor),
         w.keying_s >= kMinWaitedShare * e.keying_seconds * keyings &&
             w.think_s >= think_floor * thinks});
  }
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

// Clause 9.2.2.5's bands for what the terminals drew.
void drawn_rates(const RunCounts& run, std::vector<AuditRow>& rows) {
  const std::uint64_t orders = counter(run, kNewOrdersDrawn);
  const std::uint64_t lines = counter(run, kOrderLines);
  const std::string mean_rule = "order lines per New-Order 9.5 to 10.5 on average";
  const std::uint64_t needed = draws_for(kLinesVariance, kLinesHalfWidth);
  if (orders < needed) {
    rows.push_back({"2.4.1.3", mean_rule, not_enough(orders, needed), false});
  } else {
    const auto tenths = static_cast<std::int64_t>(lines) * 10;
    const auto n = static_cast<std::int64_t>(orders);
    rows.push_back({"2.4.1.3", mean_rule,
                    fmt::format("{:.2f} over {} New-Orders",
                                static_cast<double>(lines) / static_cast<double>(orders),
                                format_count(orders)),
                    tenths >= n * (kLinesMean - kLinesHalfWidth) &&
                        tenths <= n * (kLinesMean + kLinesHalfWidth)});
  }
  std::vector<std::uint64_t> by_count(kLineCounts);
  for (std::size_t i = 0; i < kLineCounts; ++i) by_count[i] = counter(run, kOrdersWith5Lines + i);
  rows.push_back(uniform("2.4.1.3", "order lines per New-Order uniform over 5 to 15", by_count,
                         std::vector<double>(kLineCounts, 1.0 / kLineCounts)));
  rows.push_back(band_rate("2.4.1.4", "New-Orders rolled back by design 0.9% to 1.1%",
                           kRollbackBand, counter(run, kRollbacksDrawn), orders));
  rows.push_back(remote_rate(run, "2.4.1.5", "order lines from a remote warehouse 0.95% to 1.05%",
                             kRemoteLineBand, counter(run, kRemoteOrderLines), lines));
  // With two warehouses every remote one is the other: nothing to spread.
  if (run.scale > 2)
    rows.push_back(spread(run, "2.4.1.5", "remote order lines spread over the other warehouses",
                          kRemoteLineBins));
  rows.push_back(remote_rate(run, "2.5.1.2", "Payments through a remote warehouse 14% to 16%",
                             kRemotePaymentBand, counter(run, kRemotePayments),
                             counter(run, kPaymentsDrawn)));
  if (run.scale > 2)
    rows.push_back(spread(run, "2.5.1.2", "remote Payments spread over the other warehouses",
                          kRemotePaymentBins));
  rows.push_back(band_rate("2.5.1.2", "Payment customers by last name 57% to 63%", kByNameBand,
                           counter(run, kPaymentsByName), counter(run, kPaymentsDrawn)));
  rows.push_back(band_rate("2.6.1.2", "Order-Status customers by last name 57% to 63%", kByNameBand,
                           counter(run, kOrderStatusByName), counter(run, kOrderStatusDrawn)));
}

void response_times(const RunCounts& run, std::vector<AuditRow>& rows) {
  for (std::size_t i = 0; i < typed(run); ++i) {
    const TxTypeResult& t = run.by_type[i];
    const double limit_s = mix()[i].p90_limit_seconds;
    const std::uint64_t in_flight = i < run.in_flight_by_type.size() ? run.in_flight_by_type[i] : 0;
    const auto p90 = p90_with_unfinished_us(t, in_flight);
    std::string rule = fmt::format(
        "{} p90 at most {:.0f} s, failed and in-flight ones counted as slower", t.name, limit_s);
    if (finished(t) < kMinFinishedForP90) {
      rows.push_back({"5.2.5.3", std::move(rule),
                      fmt::format("not enough finished ({} of at least {}; {} failed, {} in "
                                  "flight at the end)",
                                  format_count(finished(t)), kMinFinishedForP90,
                                  format_count(t.failed), format_count(in_flight)),
                      false});
      continue;
    }
    rows.push_back(
        {"5.2.5.3", std::move(rule),
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

// 4.2.2: terminals that wait their keying and think times commit at most 12.86 New-Orders per
// minute per warehouse on average. A healthy run near it lands above it by chance half the
// time, so the row allows 4 sd of a Poisson count over the ceiling: a driver that does not wait
// is many times over it.
void ceiling(const RunCounts& run, std::vector<AuditRow>& rows) {
  const TxTypeResult* no = run.by_type.empty() ? nullptr : &run.by_type[0];
  const double minutes = run.duration_s / 60;
  const double count = no != nullptr ? static_cast<double>(finished(*no)) : 0.0;
  const double rate = minutes > 0 ? count / minutes : 0.0;
  const double most = kMaxTpmcPerWarehouse * std::max(1, run.scale);
  const double allowed = most * minutes + 4 * std::sqrt(most * minutes);
  rows.push_back(
      {"4.2.2",
       fmt::format("New-Orders/min at most 12.86 per warehouse ({:.2f}), within 4 sd", most),
       fmt::format("{}, efficiency {}% of the ceiling ({} New-Orders, allowed {:.0f})",
                   format_number(rate, 4), format_number(100 * rate / most, 4),
                   format_count(static_cast<std::uint64_t>(count)), std::floor(allowed)),
       count <= allowed});
}

void interval(const RunCounts& run, std::vector<AuditRow>& rows) {
  rows.push_back({"5.5.1.1",
                  fmt::format("measured interval at least {} min", kMinMeasuredSeconds / 60),
                  format_seconds(run.duration_s), run.duration_s >= kMinMeasuredSeconds});
}

// Steady state: every whole minute's New-Orders within 4 standard deviations of their mean
// (a Poisson count's: the terminals' think times make arrivals about Poisson), over at least
// two minutes; a ramp or a falling server shows as a minute off the mean. Judged only when the
// mean is above 16, where 4 sd (4 sqrt(mean)) no longer reach an empty minute.
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
  if (mean <= kMinSteadyMean) {
    rows.push_back({"5.5.1.1", rule,
                    fmt::format("not enough New-Orders per minute to judge (mean {:.1f} over {} "
                                "minutes; above {:.0f} lets 4 sd exclude an empty minute)",
                                mean, counts.size(), kMinSteadyMean),
                    false});
    return;
  }
  const double tolerance = 4 * std::sqrt(mean);
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
  isolation(run, rows);
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
