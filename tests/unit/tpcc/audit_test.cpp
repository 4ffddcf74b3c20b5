#include "workload/tpcc/audit.h"

#include <gtest/gtest.h>

#include <cmath>

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

// A ten-minute run of one warehouse's ten terminals that passes every row.
RunCounts passing() {
  RunCounts r;
  r.duration_s = 600;
  r.clients = 10;
  r.scale = 1;
  r.think_time = true;
  r.max_tries = 0;
  r.keying_asked_s = r.keying_waited_s = 100;
  r.think_asked_s = r.think_waited_s = 100;
  r.by_type = {type("new_order", 126, 1), type("payment", 127, 1), type("order_status", 12, 1),
               type("delivery", 12, 1), type("stock_level", 12, 1)};
  r.by_type[0].rolled_back = 1;
  r.counters.assign(kCounters, 0);
  r.counters[kNewOrdersDrawn] = 127;
  r.counters[kOrderLines] = 1270;
  r.counters[kRollbacksDrawn] = 1;
  r.counters[kPaymentsDrawn] = 127;
  r.counters[kCustomerLookups] = 139;
  r.counters[kLookupsByName] = 83;
  r.counters[kDeliveryDistricts] = 120;
  r.in_flight_by_type.assign(5, 0);
  r.per_minute.assign(10, std::vector<std::uint64_t>{13, 13, 1, 1, 1});
  r.probe_delta = 126;
  r.probe_sure = 120;
  r.probe_in_flight = 10;
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
  ASSERT_FALSE(figures.empty());
  EXPECT_EQ(figures[0].name, "tpmC");
  EXPECT_EQ(figures[0].warning, "");
  EXPECT_EQ(figures.back().name, "audit");
  EXPECT_EQ(figures.back().value, static_cast<double>(audit_run(run).size()));
}

TEST(Audit, AnyFailedRowTakesTheLabelAway) {
  RunCounts run = passing();
  run.clients = 11;
  const auto figures = headline_figures(run);
  EXPECT_EQ(figures[0].name, "New-Orders/min (not tpmC)");
  EXPECT_NE(figures[0].warning.find("10 terminals per warehouse (4.2.2): 11 terminals"),
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
       10, 11},
      {"10 terminals", "clients", [](RunCounts& r, double v) { r.clients = static_cast<int>(v); },
       10, 9},
      {"measured interval", "seconds", [](RunCounts& r, double v) { r.duration_s = v; },
       kMinMeasuredSeconds, kMinMeasuredSeconds - 0.1},
      {"no transaction failed", "failed payments",
       [](RunCounts& r, double v) { r.by_type[1].failed = static_cast<std::uint64_t>(v); }, 0, 1},
      {"new_order p90", "µs", [](RunCounts& r, double v) { r.by_type[0].latency.p90_us = v; }, 5e6,
       5e6 + 1},
      {"stock_level p90", "µs", [](RunCounts& r, double v) { r.by_type[4].latency.p90_us = v; },
       20e6, 20e6 + 1},
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

TEST(Audit, WaitsMustBeOnAndWaited) {
  RunCounts run = passing();
  run.think_waited_s = 99;  // 99% of 100
  EXPECT_TRUE(passes(run, "keying and think"));
  run.think_waited_s = 98.99;
  EXPECT_FALSE(passes(run, "keying and think"));
  run = passing();
  run.keying_waited_s = 98.99;
  EXPECT_FALSE(passes(run, "keying and think"));
  // A fixed-rate run's waits are never on (the driver records think_time only in a closed
  // loop): its New-Order figure cannot be called tpmC.
  run = passing();
  run.think_time = false;
  EXPECT_FALSE(passes(run, "keying and think"));
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

TEST(Audit, DrawnRatesWithinFourStandardDeviations) {
  const Range r = drawn_range(0.01, 10'000);
  EXPECT_NEAR(r.low, 0.01 - 4 * std::sqrt(0.0099 / 10'000), 1e-12);
  EXPECT_NEAR(r.high, 0.01 + 4 * std::sqrt(0.0099 / 10'000), 1e-12);
  RunCounts run = passing();
  run.counters[kNewOrdersDrawn] = 10'000;
  run.counters[kOrderLines] = 100'000;
  run.counters[kRollbacksDrawn] = static_cast<std::uint64_t>(std::floor(r.high * 10'000));
  EXPECT_TRUE(passes(run, "New-Orders rolled back"));
  run.counters[kRollbacksDrawn] = static_cast<std::uint64_t>(std::ceil(r.high * 10'000)) + 1;
  EXPECT_FALSE(passes(run, "New-Orders rolled back"));
  run.counters[kRollbacksDrawn] = static_cast<std::uint64_t>(std::ceil(r.low * 10'000));
  EXPECT_TRUE(passes(run, "New-Orders rolled back"));
  run.counters[kRollbacksDrawn] = static_cast<std::uint64_t>(std::floor(r.low * 10'000)) - 1;
  EXPECT_FALSE(passes(run, "New-Orders rolled back"));

  // By last name: 60%.
  const Range name = drawn_range(0.6, 1000);
  run = passing();
  run.counters[kCustomerLookups] = 1000;
  run.counters[kLookupsByName] = static_cast<std::uint64_t>(std::floor(name.high * 1000));
  EXPECT_TRUE(passes(run, "Payment and Order-Status customers"));
  run.counters[kLookupsByName] = static_cast<std::uint64_t>(std::ceil(name.high * 1000)) + 1;
  EXPECT_FALSE(passes(run, "Payment and Order-Status customers"));
  run.counters[kCustomerLookups] = 0;
  EXPECT_FALSE(passes(run, "Payment and Order-Status customers"));  // nothing drawn: no proof
}

TEST(Audit, RemoteRatesNeedTwoWarehouses) {
  RunCounts run = passing();
  run.counters[kRemoteOrderLines] = 1;  // impossible on one warehouse: a wrong generator
  EXPECT_FALSE(passes(run, "order lines from a remote"));
  run.counters[kRemotePayments] = 1;
  EXPECT_FALSE(passes(run, "Payments through a remote"));
  run = passing();
  run.scale = 2;
  run.counters[kPaymentsDrawn] = 1000;
  const Range r = drawn_range(0.15, 1000);
  run.counters[kRemotePayments] = static_cast<std::uint64_t>(std::ceil(r.low * 1000));
  EXPECT_TRUE(passes(run, "Payments through a remote"));
  run.counters[kRemotePayments] = static_cast<std::uint64_t>(std::floor(r.low * 1000)) - 1;
  EXPECT_FALSE(passes(run, "Payments through a remote"));
  run.counters[kOrderLines] = 100'000;
  run.counters[kRemoteOrderLines] = 1000;
  EXPECT_TRUE(passes(run, "order lines from a remote"));
  run.counters[kRemoteOrderLines] = 0;
  EXPECT_FALSE(passes(run, "order lines from a remote"));
}

TEST(Audit, LinesPerOrderAverageTen) {
  RunCounts run = passing();
  run.counters[kNewOrdersDrawn] = 999;
  const double tolerance = 4 * std::sqrt(10.0 / 999);
  run.counters[kOrderLines] = static_cast<std::uint64_t>(std::floor((10 + tolerance) * 999));
  EXPECT_TRUE(passes(run, "order lines per New-Order"));
  run.counters[kOrderLines] = static_cast<std::uint64_t>(std::ceil((10 + tolerance) * 999)) + 1;
  EXPECT_FALSE(passes(run, "order lines per New-Order"));
}

TEST(Audit, ResponseTimesCountFailedAndInFlightAsSlowest) {
  RunCounts run = passing();
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
  run.in_flight_by_type[2] = 2;  // 12 finished: 0.9 * 14 / 12 > 1, beyond the slowest
  EXPECT_FALSE(passes(run, "order_status p90"));
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

TEST(Audit, CeilingOf12Point86PerWarehouse) {
  RunCounts run = passing();
  run.duration_s = 6000;  // 100 minutes
  run.by_type[0].rolled_back = 0;
  run.by_type[0].committed = 1286;  // 12.86 per minute: at the ceiling
  EXPECT_TRUE(passes(run, "New-Orders/min at most"));
  run.by_type[0].committed = 1287;
  EXPECT_FALSE(passes(run, "New-Orders/min at most"));
  run.scale = 2;  // 25.72
  run.by_type[0].committed = 2572;
  EXPECT_TRUE(passes(run, "New-Orders/min at most"));
  run.by_type[0].committed = 2573;
  EXPECT_FALSE(passes(run, "New-Orders/min at most"));
}

TEST(Audit, SteadyState) {
  RunCounts run = passing();
  // Mean 16: four standard deviations are 16.
  run.per_minute = {{0}, {16}, {16}, {32}};  // mean 16, farthest 16 off
  EXPECT_TRUE(passes(run, "New-Orders per minute steady"));
  run.per_minute = {{0}, {16}, {15}, {33}};  // mean 16, 17 off
  EXPECT_FALSE(passes(run, "New-Orders per minute steady"));
  run.per_minute = {{13}};
  EXPECT_FALSE(passes(run, "New-Orders per minute steady"));  // one minute: no judgement
}

TEST(Audit, ExactCrossCheck) {
  RunCounts run = passing();  // 120 sure, 10 in flight at a read
  for (double delta : {120.0, 130.0}) {
    run.probe_delta = delta;
    EXPECT_TRUE(passes(run, "sum(D_NEXT_O_ID)")) << delta;
  }
  for (double delta : {119.0, 131.0}) {
    run.probe_delta = delta;
    EXPECT_FALSE(passes(run, "sum(D_NEXT_O_ID)")) << delta;
  }
  run.probe_delta.reset();
  run.probe_error = "the probe `SELECT 1` failed: connection lost";
  const auto r = row(run, "sum(D_NEXT_O_ID)");
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.measured.find("connection lost"), std::string::npos);
  const auto figures = headline_figures(run);
  const auto cross = std::find_if(figures.begin(), figures.end(),
                                  [](const auto& f) { return f.name == "NOPM by D_NEXT_O_ID"; });
  ASSERT_NE(cross, figures.end());
  EXPECT_NE(cross->warning.find("connection lost"), std::string::npos);
}

}  // namespace
}  // namespace pgslow::workload::tpcc
