#pragma once
// Golden files of the report tests: tests/unit/report/golden/<file>. PGSLOW_UPDATE_GOLDEN=1
// rewrites them from the output (and skips the comparison).

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace pgslow::report {

inline void check_golden(const std::string& file, const std::string& actual) {
  const auto path = std::filesystem::path(PGSLOW_SOURCE_DIR) / "tests/unit/report/golden" / file;
  const char* update = std::getenv("PGSLOW_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    GTEST_SKIP() << "updated " << path;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path << " is missing; run with PGSLOW_UPDATE_GOLDEN=1 to create it";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str())
      << "output differs from " << path << "; if intended, rerun with PGSLOW_UPDATE_GOLDEN=1";
}

}  // namespace pgslow::report
