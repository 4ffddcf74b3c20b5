// The metrics a search judges by (results/metric.h): names, values of a run, and the words of a
// change, always in the metric's own terms.

#include "results/metric.h"

#include <gtest/gtest.h>

#include "report/json.h"
#include "results/stats.h"
#include "tests/unit/report/sample_run.h"

namespace pgslow::report {
namespace {

Measurement run_of(double tps, std::uint64_t transactions, double server_cpu_s, double p99_us) {
  Measurement m;
  m.duration_s = 10;
  m.tps = tps;
  m.committed = transactions;
  m.server_cpu_s = server_cpu_s;
  m.latency.p99_us = p99_us;
  return m;
}

TEST(Metric, NamesParseAndAnUnknownOneListsTheValidOnes) {
  EXPECT_EQ(parse_metric("tps"), Metric::kTps);
  EXPECT_EQ(parse_metric("cpu_per_tx"), Metric::kCpuPerTx);
  EXPECT_EQ(parse_metric("p99"), Metric::kP99);
  EXPECT_FALSE(parse_metric("latency"));
  EXPECT_FALSE(parse_metric("TPS "));
  EXPECT_NE(metric_names().find("wal_bytes_per_tx"), std::string::npos);
  for (Metric m : {Metric::kTps, Metric::kCpuPerTx, Metric::kP99})
    EXPECT_EQ(parse_metric(metric_name(m)), m);
}

TEST(Metric, AnEvidenceKeyPerTransactionIsACostInItsOwnWords) {
  const auto wal = parse_metric("wal_bytes_per_tx");
  ASSERT_TRUE(wal);
  EXPECT_EQ(wal->kind, Metric::Kind::kEvidencePerTx);
  EXPECT_EQ(wal->evidence, "wal_bytes");
  EXPECT_EQ(metric_name(*wal), "wal_bytes_per_tx");
  const auto blocks = parse_metric("blocks_read");
  ASSERT_TRUE(blocks);
  EXPECT_EQ(metric_name(*blocks), "blocks_read");
  EXPECT_FALSE(parse_metric("buffer_hit_ratio")) << "a ratio is not counted per transaction";
  EXPECT_FALSE(parse_metric("checkpoints_timed")) << "counted per minute, not per transaction";
  // Per committed transaction, from the run's own evidence; none reads as the floor.
  const Measurement m = run_of(500, 5000, 2.5, 4200);
  EXPECT_DOUBLE_EQ(*metric_value(*wal, m, {{"wal_bytes", 5e6}}), 1000);
  EXPECT_FALSE(metric_value(*wal, m, {}));
  EXPECT_DOUBLE_EQ(*metric_value(*blocks, m, {{"blocks_read", 0}}), 1e-3);
  EXPECT_EQ(format_metric_change(*wal, 1 / 1.35), "WAL/tx +35.0%");
  EXPECT_EQ(format_metric_change(*blocks, 1 / 3.1), "blocks_read/tx 3.1x higher");
  EXPECT_EQ(format_metric_value(*wal, search_sample(*wal, 1234)), "1,234 B WAL/tx");
}

TEST(Metric, DirectionFasterFlipsTheSamplesAndNothingElse) {
  Metric tps = Metric::kTps;
  tps.better = true;
  // The search's samples: higher is "better" for the search = lower TPS.
  EXPECT_DOUBLE_EQ(search_sample(tps, 500), 1.0 / 500);
  EXPECT_DOUBLE_EQ(search_sample(tps, search_sample(tps, 500)), 500);
  // A change that doubles TPS is half the search's sample, and reads as TPS doubled.
  EXPECT_EQ(format_metric_change(tps, 0.5), format_change(2.0));
  EXPECT_EQ(worse_word(tps), "faster");
  EXPECT_EQ(direction_name(tps), "faster");
  Metric p99 = Metric::kP99;
  p99.better = true;
  EXPECT_DOUBLE_EQ(search_sample(p99, 4200), 4200);
  EXPECT_EQ(format_metric_change(p99, 0.5), "p99 2.0x lower");
  // A configuration the server rejects: the worst for the user either way, so a cause when
  // looking for worse, and never a helper when looking for better.
  EXPECT_LT(rejected_sample(Metric::kTps), 1e-9);
  EXPECT_GT(rejected_sample(tps), 1e9);
  const EffectInterval e{0.5, 0.4, 0.6, 3, 3, 1000, 0};
  const EffectInterval shown = in_metric_terms(tps, e);
  EXPECT_DOUBLE_EQ(shown.ratio, 2.0);
  EXPECT_DOUBLE_EQ(shown.low, 1 / 0.6);
  EXPECT_EQ(in_metric_terms(tps, shown), e);
}

TEST(Metric, ValuesOfARunAndTheirDirection) {
  const Measurement m = run_of(500, 5000, 2.5, 4200);
  EXPECT_DOUBLE_EQ(*metric_value(Metric::kTps, m), 500);
  EXPECT_DOUBLE_EQ(*metric_value(Metric::kCpuPerTx, m), 0.0005);
  EXPECT_DOUBLE_EQ(*metric_value(Metric::kP99, m), 4200);
  EXPECT_TRUE(higher_is_better(Metric::kTps));
  EXPECT_FALSE(higher_is_better(Metric::kCpuPerTx));
  EXPECT_FALSE(higher_is_better(Metric::kP99));
  // The search's samples: higher is better for every metric.
  EXPECT_DOUBLE_EQ(search_sample(Metric::kTps, 500), 500);
  EXPECT_DOUBLE_EQ(search_sample(Metric::kCpuPerTx, 0.0005), 2000);
  EXPECT_DOUBLE_EQ(search_sample(Metric::kCpuPerTx, search_sample(Metric::kCpuPerTx, 0.0005)),
                   0.0005);
}

TEST(Metric, CpuPerTxOfARunWithoutCpuFiguresIsMissingAndSaysWhatToDo) {
  // A remote server: no CPU time read.
  EXPECT_FALSE(metric_value(Metric::kCpuPerTx, run_of(500, 5000, 0, 4200)));
  // Nothing finished: no cost per transaction, no latency.
  EXPECT_FALSE(metric_value(Metric::kCpuPerTx, run_of(0, 0, 1.0, 0)));
  EXPECT_FALSE(metric_value(Metric::kP99, run_of(0, 0, 1.0, 0)));
  const std::string why = metric_missing(Metric::kCpuPerTx);
  EXPECT_NE(why.find("/proc"), std::string::npos) << why;
  EXPECT_NE(why.find("--metric tps"), std::string::npos) << why;
}

TEST(Metric, ChangesReadInTheMetricsOwnTerms) {
  // Ratios of search samples (new / reference), 0.5: twice as bad for every metric.
  EXPECT_EQ(format_metric_change(Metric::kTps, 0.149), format_change(0.149));
  EXPECT_EQ(format_metric_change(Metric::kCpuPerTx, 1 / 1.12), "CPU/tx +12.0%");
  EXPECT_EQ(format_metric_change(Metric::kCpuPerTx, 1 / 0.7), "CPU/tx -30.0%");
  EXPECT_EQ(format_metric_change(Metric::kP99, 1 / 2.1), "p99 2.1x higher");
  EXPECT_EQ(format_metric_change(Metric::kP99, 3.0), "p99 3.0x lower");
  EXPECT_EQ(format_metric_value(Metric::kCpuPerTx, search_sample(Metric::kCpuPerTx, 0.000412)),
            "0.412 ms CPU/tx");
  EXPECT_EQ(format_metric_value(Metric::kP99, search_sample(Metric::kP99, 12300)), "12.3 ms p99");
  EXPECT_EQ(format_metric_value(Metric::kTps, 1234), "1,234 TPS");
  EXPECT_EQ(worse_word(Metric::kCpuPerTx), "costlier");
  EXPECT_EQ(worse_word(Metric::kP99), "slower");
}

TEST(Metric, AnIntervalInTheMetricsTermsSwapsItsBoundsAndComesBack) {
  const EffectInterval search{0.8, 0.7, 0.9, 2, 3, 100, 0.12};
  const EffectInterval cost = in_metric_terms(Metric::kCpuPerTx, search);
  EXPECT_DOUBLE_EQ(cost.ratio, 1.25);
  EXPECT_NEAR(cost.low, 1 / 0.9, 1e-12);
  EXPECT_NEAR(cost.high, 1 / 0.7, 1e-12);
  EXPECT_EQ(cost.detectable, search.detectable);  // either way: the same
  const EffectInterval back = in_metric_terms(Metric::kCpuPerTx, cost);
  EXPECT_NEAR(back.low, search.low, 1e-12);
  EXPECT_NEAR(back.high, search.high, 1e-12);
  EXPECT_EQ(in_metric_terms(Metric::kTps, search), search);
}

TEST(Metric, AnAttributionByCostWritesItsRatiosAsCostsAndReadsThemBack) {
  Attribution a;
  a.metric = Metric::kCpuPerTx;
  a.headline = "stage: CPU/tx +25.0%";
  a.reference = "baseline";
  a.stage = {0.8, 0.7, 0.9, 2, 3, 100, 0.12};
  a.harmless = EffectInterval{1.0, 0.95, 1.05, 1, 3, 50, 0.08};
  const nlohmann::json j = attribution_json(a);
  EXPECT_EQ(j["metric"], "cpu_per_tx");
  EXPECT_DOUBLE_EQ(j["stage"]["ratio"].get<double>(), 1.25);  // costlier: above 1
  EXPECT_GT(j["stage"]["low"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["harmless"]["detectable"].get<double>(), 0.08);

  // Read back from a report: the same attribution, in the search's terms again.
  results::Run run = testing::sample_run();
  StageResult* attributed = nullptr;
  for (auto& stage : run.stages)
    if (stage.attribution) attributed = &stage;
  ASSERT_NE(attributed, nullptr);
  attributed->attribution = a;
  const results::Run back = read_json(to_json(run), "report.json");
  const Attribution& read =
      *back.stages[static_cast<std::size_t>(attributed - run.stages.data())].attribution;
  EXPECT_EQ(read.metric, Metric::kCpuPerTx);
  EXPECT_NEAR(read.stage.ratio, 0.8, 1e-12);
  EXPECT_NEAR(read.stage.low, 0.7, 1e-12);
  EXPECT_NEAR(read.stage.high, 0.9, 1e-12);
  EXPECT_EQ(read.stage.detectable, 0.12);
}

}  // namespace
}  // namespace pgslow::report
