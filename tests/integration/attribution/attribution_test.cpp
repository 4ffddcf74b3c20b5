// `pgslow run` with `attribute: true` on the binary's managed cluster: a stage of several
// harmless knobs and one strong culprit (index access priced at 1e300: every lookup becomes a
// sequential scan, about two orders of magnitude slower, so the verdict holds on a busy
// machine) names exactly that culprit and calls the rest "no measurable effect".

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "common/paths.h"
#include "common/process.h"
#include "pg/connection.h"
#include "report/json.h"
#include "tests/support/cluster_fixture.h"

namespace pgslow {
namespace {

namespace fs = std::filesystem;
using testing::cluster;
using testing::conninfo;

fs::path workdir() {
  return cluster().cluster_dir().parent_path();
}

std::map<std::string, std::string> settings() {
  std::map<std::string, std::string> out;
  pg::Connection conn = pg::Connection::open(conninfo());
  pg::Result r = conn.exec("SELECT name, setting FROM pg_settings");
  for (int i = 0; i < r.rows(); ++i) out[std::string(r.get(i, 0))] = std::string(r.get(i, 1));
  return out;
}

ProcessResult pgslow(std::vector<std::string> args) {
  std::vector<std::string> argv = {testing::pgslow_binary().string(), "--workdir",
                                   workdir().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions o;
  o.timeout = std::chrono::minutes(5);
  return run_process(argv, o);
}

fs::path write_scenario() {
  fs::path file = workdir() / "attribute.yaml";
  write_file_durably(file, R"(name: attribute
description: one culprit among harmless knobs
workload:
  name: select-only
  scale: 1
  clients: 2
measure:
  warmup: 1s
  duration: 3s
mode: isolated
stages:
  - name: mixed
    attribute: true
    settings:
      work_mem: 8MB
      random_page_cost: 1e300
      effective_cache_size: 2GB
      default_statistics_target: 200
      maintenance_work_mem: 128MB
)");
  return file;
}

TEST(Attribution, PlanShowsTheExtraRuns) {
  cluster();
  ProcessResult r = pgslow({"plan", write_scenario().string()});
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_NE(r.output.find("attribute: 5 knobs as 5 units, about 11 extra runs (at most 17)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("of which attribution: about"), std::string::npos) << r.output;
}

TEST(Attribution, NamesTheOneCulpritAndCallsTheRestHarmless) {
  cluster();
  const auto before = settings();
  const fs::path out = workdir() / "results";
  ProcessResult r = pgslow({"run", write_scenario().string(), "--detail", "--out", out.string()});
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(before, settings()) << "the configuration is back";

  results::Run run = report::read_json(read_file(out / "report.json"), "report.json");
  ASSERT_EQ(run.stages.size(), 2u);
  ASSERT_TRUE(run.stages[1].attribution.has_value()) << r.output;
  const results::Attribution& a = *run.stages[1].attribution;
  ASSERT_EQ(a.knobs.size(), 5u);
  int causes = 0;
  for (const auto& k : a.knobs) {
    ASSERT_EQ(k.knobs.size(), 1u);
    if (k.knobs[0] == "random_page_cost") {
      ++causes;
      EXPECT_EQ(k.verdict, "the cause") << a.headline;
      ASSERT_TRUE(k.alone.has_value());
      EXPECT_LT(k.alone->high, 0.5) << "far slower alone";
      EXPECT_GT(k.alone->transactions, 0u);
      bool seq_scans_moved = false;
      for (const auto& e : k.evidence) seq_scans_moved = seq_scans_moved || e.key == "seq_scans";
      EXPECT_TRUE(seq_scans_moved) << "the evidence that moved alone: sequential scans";
    } else {
      EXPECT_EQ(k.verdict, "no measurable effect") << k.knobs[0] << ": " << a.headline;
      EXPECT_FALSE(k.alone.has_value()) << k.knobs[0] << " got a run of its own";
    }
  }
  EXPECT_EQ(causes, 1);
  EXPECT_NE(a.headline.find("random_page_cost = 1e300 is the cause"), std::string::npos)
      << a.headline;
  EXPECT_NE(a.headline.find("4 other knobs: no measurable effect"), std::string::npos)
      << a.headline;
  // Levels, a few halvings and the remainder, within the plan's "at most" (a busy machine may
  // need the remainder's extra pairs with good).
  EXPECT_LE(a.extra_runs, 17);
  // Every format names the cause.
  for (const char* f : {"report.md", "report.csv", "report.html"})
    EXPECT_NE(read_file(out / f).find("random_page_cost = 1e300"), std::string::npos) << f;
  EXPECT_NE(r.output.find("random_page_cost = 1e300 is the cause"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace pgslow
