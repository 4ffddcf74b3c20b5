// `pgslow run SCENARIO --versions 15,N` end to end with the built binary (docs/versions.md):
// one short scenario with a restart knob and a reload knob runs on the managed cluster of
// PostgreSQL 15 and of N (the newest other major of the version matrix that is installed),
// each in its own folder of one workdir; the side by side report comes out in every format
// with both versions, each version's own report is that version's, and both clusters'
// configuration is exactly as before. A version named twice, one pgslow does not support, or
// one not installed is refused before anything is changed or created.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apply/journal.h"
#include "common/paths.h"
#include "common/strings.h"
#include "pg/connection.h"
#include "report/json.h"
#include "report/versions_view.h"
#include "server/managed_cluster.h"
#include "server/pg_versions.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/pgslow_process.h"

namespace pgslow {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::Finished;
using testing::TemporaryWorkdir;

constexpr int kDefault = 15;  // Debian's server, always there

// The newest major of the version matrix (PGSLOW_TEST_PG_VERSIONS, "15,16,17,18", set by ctest
// from the CMake cache) other than 15 whose server programs are installed.
std::optional<int> newest_other_version() {
  const char* matrix = std::getenv("PGSLOW_TEST_PG_VERSIONS");
  std::optional<int> newest;
  for (const auto& text : split(matrix ? matrix : "16,17,18", ',')) {
    if (trim(text).empty()) continue;
    const int major = server::parse_major_version(text);
    if (major == kDefault || (newest && *newest >= major)) continue;
    if (server::installed_pg_bin(major, server::pg_cache_root())) newest = major;
  }
  return newest;
}

class VersionsRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // The command line alone picks the versions (PGSLOW_PG_VERSION is --pg-version).
    ::unsetenv("PGSLOW_PG_VERSION");
    other_ = newest_other_version();
    if (!other_) return;
    versions_ = {kDefault, *other_};
    workdir_ = std::make_unique<TemporaryWorkdir>(versions_);
    // Each cluster exists before the run with a setting of its own in postgresql.auto.conf, a
    // value the scenario changes: the run must put exactly these bytes back.
    for (int v : versions_) {
      Finished start = pgslow({"--pg-version", std::to_string(v), "server", "start"});
      ASSERT_EQ(start.exit_code, 0) << start.output;
      auto conn = pg::Connection::open(workdir_->cluster(v).conninfo());
      conn.exec("ALTER SYSTEM SET work_mem = '8MB'");
      conn.exec("SELECT pg_reload_conf()");
      auto_conf_before_[v] = auto_conf(v);
    }
  }

  static void TearDownTestSuite() {
    if (!workdir_) return;
    // pgslow stops what it started; the workdir's destructor is the safety net.
    for (int v : versions_) {
      Finished stop = pgslow({"--pg-version", std::to_string(v), "server", "stop"});
      EXPECT_EQ(stop.exit_code, 0) << stop.output;
      EXPECT_FALSE(workdir_->cluster(v).is_running()) << "PostgreSQL " << v << " still runs";
    }
    workdir_.reset();
  }

  void SetUp() override {
    if (!other_) {
      GTEST_SKIP() << "needs a PostgreSQL major besides 15 from the version matrix "
                      "(PGSLOW_TEST_PG_VERSIONS) installed: run `make pg-versions` "
                      "(pgslow server install 16 17 18)";
    }
  }

  static fs::path workdir() { return workdir_->path(); }
  // A restart-only knob and a reload knob: both ways of applying and restoring, on both.
  static fs::path scenario() {
    return fs::path(PGSLOW_SOURCE_DIR) / "tests/integration/versions/short.yaml";
  }
  static std::string auto_conf(int v) {
    return read_file(*workdir_->cluster(v).data_dir() / "postgresql.auto.conf");
  }
  static Finished pgslow(std::vector<std::string> args) {
    return testing::run_pgslow_in(workdir(), std::move(args), std::chrono::minutes(5));
  }

  // Each cluster's configuration is as before and no journal waits to be restored.
  static void expect_unchanged() {
    for (int v : versions_) {
      SCOPED_TRACE(fmt::format("PostgreSQL {}", v));
      EXPECT_EQ(auto_conf(v), auto_conf_before_[v]);
      auto conn = pg::Connection::open(workdir_->cluster(v).conninfo());
      EXPECT_EQ(*conn.query_value("SHOW work_mem"), "8MB");
      EXPECT_EQ(*conn.query_value("SHOW shared_buffers"), "128MB");
    }
    EXPECT_FALSE(fs::exists(apply::journal_path(workdir()))) << "a journal is left pending";
  }

  static inline std::optional<int> other_;
  static inline std::vector<int> versions_;
  static inline std::unique_ptr<TemporaryWorkdir> workdir_;
  static inline std::map<int, std::string> auto_conf_before_;
};

TEST_F(VersionsRun, RefusesAVersionNamedTwiceOrNotSupportedBeforeChangingAnything) {
  const std::string out = (workdir() / "refused").string();
  Finished twice = pgslow({"run", scenario().string(), "--versions", "15,15", "--out", out});
  EXPECT_EQ(twice.exit_code, 2) << twice.output;  // bad input
  EXPECT_NE(twice.output.find("--versions names PostgreSQL 15 twice"), std::string::npos)
      << twice.output;

  Finished unsupported = pgslow(
      {"run", scenario().string(), "--versions", fmt::format("15,{},99", *other_), "--out", out});
  EXPECT_EQ(unsupported.exit_code, 2) << unsupported.output;
  EXPECT_NE(unsupported.output.find("PostgreSQL version \"99\""), std::string::npos)
      << unsupported.output;
  EXPECT_NE(unsupported.output.find("15 to 18"), std::string::npos) << unsupported.output;

  // $PGSLOW_PG_VERSION is --pg-version: one version, not several.
  Finished both = testing::run_pgslow({"--workdir", workdir().string(), "run", scenario().string(),
                                       "--versions", fmt::format("15,{}", *other_), "--out", out},
                                      {fmt::format("PGSLOW_PG_VERSION={}", *other_)});
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_NE(both.output.find("$PGSLOW_PG_VERSION"), std::string::npos) << both.output;

  EXPECT_FALSE(fs::exists(out)) << "a refused run wrote results";
  EXPECT_FALSE(fs::exists(workdir() / "cluster-99"));
  expect_unchanged();
}

// A major version names one cluster: --pg-version 15 is the workdir's default cluster (Debian's
// 15), any other major its own folder, and `server status` shows every cluster of the workdir.
TEST_F(VersionsRun, OneClusterPerMajorVersionAndStatusShowsThemAll) {
  const int n = *other_;
  server::ManagedOptions fifteen;
  fifteen.workdir = workdir();
  fifteen.pg_version = kDefault;
  EXPECT_EQ(server::ManagedCluster(fifteen).cluster_dir(), workdir() / "cluster");
  server::ManagedOptions by_default;
  by_default.workdir = workdir();
  EXPECT_EQ(server::ManagedCluster(by_default).cluster_dir(), workdir() / "cluster");
  EXPECT_FALSE(fs::exists(workdir() / "cluster-15"));
  const std::vector<server::ManagedOptions> all = server::workdir_clusters(workdir());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].pg_version, std::nullopt);
  EXPECT_EQ(all[1].pg_version, n);

  Finished status = pgslow({"server", "status"});
  ASSERT_EQ(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find("cluster/ (the default cluster)"), std::string::npos)
      << status.output;
  EXPECT_NE(status.output.find(fmt::format("cluster-{}/ (--pg-version {})", n, n)),
            std::string::npos)
      << status.output;
  EXPECT_NE(status.output.find("PostgreSQL 15."), std::string::npos) << status.output;
  EXPECT_NE(status.output.find(fmt::format("PostgreSQL {}.", n)), std::string::npos)
      << status.output;
  // --pg-version names one of them.
  Finished one = pgslow({"--pg-version", std::to_string(n), "server", "status"});
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(one.output.find("PostgreSQL 15."), std::string::npos) << one.output;
}

// A version whose programs are missing is refused before any cluster is created or started,
// not after the versions before it in the list were set up.
TEST_F(VersionsRun, RefusesAVersionNotInstalledBeforeCreatingAnyCluster) {
  TemporaryWorkdir fresh(versions_);  // stops what a wrongly started run would leave running
  const fs::path empty_cache = fresh.path() / "empty-cache";
  fs::create_directories(empty_cache);
  const int n = *other_;
  if (server::installed_pg_bin(n, empty_cache))
    GTEST_SKIP() << "PostgreSQL " << n << " is installed the Debian way, not in pgslow's cache";
  Finished r = testing::run_pgslow(
      {"--workdir", fresh.path().string(), "run", scenario().string(), "--versions",
       fmt::format("15,{}", n), "--out", (fresh.path() / "results").string()},
      {"PGSLOW_PG_CACHE=" + empty_cache.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(fmt::format("PostgreSQL {} is not installed", n)), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(fmt::format("pgslow server install {}", n)), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(fresh.path() / "cluster")) << r.output;  // 15's, the default's
  EXPECT_FALSE(fs::exists(fresh.path() / "cluster-15")) << r.output;
  EXPECT_FALSE(fs::exists(fresh.path() / fmt::format("cluster-{}", n))) << r.output;
  EXPECT_FALSE(fs::exists(fresh.path() / "results")) << r.output;
}

TEST_F(VersionsRun, RunsTheScenarioOnEachVersionSideBySideAndRestoresBoth) {
  const int n = *other_;
  const fs::path out = workdir() / "results";
  std::map<int, int> pid_before;  // each postmaster's
  for (int v : versions_) pid_before[v] = *workdir_->cluster(v).status().pid;
  Finished r = pgslow(
      {"run", scenario().string(), "--versions", fmt::format("15,{}", n), "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Only the version measured runs: each other cluster is stopped first, and started again for
  // its own turn or at the end. Both run afterwards, each with a new postmaster.
  for (int v : versions_) {
    const int other = v == kDefault ? n : kDefault;
    EXPECT_NE(r.output.find(fmt::format(
                  "stopping the PostgreSQL {} cluster while PostgreSQL {} is measured", other, v)),
              std::string::npos)
        << r.output;
    const server::ClusterStatus now = workdir_->cluster(v).status();
    EXPECT_TRUE(now.running) << "PostgreSQL " << v << " is left stopped";
    if (now.pid) {
      EXPECT_NE(*now.pid, pid_before[v]) << "PostgreSQL " << v << " was never stopped";
    }
  }

  // Each version's own report, from its own cluster in its own folder of the workdir.
  std::map<int, std::string> label;  // "15.20", "18.4"
  for (int v : versions_) {
    SCOPED_TRACE(fmt::format("PostgreSQL {}", v));
    const fs::path file = out / fmt::format("pg{}", v) / "report.json";
    ASSERT_TRUE(fs::exists(file)) << r.output;
    const results::Run run = report::read_json(read_file(file), file.string());
    EXPECT_EQ(run.server_major, v);
    EXPECT_TRUE(starts_with(run.server_version, fmt::format("PostgreSQL {}.", v)))
        << run.server_version;
    // One cluster per major version: the default cluster is 15's.
    const fs::path cluster_dir =
        workdir() / (v == kDefault ? std::string("cluster") : fmt::format("cluster-{}", v));
    EXPECT_NE(run.target.find(cluster_dir.string()), std::string::npos) << run.target;
    EXPECT_EQ(trim(read_file(cluster_dir / "data" / "PG_VERSION")), std::to_string(v));
    ASSERT_EQ(run.stages.size(), 2u);
    std::map<std::string, results::KnobChange> changes;
    for (const auto& c : run.stages[1].changes) changes[c.name] = c;
    ASSERT_EQ(changes.count("shared_buffers"), 1u);
    ASSERT_EQ(changes.count("work_mem"), 1u);
    EXPECT_EQ(changes["shared_buffers"].apply_by, "restart");
    EXPECT_EQ(changes["work_mem"].apply_by, "reload");
    EXPECT_EQ(changes["work_mem"].old_value, "8MB");  // this cluster's own setting
    label[v] = report::version_label(run);
  }
  EXPECT_FALSE(fs::exists(workdir() / "cluster-15"))
      << "a second PostgreSQL 15 cluster was created";
  ASSERT_EQ(label.size(), 2u);

  // The side by side report, in every format, names both versions.
  for (const char* format : {"md", "json", "csv", "html"}) {
    const fs::path file = out / fmt::format("versions.{}", format);
    ASSERT_TRUE(fs::exists(file)) << file;
    const std::string text = read_file(file);
    for (int v : versions_) EXPECT_NE(text.find(label[v]), std::string::npos) << file << v;
  }

  // Per version, in the order run: the baseline and the stage, each with TPS, and the stage's
  // effect against that version's own baseline, with an interval around it.
  const json doc = json::parse(read_file(out / "versions.json"));
  ASSERT_EQ(doc.at("versions").size(), 2u);
  EXPECT_EQ(doc["versions"][0].at("server_major"), kDefault);
  EXPECT_EQ(doc["versions"][1].at("server_major"), n);
  ASSERT_EQ(doc.at("stages").size(), 2u);
  EXPECT_EQ(doc["stages"][0].at("name"), "baseline");
  EXPECT_EQ(doc["stages"][1].at("name"), "small-cache");
  for (const auto& stage : doc["stages"]) {
    const auto& by = stage.at("by_version");
    ASSERT_EQ(by.size(), 2u) << stage;
    for (std::size_t i = 0; i < by.size(); ++i) {
      const auto& cell = by[i];
      EXPECT_EQ(cell.at("server_major"), versions_[i]) << stage;
      EXPECT_TRUE(cell.at("ran").get<bool>()) << stage;
      EXPECT_GT(cell.at("tps").get<double>(), 0) << stage;
      EXPECT_GT(cell.at("transactions").get<std::uint64_t>(), 0u) << stage;
      if (stage["name"] == "baseline") {
        EXPECT_FALSE(cell.contains("vs_baseline")) << stage;
        continue;
      }
      ASSERT_TRUE(cell.contains("vs_baseline")) << stage;
      const auto& effect = cell["vs_baseline"];
      EXPECT_TRUE(effect.at("interval_known").get<bool>()) << effect;
      const double low = effect.at("interval_low"), high = effect.at("interval_high"),
                   ratio = effect.at("ratio");
      EXPECT_GT(ratio, 0) << effect;
      EXPECT_LT(low, high) << effect;
      EXPECT_LE(low, ratio) << effect;
      EXPECT_GE(high, ratio) << effect;
      EXPECT_FALSE(effect.at("text").get<std::string>().empty()) << effect;
    }
  }

  // The console: one table, each stage's row per version, 15 above N.
  const std::size_t header = r.output.find("effect vs baseline");
  ASSERT_NE(header, std::string::npos) << r.output;
  const std::string table = r.output.substr(header);
  const std::size_t baseline_row = table.find("\nbaseline ");
  const std::size_t stage_row = table.find("\nsmall-cache ");
  ASSERT_NE(baseline_row, std::string::npos) << r.output;
  ASSERT_NE(stage_row, std::string::npos) << r.output;
  for (std::size_t row : {baseline_row, stage_row}) {
    const std::size_t first = table.find(label[kDefault], row);
    const std::size_t second = table.find(label[n], row);
    EXPECT_LT(first, second) << r.output;
    EXPECT_LT(second, row == baseline_row ? stage_row : table.size()) << r.output;
  }
  EXPECT_NE(r.output.find(fmt::format("Results: {}/versions.md", out.string())), std::string::npos)
      << r.output;

  // Both configurations are as before the run: the same bytes, the same values, no journal.
  expect_unchanged();
  for (int v : versions_) {
    Finished status = pgslow({"--pg-version", std::to_string(v), "status"});
    EXPECT_EQ(status.exit_code, 0) << status.output;
    EXPECT_NE(status.output.find("clean: no change by pgslow"), std::string::npos) << status.output;
  }
}

}  // namespace
}  // namespace pgslow
