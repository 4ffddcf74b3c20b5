// server/server_log: bounded reads of a log the server's user can make any size, and the
// rotation that keeps the managed cluster's log bounded without losing a line.

#include "server/server_log.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/paths.h"
#include "common/safe_fs.h"

namespace pgslow::server {
namespace {

namespace fs = std::filesystem;

class ServerLog : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pgslow-server-log-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    log_ = dir_ / "server.log";
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Numbered lines, `bytes` of them at least.
  static std::string lines(std::size_t bytes, const std::string& tag) {
    std::string out;
    for (int i = 0; out.size() < bytes; ++i) out += tag + " line " + std::to_string(i) + "\n";
    return out;
  }
  fs::path dir_;
  fs::path log_;
};

TEST_F(ServerLog, AHugeSparseLogIsReadAsABoundedTailStartingAtALine) {
  { std::ofstream(log_) << "old\n"; }
  UniqueFd fd(::open(log_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  ASSERT_TRUE(fd);
  ASSERT_EQ(::ftruncate(fd.get(), off_t{8} << 30), 0);  // 8 GiB of holes
  const std::string last = lines(3 * kLogTailBytes, "new");
  ASSERT_EQ(::write(fd.get(), last.data(), last.size()), static_cast<ssize_t>(last.size()));
  const std::string tail = read_log_since(log_, 4);
  EXPECT_LE(tail.size(), kLogTailBytes);
  EXPECT_GT(tail.size(), kLogTailBytes - 100);
  EXPECT_TRUE(last.ends_with(tail));
  EXPECT_TRUE(tail.starts_with("new line ")) << tail.substr(0, 40);
  // Holes read as zeros, which a text log has none of.
  ASSERT_EQ(::ftruncate(fd.get(), (off_t{8} << 30) + static_cast<off_t>(last.size()) + 4096), 0);
  EXPECT_EQ(read_log_since(log_, 4).find('\0'), std::string::npos);
}

TEST_F(ServerLog, ALogShorterThanTheOffsetIsReadFromItsStart) {
  std::ofstream(log_) << "after a cut\n";
  EXPECT_EQ(read_log_since(log_, 1000), "after a cut\n");
  EXPECT_EQ(read_log_since(log_, 6), "a cut\n");  // from the offset when it is there
}

// A stage's excerpt: the lines written since its offset, the last ones of them, saying how many
// earlier ones it left out.
TEST_F(ServerLog, AnExcerptKeepsTheLastLinesSinceTheOffsetAndCountsTheRest) {
  write_file_durably(log_, "before the stage\n");
  const std::uintmax_t offset = log_size(log_);
  {
    std::ofstream out(log_, std::ios::app);
    for (int i = 0; i < 5; ++i) out << "stage line " << i << "\n";
  }
  EXPECT_EQ(log_excerpt_since(log_, offset, 3),
            "... 2 earlier lines left out\nstage line 2\nstage line 3\nstage line 4\n");
  EXPECT_EQ(log_excerpt_since(log_, offset),
            "stage line 0\nstage line 1\nstage line 2\n"
            "stage line 3\nstage line 4\n");
  EXPECT_EQ(log_excerpt_since(log_, log_size(log_)), "");
}

TEST_F(ServerLog, CapLogMovesTheOlderPartOutAndTheServerAppendsAfterTheRest) {
  const std::string before = lines(3 << 20, "before");
  std::ofstream(log_) << before;
  // The server's descriptor, open across the rotation as pg_ctl -l leaves it.
  UniqueFd server(::open(log_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  ASSERT_TRUE(server);
  EXPECT_FALSE(cap_log(log_, 4 << 20)) << "a log under its cap was rotated";
  EXPECT_TRUE(cap_log(log_, 1 << 20));
  EXPECT_LT(fs::file_size(log_), 1u << 20);
  const std::string after = "after the rotation\n";
  ASSERT_EQ(::write(server.get(), after.data(), after.size()), static_cast<ssize_t>(after.size()));
  // Every line once, in order, across the two files.
  EXPECT_EQ(read_file(dir_ / "server.log.1") + read_file(log_), before + after);
  // A second rotation replaces server.log.1, which keeps only the last part of a long log.
  const std::string more = lines(kRotatedLogBytes + (2 << 20), "more");
  ASSERT_EQ(::write(server.get(), more.data(), more.size()), static_cast<ssize_t>(more.size()));
  EXPECT_TRUE(cap_log(log_, 1 << 20));
  const std::string rotated = read_file(dir_ / "server.log.1");
  EXPECT_LE(rotated.size(), kRotatedLogBytes);
  EXPECT_TRUE(rotated.starts_with("more line ")) << rotated.substr(0, 40);
  EXPECT_TRUE((rotated + read_file(log_)).ends_with(more.substr(more.size() - 1000)));
}

TEST_F(ServerLog, CapLogRefusesALinkInPlaceOfTheLog) {
  std::ofstream(dir_ / "elsewhere") << lines(2 << 20, "elsewhere");
  fs::create_symlink(dir_ / "elsewhere", log_);
  EXPECT_ANY_THROW(cap_log(log_, 1 << 20));
  EXPECT_EQ(fs::file_size(dir_ / "elsewhere"), lines(2 << 20, "elsewhere").size());
}

}  // namespace
}  // namespace pgslow::server
