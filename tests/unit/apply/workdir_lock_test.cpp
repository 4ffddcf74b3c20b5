#include "apply/workdir_lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "apply/journal.h"
#include "common/errors.h"

namespace pgslow::apply {
namespace {

namespace fs = std::filesystem;

class WorkdirLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pgslow-lock-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST(LockFile, FormatRoundTrips) {
  LockHolder h{{321, 99, "boot"}, "pgslow run x.yaml --clients 8"};
  std::optional<LockHolder> back = parse_lock_file(format_lock_file(h));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->who, h.who);
  EXPECT_EQ(back->command, h.command);
  EXPECT_FALSE(parse_lock_file("").has_value());
  EXPECT_FALSE(parse_lock_file("-5 1 x\n").has_value());
  EXPECT_FALSE(parse_lock_file("not a pid\n").has_value());
}

TEST_F(WorkdirLockTest, CreatesTheWorkdirAndRecordsTheOwner) {
  WorkdirLock lock = WorkdirLock::acquire(dir_, "pgslow status");
  EXPECT_TRUE(fs::exists(lock_path(dir_)));
  std::optional<LockHolder> holder = lock_holder(dir_);
  ASSERT_TRUE(holder.has_value());
  EXPECT_EQ(holder->who.pid, ::getpid());
  EXPECT_EQ(holder->command, "pgslow status");
}

TEST_F(WorkdirLockTest, ASecondHolderIsRefusedWithTheOwnersPid) {
  WorkdirLock first = WorkdirLock::acquire(dir_, "pgslow run slow.yaml");
  // A second descriptor conflicts even within one process (flock is per open file).
  std::optional<LockHolder> holder;
  EXPECT_FALSE(WorkdirLock::try_acquire(dir_, "pgslow apply", &holder).has_value());
  ASSERT_TRUE(holder.has_value());
  EXPECT_EQ(holder->who.pid, ::getpid());
  try {
    WorkdirLock::acquire(dir_, "pgslow apply tiny-cache");
    FAIL() << "the second lock was granted";
  } catch (const RuntimeError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("pid " + std::to_string(::getpid())), std::string::npos) << msg;
    EXPECT_NE(msg.find("pgslow run slow.yaml"), std::string::npos) << msg;
  }
}

TEST_F(WorkdirLockTest, IsReleasedWhenTheHolderGoes) {
  { WorkdirLock lock = WorkdirLock::acquire(dir_, "pgslow status"); }
  EXPECT_FALSE(lock_holder(dir_).has_value());
  WorkdirLock again = WorkdirLock::acquire(dir_, "pgslow status");
  EXPECT_FALSE(again.taken_over_from().has_value());  // the file held our own pid
}

TEST_F(WorkdirLockTest, TheLockOfAKilledProcessIsTakenOver) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    WorkdirLock lock = WorkdirLock::acquire(dir_, "pgslow run doomed.yaml");
    char c = 'x';
    if (::write(ready[1], &c, 1) != 1) ::_exit(3);
    ::pause();  // killed with SIGKILL below: no destructor runs
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  // While it lives, it holds the lock.
  std::optional<LockHolder> holder;
  EXPECT_FALSE(WorkdirLock::try_acquire(dir_, "pgslow status", &holder).has_value());
  ASSERT_TRUE(holder.has_value());
  EXPECT_EQ(holder->who.pid, child);
  EXPECT_EQ(holder->command, "pgslow run doomed.yaml");
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  // Its pid is still in the file, but the kernel released the lock with the process.
  std::optional<WorkdirLock> lock = WorkdirLock::try_acquire(dir_, "pgslow recover");
  ASSERT_TRUE(lock.has_value());
  EXPECT_EQ(lock->taken_over_from(), child);
  EXPECT_EQ(lock_holder(dir_).value().who.pid, ::getpid());
  ::close(ready[0]);
  ::close(ready[1]);
}

// The lock is held (here by another open file description of this process), but the file still
// names a process that is gone: the refusal must not send the user after a dead pid.
TEST_F(WorkdirLockTest, TheRefusalNeverNamesADeadHolder) {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);  // gone: its pid names nobody now
  fs::create_directories(dir_);
  int fd = ::open(lock_path(dir_).c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  std::string text = std::to_string(child) + " 12345 -\npgslow run dead.yaml\n";
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  try {
    WorkdirLock::acquire(dir_, "pgslow apply x");
    ADD_FAILURE() << "the held lock was taken";
  } catch (const RuntimeError& e) {
    std::string what = e.what();
    EXPECT_EQ(what.find(std::to_string(child)), std::string::npos) << what;
    EXPECT_EQ(what.find("dead.yaml"), std::string::npos) << what;
    EXPECT_NE(what.find("another pgslow process"), std::string::npos) << what;
  }
  std::optional<LockHolder> holder = lock_holder(dir_);
  ASSERT_TRUE(holder.has_value());
  EXPECT_EQ(holder->who.pid, 0);
  ::close(fd);
}

TEST_F(WorkdirLockTest, TheLockFileIsPrivateAndNeverASymlink) {
  { WorkdirLock lock = WorkdirLock::acquire(dir_, "pgslow status --conninfo 'password=x'"); }
  struct stat st {};
  ASSERT_EQ(::stat(lock_path(dir_).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  fs::path victim = dir_.string() + "-victim";
  { std::ofstream(victim) << "precious\n"; }
  fs::remove(lock_path(dir_));
  fs::create_symlink(victim, lock_path(dir_));
  try {
    WorkdirLock::acquire(dir_, "pgslow status");
    ADD_FAILURE() << "a symlinked lock was followed";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
  }
  std::ifstream in(victim);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "precious");
  fs::remove(victim);
}

TEST_F(WorkdirLockTest, AWorkdirOthersMayWriteIsRefused) {
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::all);  // 0777, like a careless /var/tmp/pgslow
  try {
    WorkdirLock::acquire(dir_, "pgslow status");
    ADD_FAILURE() << "a world-writable workdir was trusted";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("chmod go-w"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_journal(dir_), RuntimeError);
  EXPECT_FALSE(fs::exists(lock_path(dir_)));
}

TEST_F(WorkdirLockTest, AWorkdirPgslowCreatesIsNotGroupWritable) {
  mode_t old = ::umask(0);
  WorkdirLock::acquire(dir_ / "a" / "b", "pgslow status");
  ::umask(old);
  EXPECT_EQ(fs::status(dir_ / "a" / "b").permissions() &
                (fs::perms::group_write | fs::perms::others_write),
            fs::perms::none);
}

TEST_F(WorkdirLockTest, TheProcessWideLockIsTakenOnce) {
  fs::create_directories(dir_);
  hold_workdir_lock_for_process(dir_, "pgslow run a.yaml");
  EXPECT_TRUE(process_holds_workdir_lock(dir_));
  hold_workdir_lock_for_process(dir_ / ".", "pgslow run a.yaml");  // same folder: no-op
  EXPECT_FALSE(WorkdirLock::try_acquire(dir_, "other").has_value());
}

}  // namespace
}  // namespace pgslow::apply
