#include "common/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

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

// Issue #52: a child of another user (the server, PgBouncer) gets the allow-list only: the
// locale, TZ and a PATH of system folders, then the caller's overrides; never a secret.
TEST(Process, MinimalEnvironmentKeepsOnlyTheAllowList) {
  const std::vector<std::string> ours = {"PGPASSWORD=hunter2",
                                         "AWS_SECRET_ACCESS_KEY=abc",
                                         "PATH=/root/bin:.:/usr/bin",
                                         "LANG=de_DE.UTF-8",
                                         "LC_MESSAGES=C",
                                         "LC_ALL=C.UTF-8",
                                         "LCX=1",
                                         "LC_=2",
                                         "LC_lower=3",
                                         "TZ=Europe/Berlin",
                                         "PGDATA=/elsewhere",
                                         "LD_PRELOAD=/tmp/x.so",
                                         "HOME=/root",
                                         "NOEQUALS"};
  const std::vector<std::string> env =
      minimal_environment(ours, {"HOME=/var/lib/postgresql", "TZ=UTC"});
  const std::vector<std::string> expected = {
      "LANG=de_DE.UTF-8",         "LC_MESSAGES=C",
      "LC_ALL=C.UTF-8",           std::string("PATH=") + kSystemPath,
      "HOME=/var/lib/postgresql", "TZ=UTC"};
  EXPECT_EQ(env, expected);
  // A PATH the caller passes replaces the system one.
  EXPECT_EQ(minimal_environment({}, {"PATH=/opt/pg/bin"}),
            std::vector<std::string>{"PATH=/opt/pg/bin"});
}

// The same through a real child: as root, a program run as another user sees none of our
// variables; run as ourselves (a user's own command), it still gets them.
TEST(Process, AChildOfAnotherUserGetsNoneOfOurSecrets) {
  if (!running_as_root() || !find_system_user("nobody")) GTEST_SKIP() << "needs root";
  ASSERT_EQ(::setenv("PGSLOW_TEST_SECRET", "s3cret-52", 1), 0);
  ProcessOptions o;
  o.run_as = "nobody";
  o.env = {"PGSLOW_TEST_GIVEN=yes"};
  const ProcessResult as_nobody = run_process({"env"}, o);
  const ProcessResult as_us = run_process({"env"});
  ::unsetenv("PGSLOW_TEST_SECRET");
  ASSERT_TRUE(as_nobody.ok()) << as_nobody.output;
  EXPECT_EQ(as_nobody.output.find("s3cret-52"), std::string::npos) << as_nobody.output;
  EXPECT_NE(as_nobody.output.find("PGSLOW_TEST_GIVEN=yes\n"), std::string::npos);
  EXPECT_NE(as_nobody.output.find(std::string("PATH=") + kSystemPath + "\n"), std::string::npos)
      << as_nobody.output;
  EXPECT_NE(as_nobody.output.find("USER=nobody\n"), std::string::npos) << as_nobody.output;
  EXPECT_NE(as_us.output.find("PGSLOW_TEST_SECRET=s3cret-52"), std::string::npos);
}

}  // namespace
}  // namespace pgslow
