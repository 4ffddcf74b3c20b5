// Issue #36, proved on the real server with the built pgslow binary: a list-valued knob applies
// as the list it is, a knob that breaks every new connection is rolled back, a kept apply of
// one workdir stops another that reaches the same server by conninfo, and the command line's
// bounds (bisect's majors, a sweep's size). Every test leaves postgresql.auto.conf byte for
// byte as it found it.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "apply/journal.h"
#include "apply/server_lock.h"
#include "common/paths.h"
#include "pg/connection.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/pgslow_process.h"
#include "tests/support/restoring_test.h"

namespace pgslow::testing {
namespace {

namespace fs = std::filesystem;

class SettingsTest : public RestoringTest {
 protected:
  void TearDown() override {
    RestoringTest::TearDown();
    // A new session works: nothing left behind breaks a connection.
    EXPECT_EQ(pg::Connection::open(conninfo()).query_value("SELECT 40 + 2"), "42");
  }
  static std::vector<std::string> in(const fs::path& workdir, std::vector<std::string> rest) {
    rest.insert(rest.begin(), {"--workdir", workdir.string()});
    return rest;
  }
  // The claim the server carries, as a new session sees it ("" when none).
  static std::string server_claim() {
    return pg::Connection::open(conninfo())
        .query_value(
            fmt::format("SELECT current_setting('{}', true)", apply::kServerClaimParameter))
        .value_or("");
  }
};

// Finding 8: "evil, pg_catalog" went to ALTER SYSTEM as one quoted schema name; the read-back
// failed and restore refused with "someone else changed it". Now the server holds the list.
TEST_F(SettingsTest, AListValuedKnobAppliesAsTheListAndRestoresCleanly) {
  const std::string before = show_setting("search_path");
  for (const char* written : {"evil, pg_catalog", "evil,pg_catalog", "Evil , \"pg_catalog\""}) {
    SCOPED_TRACE(written);
    const std::string f =
        write("list.yaml", fmt::format("settings:\n  search_path: '{}'\n", written));
    Finished a = run_pgslow(in(cluster_workdir(), {"apply", f}));
    ASSERT_EQ(a.exit_code, 0) << a.output;
    EXPECT_EQ(show_setting("search_path"), "evil, pg_catalog");
    const std::string conf = read_file(cluster_auto_conf());
    EXPECT_NE(conf.find("search_path = 'evil, pg_catalog'"), std::string::npos) << conf;
    Finished r = run_pgslow(in(cluster_workdir(), {"restore"}));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.find("someone else"), std::string::npos) << r.output;
    EXPECT_EQ(show_setting("search_path"), before);
  }
  // A list the server would not read is refused before anything changes.
  const std::string bad =
      write("bad-list.yaml", "settings:\n  search_path: '\"evil, pg_catalog'\n");
  Finished b = run_pgslow(in(cluster_workdir(), {"apply", bad}));
  EXPECT_NE(b.exit_code, 0) << b.output;
  EXPECT_NE(b.output.find("bad-list.yaml:2"), std::string::npos) << b.output;
  EXPECT_NE(b.output.find("double quote does not close"), std::string::npos) << b.output;
}

// Low finding: session_preload_libraries = nonexistent_lib applied "successfully", then every new
// connection failed. Now a fresh session must connect, else the original goes back and the error
// names the knob and the server's refusal.
TEST_F(SettingsTest, AKnobThatBreaksNewConnectionsIsRolledBack) {
  for (const std::string knob : {"session_preload_libraries", "local_preload_libraries"}) {
    SCOPED_TRACE(knob);
    const std::string f =
        write("preload.yaml", fmt::format("settings:\n  {}: nonexistent_lib\n", knob));
    Finished a = run_pgslow(in(cluster_workdir(), {"apply", f}));
    EXPECT_NE(a.exit_code, 0) << a.output;
    EXPECT_NE(a.output.find(knob), std::string::npos) << a.output;
    EXPECT_NE(a.output.find("nonexistent_lib"), std::string::npos)
        << a.output;  // the server's words
    EXPECT_NE(a.output.find("put the original configuration back"), std::string::npos) << a.output;
    EXPECT_EQ(show_setting(knob), "");
  }
}

// shared_preload_libraries acts at the server's start: the restart fails, and the original goes
// back with the server started on it.
TEST_F(SettingsTest, ASharedPreloadLibraryThatIsNotThereLeavesTheOriginalRunning) {
  const std::string f =
      write("shared.yaml", "settings:\n  shared_preload_libraries: nonexistent_lib\n");
  Finished a = run_pgslow(in(cluster_workdir(), {"apply", f}));
  EXPECT_NE(a.exit_code, 0) << a.output;
  EXPECT_NE(a.output.find("shared_preload_libraries"), std::string::npos) << a.output;
  EXPECT_NE(a.output.find("put the original configuration back"), std::string::npos) << a.output;
  EXPECT_EQ(show_setting("shared_preload_libraries"), "");
}

// Finding 9: after workdir A applied, workdir B reached the same server by conninfo, recorded
// A's value as its original and later put it back. The server carries A's claim; B refuses.
TEST_F(SettingsTest, AKeptApplyOfOneWorkdirStopsAnotherOnTheSameServerByConninfo) {
  const std::string f = write("planner.yaml", "settings:\n  random_page_cost: 1e300\n");
  const fs::path b = dir_ / "workdir-b";
  Finished a = run_pgslow(in(cluster_workdir(), {"apply", f}));
  ASSERT_EQ(a.exit_code, 0) << a.output;
  EXPECT_NE(server_claim().find(cluster_workdir().string()), std::string::npos) << server_claim();

  Finished refused = run_pgslow(in(b, {"apply", f, "--conninfo", conninfo(), "--allow-changes"}));
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  EXPECT_NE(refused.output.find(cluster_workdir().string()), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("restore it there first"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(apply::journal_path(b))) << "B recorded an original";
  EXPECT_EQ(show_setting("random_page_cost"), "1e+300");  // A's, untouched

  Finished restored = run_pgslow(in(cluster_workdir(), {"restore"}));
  ASSERT_EQ(restored.exit_code, 0) << restored.output;
  EXPECT_EQ(show_setting("random_page_cost"), "4");
  EXPECT_EQ(server_claim(), "");

  // The claim went with A's restore: B may have the server now, and its restore is exact too.
  Finished b_apply = run_pgslow(in(b, {"apply", f, "--conninfo", conninfo(), "--allow-changes"}));
  ASSERT_EQ(b_apply.exit_code, 0) << b_apply.output;
  EXPECT_NE(server_claim().find(b.string()), std::string::npos) << server_claim();
  Finished a_refused = run_pgslow(in(cluster_workdir(), {"apply", f}));
  EXPECT_NE(a_refused.exit_code, 0) << a_refused.output;
  EXPECT_NE(a_refused.output.find(b.string()), std::string::npos) << a_refused.output;
  Finished b_restore = run_pgslow(in(b, {"restore", "--conninfo", conninfo()}));
  EXPECT_EQ(b_restore.exit_code, 0) << b_restore.output;
  EXPECT_EQ(show_setting("random_page_cost"), "4");
  EXPECT_EQ(server_claim(), "");
}

// Low findings: bisect's majors are range-checked, and a sweep too big to expand says so.
TEST_F(SettingsTest, BisectMajorsAndASweepsSizeAreBoundedWithAClearError) {
  for (const std::string major : {"-1", "99"}) {
    Finished r =
        run_pgslow(in(dir_ / "bisect", {"bisect", "--good-version", major, "--bad-version", "18"}));
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("--good-version " + major), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("15 to 18"), std::string::npos) << r.output;
  }
  std::string values;
  for (int i = 1; i <= 3000; ++i) values += (i == 1 ? "" : ", ") + std::to_string(i);
  const std::string big =
      write("big-sweep.yaml", "workload: select-only\nsweep:\n  clients: [" + values +
                                  "]\n  pool_size: [" + values + "]\n");
  Finished p = run_pgslow(in(dir_ / "plan", {"plan", big}));
  EXPECT_NE(p.exit_code, 0) << p.output;
  EXPECT_EQ(p.output.find("bad_alloc"), std::string::npos) << p.output;
  EXPECT_NE(p.output.find("big-sweep.yaml:3"), std::string::npos) << p.output;
  EXPECT_NE(p.output.find("9000000 points"), std::string::npos) << p.output;
}

}  // namespace
}  // namespace pgslow::testing
