// A bisect's and an attribution's axes as the views word them: only where they were measured,
// naming the axis that moved with its interval.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "report/attribution_view.h"
#include "report/axes_view.h"
#include "report/bisect_view.h"
#include "tests/unit/report/sample_results.h"

namespace pgslow::report {
namespace {

// CPU/tx up 20% [+10%, +31%] at Holm's first step; TPS within noise.
std::vector<AxisEffect> costly() {
  return {{"tps", testing::known_interval(0.98, 0.9, 1.07)},
          {"cpu_per_tx", testing::known_interval(1.2, 1.1, 1.31, 0.975)}};
}

TEST(EveryAxisView, ABisectSaysWhatBadCostsOnEveryAxis) {
  BisectResult r = testing::sample_bisect();
  std::ostringstream before;
  render_bisect_console(r, before);
  EXPECT_EQ(before.str().find("every axis"), std::string::npos);

  r.axes = costly();
  r.culprits.front().solo.front().axes = costly();
  std::ostringstream out;
  render_bisect_console(r, out);
  EXPECT_NE(out.str().find("bad vs good on every axis: costs +20.0% CPU/tx"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("alone, every axis"), std::string::npos);
  const nlohmann::json j = bisect_to_json(r);
  ASSERT_TRUE(j.contains("axes"));
  EXPECT_TRUE(j["culprits"][0]["solo"][0].contains("axes"));
}

// A slower configuration still says what else moved, and how many axes did not.
TEST(EveryAxisView, TheLineNamesEveryAxisThatMovedBesideTheVerdict) {
  const std::vector<AxisEffect> axes = {
      {"tps", testing::known_interval(0.5, 0.45, 0.55, 0.9875)},
      {"cpu_per_tx", testing::known_interval(2.0, 1.8, 2.2, 0.99)},
      {"wal_bytes", testing::known_interval(1.01, 0.95, 1.07)}};
  const std::string text = every_axis_text(axis_changes(axes));
  EXPECT_EQ(text.find("-50.0% (2.0x slower)"), 0u) << text;
  // The other axes the search measured are all its own: they stand beside the verdict.
  EXPECT_NE(text.find("; 2.00x the CPU/tx (1.80–2.20x)"), std::string::npos) << text;
  EXPECT_NE(text.find("; 1 other axis within noise"), std::string::npos) << text;
}

TEST(EveryAxisView, AnAttributedKnobSaysWhatItCostsAlone) {
  Attribution a = testing::sample_run().stages[2].attribution.value();
  EXPECT_EQ(attribution_table(a).header.size(), 7u);
  a.knobs.front().axes = costly();
  const TextTable t = attribution_table(a);
  ASSERT_EQ(t.header.size(), 8u);
  EXPECT_EQ(t.header[6], "every axis");
  EXPECT_NE(t.rows.front()[6].find("costs +20.0% CPU/tx"), std::string::npos) << t.rows.front()[6];
  std::string lines;
  for (const auto& l : attribution_lines(a, "", 200)) lines += l + "\n";
  EXPECT_NE(lines.find("costs +20.0% CPU/tx"), std::string::npos) << lines;
}

}  // namespace
}  // namespace pgslow::report
