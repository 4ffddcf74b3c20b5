// The cliff's headline and notes, on the sample search of tests/unit/report/sample_results.h
// (its golden files are checked with every other result's in registry_golden_test.cpp).

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/cliff_view.h"
#include "tests/unit/report/sample_results.h"

namespace pgslow::report {
namespace {

using testing::sample_cliff;

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
