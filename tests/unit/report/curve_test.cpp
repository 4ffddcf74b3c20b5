#include "report/curve.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "report/load_columns.h"
#include "results/load_fields.h"
#include "tests/unit/report/sample_run.h"

namespace pgslow::report {
namespace {

StageResult point(int pool, double tps, double mean_ms, double wait_ms) {
  StageResult s;
  s.name = "pool_size " + std::to_string(pool);
  s.sweep_point = true;
  s.sweep_values = {{"pool_size", std::to_string(pool)}};
  s.load.clients = 200;
  s.load.pool_size = pool;
  Measurement m = testing::measurement(tps, 10, mean_ms * 4);
  m.latency.mean_us = mean_ms * 1000;
  m.pool_wait.p99_us = wait_ms * 1000;
  s.repeats.push_back(m);
  return s;
}

// The published pool sweep (point lookups): peak at 10, latency grows faster from 50 on.
Run pool_sweep() {
  results::Run run;
  run.sweep = {"pool_size"};
  StageResult base;
  base.name = "baseline";
  base.load.clients = 200;
  base.repeats.push_back(testing::measurement(2500, 10, 100));
  run.stages.push_back(base);
  run.stages.push_back(point(1, 768.6, 219.3, 644.8));
  run.stages.push_back(point(5, 2738.0, 63.2, 204.4));
  run.stages.push_back(point(10, 3250.7, 60.2, 89.3));
  run.stages.push_back(point(50, 2930.7, 66.8, 75.0));
  run.stages.push_back(point(150, 2751.7, 69.8, 38.8));
  return run;
}

TEST(Curve, OnePointPerSweptValueWithPeakAndKnee) {
  const auto curves = sweep_curves(pool_sweep());
  ASSERT_EQ(curves.size(), 1u);
  const Curve& c = curves[0];
  ASSERT_EQ(c.points.size(), 5u);
  EXPECT_EQ(c.points[0].value, "1");
  EXPECT_EQ(c.points[4].value, "150");
  ASSERT_TRUE(c.peak);
  EXPECT_EQ(c.points[*c.peak].value, "10");
  ASSERT_TRUE(c.knee);
  EXPECT_EQ(c.points[*c.knee].value, "50");
  EXPECT_EQ(describe_knee(c),
            "peak 3,251 TPS at pool size 10; from pool size 50 latency grows faster than "
            "throughput");
  ASSERT_TRUE(c.points[0].pool_wait_p99_us);
  EXPECT_DOUBLE_EQ(*c.points[0].pool_wait_p99_us, 644800);
}

TEST(Curve, TableHasPoolWaitAndTheSvgOneLinePerSeries) {
  const Curve c = sweep_curves(pool_sweep())[0];
  const CurveTable t = curve_table(c);
  EXPECT_EQ(t.header[4], "pool wait p99");
  ASSERT_EQ(t.rows.size(), 5u);
  EXPECT_EQ(t.rows[2].back(), "peak");
  EXPECT_EQ(t.rows[3].back(), "knee");
  const std::string svg = curve_svg(c);
  std::size_t lines = 0;
  for (std::size_t at = svg.find("<polyline"); at != std::string::npos;
       at = svg.find("<polyline", at + 1))
    ++lines;
  EXPECT_EQ(lines, 4u);  // TPS; mean, p99, pool wait p99
}

TEST(Curve, TwoDimensionsGiveOneCurvePerSeries) {
  results::Run run;
  run.sweep = {"rate", "clients"};
  for (int clients : {8, 256}) {
    for (double pct : {25.0, 75.0}) {
      StageResult s;
      s.sweep_point = true;
      s.sweep_values = {{"rate", fmt::format("{:g}%", pct)}, {"clients", std::to_string(clients)}};
      s.load.clients = clients;
      s.load.rate_percent = pct;
      s.load.rate = pct * 100;
      s.repeats.push_back(testing::measurement(pct * 100, 5, 1));
      run.stages.push_back(s);
    }
  }
  const auto curves = sweep_curves(run);
  ASSERT_EQ(curves.size(), 2u);
  EXPECT_EQ(curves[1].series, "clients 256");
  EXPECT_EQ(curves[1].points[1].value, "75%");
  ASSERT_TRUE(curves[1].points[1].lag_p99_us);
}

// The pooler sweep (docs/pooler.md): a PgBouncer point's pool is PgBouncer's, so no driver pool
// wait; its wait per transaction and server connections come from the pooler's evidence.
TEST(Curve, PgBouncerPointsShowThePoolersWaitNotTheDriversPool) {
  results::Run run;
  run.sweep = {"pool_size", "pooler"};
  for (const char* path : {"driver", "pgbouncer"}) {
    StageResult s = point(2, 1000, 8, 7);
    s.sweep_values["pooler"] = path;
    s.load.pooler = path;
    s.evidence_seconds = 10;
    if (std::string(path) == "pgbouncer") {
      s.evidence["pooler_wait_ms"] = 50000;  // over 10,000 transactions: 5 ms each
      s.evidence["pooler_servers"] = 2;
    }
    run.stages.push_back(s);
  }
  const auto curves = sweep_curves(run);
  ASSERT_EQ(curves.size(), 2u);
  EXPECT_EQ(curves[1].series, "pooler pgbouncer");
  EXPECT_TRUE(curves[0].points[0].pool_wait_p99_us);
  EXPECT_FALSE(curves[1].points[0].pool_wait_p99_us);
  ASSERT_TRUE(curves[1].points[0].pooler_wait_us_per_tx);
  EXPECT_DOUBLE_EQ(*curves[1].points[0].pooler_wait_us_per_tx, 5000);
  const CurveTable t = curve_table(curves[1]);
  EXPECT_EQ(t.header[4], "PgBouncer wait/tx");
  EXPECT_EQ(t.rows[0][4], "5.00 ms");
  EXPECT_EQ(t.rows[0][5], "2");
  EXPECT_FALSE(results::driver_pooled(run.stages[1].load));
  EXPECT_TRUE(results::driver_pooled(run.stages[0].load));
}

// A knob's sweep draws as a load dimension's: the values as written, in the knob's unit.
TEST(Curve, AKnobSweepShowsItsValuesInTheKnobsUnit) {
  results::Run run;
  run.sweep = {"shared_buffers"};
  StageResult base;
  base.name = "baseline";
  base.repeats.push_back(testing::measurement(2500, 10, 1));
  run.stages.push_back(base);
  double tps = 3000;
  for (const char* v : {"128MB", "16MB", "1MB"}) {
    StageResult s;
    s.name = std::string("shared_buffers ") + v;
    s.sweep_point = true;
    s.sweep_values = {{"shared_buffers", v}};
    s.repeats.push_back(testing::measurement(tps, 10, 1));
    tps /= 2;
    run.stages.push_back(s);
  }
  const auto curves = sweep_curves(run);
  ASSERT_EQ(curves.size(), 1u);
  EXPECT_EQ(curves[0].dimension, "shared_buffers");
  ASSERT_EQ(curves[0].points.size(), 3u);
  EXPECT_EQ(curves[0].points[2].value, "1MB");
  EXPECT_EQ(curve_table(curves[0]).rows[1][0], "16MB");
  EXPECT_NE(describe_knee(curves[0]).find("peak 3,000 TPS at shared buffers 128MB"),
            std::string::npos)
      << describe_knee(curves[0]);
  EXPECT_NE(curve_svg(curves[0]).find(">16MB</text>"), std::string::npos);
}

TEST(LoadColumns, FitTheScenario) {
  results::Run closed = testing::sample_run();
  std::vector<std::string> headers;
  for (const auto& c : load_columns(closed)) headers.push_back(c.header);
  EXPECT_EQ(headers, (std::vector<std::string>{"mean"}));

  headers.clear();
  results::Run pooled = pool_sweep();
  pooled.stages[1].repeats[0].connections_refused = 3;
  pooled.stages[2].repeats[0].failed = 1;
  for (const auto& c : load_columns(pooled)) headers.push_back(c.header);
  EXPECT_EQ(headers, (std::vector<std::string>{"mean", "pool wait p50", "pool wait p99", "failed",
                                               "refused"}));

  results::Run rate;
  StageResult s;
  s.load.rate = 2000;
  s.repeats.push_back(testing::measurement(1990, 10, 1));
  s.repeats[0].on_time_ratio = 0.5;
  rate.stages.push_back(s);
  const auto cols = load_columns(rate);
  headers.clear();
  for (const auto& c : cols) headers.push_back(c.header);
  EXPECT_EQ(headers, (std::vector<std::string>{"mean", "rate kept", "lag p99", "on time"}));
  EXPECT_EQ(cols[1].cell(rate.stages[0], &rate.stages[0].repeats[0]), "1,990 of 2,000/s (99.5%)");
  EXPECT_EQ(cols[3].cell(rate.stages[0], &rate.stages[0].repeats[0]), "50.0%");
}

}  // namespace
}  // namespace pgslow::report
