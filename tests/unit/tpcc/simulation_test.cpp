// The driver's own draws, simulated in virtual time: the real terminals (the deck, the inputs,
// the keying and think times) of a healthy run whose transactions all take 50 ms, counted as
// the driver counts them, then audited. The label must never come from luck.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "workload/tpcc/audit.h"
#include "workload/tpcc/mix.h"
#include "workload/tpcc/tpcc.h"

namespace pgslow::workload::tpcc {
namespace {

constexpr std::int64_t kSecond = 1'000'000;
constexpr std::int64_t kLatency = 50'000;  // every transaction

// `minutes` measured of `warehouses`' ten terminals each, after --spec's ramp of 30 s and a
// warm-up of 90 s.
RunCounts simulate(std::uint64_t seed, int warehouses, int minutes) {
  const auto workload = make_tpcc_lite();
  WorkloadParams params;
  params.scale = warehouses;
  params.clients = 0;
  params.think_time = true;
  params.seed = seed;
  params.options["isolation"] = "serializable";
  EXPECT_TRUE(workload->validate(params).empty());
  const std::int64_t start = 90 * kSecond;
  const std::int64_t end = start + minutes * 60 * kSecond;
  const std::size_t types = mix().size();

  RunCounts run;
  run.duration_s = minutes * 60.0;
  run.clients = params.clients;
  run.scale = warehouses;
  run.think_time = true;
  run.max_tries = 0;
  run.options = params.options;
  run.by_type.resize(types);
  for (std::size_t i = 0; i < types; ++i) {
    run.by_type[i].name = std::string(mix()[i].name);
    run.by_type[i].latency.p90_us = run.by_type[i].latency.p95_us = run.by_type[i].latency.p99_us =
        run.by_type[i].latency.p999_us = run.by_type[i].latency.max_us = kLatency;
  }
  run.waits_by_type.resize(types);
  run.in_flight_by_type.assign(types, 0);
  run.per_minute.assign(static_cast<std::size_t>(minutes), std::vector<std::uint64_t>(types, 0));
  run.counters.assign(kCounters, 0);
  std::vector<std::uint64_t> drawn(kCounters, 0);
  // A wait counts when it began inside the window and ended before its end (as the driver).
  auto wait = [&](std::int64_t from, std::int64_t us, bool keying, std::size_t type) {
    if (from < start || from + us > end) return;
    RunCounts::TypeWaits& w = run.waits_by_type[type];
    (keying ? w.keyings : w.thinks) += 1;
    (keying ? w.keying_s : w.think_s) += static_cast<double>(us) / kSecond;
  };
  for (int i = 0; i < params.clients; ++i) {
    const auto client = workload->make_client(params, i);
    std::int64_t t = 30 * kSecond * i / params.clients;
    while (t < end) {
      const std::size_t type = client->choose();
      const std::int64_t keying = client->keying_time_us(), think = client->think_time_us();
      wait(t, keying, true, type);
      const std::int64_t began = t + keying, ended = began + kLatency;
      if (began >= end) break;
      if (ended > end) {
        ++run.in_flight_by_type[type];
        break;
      }
      std::fill(drawn.begin(), drawn.end(), 0);
      client->take_counters(drawn);
      if (ended >= start) {  // completions inside the window count
        for (std::size_t c = 0; c < kCounters; ++c) run.counters[c] += drawn[c];
        (drawn[kRollbacksDrawn] > 0 ? run.by_type[type].rolled_back
                                    : run.by_type[type].committed)++;
        ++run.per_minute[static_cast<std::size_t>((ended - start) / (60 * kSecond))][type];
      }
      wait(ended, think, false, type);
      t = ended + think;
    }
  }
  // The probe saw every committed New-Order: none was in flight at a read.
  run.probe_delta = static_cast<double>(run.by_type[0].committed);
  run.probe_sure = run.by_type[0].committed;
  return run;
}

// The finding: a healthy 1-warehouse --spec run failed the audit 92% of the time, and
// passed 8% of the time on luck. Now no seed earns the label, and each says why: the interval
// and the rates too seldom drawn to judge, not the luck of the draw.
TEST(Simulation, AHealthyFiveMinuteRunOfOneWarehouseNeverEarnsTheLabel) {
  for (std::uint64_t seed = 1; seed <= 500; ++seed) {
    SCOPED_TRACE(seed);
    const RunCounts run = simulate(seed, 1, 5);
    ASSERT_GT(run.by_type[0].committed, 20u);  // about 12.6 New-Orders a minute
    const auto figures = headline_figures(run);
    ASSERT_FALSE(figures.empty());
    ASSERT_EQ(figures[0].name, "NOPM (spec-like terminals)");
    const std::string& why = figures[0].warning;
    ASSERT_NE(why.find("measured interval at least 120 min (5.5.1.1): 5 min"), std::string::npos)
        << why;
    ASSERT_NE(why.find("New-Orders rolled back by design 0.9% to 1.1% (2.4.1.4): not enough "
                       "draws"),
              std::string::npos)
        << why;
    ASSERT_NE(why.find("Payment customers by last name 57% to 63% (2.5.1.2): not enough draws"),
              std::string::npos)
        << why;
    ASSERT_NE(why.find("New-Orders per minute steady (each within 4 sd of the mean) (5.5.1.1): "
                       "not enough New-Orders per minute to judge"),
              std::string::npos)
        << why;
    // What a healthy run can be judged on, it passes: the driver's draws are right.
    for (const auto& r : audit_run(run)) {
      if (r.rule.starts_with("10 terminals") || r.rule.starts_with("read-write") ||
          r.rule.starts_with("no transaction failed") || r.rule.starts_with("New-Orders/min") ||
          r.rule.starts_with("sum(D_NEXT_O_ID)") || r.rule.starts_with("Deliveries with") ||
          r.rule.starts_with("order lines from a remote") ||
          r.rule.starts_with("Payments through a remote")) {
        ASSERT_TRUE(r.passed) << r.rule << ": " << r.measured;
      }
    }
  }
}

// Two hours of one warehouse: long enough for the interval, still too few New-Orders for the
// rollbacks' band (158,400 drawn): the label is withheld, and no row that can be judged fails.
TEST(Simulation, TwoHoursOfOneWarehouseAreJudgedWhereTheyCanBeAndNeverByLuck) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    SCOPED_TRACE(seed);
    const RunCounts run = simulate(seed, 1, 120);
    const auto figures = headline_figures(run);
    ASSERT_EQ(figures[0].name, "NOPM (spec-like terminals)");
    for (const auto& r : audit_run(run)) {
      if (r.measured.starts_with("not enough")) continue;
      EXPECT_TRUE(r.passed) << r.rule << ": " << r.measured;
    }
    const auto rows = audit_run(run);
    const auto rollbacks = std::find_if(rows.begin(), rows.end(), [](const auto& r) {
      return r.rule.starts_with("New-Orders rolled back");
    });
    ASSERT_NE(rollbacks, rows.end());
    EXPECT_TRUE(rollbacks->measured.starts_with("not enough draws")) << rollbacks->measured;
  }
}

}  // namespace
}  // namespace pgslow::workload::tpcc
