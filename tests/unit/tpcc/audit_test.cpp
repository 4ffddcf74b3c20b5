#include "workload/tpcc/audit.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "workload/tpcc/mix.h"
#include "workload/tpcc/tpcc.h"

namespace pgslow::workload::tpcc {
namespace {

results::TxTypeResult type(std::string name, std::uint64_t committed, double p90_s) {
  results::TxTypeResult t;
  t.name = std::move(name);
  t.committed = committed;
  t.latency.p50_us = 0.5e6;
  t.latency.p90_us = p90_s * 1e6;
  t.latency.p95_us = 6e6;
  t.latency.p99_us = 7e6;
  t.latency.p999_us = 8e6;
  t.latency.max_us = 9e6;
  return t;
}

constexpr int kWarehouses = 201;  // 200 others: each spread bin holds 20 of them

// A two-hour run of 201 warehouses' terminals that passes every row: enough draws for every
// band of 9.2.2.5 (158,400 New-Orders for the rollbacks' band), each rate at its expected value.
RunCounts passing() {
  RunCounts r;
  r.duration_s = kMinMeasuredSeconds;
  r.scale = kWarehouses;
  r.clients = kWarehouses * 10;
  r.think_time = true;
  r.max_tries = 0;
  r.options["isolation"] = "serializable";
  constexpr std::uint64_t kOrders = 198'000;  // 18,000 of each line count 5 .. 15
  r.by_type = {type("new_order", kOrders - 1'980, 1), type("payment", kOrders, 1),
               type("order_status", 20'000, 1), type("delivery", 20'000, 1),
               type("stock_level", 20'000, 1)};
  r.by_type[0].rolled_back = 1'980;
  for (std::size_t i = 0; i < mix().size(); ++i)
    r.waits_by_type.push_back({.keyings = 1'000,
                               .thinks = 1'000,
                               .keying_s = 1'000 * mix()[i].keying_seconds,
                               .think_s = 1'000 * mix()[i].mean_think_seconds});
  r.counters.assign(kCounters, 0);
  r.counters[kNewOrdersDrawn] = kOrders;
  r.counters[kOrderLines] = kOrders * 10;
  for (std::size_t i = 0; i < kLineCounts; ++i) r.counters[kOrdersWith5Lines + i] = 18'000;
  r.counters[kRollbacksDrawn] = 1'980;     // 1%
  r.counters[kRemoteOrderLines] = 19'800;  // 1% of 1,980,000 lines
  r.counters[kPaymentsDrawn] = kOrders;
  r.counters[kRemotePayments] = 29'700;   // 15%
  r.counters[kPaymentsByName] = 118'800;  // 60%
  r.counters[kOrderStatusDrawn] = 20'000;
  r.counters[kOrderStatusByName] = 12'000;  // 60%
  for (std::size_t b = 0; b < kSpreadBins; ++b) {
    r.counters[kRemoteLineBins + b] = 1'980;
    r.counters[kRemotePaymentBins + b] = 2'970;
  }
  r.counters[kDeliveryDistricts] = 200'000;
  r.in_flight_by_type.assign(5, 0);
  r.per_minute.assign(120, std::vector<std::uint64_t>{1'650, 1'650, 166, 166, 166});
  r.probe_delta = 196'000;
  r.probe_sure = 195'000;
  r.probe_in_flight = 2'000;
  return r;
}

// The row whose rule starts with `rule`.
results::AuditRow row(const RunCounts& run, const std::string& rule) {
  for (const auto& r : audit_run(run))
    if (r.rule.starts_with(rule)) return r;
  ADD_FAILURE() << "no row " << rule;
  return {};
}

bool passes(const RunCounts& run, const std::string& rule) {
  return row(run, rule).passed;
}

TEST(Audit, APassingRunEarnsTheLabel) {
  const RunCounts run = passing();
  for (const auto& r : audit_run(run))
    EXPECT_TRUE(r.passed) << r.clause << " " << r.rule << ": " << r.measured;
  const auto figures = headline_figures(run);
  ASSERT_GE(figures.size(), 2u);
  EXPECT_EQ(figures[0].name, "tpmC");
  EXPECT_EQ(figures[0].warning, "");
  // 5.4.2: tpmC = NOPM + rolled-back New-Orders per minute.
  EXPECT_EQ(figures[1].name, "NOPM");
  EXPECT_DOUBLE_EQ(figures[0].value, figures[1].value + 1'980 / 120.0);
  EXPECT_EQ(figures.back().name, "audit");
  EXPECT_EQ(figures.back().value, static_cast<double>(audit_run(run).size()));
}

TEST(Audit, AnyFailedRowTakesTheLabelAwayAndSaysWhich) {
  RunCounts run = passing();
  run.duration_s = kMinMeasuredSeconds - 1;
  auto figures = headline_figures(run);
  EXPECT_EQ(figures[0].name, "NOPM (spec-like terminals)");
  EXPECT_EQ(figures[0].unit, "committed New-Orders per minute, not tpmC");
  EXPECT_NE(figures[0].warning.find("measured interval at least 120 min (5.5.1.1)"),
            std::string::npos)
      << figures[0].warning;
  EXPECT_EQ(figures[0].warning.find("rerun"), std::string::npos) << figures[0].warning;
  EXPECT_EQ(figures.back().unit, fmt::format("of {} rules passed", audit_run(run).size()));
  EXPECT_EQ(figures.back().value, static_cast<double>(audit_run(run).size() - 1));
  // Terminals other than the spec's: plain NOPM.
  run = passing();
  run.clients += 1;
  figures = headline_figures(run);
  EXPECT_EQ(figures[0].name, "NOPM");
  EXPECT_NE(figures[0].warning.find("10 terminals per warehouse (4.2.2): 2011 terminals"),
            std::string::npos)
      << figures[0].warning;
}

// A limit of one row: the row passes with the run at `at` and fails at `past`, one step
// beyond it, whichever side the limit is on.
struct Limit {
  const char* rule;
  const char* what;
  void (*set)(RunCounts&, double);
  double at;
  double past;
};

TEST(Audit, EachLimitPassesAtItAndFailsJustPastIt) {
  const Limit limits[] = {
      {"10 terminals", "clients", [](RunCounts& r, double v) { r.clients = static_cast<int>(v); },
       2010, 2011},
      {"10 terminals", "clients", [](RunCounts& r, double v) { r.clients = static_cast<int>(v); },
       2010, 2009},
      {"measured interval", "seconds", [](RunCounts& r, double v) { r.duration_s = v; },
       kMinMeasuredSeconds, kMinMeasuredSeconds - 0.1},
      {"no transaction failed", "failed payments",
       [](RunCounts& r, double v) { r.by_type[1].failed = static_cast<std::uint64_t>(v); }, 0, 1},
      {"new_order p90", "µs", [](RunCounts& r, double v) { r.by_type[0].latency.p90_us = v; }, 5e6,
       5e6 + 1},
      {"stock_level p90", "µs", [](RunCounts& r, double v) { r.by_type[4].latency.p90_us = v; },
       20e6, 20e6 + 1},
      {"delivery p90", "finished",
       [](RunCounts& r, double v) { r.by_type[3].committed = static_cast<std::uint64_t>(v); }, 10,
       9},
  };
  for (const Limit& l : limits) {
    SCOPED_TRACE(std::string(l.rule) + ", " + l.what);
    RunCounts run = passing();
    l.set(run, l.at);
    EXPECT_TRUE(passes(run, l.rule)) << "at " << l.at;
    l.set(run, l.past);
    EXPECT_FALSE(passes(run, l.rule)) << "at " << l.past;
  }
}

TEST(Audit, IsolationMustBeRepeatableReadOrSerializable) {
  RunCounts run = passing();
  EXPECT_TRUE(passes(run, "read-write transactions at"));
  run.options["isolation"] = "repeatable-read";
  EXPECT_TRUE(passes(run, "read-write transactions at"));
  run.options["isolation"] = "read-committed";
  EXPECT_FALSE(passes(run, "read-write transactions at"));
  run.options.clear();
  EXPECT_EQ(row(run, "read-write transactions at").measured, "read-committed (the default)");
  EXPECT_FALSE(passes(run, "read-write transactions at"));
  EXPECT_NE(headline_figures(run)[0].name, "tpmC");
}

// 5.2.5.7 per type: the mean keying time at least 99% of the spec's; the mean think time at
// least the spec's mean less 4 sd of a mean of n exponential draws (mean / sqrt(n) each).
TEST(Audit, EachTypesKeyingAndThinkTimesAgainstTheSpec) {
  RunCounts run = passing();
  const std::string rule = "new_order mean keying at least 18 s, mean think at least 12 s";
  run.waits_by_type[0].keying_s = kMinWaitedShare * 18 * 1'000;
  EXPECT_TRUE(passes(run, rule));
  run.waits_by_type[0].keying_s -= 0.01;
  EXPECT_FALSE(passes(run, rule));
  // 64 think times: allowed from 12 (1 - 4 / 8) = 6 s.
  run = passing();
  run.waits_by_type[0].thinks = 64;
  run.waits_by_type[0].think_s = 64 * 6.0;
  EXPECT_TRUE(passes(run, rule));
  run.waits_by_type[0].think_s -= 0.01;
  EXPECT_FALSE(passes(run, rule));
  // A 1 s think-time mean, as a wrong generator would wait: fails, although it was all waited.
  run.waits_by_type[0].think_s = 64 * 1.0;
  EXPECT_FALSE(passes(run, rule));
  // Too few to judge: withheld, never passed.
  run = passing();
  run.waits_by_type[2].thinks = 63;
  const auto r = row(run, "order_status mean keying at least 2 s, mean think at least 10 s");
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.measured, "not enough draws (63 of at least 64)");
  // Off: one row, failed.
  run = passing();
  run.think_time = false;
  EXPECT_FALSE(passes(run, "keying and think times waited"));
  EXPECT_NE(headline_figures(run)[0].name, "tpmC");
}

TEST(Audit, MixShares) {
  RunCounts run = passing();
  // 43 of 100 Payments: at the minimum.
  run.by_type[0].committed = 18;
  run.by_type[0].rolled_back = 0;
  run.by_type[1].committed = 43;
  run.by_type[2].committed = run.by_type[3].committed = run.by_type[4].committed = 13;
  EXPECT_TRUE(passes(run, "payment share"));
  run.by_type[1].committed = 42;
  run.by_type[0].committed = 19;
  EXPECT_FALSE(passes(run, "payment share"));
  // 4 of 100 Order-Status: at the minimum; 3: past it.
  run = passing();
  run.by_type[0].committed = 40;
  run.by_type[0].rolled_back = 0;
  run.by_type[1].committed = 48;
  run.by_type[2].committed = 4;
  run.by_type[3].committed = run.by_type[4].committed = 4;
  EXPECT_TRUE(passes(run, "order_status share"));
  run.by_type[2].committed = 3;
  run.by_type[0].committed = 41;
  EXPECT_FALSE(passes(run, "order_status share"));
}

// One band of 9.2.2.5: `draws` of its denominator, hits at each edge and one past it.
struct BandEdge {
  const char* rule;
  Counter hits;
  Counter draws;
  std::uint64_t n;
  std::uint64_t low, high;  // the edges' hits at n draws
};

TEST(Audit, DrawnRatesWithinClause92255sBands) {
  const BandEdge bands[] = {
      {"New-Orders rolled back by design 0.9% to 1.1%", kRollbacksDrawn, kNewOrdersDrawn, 160'000,
       1'440, 1'760},
      {"order lines from a remote warehouse 0.95% to 1.05%", kRemoteOrderLines, kOrderLines,
       2'000'000, 19'000, 21'000},
      {"Payments through a remote warehouse 14% to 16%", kRemotePayments, kPaymentsDrawn, 200'000,
       28'000, 32'000},
      {"Payment customers by last name 57% to 63%", kPaymentsByName, kPaymentsDrawn, 200'000,
       114'000, 126'000},
      {"Order-Status customers by last name 57% to 63%", kOrderStatusByName, kOrderStatusDrawn,
       20'000, 11'400, 12'600},
  };
  for (const BandEdge& b : bands) {
    SCOPED_TRACE(b.rule);
    RunCounts run = passing();
    run.counters[b.draws] = b.n;
    for (std::uint64_t hits : {b.low, b.high}) {
      run.counters[b.hits] = hits;
      EXPECT_TRUE(passes(run, b.rule)) << hits;
    }
    for (std::uint64_t hits : {b.low - 1, b.high + 1}) {
      run.counters[b.hits] = hits;
      EXPECT_FALSE(passes(run, b.rule)) << hits;
    }
  }
}

// A band is judged once a right generator lands in it but for 1 time in 15,000: before that,
// the row says so and fails, whatever the rate.
TEST(Audit, TooFewDrawsToJudgeWithholdTheLabel) {
  EXPECT_EQ(min_draws({100, 90, 110}), 158'400u);  // 16 x 1% x 99% / 0.1%^2
  EXPECT_EQ(min_draws({100, 95, 105}), 633'600u);
  EXPECT_EQ(min_draws({1500, 1400, 1600}), 20'400u);
  EXPECT_EQ(min_draws({6000, 5700, 6300}), 4'267u);  // 4,266.7 rounded up
  RunCounts run = passing();
  run.counters[kNewOrdersDrawn] = 158'399;
  run.counters[kRollbacksDrawn] = 1'584;  // exactly 1%
  auto r = row(run, "New-Orders rolled back");
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.measured, "not enough draws (158,399 of at least 158,400)");
  run.counters[kNewOrdersDrawn] = 158'400;
  EXPECT_TRUE(passes(run, "New-Orders rolled back"));
  // The 12 s run of the third pass: 6 of 8 lookups by name passed as 75%; now it cannot.
  run = passing();
  run.counters[kOrderStatusDrawn] = 8;
  run.counters[kOrderStatusByName] = 6;
  r = row(run, "Order-Status customers by last name");
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.measured, "not enough draws (8 of at least 4,267)");
  EXPECT_NE(headline_figures(run)[0].warning.find("not enough draws (8 of at least 4,267)"),
            std::string::npos);
  // Lines per order: 640 New-Orders (16 x 10 lines^2 / 0.5^2).
  run = passing();
  run.counters[kNewOrdersDrawn] = 639;
  run.counters[kOrderLines] = 6'390;
  EXPECT_EQ(row(run, "order lines per New-Order 9.5").measured,
            "not enough draws (639 of at least 640)");
}

TEST(Audit, LinesPerOrderMeanWithinNineAndAHalfToTenAndAHalf) {
  RunCounts run = passing();  // 198,000 New-Orders
  for (std::uint64_t lines : {1'881'000u, 2'079'000u}) {
    run.counters[kOrderLines] = lines;
    EXPECT_TRUE(passes(run, "order lines per New-Order 9.5")) << lines;
  }
  for (std::uint64_t lines : {1'880'999u, 2'079'001u}) {
    run.counters[kOrderLines] = lines;
    EXPECT_FALSE(passes(run, "order lines per New-Order 9.5")) << lines;
  }
}

// 5 .. 15 lines, each count 1/11 of the orders: chi-square with 10 degrees of freedom, at most
// 36.72. 100 of each, then x moved from 5 lines to 15: chi-square x^2 / 50.
TEST(Audit, LinesPerOrderUniformOverFiveToFifteen) {
  RunCounts run = passing();
  const std::string rule = "order lines per New-Order uniform";
  for (std::size_t i = 0; i < kLineCounts; ++i) run.counters[kOrdersWith5Lines + i] = 100;
  run.counters[kOrdersWith5Lines] = 100 + 42;  // 35.28
  run.counters[kOrdersWith5Lines + kLineCounts - 1] = 100 - 42;
  EXPECT_TRUE(passes(run, rule)) << row(run, rule).measured;
  run.counters[kOrdersWith5Lines] = 100 + 43;  // 36.98
  run.counters[kOrdersWith5Lines + kLineCounts - 1] = 100 - 43;
  EXPECT_FALSE(passes(run, rule)) << row(run, rule).measured;
  // Five expected in each: 55 orders.
  for (std::size_t i = 0; i < kLineCounts; ++i) run.counters[kOrdersWith5Lines + i] = 5;
  run.counters[kOrdersWith5Lines] = 4;
  EXPECT_EQ(row(run, rule).measured, "not enough draws (54 of at least 55)");
}

// Remote warehouses are drawn at random among the others (2.4.1.5, 2.5.1.2). On 3 warehouses the
// two others fall in bins 0 and 5: one degree of freedom, at most 16 (4 sd squared); 100 each,
// then x moved: x^2 / 50.
TEST(Audit, RemoteWarehousesSpreadOverTheOthers) {
  EXPECT_EQ(spread_bin(1, 2, 3), 0u);
  EXPECT_EQ(spread_bin(1, 3, 3), 5u);
  EXPECT_EQ(spread_bin(3, 1, 3), 0u);    // distance (1 - 3) mod 3 = 1
  EXPECT_EQ(spread_bin(5, 4, 201), 9u);  // distance 200, the last bin
  RunCounts run = passing();
  run.scale = 3;
  for (const auto& [rule, first] : {std::pair{"remote order lines spread", kRemoteLineBins},
                                    std::pair{"remote Payments spread", kRemotePaymentBins}}) {
    SCOPED_TRACE(rule);
    for (std::size_t b = 0; b < kSpreadBins; ++b) run.counters[first + b] = 0;
    run.counters[first] = 100 + 28;  // 15.68
    run.counters[first + 5] = 100 - 28;
    EXPECT_TRUE(passes(run, rule)) << row(run, rule).measured;
    run.counters[first] = 100 + 29;  // 16.82
    run.counters[first + 5] = 100 - 29;
    EXPECT_FALSE(passes(run, rule)) << row(run, rule).measured;
    // A remote warehouse in a bin no other warehouse falls in: a wrong generator.
    run.counters[first] = 100;
    run.counters[first + 5] = 99;
    run.counters[first + 1] = 1;
    EXPECT_FALSE(passes(run, rule)) << row(run, rule).measured;
    run.counters[first + 1] = 0;
  }
  // Two warehouses: every remote one is the other, nothing to spread; one: none drawn.
  run.scale = 2;
  for (const auto& r : audit_run(run)) EXPECT_EQ(r.rule.find("spread"), std::string::npos);
}

TEST(Audit, RemoteRatesOnOneWarehouseMustBeNone) {
  RunCounts run = passing();
  run.scale = 1;
  run.counters[kRemoteOrderLines] = 0;
  run.counters[kRemotePayments] = 0;
  EXPECT_TRUE(passes(run, "order lines from a remote"));
  EXPECT_TRUE(passes(run, "Payments through a remote"));
  run.counters[kRemoteOrderLines] = 1;  // impossible on one warehouse: a wrong generator
  EXPECT_FALSE(passes(run, "order lines from a remote"));
  run.counters[kRemotePayments] = 1;
  EXPECT_FALSE(passes(run, "Payments through a remote"));
}

TEST(Audit, ResponseTimesCountFailedAndInFlightAsSlowest) {
  RunCounts run = passing();
  run.by_type[0].committed = 126;
  run.by_type[0].rolled_back = 1;
  // 127 finished, p90 4 s but p95 6 s: unfinished ones push the p90 to the p95 once
  // 0.9 (127 + k) / 127 > 0.9, i.e. at the first failed or in-flight one.
  run.by_type[0].latency.p90_us = 4e6;
  run.by_type[0].latency.p95_us = 5e6;
  run.in_flight_by_type[0] = 7;  // 0.9 * 134 / 127 = 0.9496: the p95, at the limit
  EXPECT_TRUE(passes(run, "new_order p90"));
  run.in_flight_by_type[0] = 0;
  run.by_type[0].failed = 8;  // 0.9 * 135 / 127 = 0.9567: the p99, 7 s
  EXPECT_FALSE(passes(run, "new_order p90"));
  run = passing();
  run.by_type[2].committed = 12;
  run.in_flight_by_type[2] = 2;  // 12 finished: 0.9 * 14 / 12 > 1, beyond the slowest
  EXPECT_FALSE(passes(run, "order_status p90"));
  // A p90 of nothing finished is no p90.
  run = passing();
  run.by_type[3].committed = 0;
  EXPECT_EQ(row(run, "delivery p90").measured,
            "not enough finished (0 of at least 10; 0 failed, 0 in flight at the end)");
  EXPECT_FALSE(passes(run, "delivery p90"));
}

TEST(Audit, DeliverySkips) {
  RunCounts run = passing();
  run.counters[kDeliveryDistricts] = 1000;  // 100 Deliveries: one may skip
  run.counters[kDeliveriesWithSkip] = 1;
  EXPECT_TRUE(passes(run, "Deliveries with a skipped"));
  run.counters[kDeliveriesWithSkip] = 2;
  EXPECT_FALSE(passes(run, "Deliveries with a skipped"));
  run.counters[kDeliveryDistricts] = 10'000;  // 1,000: 1%, ten
  run.counters[kDeliveriesWithSkip] = 10;
  EXPECT_TRUE(passes(run, "Deliveries with a skipped"));
  run.counters[kDeliveriesWithSkip] = 11;
  EXPECT_FALSE(passes(run, "Deliveries with a skipped"));
}

// 12.86 per minute and warehouse, and 4 sd of a Poisson count above it: over 100 minutes of
// one warehouse 1,286 + 4 sqrt(1,286) = 1,429.4 New-Orders.
TEST(Audit, CeilingOf12Point86PerWarehouse) {
  RunCounts run = passing();
  run.duration_s = 6000;  // 100 minutes
  run.scale = 1;
  run.by_type[0].rolled_back = 0;
  run.by_type[0].committed = 1429;
  EXPECT_TRUE(passes(run, "New-Orders/min at most"));
  run.by_type[0].committed = 1430;
  EXPECT_FALSE(passes(run, "New-Orders/min at most"));
  run.scale = 2;  // 2,572 + 4 sqrt(2,572) = 2,774.9
  run.by_type[0].committed = 2774;
  EXPECT_TRUE(passes(run, "New-Orders/min at most"));
  run.by_type[0].committed = 2775;
  EXPECT_FALSE(passes(run, "New-Orders/min at most"));
}

// Each minute within 4 sqrt(mean) of the mean, judged only above a mean of 16: there 4 sd no
// longer reach 0, so a minute with nothing committed always fails.
TEST(Audit, SteadyStateCannotPassAnEmptyMinute) {
  RunCounts run = passing();
  const std::string rule = "New-Orders per minute steady";
  run.per_minute = {{5}, {45}};  // mean 25, 20 off: at 4 sd
  EXPECT_TRUE(passes(run, rule)) << row(run, rule).measured;
  run.per_minute = {{4}, {46}};  // 21 off
  EXPECT_FALSE(passes(run, rule));
  run.per_minute = {{0}, {34}};  // mean 17: an empty minute is 17 off, 4 sd are 16.49
  EXPECT_FALSE(passes(run, rule));
  run.per_minute = {{0}, {32}};  // mean 16: 4 sd would reach the empty minute
  const auto r = row(run, rule);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.measured.find("not enough New-Orders per minute to judge (mean 16.0"),
            std::string::npos)
      << r.measured;
  run.per_minute = {{13}};
  EXPECT_FALSE(passes(run, rule));  // one minute: no judgement
}

TEST(Audit, ExactCrossCheck) {
  RunCounts run = passing();  // 195,000 sure, 2,000 in flight at a read
  for (double delta : {195'000.0, 197'000.0}) {
    run.probe_delta = delta;
    EXPECT_TRUE(passes(run, "sum(D_NEXT_O_ID)")) << delta;
  }
  for (double delta : {194'999.0, 197'001.0}) {
    run.probe_delta = delta;
    EXPECT_FALSE(passes(run, "sum(D_NEXT_O_ID)")) << delta;
  }
  // A window ended early has no reads: the row says why and no figure is shown as 0.
  run.probe_delta.reset();
  run.probe_error = "the window ended early";
  const auto r = row(run, "sum(D_NEXT_O_ID)");
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.measured.find("the window ended early"), std::string::npos);
  for (const auto& f : headline_figures(run)) EXPECT_NE(f.name, "NOPM by D_NEXT_O_ID");
}

}  // namespace
}  // namespace pgslow::workload::tpcc
