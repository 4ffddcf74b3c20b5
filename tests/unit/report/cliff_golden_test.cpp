// Golden files for `pgslow cliff`'s renderers (report/cliff.h): a search of work_mem from 64MB
// down to 64kB that found the cliff between 4MB and 2MB, with an uncertain point, evidence and
// a failed run. Regenerate after an intended change with PGSLOW_UPDATE_GOLDEN=1.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/cliff.h"
#include "tests/unit/report/golden.h"

namespace pgslow::report {
namespace {

CliffPoint point(const std::string& value, double kb, int order, double ratio, double low,
                 double high, CliffVerdict verdict, std::uint64_t tx, double temp_files) {
  CliffPoint p;
  p.value = value;
  p.base_value = kb;
  p.order = order;
  p.samples = {1000 * ratio, 1010 * ratio, 990 * ratio};
  p.baseline_samples = {1000, 1005, 995, 1000};
  p.effect = {ratio, low, high, 3, 4, tx, 0.05};
  p.verdict = verdict;
  p.transactions = tx;
  p.tps = 1000 * ratio;
  p.p99_us = 5000 / ratio;
  p.evidence = {
      {"temp_files", temp_files}, {"temp_bytes", temp_files * 1.5e6}, {"buffer_hit_ratio", 0.99}};
  return p;
}

CliffResult sample_cliff() {
  CliffResult r;
  r.knob = "work_mem";
  r.from = "64MB";
  r.to = "64kB";
  r.to_value = 64;
  r.resolution = 2;
  r.grid_steps = 10;
  r.max_points = 5;
  r.confidence = 0.995;
  r.search_confidence = 0.95;
  r.runs = 34;
  r.seconds = 170;
  r.workload = "script scenarios/scripts/sort-heavy.sql at scale 1, 4 clients, 2 s runs";
  r.server = "managed cluster (PostgreSQL 17)";
  r.baseline.value = "64MB";
  r.baseline.base_value = 65536;
  r.baseline.samples = std::vector<double>(16, 1000);
  r.baseline.transactions = 32000;
  r.baseline.evidence = {{"temp_files", 0}, {"temp_bytes", 0}, {"buffer_hit_ratio", 0.99}};
  r.points.push_back(point("64kB", 64, 1, 0.42, 0.38, 0.47, CliffVerdict::kHarmful, 2500, 3));
  r.points.push_back(point("2MB", 2048, 2, 0.82, 0.76, 0.88, CliffVerdict::kHarmful, 4900, 1));
  r.points.push_back(point("16MB", 16384, 3, 1.01, 0.95, 1.07, CliffVerdict::kSafe, 6100, 0));
  CliffPoint eight = point("8MB", 8192, 4, 0.97, 0.93, 1.01, CliffVerdict::kUncertain, 12000, 0);
  eight.looks = 2;
  eight.samples.insert(eight.samples.end(), {970, 975, 965});
  r.points.push_back(eight);
  CliffPoint four = point("4MB", 4096, 5, 0.99, 0.94, 1.04, CliffVerdict::kSafe, 6000, 0);
  four.error = "a run failed: the server restarted under it";
  r.points.push_back(four);
  r.first_harmful = 1;
  r.last_safe = 4;
  return r;
}

TEST(CliffGolden, Console) {
  std::ostringstream out;
  render_cliff_console(sample_cliff(), out);
  check_golden("cliff.txt", out.str());
}

TEST(CliffGolden, Markdown) {
  std::ostringstream out;
  render_cliff_markdown(sample_cliff(), out);
  check_golden("cliff.md", out.str());
}

TEST(CliffGolden, Csv) {
  std::ostringstream out;
  render_cliff_csv(sample_cliff(), out);
  check_golden("cliff.csv", out.str());
}

TEST(CliffGolden, Json) {
  check_golden("cliff.json", cliff_to_json(sample_cliff()).dump(2) + "\n");
}

TEST(CliffGolden, Html) {
  std::ostringstream out;
  render_cliff_html(sample_cliff(), out);
  check_golden("cliff.html", out.str());
}

TEST(CliffHeadline, NamesTheLastSafeAndTheFirstHarmfulValue) {
  EXPECT_EQ(cliff_headline(sample_cliff()),
            "safe down to 4MB (could see ±5.0% there); at 2MB: -18.0% [-24.0%, -12.0%] (3 runs, "
            "4,900 transactions)");
  CliffResult none = sample_cliff();
  none.points.resize(1);
  none.points[0].verdict = CliffVerdict::kSafe;
  none.points[0].effect = {0.99, 0.95, 1.03, 3, 4, 2500, 0.06};
  none.first_harmful.reset();
  none.last_safe = 0;
  EXPECT_EQ(cliff_headline(none),
            "no cliff in the range: safe down to 64kB (the whole range); at 64kB: -1.0% [-5.0%, "
            "+3.0%], within noise (could see ±6.0%) (3 runs, 2,500 transactions)");
}

TEST(CliffHeadline, ACostIsWordedInItsOwnTerms) {
  CliffResult r = sample_cliff();
  r.metric = Metric::kCpuPerTx;  // samples are reciprocals: 0.8 of a sample is 1.25x the cost
  r.points[1].effect = {0.8, 0.75, 0.85, 3, 4, 4900, 0};
  EXPECT_NE(cliff_headline(r).find("at 2MB: CPU/tx +25.0% [+17.6%, +33.3%]"), std::string::npos)
      << cliff_headline(r);
}

}  // namespace
}  // namespace pgslow::report
