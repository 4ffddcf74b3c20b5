// The postmaster's pid from a data directory the server's user writes: read as the file says,
// and nothing from a link or a FIFO planted in its place (pg/data_dir.h).

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "evidence/evidence.h"
#include "pg/data_dir.h"

namespace pgslow::evidence {
namespace {

namespace fs = std::filesystem;

class PostmasterPid : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pgslow-postmaster-pid-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::chmod(dir_.c_str(), 0700);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(PostmasterPid, IsReadWithItsPortAndSocketFolder) {
  std::ofstream(dir_ / "postmaster.pid")
      << "4242\n/var/lib/postgresql/15/main\n1764680000\n5433\n/run/pg-socket\n*\n";
  EXPECT_EQ(postmaster_pid_of(dir_), 4242);
  const auto f = pg::read_postmaster_pid(dir_);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->start_epoch, 1764680000);
  EXPECT_EQ(f->port, "5433");
  EXPECT_EQ(f->socket_dir, "/run/pg-socket");
}

TEST_F(PostmasterPid, NoneFromAMissingFileALinkOrAFifo) {
  EXPECT_FALSE(postmaster_pid_of(dir_).has_value());
  const fs::path elsewhere = dir_ / "elsewhere";
  std::ofstream(elsewhere) << "4242\n";
  fs::create_symlink(elsewhere, dir_ / "postmaster.pid");
  EXPECT_FALSE(postmaster_pid_of(dir_).has_value());
  fs::remove(dir_ / "postmaster.pid");
  ASSERT_EQ(::mkfifo((dir_ / "postmaster.pid").c_str(), 0644), 0);
  EXPECT_FALSE(postmaster_pid_of(dir_).has_value());  // and returns: it does not wait on it
}

}  // namespace
}  // namespace pgslow::evidence
