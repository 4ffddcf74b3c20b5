// The command target's apply command, proved on a real server that pgslow changes only
// through include_file_apply.sh: the script reads the JSON pgslow sends on stdin, writes an
// include file of postgresql.conf and reloads or restarts with pg_ctl. No ALTER SYSTEM:
// postgresql.auto.conf keeps its bytes throughout.
//
// Every test starts and ends with the same server: the include file holding the user's own
// `maintenance_work_mem = '77MB'` (which no restore may lose), and known values of every knob.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "apply/bytes.h"
#include "apply/journal.h"
#include "common/paths.h"
#include "common/process.h"
#include "pg/connection.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/pgslow_process.h"

namespace pgslow::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kOriginalInclude =
    "# written by the test: the user's own entry, which pgslow must keep\n"
    "maintenance_work_mem = '77MB'\n";

fs::path data_dir() {
  return *cluster().data_dir();
}
fs::path include_file() {
  return data_dir() / "pgslow-include.conf";
}
// pgslow's workdir (journal, lock) for this server: not the cluster's own workdir, so that
// nothing treats this server as the managed cluster.
fs::path workdir() {
  return cluster().cluster_dir().parent_path() / "command-target";
}
fs::path settings_dir() {
  return cluster().cluster_dir().parent_path() / "command-settings";
}

std::string show(const std::string& name) {
  return pg::Connection::open(conninfo()).query_value("SHOW " + name).value_or("");
}

// The options that name this server: its conninfo and the apply command.
std::vector<std::string> target(const std::string& apply_command) {
  return {"--conninfo", conninfo(), "--apply-command", apply_command};
}

std::string script_command() {
  const fs::path script =
      fs::path(PGSLOW_SOURCE_DIR) / "tests/integration/apply_command/include_file_apply.sh";
  return shell_quote({script.string(), data_dir().string(), cluster().pg_bin().string(),
                      cluster().log_file()->string()});
}

std::vector<std::string> args(std::initializer_list<std::string> verb,
                              const std::string& apply_command = script_command()) {
  std::vector<std::string> out = {"--workdir", workdir().string()};
  out.insert(out.end(), verb.begin(), verb.end());
  for (const std::string& a : target(apply_command)) out.push_back(a);
  return out;
}

std::string settings_file(const std::string& name, const std::string& yaml) {
  fs::path p = settings_dir() / name;
  std::ofstream(p) << yaml;
  return p.string();
}

void write_as_data_dir_owner(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
  struct stat st {};
  ASSERT_EQ(::stat(data_dir().c_str(), &st), 0);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(path.c_str(), st.st_uid, st.st_gid), 0);
  }
}

class ApplyCommandTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fs::create_directories(workdir());
    fs::create_directories(settings_dir());
    // The server reads the include file the script writes (as the user would set it up).
    std::ofstream(data_dir() / "postgresql.conf", std::ios::app)
        << "include_if_exists = 'pgslow-include.conf'\n";
    write_as_data_dir_owner(include_file(), kOriginalInclude);
    cluster().reload();
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (show("maintenance_work_mem") != "77MB") {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the reload never arrived";
      std::this_thread::sleep_for(10ms);
    }
    auto_conf_sha_ = apply::sha256_hex(read_file(data_dir() / "postgresql.auto.conf"));
  }

  // The server as the test suite found it: include file, auto.conf, values, no journal.
  static void expect_original(const std::string& when) {
    SCOPED_TRACE(when);
    EXPECT_EQ(read_file(include_file()), kOriginalInclude) << "the include file differs";
    EXPECT_EQ(apply::sha256_hex(read_file(data_dir() / "postgresql.auto.conf")), auto_conf_sha_)
        << "postgresql.auto.conf was touched: ALTER SYSTEM is not for this target";
    EXPECT_EQ(show("shared_buffers"), "128MB");
    EXPECT_EQ(show("work_mem"), "4MB");
    EXPECT_EQ(show("maintenance_work_mem"), "77MB");
    EXPECT_FALSE(fs::exists(apply::journal_path(workdir()))) << "the journal is still there";
  }

  static inline std::string auto_conf_sha_;
};

TEST_F(ApplyCommandTest, AppliesVerifiesAndRestoresByteForByte) {
  const std::string file =
      settings_file("both.yaml", "settings:\n  shared_buffers: 16MB\n  work_mem: 8MB\n");
  Finished a = run_pgslow(args({"apply", file, "--allow-changes"}));
  ASSERT_EQ(a.exit_code, 0) << a.output;
  EXPECT_NE(a.output.find("restarted"), std::string::npos) << a.output;
  EXPECT_EQ(show("shared_buffers"), "16MB");
  EXPECT_EQ(show("work_mem"), "8MB");
  const std::string written = read_file(include_file());
  EXPECT_NE(written.find("shared_buffers = '16MB'"), std::string::npos) << written;
  EXPECT_NE(written.find("maintenance_work_mem = '77MB'"), std::string::npos) << written;
  EXPECT_EQ(apply::sha256_hex(read_file(data_dir() / "postgresql.auto.conf")), auto_conf_sha_);
  ASSERT_TRUE(fs::exists(apply::journal_path(workdir())));

  // Without the same target, the journal's commands are not run.
  Finished wrong = run_pgslow({"--workdir", workdir().string(), "restore"});
  EXPECT_NE(wrong.exit_code, 0) << wrong.output;
  EXPECT_NE(wrong.output.find("--apply-command"), std::string::npos) << wrong.output;

  Finished r = run_pgslow(args({"restore"}));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_original("after restore");
}

// A target that takes seconds to apply (an HA manager's store, a cloud API) cannot switch back
// and forth within 4 s blocks: the reload-only stage is refused before its run, saying how long
// the apply took and what to do, the run exits 1, and the server is as it was.
TEST_F(ApplyCommandTest, ASlowApplyRefusesSwitchbackAndTheExitCodeSaysSo) {
  const std::string scenario = settings_file("slow.yaml", R"(name: slow-apply
workload:
  name: select-only
  scale: 1
  clients: 2
measure:
  warmup: 0s
  duration: 1s
  repeats: 1
stages:
  - name: logging
    settings:
      log_statement: ddl
)");
  const std::string slow = "sleep 1.5; exec " + script_command();
  Finished r = run_pgslow(
      args({"run", scenario, "--allow-changes", "--out", (settings_dir() / "slow-out").string()},
           slow),
      {}, std::chrono::seconds(240));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string said = unwrapped(r.output);
  EXPECT_NE(said.find("logging: stopped early: the configuration took"), std::string::npos)
      << r.output;
  EXPECT_NE(said.find("--design isolated"), std::string::npos) << r.output;
  expect_original("after the refused switchback stage");
  // A server pgslow does not own keeps none of the workload's databases, unless asked to.
  auto databases = [] {
    return pg::Connection::open(conninfo())
        .query_value(
            "SELECT count(*) FROM pg_database WHERE datname IN ('pgslow_tpl_select_only_1', "
            "'pgslow_select_only_1')")
        .value_or("");
  };
  EXPECT_NE(r.output.find("dropped the workload's databases pgslow_select_only_1 and "
                          "pgslow_tpl_select_only_1"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(databases(), "0");
  Finished kept = run_pgslow(args({"run", scenario, "--allow-changes", "--keep-data", "--design",
                                   "isolated", "--out", (settings_dir() / "kept-out").string()}),
                             {}, std::chrono::seconds(240));
  EXPECT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_EQ(databases(), "2") << kept.output;
  expect_original("after a run that kept its data");
}

// An apply command that returns before the server shows the values (Patroni applies from its
// store a second after `patronictl reload` returns): pgslow reads until they show, for the
// apply and for the restore, instead of taking the old values as a failure.
TEST_F(ApplyCommandTest, ACommandThatAppliesLateIsWaitedFor) {
  const std::string file = settings_file("late.yaml", "settings:\n  work_mem: 8MB\n");
  // As Patroni: the server reloads at once with nothing new, the values come 1.5 s later.
  const std::string late = "f=$(mktemp); cat > \"$f\"; echo '{\"settings\": {}}' | " +
                           script_command() + "; (sleep 1.5; " + script_command() +
                           " < \"$f\"; rm -f \"$f\") > /dev/null 2>&1 &";
  Finished a = run_pgslow(args({"apply", file, "--allow-changes"}, late));
  ASSERT_EQ(a.exit_code, 0) << a.output;
  EXPECT_NE(a.output.find("showed the values"), std::string::npos) << a.output;
  EXPECT_EQ(show("work_mem"), "8MB");
  Finished r = run_pgslow(args({"restore"}, late));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("showed the values"), std::string::npos) << r.output;
  expect_original("after a late apply and a late restore");
}

TEST_F(ApplyCommandTest, AValueTheServerRejectsIsPutBack) {
  const std::string file = settings_file("huge.yaml", "settings:\n  shared_buffers: 100GB\n");
  Finished a = run_pgslow(args({"apply", file, "--allow-changes"}));
  EXPECT_EQ(a.exit_code, 1) << a.output;
  EXPECT_NE(a.output.find("the apply command failed (exit status 1)"), std::string::npos)
      << a.output;
  EXPECT_NE(a.output.find("could not start server"), std::string::npos) << a.output;
  expect_original("after a shared_buffers the server cannot start with");
}

TEST_F(ApplyCommandTest, ValuesNotInEffectAreNamed) {
  // A command that takes the JSON and does nothing with it.
  const std::string file = settings_file("work_mem.yaml", "settings:\n  work_mem: 8MB\n");
  Finished a = run_pgslow(args({"apply", file, "--allow-changes"}, "cat >/dev/null"));
  EXPECT_EQ(a.exit_code, 1) << a.output;
  EXPECT_NE(a.output.find("work_mem: set to 8MB, but the server shows 4MB"), std::string::npos)
      << a.output;
  expect_original("after an apply command that set nothing");
}

TEST_F(ApplyCommandTest, AMissingCommandChangesNothing) {
  const std::string file = settings_file("work_mem.yaml", "settings:\n  work_mem: 8MB\n");
  Finished a = run_pgslow(args({"apply", file, "--allow-changes"}, "/nonexistent/apply.sh"));
  EXPECT_EQ(a.exit_code, 2) << a.output;
  EXPECT_NE(a.output.find("/nonexistent/apply.sh is not found"), std::string::npos) << a.output;
  expect_original("after a missing apply command");
}

// kill -9 of pgslow while the stage's settings are in effect, and before the command ran;
// `pgslow recover` with the same target options puts the original back through the command.
TEST_F(ApplyCommandTest, RecoverAfterKillMinus9) {
  const std::string file =
      settings_file("both.yaml", "settings:\n  shared_buffers: 16MB\n  work_mem: 8MB\n");
  {
    PgslowProcess victim(args({"apply", file, "--for", "120s", "--allow-changes"}));
    ASSERT_TRUE(victim.wait_for_output("in effect")) << victim.output();
    EXPECT_EQ(show("work_mem"), "8MB");
    victim.signal(SIGKILL);
    victim.wait();
    ASSERT_EQ(victim.killed_by(), SIGKILL) << victim.output();
  }
  ASSERT_TRUE(fs::exists(apply::journal_path(workdir())));
  Finished r = run_pgslow(args({"recover"}));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("recovered"), std::string::npos) << r.output;
  expect_original("after kill -9 with the settings in effect, then recover");

  PgslowProcess early(args({"apply", file, "--allow-changes"}), {"PGSLOW_CRASH_AT=half-applied"});
  early.wait();
  ASSERT_EQ(early.killed_by(), SIGKILL) << early.output();
  r = run_pgslow(args({"recover"}));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_original("after kill -9 before the apply command ran, then recover");
}

}  // namespace
}  // namespace pgslow::testing
