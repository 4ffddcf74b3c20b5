// `pgslow cliff work_mem` end to end on the binary's managed cluster, with a sort-heavy script
// (scenarios/scripts/sort-heavy.sql) whose sort spills to disk when work_mem is small: the
// search stays in its range and its budget, every point has an interval and evidence, every
// report format is written, and the configuration is back byte for byte. Bad values are
// refused, naming the option and the range, before anything changes.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "apply/bytes.h"
#include "common/paths.h"
#include "common/process.h"
#include "pg/connection.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/server_state.h"

namespace pgslow {
namespace {

namespace fs = std::filesystem;
using testing::cluster;
using testing::conninfo;
using testing::expect_restored;
using testing::server_state;
using testing::ServerState;

fs::path workdir() {
  return cluster().cluster_dir().parent_path();
}

ProcessResult pgslow(std::vector<std::string> args) {
  std::vector<std::string> argv = {testing::pgslow_binary().string(), "--workdir",
                                   workdir().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions o;
  o.timeout = std::chrono::minutes(4);
  return run_process(argv, o);
}

const std::string kScript = std::string(PGSLOW_SOURCE_DIR) + "/scenarios/scripts/sort-heavy.sql";

TEST(Cliff, AValueOutsideTheServersRangeIsRefusedBeforeAnythingChanges) {
  const ServerState before = server_state();
  ProcessResult r = pgslow({"cliff", "work_mem", "--from", "64MB", "--to", "8kB", "-f", kScript});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--to"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("below this server's minimum 64kB"), std::string::npos) << r.output;

  r = pgslow({"cliff", "work_mem", "--from", "lots", "--to", "64kB", "-f", kScript});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--from"), std::string::npos) << r.output;

  r = pgslow({"cliff", "wal_level", "--from", "replica", "--to", "minimal"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("steps through numbers"), std::string::npos) << r.output;
  expect_restored(before);
}

TEST(Cliff, SearchesWorkMemEndToEnd) {
  const ServerState before = server_state();
  const fs::path out = workdir() / "cliff-out";
  fs::create_directories(out);
  // 4MB down to 256kB at a factor of 4: two steps, at most three points; one look each keeps
  // the test short (13 runs of 1 s).
  ProcessResult r = pgslow({"cliff",        "work_mem",
                            "--from",       "4MB",
                            "--to",         "256kB",
                            "--resolution", "4",
                            "-f",           kScript,
                            "--clients",    "2",
                            "--duration",   "1",
                            "--warmup",     "0.3",
                            "--max-looks",  "1",
                            "--json",       (out / "c.json").string(),
                            "--markdown",   (out / "c.md").string(),
                            "--csv",        (out / "c.csv").string(),
                            "--html",       (out / "c.html").string()});
  ASSERT_TRUE(r.ok()) << r.describe_status() << "\n" << r.output;
  EXPECT_NE(r.output.find("configuration restored"), std::string::npos) << r.output;
  expect_restored(before);

  const nlohmann::json j = nlohmann::json::parse(read_file(out / "c.json"));
  EXPECT_EQ(j["knob"], "work_mem");
  EXPECT_EQ(j["from"], "4MB");
  EXPECT_EQ(j["to"], "256kB");
  EXPECT_EQ(j["grid_steps"], 2);
  EXPECT_EQ(j["max_points"], 3);
  const auto& points = j["points"];
  ASSERT_GE(points.size(), 1u);
  EXPECT_LE(points.size(), 3u);
  EXPECT_EQ(points[0]["value"], "256kB");  // the far end first
  for (const auto& p : points) {
    const double kb = p["base_value"];
    EXPECT_GE(kb, 256);
    EXPECT_LT(kb, 4096);
    EXPECT_EQ(p["runs"], 3);
    EXPECT_EQ(p["baseline_runs"], 4);
    EXPECT_GT(p["transactions"].get<std::uint64_t>(), 0u);
    const double ratio = p["effect"]["ratio"], low = p["effect"]["low"], high = p["effect"]["high"];
    EXPECT_TRUE(std::isfinite(low) && std::isfinite(high)) << p.dump();
    EXPECT_LE(low, ratio);
    EXPECT_GE(high, ratio);
    EXPECT_TRUE(p["evidence"].contains("temp_files")) << p.dump();
    EXPECT_TRUE(p["evidence"].contains("buffer_hit_ratio")) << p.dump();
  }
  // The evidence says why: at 256kB the sort of about 1.5 MB spills to temporary files.
  EXPECT_GT(points[0]["evidence"]["temp_files"].get<double>(), 0) << points[0].dump();
  // Every point on every axis, from its runs and the baseline runs around them: temp/tx is
  // where the spill shows, whatever TPS does.
  for (const auto& p : points) {
    ASSERT_TRUE(p.contains("axes")) << p.dump();
    EXPECT_FALSE(p["axes_verdict_text"].get<std::string>().empty()) << p.dump();
    std::set<std::string> keys;
    for (const auto& a : p["axes"]) keys.insert(a["axis"].get<std::string>());
    EXPECT_TRUE(keys.count("tps") && keys.count("cpu_per_tx") && keys.count("p99")) << p.dump();
  }
  for (const auto& a : points[0]["axes"]) {
    if (a["axis"] == "temp_bytes") {
      EXPECT_GT(a["ratio"].get<double>(), 1) << a.dump();
    }
  }
  EXPECT_NE(r.output.find("every axis: each point against the baseline runs around it"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(j["baseline"]["value"], "4MB");
  EXPECT_GE(j["baseline"]["runs"].get<int>(), 4);
  const int point_runs = 3 * static_cast<int>(points.size());
  EXPECT_EQ(j["runs"], point_runs + j["baseline"]["runs"].get<int>());
  EXPECT_FALSE(j["headline"].get<std::string>().empty());

  // Every format: the headline in the text ones, a row per point (and the baseline) in CSV,
  // the curve drawn in HTML.
  const std::string headline = j["headline"];
  EXPECT_NE(r.output.find(headline), std::string::npos) << r.output;
  EXPECT_NE(read_file(out / "c.md").find("| work_mem |"), std::string::npos);
  std::istringstream csv(read_file(out / "c.csv"));
  std::string line;
  int lines = 0;
  while (std::getline(csv, line)) ++lines;
  EXPECT_EQ(lines, 1 + 1 + static_cast<int>(points.size()));
  EXPECT_NE(read_file(out / "c.html").find("<svg"), std::string::npos);
}

}  // namespace
}  // namespace pgslow
