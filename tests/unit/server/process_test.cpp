#include "common/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "common/errors.h"

namespace pgslow {
namespace {

using namespace std::chrono_literals;

TEST(Process, CapturesStdoutAndStderrAndExitCode) {
  auto r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.output.find("out\n"), std::string::npos);
  EXPECT_NE(r.output.find("err\n"), std::string::npos);
  EXPECT_EQ(r.describe_status(), "exit status 3");
}

TEST(Process, ArgumentsReachTheProgramUnquoted) {
  // No shell in between: spaces, quotes and $ arrive as written.
  auto r = run_process({"printf", "%s|", "a b", "it's", "$HOME", "\"q\"", ""});
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(r.output, "a b|it's|$HOME|\"q\"||");
}

TEST(Process, MissingProgramThrowsNamingIt) {
  try {
    run_process({"pgslow-no-such-program-xyz"});
    FAIL() << "expected an error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("pgslow-no-such-program-xyz"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("not found"), std::string::npos);
  }
}

TEST(Process, TimeoutKillsTheProcessGroup) {
  ProcessOptions o;
  o.timeout = 300ms;
  auto r = run_process({"sh", "-c", "echo started; sleep 30 & sleep 30"}, o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.output.find("started"), std::string::npos);
}

TEST(Process, ABackgroundChildHoldingThePipeDoesNotBlock) {
  // The command exits at once; its daemon keeps stdout open, as `pg_ctl start` without -l
  // or a user's restart script might.
  ProcessOptions o;
  o.timeout = 20s;
  auto r = run_process({"sh", "-c", "sleep 5 & echo done"}, o);
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.output.find("done"), std::string::npos);
}

TEST(Process, EnvironmentAndWorkingDirectory) {
  ProcessOptions o;
  o.env = {"PGSLOW_TEST_VALUE=x y"};
  o.cwd = "/";
  auto r = run_process({"sh", "-c", "printf '%s %s' \"$PGSLOW_TEST_VALUE\" \"$(pwd)\""}, o);
  EXPECT_EQ(r.output, "x y /");
}

TEST(Process, KeepsTheTailOfLongOutput) {
  ProcessOptions o;
  o.max_output = 10;
  auto r = run_process({"sh", "-c", "seq 1 1000"}, o);
  EXPECT_EQ(r.output.size(), 10u);
  EXPECT_EQ(r.output.substr(r.output.size() - 5), "1000\n");
}

TEST(Process, RunAsAnotherUserWhenRoot) {
  if (!running_as_root() || !find_system_user("nobody")) GTEST_SKIP() << "needs root";
  ProcessOptions o;
  o.run_as = "nobody";
  auto r = run_process({"id", "-un"}, o);
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(r.output, "nobody\n");
}

TEST(Process, ShellQuote) {
  EXPECT_EQ(shell_quote({"pg_ctl", "-D", "/a b/data", "it's"}), "pg_ctl -D '/a b/data' 'it'\\''s'");
  EXPECT_EQ(shell_quote({""}), "''");
}

TEST(Process, LastLines) {
  EXPECT_EQ(last_lines("a\nb\nc\n", 2), "b\nc");
  EXPECT_EQ(last_lines("a\nb\nc", 1), "c");
  EXPECT_EQ(last_lines("a\nb\nc", 10), "a\nb\nc");
  EXPECT_EQ(last_lines("", 3), "");
}

TEST(Process, StandardInputComesFromMemory) {
  ProcessOptions o;
  o.input = std::string("{\"settings\": {}}\n");
  ProcessResult r = run_process({"cat"}, o);
  EXPECT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(r.output, "{\"settings\": {}}\n");
  // Without input the child reads /dev/null: nothing, at once.
  EXPECT_EQ(run_process({"cat"}).output, "");
}

// Issue #36: a descriptor pgslow inherited (`pgslow server start 9>>/root-only-file`) or opened
// without close-on-exec never reaches a child, which may be the server's user.
TEST(Process, NoDescriptorAboveTwoReachesTheChild) {
  const int inherited = ::open("/dev/null", O_WRONLY);  // no O_CLOEXEC, as a shell leaves it
  ASSERT_GE(inherited, 0);
  ASSERT_EQ(::dup2(inherited, 9), 9);
  ::close(inherited);
  auto r = run_process({"sh", "-c", "ls /proc/self/fd; echo x >&9 && echo wrote"});
  ::close(9);
  // ls's own folder descriptor is 3; 9 must be gone, so sh's redirection to it fails.
  EXPECT_NE(r.output.find("\n2\n"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("\n9\n"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("wrote"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace pgslow
