// Issue #36 finding 6, on the real server with the built pgslow running as root: whatever the
// `postgres` user does to the data folder, pgslow's memory stays bounded (its peak resident memory, as the kernel counted it for the child).

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/paths.h"
#include "common/process.h"
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
