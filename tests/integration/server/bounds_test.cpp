// Issue #36 findings 5 and 6 and issue #42's log bound, on the real server with the built pgslow
// running as root: whatever the `postgres` user does to server.log or the data folder, pgslow's
// memory stays bounded (its peak resident memory, as the kernel counted it for the child).

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>

#include "common/paths.h"
#include "common/process.h"
#include "pg/connection.h"
#include "server/server_log.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/pgslow_process.h"

namespace pgslow::testing {
namespace {

namespace fs = std::filesystem;

constexpr long kMaxRssKb = 256 * 1024;

// Runs `argv` as the server's user, as anyone who can act as that user could.
void as_postgres(const std::vector<std::string>& argv) {
  ProcessOptions o;
  o.run_as = "postgres";
  o.timeout = std::chrono::minutes(5);
  const ProcessResult r = run_process(argv, o);
  ASSERT_TRUE(r.ok()) << r.describe_status() << "\n" << r.output;
}

class ServerBounds : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: pgslow runs as root beside postgres";
    if (!find_system_user("postgres")) GTEST_SKIP() << "no postgres system user";
    dir_ = fs::temp_directory_path() / ("pgslow-bounds-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    log_ = *cluster().log_file();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // `pgslow bench` on the shared cluster: one stage, whose excerpt reads the log.
  Finished bench(const std::vector<std::string>& more) const {
    std::vector<std::string> args = {"--workdir", cluster_workdir().string(),
                                     "bench",     "--duration",
                                     "2",         "--warmup",
                                     "0",         "--clients",
                                     "1",         "--scale",
                                     "1"};
    args.insert(args.end(), more.begin(), more.end());
    return run_pgslow(args, {}, std::chrono::seconds(300));
  }
  static std::uintmax_t size_of(const fs::path& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 ? static_cast<std::uintmax_t>(st.st_size) : 0;
  }
  fs::path dir_;
  fs::path log_;
};

// Finding 5: six `truncate -s +200M` of server.log by postgres during a stage took pgslow to
// 3.7 GB. Each transaction of this script grows the log by 200 MB of holes (as the server's
// user) until it is 1.3 GB long; the stage's excerpt then reads a bounded tail.
TEST_F(ServerBounds, ALogGrownByGigabytesDuringAStageIsReadAsABoundedTail) {
  constexpr std::uintmax_t kGrownTo = 1'300'000'000;
  const fs::path script = dir_ / "grow-the-log.sql";
  std::ofstream(script) << fmt::format(
      "COPY (SELECT 1) TO PROGRAM 'f={}; [ $(stat -c %s $f) -lt {} ] && truncate -s +200M $f; "
      "true';\n",
      log_.string(), kGrownTo);
  const Finished r = bench({"--script", script.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_GE(size_of(log_), kGrownTo) << "the script did not grow the log";
  EXPECT_LT(r.max_rss_kb, kMaxRssKb) << "pgslow's peak memory, in kB";
  std::cout << "peak RSS of pgslow bench with a " << size_of(log_) / 1'000'000
            << " MB log: " << r.max_rss_kb / 1024 << " MB\n";
  server::cap_log(log_);  // the next test starts from a short log
}

// Issue #42: the log is rotated between stages past its cap, and the lines before the cut go
// to server.log.1, none lost (split at most); the server keeps writing into server.log.
TEST_F(ServerBounds, ALogPastItsCapIsRotatedBeforeTheNextStageKeepingItsLastLines) {
  const std::string marker = fmt::format("pgslow-bounds-marker-{}", ::getpid());
  as_postgres({"truncate", "-s", "+100M", log_.string()});
  as_postgres({"sh", "-c", fmt::format("echo {} >> {}", marker, log_.string())});
  ASSERT_GT(size_of(log_), server::kLogCapBytes);
  const Finished r = bench({"-w", "select-only"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_LT(r.max_rss_kb, kMaxRssKb);
  EXPECT_LT(size_of(log_), server::kLogCapBytes);
  const fs::path rotated = log_.parent_path() / "server.log.1";
  struct stat st {};
  ASSERT_EQ(::lstat(rotated.c_str(), &st), 0) << "no server.log.1";
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_uid, find_system_user("postgres")->uid) << "server.log.1 is not the server's";
  EXPECT_EQ(st.st_mode & 077, 0u);
  EXPECT_LE(static_cast<std::size_t>(st.st_size), server::kRotatedLogBytes);
  const std::string both = read_file(rotated) + read_file(log_);
  EXPECT_NE(both.find(marker + "\n"), std::string::npos) << "the last line before the cut is lost";
  // The server still appends where pgslow reads, right after what the cut left.
  pg::Connection::open(conninfo())
      .exec(fmt::format("DO $$BEGIN RAISE LOG '{}-after'; END$$", marker));
  EXPECT_NE(read_file(log_).find(marker + "-after"), std::string::npos);
}

// Issue #42: a stage's excerpt is exactly its own lines when the log was past its cap as the
// stage began: the rotation comes before the stage's offset is taken, never inside the stage
// (after it, the offset would lie past the cut log's end and the excerpt would start at a line
// from before the stage: the marker).
TEST_F(ServerBounds, AStagesExcerptHoldsOnlyItsOwnLinesWhenTheLogWasRotatedAsItBegan) {
  const std::string marker = fmt::format("pgslow-bounds-before-the-run-{}", ::getpid());
  as_postgres({"truncate", "-s", "+100M", log_.string()});
  as_postgres({"sh", "-c", fmt::format("echo {} >> {}", marker, log_.string())});
  ASSERT_GT(size_of(log_), server::kLogCapBytes);
  const std::time_t began = std::time(nullptr);
  const fs::path scenario = dir_ / "excerpt.yaml";
  std::ofstream(scenario) << R"(name: bounds-excerpt
workload:
  name: select-only
  scale: 1
  clients: 1
measure:
  warmup: 1s
  duration: 2s
  design: isolated
stages:
  - name: logged
    settings:
      log_min_duration_statement: 0
)";
  const fs::path out = dir_ / "results";
  const Finished r = run_pgslow(
      {"--workdir", cluster_workdir().string(), "run", scenario.string(), "--out", out.string()},
      {}, std::chrono::seconds(300));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Rotated by this run (the log itself may be past the cap again: the stage logs every
  // statement).
  struct stat rotated {};
  ASSERT_EQ(::stat((log_.parent_path() / "server.log.1").c_str(), &rotated), 0);
  EXPECT_GE(rotated.st_mtime, began);
  std::string logged;
  int excerpts = 0;
  for (const auto& e : fs::directory_iterator(out / "logs")) {
    const std::string excerpt = read_file(e.path());
    ++excerpts;
    if (e.path().filename().string().find("logged") != std::string::npos) logged = excerpt;
    // The first stage began with the rotation.
    EXPECT_EQ(excerpt.find(marker), std::string::npos) << e.path() << ": a line from before it";
    EXPECT_EQ(excerpt.find('\0'), std::string::npos) << e.path();
  }
  EXPECT_GE(excerpts, 2);
  EXPECT_NE(logged.find("duration:"), std::string::npos) << "the stage's own lines are missing";
}

// Finding 6: `server destroy` on a 30,000-deep folder tree that postgres made under data/ ran
// to 10.3 GB and failed. The tree is one chain of folders, each an empty `d`.
TEST_F(ServerBounds, ServerDestroyRemovesAThirtyThousandDeepTreeInBoundedMemory) {
  TemporaryCluster c;
  const fs::path data = c.get().cluster_dir() / "data";
  as_postgres({"perl", "-e",
               "chdir $ARGV[0] or die; for (1..30000) { mkdir 'd' or die; chdir 'd' "
               "or die }",
               data.string()});
  // `server status` sums the data directory's size without entering such a tree.
  const Finished status = run_pgslow({"--workdir", c.workdir().string(), "server", "status"});
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_LT(status.max_rss_kb, kMaxRssKb);
  const Finished r = run_pgslow({"--workdir", c.workdir().string(), "server", "destroy"}, {},
                                std::chrono::seconds(300));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(c.get().cluster_dir())) << "the cluster folder is still there";
  EXPECT_LT(r.max_rss_kb, kMaxRssKb);
  std::cout << "peak RSS of pgslow server destroy with a 30,000-deep tree: " << r.max_rss_kb / 1024
            << " MB\n";
}

}  // namespace
}  // namespace pgslow::testing
