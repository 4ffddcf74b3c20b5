// Every line pgslow prints fits the output's width: the wrapping the progress notes and the
// log's info lines share with the renderers.

#include "common/text_width.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <sstream>

#include "common/log.h"

namespace pgslow {
namespace {

// The widest line of `text`, in columns.
std::size_t widest(const std::string& text) {
  std::istringstream in(text);
  std::size_t most = 0;
  for (std::string line; std::getline(in, line);) most = std::max(most, display_width(line));
  return most;
}

TEST(Wrapped, EachLineFitsWithTheLaterOnesIndentedAndNewlinesKept) {
  const std::string restart =
      "restarting managed cluster in /tmp/freshK/.pgslow/cluster (port 55725) for wal_buffers, "
      "wal_level, wal_log_hints";
  const std::string text = wrapped(restart + "\nsecond line", 60, "  ");
  EXPECT_LE(widest(text), 60u) << text;
  EXPECT_NE(text.find("\n  "), std::string::npos) << text;
  EXPECT_NE(text.find("\nsecond line"), std::string::npos) << text;
  EXPECT_EQ(wrapped("short → fits", 60, "  "), "short → fits");
}

TEST(Wrapped, AnIndentedNoteKeepsItsIndentAndAPathIsNeverCut) {
  EXPECT_EQ(wrapped("  repeat 1 of 3", 60, "  "), "  repeat 1 of 3");
  EXPECT_EQ(wrapped("  a    b", 60, "  "), "  a    b");  // aligned columns kept
  const std::string path = "/var/tmp/pgslow-1234abcd/cluster/data/with/a/long/path/inside";
  const std::string text = wrapped("  wrote " + path + " and more", 30, "  ");
  EXPECT_NE(text.find("\n    " + path), std::string::npos) << text;  // indent + hanging
  EXPECT_EQ(text.rfind("  wrote", 0), 0u) << text;
  EXPECT_EQ(wrapped("\nfoo", 60, "  "), "\nfoo");
}

TEST(Wrapped, AnInfoLineWrapsToColumnsAndAnErrorStaysWhole) {
  ::setenv("COLUMNS", "60", 1);
  ::setenv("NO_COLOR", "1", 1);
  const auto previous = spdlog::default_logger();
  init_logging(Verbosity::kNormal);
  const std::string long_text(30, 'x');
  testing::internal::CaptureStderr();
  spdlog::info("{} {} {}", long_text, long_text, long_text);
  spdlog::error("{} {} {}", long_text, long_text, long_text);
  const std::string out = testing::internal::GetCapturedStderr();
  spdlog::drop("pgslow");
  spdlog::set_default_logger(previous);
  ::unsetenv("COLUMNS");
  ::unsetenv("NO_COLOR");
  std::istringstream in(out);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line.rfind("info: ", 0), 0u) << out;
  EXPECT_LE(display_width(line), 60u) << out;
  std::size_t error_lines = 0;
  while (std::getline(in, line))
    if (line.rfind("error: ", 0) == 0) {
      ++error_lines;
      EXPECT_GT(display_width(line), 60u) << out;
    }
  EXPECT_EQ(error_lines, 1u) << out;
}

}  // namespace
}  // namespace pgslow
