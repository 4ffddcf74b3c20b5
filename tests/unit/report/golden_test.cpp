// Golden-file tests: each renderer's output for the sample run, byte for byte.
// Regenerate after an intended change with PGSLOW_UPDATE_GOLDEN=1 and review the diff.

#include "tests/unit/report/golden.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/reporter.h"
#include "report/versions.h"
#include "tests/unit/report/sample_run.h"

namespace pgslow::report {
namespace {

std::string render(std::string_view format, const Run& run) {
  std::ostringstream out;
  make_reporter(format)->report(run, out);
  return out.str();
}

TEST(Golden, Console) {
  check_golden("sample.txt", render("console", testing::sample_run()));
}
TEST(Golden, Markdown) {
  check_golden("sample.md", render("md", testing::sample_run()));
}
TEST(Golden, Csv) {
  check_golden("sample.csv", render("csv", testing::sample_run()));
}
TEST(Golden, Json) {
  check_golden("sample.json", render("json", testing::sample_run()));
}

TEST(Golden, Html) {
  check_golden("sample.html", render("html", testing::sample_run()));
}

TEST(Golden, Comparison) {
  results::Run other = testing::sample_run();
  other.server_version = "PostgreSQL 17.2";
  other.server_major = 17;
  other.stages[1].repeats = {testing::measurement(2104, 60, 15)};
  std::ostringstream out;
  render_comparison(testing::sample_run(), other, "pg15.json", "pg17.json", false, out);
  check_golden("compare.txt", out.str());
}

// The same scenario on two versions, side by side, in every format.
TEST(Golden, Versions) {
  results::Run other = testing::sample_run();
  other.server_version = "PostgreSQL 18.4";
  other.server_major = 18;
  other.stages[1].repeats = {testing::measurement(2104, 60, 15)};
  other.stages.pop_back();  // a stage one version did not run
  const VersionRuns runs{{testing::sample_run(), other}};
  for (const auto& format : version_report_formats()) {
    std::ostringstream out;
    render_versions(runs, format, out);
    check_golden("versions." + (format == "console" ? std::string("txt") : format), out.str());
  }
}

TEST(Console, FitsOneHundredColumns) {
  std::istringstream in(render("console", testing::sample_run()));
  std::string line;
  while (std::getline(in, line)) {
    std::size_t columns = 0;
    for (unsigned char c : line) columns += (c & 0xC0) != 0x80 ? 1 : 0;
    EXPECT_LE(columns, 100u) << line;
  }
}

TEST(Reporters, UnknownFormatIsNull) {
  EXPECT_EQ(make_reporter("pdf"), nullptr);
}

}  // namespace
}  // namespace pgslow::report
