// Issue #16, proved on the real server with the built pgslow binary: a workdir nobody can turn
// against root, secrets never stored or printed, restore that keeps other people's changes,
// and the smaller faults (mixed-case names, a full disk, check's target).

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "apply/bytes.h"
#include "apply/journal.h"
#include "common/errors.h"
#include "common/paths.h"
#include "common/process.h"
#include "common/strings.h"
#include "pg/connection.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/pgslow_process.h"
#include "tests/support/restoring_test.h"

namespace pgslow::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::vector<std::string> args(std::initializer_list<std::string> rest) {
  std::vector<std::string> out = {"--workdir", cluster_workdir().string()};
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

// Runs SQL and waits until a new session sees the reload.
void sql_and_reload(const std::string& statement) {
  pg::Connection conn = pg::Connection::open(conninfo());
  if (!statement.empty()) conn.exec(statement);
  std::string before = conn.query_value("SELECT pg_conf_load_time()::text").value_or("");
  conn.exec("SELECT pg_reload_conf()");
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (pg::Connection::open(conninfo()).query_value("SELECT pg_conf_load_time()::text") ==
         before) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the reload never arrived";
    std::this_thread::sleep_for(10ms);
  }
}

std::string everything_under(const fs::path& dir) {
  std::string all;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) {
      try {
        all += read_file(it->path());
      } catch (const std::exception&) {
      }
    }
  }
  return all;
}

class HardeningTest : public RestoringTest {
 protected:
  static void SetUpTestSuite() {
    RestoringTest::SetUpTestSuite();
    write("reload.yaml", "settings:\n  work_mem: 64kB\n  random_page_cost: 40\n");
  }
};

// ---- 1. the workdir is not trusted blindly --------------------------------------------------

// The unprivileged user of the attack, created when missing.
std::optional<std::pair<uid_t, gid_t>> intruder() {
  ProcessResult id = run_process({"id", "-u", "pgslowintruder"}, {});
  if (id.exit_code != 0) {
    run_process({"useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                 "pgslowintruder"},
                {});
    id = run_process({"id", "-u", "pgslowintruder"}, {});
  }
  if (id.exit_code != 0) return std::nullopt;
  ProcessResult gid = run_process({"id", "-g", "pgslowintruder"}, {});
  return std::make_pair(static_cast<uid_t>(std::stoul(id.output)),
                        static_cast<gid_t>(std::stoul(gid.output)));
}

// A journal that would run `marker`'s touch as its reload command, for a server at the
// cluster's conninfo, left by a process that is gone.
apply::Journal planted_journal(const fs::path& marker) {
  apply::Journal j;
  j.owner = {static_cast<int>(::getpid()), 1, ""};  // this pid, another start time: gone
  j.command = "pgslow run evil.yaml";
  j.operation = apply::Operation::kRun;
  j.state = apply::JournalState::kChanging;
  j.server.kind = "command";
  j.server.description = "server at the fixture (user commands)";
  j.server.conninfo = conninfo();
  j.server.target = {{"kind", "command"},
                     {"conninfo", conninfo()},
                     {"reload_command", "touch " + marker.string() + "; kill -HUP " +
                                            std::to_string(cluster().status().pid.value_or(0))}};
  return j;
}

TEST_F(HardeningTest, APlantedJournalAndSymlinkedLockInAnotherUsersWorkdirAreRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: the attack is on root's pgslow";
  std::optional<std::pair<uid_t, gid_t>> user = intruder();
  if (!user) GTEST_SKIP() << "cannot create the unprivileged user pgslowintruder (useradd)";
  const fs::path evil = dir_ / "evil";
  const fs::path victim = dir_ / "victim";
  const fs::path marker = dir_ / "pwned";
  fs::create_directories(evil);
  std::ofstream(victim) << "precious\n";
  apply::Journal j = planted_journal(marker);
  std::ofstream(evil / "journal.json") << apply::journal_to_json(j);
  fs::create_symlink(victim, evil / "pgslow.lock");
  ASSERT_EQ(::chown(evil.c_str(), user->first, user->second), 0);
  ASSERT_EQ(::chown((evil / "journal.json").c_str(), user->first, user->second), 0);
  ASSERT_EQ(::lchown((evil / "pgslow.lock").c_str(), user->first, user->second), 0);

  for (std::vector<std::string> command :
       {std::vector<std::string>{"status"}, std::vector<std::string>{"knobs", "list"},
        std::vector<std::string>{"recover"},
        std::vector<std::string>{"apply", file("reload.yaml")}}) {
    SCOPED_TRACE(command[0]);
    std::vector<std::string> a = {"--workdir", evil.string()};
    a.insert(a.end(), command.begin(), command.end());
    Finished r = run_pgslow(a);
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("refuses the workdir"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("uid " + std::to_string(user->first)), std::string::npos) << r.output;
  }
  EXPECT_FALSE(fs::exists(marker)) << "root ran the journal's command";
  EXPECT_EQ(read_file(victim), "precious\n") << "root wrote through the planted symlink";

  // Root's own folder, but writable by everyone (a shared /var/tmp/pgslow): refused as well.
  const fs::path shared = dir_ / "shared";
  fs::create_directories(shared);
  fs::permissions(shared, fs::perms::all);
  Finished r = run_pgslow({"--workdir", shared.string(), "status"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("chmod go-w"), std::string::npos) << r.output;

  // Root's own private folder with a symlink as the lock: never written through.
  const fs::path own = dir_ / "own";
  fs::create_directories(own);
  fs::create_symlink(victim, own / "pgslow.lock");
  r = run_pgslow({"--workdir", own.string(), "recover"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("symbolic link"), std::string::npos) << r.output;
  EXPECT_EQ(read_file(victim), "precious\n");
}

TEST_F(HardeningTest, AJournalsCommandsRunOnlyForTheServerTheUserNames) {
  const fs::path wd = dir_ / "named";
  const fs::path marker = dir_ / "reloaded";
  fs::create_directories(wd);
  apply::Journal j = planted_journal(marker);
  apply::save_journal(wd, j);

  // Commands that do not name the server run nothing from the journal, and say how to.
  for (std::vector<std::string> command :
       {std::vector<std::string>{"status"}, std::vector<std::string>{"knobs", "list"}}) {
    std::vector<std::string> a = {"--workdir", wd.string()};
    a.insert(a.end(), command.begin(), command.end());
    Finished r = run_pgslow(a);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("--reload-command"), std::string::npos) << r.output;
  }
  Finished r = run_pgslow({"--workdir", wd.string(), "recover"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("does not protect the server this command names"), std::string::npos)
      << r.output;
  r = run_pgslow(
      {"--workdir", wd.string(), "recover", "--conninfo", conninfo(), "--reload-command", "true"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(marker)) << "a journal's command ran for a server nobody named";
  EXPECT_TRUE(fs::exists(apply::journal_path(wd)));

  // Named with the same options: the recorded reload runs.
  r = run_pgslow({"--workdir", wd.string(), "recover", "--conninfo", conninfo(), "--reload-command",
                  j.server.target["reload_command"]});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(marker)) << r.output;
  EXPECT_FALSE(fs::exists(apply::journal_path(wd)));
}

// ---- 2. secrets ----------------------------------------------------------------------------

TEST_F(HardeningTest, APasswordInTheConninfoIsNeverStoredOrPrinted) {
  std::map<std::string, std::string> parts;
  for (const std::string& kv : split(conninfo(), ' ')) {
    auto eq = kv.find('=');
    parts[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  const std::string secret = "Hunter2s3cret";
  // The socket login is trust: the server ignores the password, pgslow must not keep it.
  for (const std::string& c : {conninfo() + " password=" + secret,
                               conninfo() + " password \t=\t'" + secret + "' sslpassword=" + secret,
                               fmt::format("postgresql://postgres:{}@/postgres?host={}&port={}",
                                           secret, parts["host"], parts["port"])}) {
    SCOPED_TRACE(c);
    std::string printed;
    Finished a =
        run_pgslow(args({"apply", file("reload.yaml"), "--conninfo", c, "--allow-changes"}));
    ASSERT_EQ(a.exit_code, 0) << a.output;
    printed += a.output;
    const std::string journal = read_file(apply::journal_path(cluster_workdir()));
    // The conninfo it reopens the server with has no password key at all (not even
    // password=***, which would override PGPASSWORD); messages show *** at most.
    std::optional<apply::Journal> j = apply::load_journal(cluster_workdir());
    ASSERT_TRUE(j.has_value());
    EXPECT_EQ(j->server.conninfo.find("password"), std::string::npos) << j->server.conninfo;
    EXPECT_EQ(j->server.target["conninfo"].find("password"), std::string::npos);
    EXPECT_EQ(journal.find(secret), std::string::npos) << journal;
    struct stat st {};
    ASSERT_EQ(::stat((cluster_workdir() / "pgslow.lock").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    printed += run_pgslow(args({"status"})).output;
    printed += run_pgslow(args({"server", "status"})).output;  // the "degraded" line
    printed += run_pgslow(args({"recover"})).output;
    const std::string files = everything_under(cluster_workdir());
    EXPECT_EQ(files.find(secret), std::string::npos) << "the workdir holds the password";
    Finished restore = run_pgslow(args({"restore", "--conninfo", c}));
    EXPECT_EQ(restore.exit_code, 0) << restore.output;
    printed += restore.output;
    Finished held = run_pgslow(
        args({"apply", file("reload.yaml"), "--conninfo", c, "--allow-changes", "--for", "1s"}));
    EXPECT_EQ(held.exit_code, 0) << held.output;
    printed += held.output;
    EXPECT_EQ(printed.find(secret), std::string::npos) << printed;
    EXPECT_NE(printed.find("***"), std::string::npos) << printed;
  }
}

// The same with a password the server really asks for: a role that logs in over TCP, where
// the managed cluster requires scram-sha-256 (initdb --auth-host), through a run with its
// reports, a transient apply with status, a kill -9 and recover, and a kept apply and
// restore. The secrets are in no file of the workdir, no report and no output; recover and
// restore get the password the libpq way (PGPASSWORD), from nothing pgslow stored.
TEST_F(HardeningTest, ARealPasswordWorksEverywhereAndIsFoundNowhere) {
  const std::string secret = "s3cr3t-XYZ";
  const std::string ssl_secret = "ssl-s3cr3t-XYZ";
  std::map<std::string, std::string> parts;
  for (const std::string& kv : split(conninfo(), ' ')) {
    auto eq = kv.find('=');
    parts[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  {
    pg::Connection admin = pg::Connection::open(conninfo());
    admin.exec("SET log_statement = 'none'");  // the server log is in the greps below
    admin.exec("DROP ROLE IF EXISTS pgslow_pw");
    admin.exec("CREATE ROLE pgslow_pw LOGIN SUPERUSER PASSWORD '" + secret + "'");
  }
  const std::string tcp =
      "host=127.0.0.1 port=" + parts["port"] + " user=pgslow_pw dbname=postgres sslmode=disable";
  // Password authentication is really used: without it the server refuses the login.
  try {
    pg::Connection::open(tcp);
    ADD_FAILURE() << "the server let pgslow_pw in over TCP without a password";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("password"), std::string::npos) << e.what();
  }
  const std::string with_secret =
      tcp + " password=" + secret + " sslpassword \t= '" + ssl_secret + "'";
  EXPECT_EQ(pg::Connection::open(with_secret).query_value("SELECT current_user"), "pgslow_pw");

  const fs::path wd = dir_ / "password-workdir";
  const fs::path results = wd / "results" / "password-run";
  auto in_wd = [&](std::initializer_list<std::string> rest) {
    std::vector<std::string> out = {"--workdir", wd.string()};
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
  };
  std::string printed;
  auto keep = [&](const std::string& what, const std::string& output) {
    printed += "\n==== " + what + "\n" + output;
    return output;
  };

  // 1. A run of a short scenario against the server as a command target.
  write("password-run.yaml",
        fmt::format("name: password-run\n"
                    "target:\n  kind: command\n  conninfo: \"{}\"\n  allow_changes: true\n"
                    "workload:\n  name: tpcb-like\n  scale: 1\n  clients: 2\n"
                    "measure:\n  warmup: 1s\n  duration: 2s\n  repeats: 1\n"
                    "stages:\n  - name: small-work-mem\n"
                    "    settings: {{work_mem: 64kB}}\n",
                    with_secret));
  // --keep-data: the databases the run made stay, to be looked at below.
  Finished run = run_pgslow(
      in_wd({"run", file("password-run.yaml"), "--keep-data", "--out", results.string()}));
  keep("run", run.output);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  for (const char* report : {"report.json", "report.csv", "report.md", "report.html"})
    EXPECT_TRUE(fs::exists(results / report)) << report;
  EXPECT_NE(read_file(results / "report.json").find("small-work-mem"), std::string::npos);
  // The run's data was created by the password role, over TCP.
  EXPECT_NE(pg::Connection::open(conninfo())
                .query_value("SELECT count(*) FROM pg_database d JOIN pg_roles r "
                             "ON r.oid = d.datdba WHERE r.rolname = 'pgslow_pw'"),
            "0");

  // 2. A transient apply, status while it holds, then Ctrl-C restores.
  {
    PgslowProcess held(in_wd({"apply", file("reload.yaml"), "--conninfo", with_secret,
                              "--allow-changes", "--for", "5min"}));
    ASSERT_TRUE(held.wait_for_output("in effect")) << held.output();
    EXPECT_EQ(show_setting("random_page_cost"), "40");
    keep("status (held)", run_pgslow(in_wd({"status"})).output);
    keep("files while held", everything_under(wd));
    held.signal(SIGINT);
    held.wait();
    keep("apply --for", held.output());
    EXPECT_EQ(held.exit_code(), 130) << held.output();
    EXPECT_EQ(show_setting("random_page_cost"), "4");
  }

  // 3. kill -9 during the hold; recover needs the password and gets it from PGPASSWORD only.
  {
    PgslowProcess victim(in_wd({"apply", file("reload.yaml"), "--conninfo", with_secret,
                                "--allow-changes", "--for", "60s"}),
                         {"PGSLOW_CRASH_AT=workload"});
    victim.wait();
    keep("apply killed", victim.output());
    ASSERT_EQ(victim.killed_by(), SIGKILL) << victim.output();
    ASSERT_TRUE(fs::exists(apply::journal_path(wd)));
    keep("journal after kill -9", read_file(apply::journal_path(wd)));
    Finished status = run_pgslow(in_wd({"status"}));
    keep("status (after kill)", status.output);
    Finished without = run_pgslow(in_wd({"recover", "--conninfo", tcp}), {"PGPASSWORD="});
    keep("recover without a password", without.output);
    EXPECT_NE(without.exit_code, 0) << without.output;
    // The server is up and said no: never "not running", never an attempt to start it.
    EXPECT_NE(without.output.find("refused pgslow's login"), std::string::npos) << without.output;
    EXPECT_NE(without.output.find("PGPASSWORD"), std::string::npos) << without.output;
    EXPECT_EQ(without.output.find("not running"), std::string::npos) << without.output;
    EXPECT_TRUE(fs::exists(apply::journal_path(wd))) << without.output;
    Finished recover = run_pgslow(in_wd({"recover", "--conninfo", tcp}), {"PGPASSWORD=" + secret});
    keep("recover with PGPASSWORD", recover.output);
    EXPECT_EQ(recover.exit_code, 0) << recover.output;
    EXPECT_NE(recover.output.find("recovered"), std::string::npos) << recover.output;
    EXPECT_FALSE(fs::exists(apply::journal_path(wd)));
    EXPECT_EQ(show_setting("random_page_cost"), "4");
  }

  // 4. A kept apply, status, and restore with the password from the environment.
  {
    Finished kept = run_pgslow(
        in_wd({"apply", file("reload.yaml"), "--conninfo", with_secret, "--allow-changes"}));
    keep("apply (kept)", kept.output);
    ASSERT_EQ(kept.exit_code, 0) << kept.output;
    keep("status (kept)", run_pgslow(in_wd({"status"})).output);
    keep("journal (kept)", read_file(apply::journal_path(wd)));
    Finished restore = run_pgslow(in_wd({"restore", "--conninfo", tcp}), {"PGPASSWORD=" + secret});
    keep("restore with PGPASSWORD", restore.output);
    EXPECT_EQ(restore.exit_code, 0) << restore.output;
    EXPECT_EQ(show_setting("random_page_cost"), "4");
  }

  // Nothing anywhere: every file of the workdir (journal, lock, results and their reports),
  // the fixture's workdir (the server's log), and everything printed on stdout and stderr.
  const std::string files = everything_under(wd);
  const std::string server_side = everything_under(cluster_workdir());
  for (const std::string& s : {secret, ssl_secret}) {
    SCOPED_TRACE(s);
    EXPECT_EQ(files.find(s), std::string::npos) << "the workdir holds a password";
    EXPECT_EQ(server_side.find(s), std::string::npos) << "the server's workdir holds a password";
    EXPECT_EQ(printed.find(s), std::string::npos) << printed;
  }
  EXPECT_NE(printed.find("***"), std::string::npos) << printed;
  {
    pg::Connection admin = pg::Connection::open(conninfo());
    pg::Result owned = admin.exec(
        "SELECT datname FROM pg_database d JOIN pg_roles r ON r.oid = d.datdba "
        "WHERE r.rolname = 'pgslow_pw'");
    for (int i = 0; i < owned.rows(); ++i)
      admin.exec("DROP DATABASE IF EXISTS \"" + std::string(owned.get(i, 0)) + "\"");
    admin.exec("DROP ROLE pgslow_pw");
  }
}

// ---- 3. restore keeps other people's changes ----------------------------------------------

TEST_F(HardeningTest, SomeoneElsesAlterSystemDuringAnApplyForIsKept) {
  PgslowProcess p(args({"apply", file("reload.yaml"), "--for", "5min"}));
  ASSERT_TRUE(p.wait_for_output("in effect")) << p.output();
  sql_and_reload("ALTER SYSTEM SET maintenance_work_mem = '77MB'");
  p.signal(SIGINT);  // Ctrl-C restores now
  p.wait();
  EXPECT_EQ(p.exit_code(), 130) << p.output();
  EXPECT_NE(p.output().find("maintenance_work_mem"), std::string::npos) << p.output();
  EXPECT_NE(p.output().find("kept"), std::string::npos) << p.output();
  EXPECT_EQ(show_setting("maintenance_work_mem"), "77MB");
  EXPECT_EQ(show_setting("random_page_cost"), "4");
  const std::string now = read_file(cluster_auto_conf());
  EXPECT_NE(now.find("maintenance_work_mem = '77MB'"), std::string::npos) << now;
  EXPECT_EQ(now.find("random_page_cost"), std::string::npos) << now;
  sql_and_reload("ALTER SYSTEM RESET maintenance_work_mem");
}

TEST_F(HardeningTest, APostgresqlConfEditDuringAKeptApplyIsKeptAndBreaksNothing) {
  const fs::path conf = cluster_data_dir() / "postgresql.conf";
  const std::string conf_before = read_file(conf);
  Finished a = run_pgslow(args({"apply", file("reload.yaml")}));
  ASSERT_EQ(a.exit_code, 0) << a.output;
  { std::ofstream(conf, std::ios::app) << "\nautovacuum_naptime = 77\n"; }
  sql_and_reload("");
  Finished status = run_pgslow(args({"status"}));
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find("DEGRADED"), std::string::npos) << status.output;
  Finished recover = run_pgslow(args({"recover"}));
  EXPECT_EQ(recover.exit_code, 0) << recover.output;
  Finished restore = run_pgslow(args({"restore"}));
  EXPECT_EQ(restore.exit_code, 0) << restore.output;
  EXPECT_NE(restore.output.find("autovacuum_naptime"), std::string::npos) << restore.output;
  EXPECT_EQ(show_setting("autovacuum_naptime"), "77s");
  EXPECT_EQ(show_setting("random_page_cost"), "4");
  // Nobody else touched postgresql.auto.conf: its original bytes (TearDown checks).
  {
    std::ofstream out(conf, std::ios::trunc);
    out << conf_before;
  }
  sql_and_reload("");
}

TEST_F(HardeningTest, SomeoneElsesValueOfAKnobPgslowChangedStopsRestoreUntilForced) {
  const std::string work_mem_before = show_setting("work_mem");
  Finished a = run_pgslow(args({"apply", file("reload.yaml")}));
  ASSERT_EQ(a.exit_code, 0) << a.output;
  sql_and_reload("ALTER SYSTEM SET work_mem = '7MB'");
  Finished r = run_pgslow(args({"restore"}));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("work_mem"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'7MB'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--force-restore"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Nothing was restored"), std::string::npos) << r.output;
  EXPECT_EQ(show_setting("work_mem"), "7MB");
  EXPECT_EQ(show_setting("random_page_cost"), "40");  // nothing touched
  std::optional<apply::Journal> j = apply::load_journal(cluster_workdir());
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(j->state, apply::JournalState::kKept);
  Finished status = run_pgslow(args({"status"}));
  EXPECT_EQ(status.exit_code, 0) << status.output;

  Finished forced = run_pgslow(args({"restore", "--force-restore"}));
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_NE(forced.output.find("'7MB'"), std::string::npos) << forced.output;  // named, replaced
  EXPECT_EQ(show_setting("work_mem"), work_mem_before);
  EXPECT_EQ(show_setting("random_page_cost"), "4");
}

// ---- 5. the smaller ones -------------------------------------------------------------------

TEST_F(HardeningTest, TimeZoneAndDateStyleCanBeSet) {
  write("mixed-case.yaml", "settings:\n  TimeZone: America/New_York\n  DateStyle: 'SQL, DMY'\n");
  const std::string tz = show_setting("TimeZone");
  Finished a = run_pgslow(args({"apply", file("mixed-case.yaml"), "--for", "1s"}));
  EXPECT_EQ(a.exit_code, 0) << a.output;
  EXPECT_NE(a.output.find("America/New_York"), std::string::npos) << a.output;
  EXPECT_EQ(show_setting("TimeZone"), tz);
}

TEST_F(HardeningTest, CheckUsesTheScenariosOwnTarget) {
  const fs::path wd = dir_ / "check-workdir";
  write("pgctl-target.yaml",
        fmt::format("name: pgctl-check\n"
                    "target:\n  kind: pgctl\n  data_dir: {}\n"
                    "workload: tpcb-like\n"
                    "stages:\n  - name: small\n    settings: {{work_mem: 1MB}}\n",
                    cluster_data_dir().string()));
  Finished r = run_pgslow({"--workdir", wd.string(), "check", file("pgctl-target.yaml")});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(cluster_data_dir().string()), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(wd / "cluster")) << "check started a managed cluster instead";
}

// A scenario with a bad `measure:` value and bad knobs: one `check` names them all, in line
// order, each with its line, instead of stopping at the first.
TEST_F(HardeningTest, CheckNamesEveryProblemOfABadScenarioInOnePass) {
  write("many-problems.yaml",
        "name: many-problems\n"          // 1
        "workload: tpcb-like\n"          // 2
        "measure:\n"                     // 3
        "  repeats: 0\n"                 // 4
        "stages:\n"                      // 5
        "  - name: typo\n"               // 6
        "    settings:\n"                // 7
        "      shared_bufers: 1MB\n"     // 8
        "  - name: preset\n"             // 9
        "    presets: [tiny-cahce]\n");  // 10
  for (const bool offline : {true, false}) {
    SCOPED_TRACE(offline ? "check --offline" : "check");
    std::vector<std::string> a = args({"check", file("many-problems.yaml")});
    if (offline) a.push_back("--offline");
    Finished r = run_pgslow(a);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    const std::size_t repeats = r.output.find("many-problems.yaml:4:12: error: measure.repeats");
    const std::size_t typo = r.output.find("many-problems.yaml:8:7: error: 'shared_bufers'");
    const std::size_t preset = r.output.find("many-problems.yaml:10:15: error: unknown preset");
    EXPECT_NE(repeats, std::string::npos) << r.output;
    EXPECT_NE(typo, std::string::npos) << r.output;
    EXPECT_NE(preset, std::string::npos) << r.output;
    EXPECT_LT(repeats, typo) << r.output;
    EXPECT_LT(typo, preset) << r.output;
    EXPECT_NE(r.output.find("did you mean 'shared_buffers'?"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("3 errors"), std::string::npos) << r.output;
  }
}

// An unknown workload is named once, by check and by check --offline, also when the file has
// other problems.
TEST_F(HardeningTest, CheckNamesAnUnknownWorkloadOnce) {
  write("bad-workload.yaml",
        "workload: tpcb-lite\n"         // 1
        "stages:\n"                     // 2
        "  - name: typo\n"              // 3
        "    settings:\n"               // 4
        "      shared_bufers: 1MB\n");  // 5
  write("bad-workload-and-measure.yaml",
        "workload: tpcb-lite\n"  // 1
        "stages:\n"              // 2
        "  - name: fine\n"       // 3
        "    settings:\n"        // 4
        "      work_mem: 4MB\n"  // 5
        "measure:\n"             // 6
        "  repeats: 0\n");       // 7
  for (const char* name : {"bad-workload.yaml", "bad-workload-and-measure.yaml"}) {
    for (const bool offline : {true, false}) {
      SCOPED_TRACE(fmt::format("{} {}", offline ? "check --offline" : "check", name));
      std::vector<std::string> a = args({"check", file(name)});
      if (offline) a.push_back("--offline");
      Finished r = run_pgslow(a);
      EXPECT_EQ(r.exit_code, 2) << r.output;
      const std::string unknown = fmt::format("{}:1:11: error: unknown workload", name);
      const std::size_t first = r.output.find(unknown);
      ASSERT_NE(first, std::string::npos) << r.output;
      EXPECT_EQ(r.output.find(unknown, first + 1), std::string::npos) << r.output;
      EXPECT_NE(r.output.find("2 errors"), std::string::npos) << r.output;
    }
  }
}

TEST_F(HardeningTest, AFullDiskStopsBeforeAnyChangeAndLeavesNoTemporaryFile) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  const fs::path small = dir_ / "small";
  fs::create_directories(small);
  if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=64k,mode=0755") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  struct Unmount {
    fs::path p;
    ~Unmount() { ::umount2(p.c_str(), MNT_DETACH); }
  } unmount{small};
  // The lock first (it needs a block), then fill the rest.
  Finished status = run_pgslow({"--workdir", small.string(), "status"});
  ASSERT_EQ(status.exit_code, kExitServerDown) << status.output;  // no cluster there
  {
    std::ofstream fill(small / "filler", std::ios::binary);
    std::string block(4096, 'x');
    for (int i = 0; i < 64 && fill; ++i) fill << block << std::flush;
  }
  Finished r = run_pgslow({"--workdir", small.string(), "apply", file("reload.yaml"), "--data-dir",
                           cluster_data_dir().string(), "--allow-changes"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("Nothing was changed"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("journal keeps"), std::string::npos) << r.output;
  for (const auto& e : fs::directory_iterator(small))
    EXPECT_EQ(e.path().filename().string().find("journal"), std::string::npos) << e.path();
  EXPECT_EQ(show_setting("random_page_cost"), "4");
}

}  // namespace
}  // namespace pgslow::testing
