// `pgslow bench` on the shared managed cluster with its output going to a file (not a
// terminal): no per-second progress line, unless -P 1 asks for one a second (docs/user-guide.md,
// "Progress").

#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cluster_fixture.h"
#include "tests/support/pgslow_process.h"

namespace pgslow {
namespace {

// The progress lines of the measured run: "  3.0 s  tps 4805  p99 4.10 ms  failed 0".
int tick_lines(const std::string& output) {
  static const std::regex tick(R"(^ *[0-9]+\.[0-9] s( \(warm-up\))?  tps [0-9]+  p99 )");
  std::istringstream in(output);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += std::regex_search(line, tick) ? 1 : 0;
  return n;
}

ProcessResult bench(const std::vector<std::string>& more) {
  std::vector<std::string> args = {"bench", "-w",         "tpcb-like", "--scale",  "1", "--clients",
                                   "2",     "--duration", "3",         "--warmup", "0"};
  args.insert(args.end(), more.begin(), more.end());
  return testing::pgslow(args);
}

TEST(ProgressCommand, PipedOutputHasNoPerSecondLinesAndMinusPOneHasOneASecond) {
  const ProcessResult quiet_by_default = bench({});
  ASSERT_TRUE(quiet_by_default.ok()) << quiet_by_default.describe_status() << "\n"
                                     << quiet_by_default.output;
  EXPECT_EQ(tick_lines(quiet_by_default.output), 0) << quiet_by_default.output;
  EXPECT_EQ(quiet_by_default.output.find('\r'), std::string::npos) << quiet_by_default.output;
  EXPECT_NE(quiet_by_default.output.find("tps"), std::string::npos)
      << "the result is printed: " << quiet_by_default.output;

  // -P after the command, as pgbench users write it: 3 s measured, a line each second.
  const ProcessResult every_second = bench({"-P", "1"});
  ASSERT_TRUE(every_second.ok()) << every_second.describe_status() << "\n" << every_second.output;
  const int ticks = tick_lines(every_second.output);
  EXPECT_GE(ticks, 2) << every_second.output;
  EXPECT_LE(ticks, 4) << every_second.output;
  EXPECT_EQ(every_second.output.find('\r'), std::string::npos) << every_second.output;

  // -q: the result, nothing else of the run's progress.
  const ProcessResult quiet = bench({"-q"});
  ASSERT_TRUE(quiet.ok()) << quiet.describe_status() << "\n" << quiet.output;
  EXPECT_EQ(tick_lines(quiet.output), 0) << quiet.output;
  EXPECT_EQ(quiet.output.find("data reset"), std::string::npos) << quiet.output;
}

}  // namespace
}  // namespace pgslow
