// Root making its own folders (the workdir, a results folder) beside another user who races it:
// a helper process of that user renames what root makes away and plants a link to a folder of
// root's in its place, thousands of times, while root creates. Root must never chmod, create
// in or open anything through the link, and every attempt either makes root's own folder or
// fails with the reason.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "common/errors.h"
#include "common/process.h"
#include "common/safe_fs.h"

namespace pgslow {
namespace {

namespace fs = std::filesystem;

// How many times root creates while the other user races it.
constexpr int kAttempts = 2000;

class FolderRace : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (another user races root's steps)";
    auto nobody = find_system_user("nobody");
    if (!nobody) GTEST_SKIP() << "needs the nobody user";
    other_ = *nobody;
    dir_ = fs::temp_directory_path() /
           ("pgslow-folder-race-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::chmod(dir_.c_str(), 0755);
    // Root's secret: a folder only root may enter, holding a file only root may read.
    secret_ = dir_ / "root-only";
    fs::create_directories(secret_);
    ::chmod(secret_.c_str(), 0700);
    std::ofstream(secret_ / "secret") << "ROOT-ONLY-SECRET\n";
    ::chmod((secret_ / "secret").c_str(), 0600);
    stop_ = static_cast<std::atomic<int>*>(::mmap(nullptr, sizeof(std::atomic<int>),
                                                  PROT_READ | PROT_WRITE,
                                                  MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(stop_, MAP_FAILED);
    new (stop_) std::atomic<int>(0);
  }

  void TearDown() override {
    stop_racer();
    if (stop_ != nullptr && stop_ != MAP_FAILED) ::munmap(stop_, sizeof(std::atomic<int>));
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Starts the other user's racer: `step` runs in a loop (bounded: at most 30 s, and until the
  // test says stop) as that user, in `folder`.
  template <typename Step>
  void start_racer(const fs::path& folder, Step step) {
    racer_ = ::fork();
    ASSERT_GE(racer_, 0);
    if (racer_ == 0) {
      if (::setgid(other_.gid) != 0 || ::setuid(other_.uid) != 0) ::_exit(3);
      if (::chdir(folder.c_str()) != 0) ::_exit(4);
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      for (long i = 0; stop_->load() == 0 && std::chrono::steady_clock::now() < until; ++i) step(i);
      ::_exit(0);
    }
  }

  void stop_racer() {
    if (racer_ <= 0) return;
    stop_->store(1);
    int status = 0;
    ::waitpid(racer_, &status, 0);
    racer_ = -1;
  }

  void expect_secret_untouched() const {
    struct stat st {};
    ASSERT_EQ(::lstat(secret_.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_uid, 0u);
    EXPECT_EQ(st.st_mode & 07777, 0700u) << "root chmodded its own folder through a link";
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(secret_)) ++entries;
    EXPECT_EQ(entries, 1u) << "root created something in its own folder through a link";
    ASSERT_EQ(::stat((secret_ / "secret").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
  }

  SystemUser other_;
  fs::path dir_;
  fs::path secret_;
  std::atomic<int>* stop_ = nullptr;
  pid_t racer_ = -1;
};

// The attack: root runs pgslow in a folder of the other user's (`cd /home/mallory &&
// pgslow server start`); the user renames each new `.pgslow` away and puts a link to a folder
// of root's in its place. Root refuses to make anything there at all, whatever the timing.
TEST_F(FolderRace, RootMakesNothingInAFolderAnotherUserOwns) {
  const fs::path home = dir_ / "home";
  fs::create_directories(home);
  ASSERT_EQ(::chown(home.c_str(), other_.uid, other_.gid), 0);
  ::chmod(home.c_str(), 0755);
  const std::string secret = secret_.string();
  start_racer(home, [&](long i) {
    const std::string away = "away-" + std::to_string(i % 64);
    ::rename(".pgslow", away.c_str());
    ::rename("results", (away + "-r").c_str());
    ::symlink(secret.c_str(), ".pgslow");
    ::symlink(secret.c_str(), "results");
    ::unlink(".pgslow");
    ::unlink("results");
  });
  int refused = 0;
  for (int i = 0; i < kAttempts; ++i) {
    try {
      create_workdir(home / ".pgslow");
    } catch (const RuntimeError& e) {
      ++refused;
      if (i == 0) {
        // It names the other user: the folder "belongs to uid N", or, when the racer's link was
        // in place at that moment, ".pgslow is a symbolic link of uid N".
        const std::string text = e.what();
        const std::string uid = std::to_string(other_.uid);
        EXPECT_TRUE(text.find("belongs to uid " + uid) != std::string::npos ||
                    text.find("is a symbolic link of uid " + uid) != std::string::npos)
            << text;
      }
    }
    try {
      create_output_folders(home / "results" / "quick-1", "the results folder");
    } catch (const RuntimeError&) {
      ++refused;
    }
  }
  stop_racer();
  EXPECT_EQ(refused, 2 * kAttempts) << "root made a folder in a folder another user owns";
  expect_secret_untouched();
}

// A sticky shared folder of root's (/tmp): the other user may take a name first, as a folder or
// a link of theirs, and drop it again, in any order. Every attempt either makes root's own
// folder (then root's, 0755, a real folder, the sub-folder made inside it) or is refused.
TEST_F(FolderRace, RootsFoldersInAStickyFolderAreRootsOrRefused) {
  const fs::path shared = dir_ / "shared";
  fs::create_directories(shared);
  ::chmod(shared.c_str(), 01777);
  const std::string secret = secret_.string();
  start_racer(shared, [&](long i) {
    if (i % 2 == 0) {
      ::mkdir("w", 0777);
      ::rmdir("w");
    } else {
      ::symlink(secret.c_str(), "w");
      ::unlink("w");
    }
  });
  int made = 0;
  int refused = 0;
  for (int i = 0; i < kAttempts; ++i) {
    try {
      UniqueFd folder = create_trusted_folders(shared / "w" / "x", "the results folder");
      ++made;
      struct stat st {};
      ASSERT_EQ(::fstat(folder.get(), &st), 0);
      EXPECT_EQ(st.st_uid, 0u);
      ASSERT_EQ(::lstat((shared / "w").c_str(), &st), 0);
      EXPECT_TRUE(S_ISDIR(st.st_mode));
      EXPECT_EQ(st.st_uid, 0u);
      EXPECT_EQ(st.st_mode & 07777, 0755u);
      // Root's own folder in a sticky folder: the other user can neither move nor remove it.
      ASSERT_EQ(::rmdir((shared / "w" / "x").c_str()), 0);
      ASSERT_EQ(::rmdir((shared / "w").c_str()), 0);
    } catch (const RuntimeError&) {
      ++refused;
    }
  }
  stop_racer();
  EXPECT_EQ(made + refused, kAttempts);
  std::cout << "root made its folder " << made << " times, refused " << refused << "\n";
  EXPECT_GT(made, 0) << "a racer that drops its names again should not win every time";
  expect_secret_untouched();
}

// A folder of root's that a group of someone else's may write is as open as another user's.
TEST_F(FolderRace, AGroupWritableFolderIsRefusedToo) {
  const fs::path shared = dir_ / "group";
  fs::create_directories(shared);
  ASSERT_EQ(::chown(shared.c_str(), 0, other_.gid), 0);
  ::chmod(shared.c_str(), 0775);
  if (other_.gid == 0) GTEST_SKIP() << "nobody's group is root's";
  try {
    create_workdir(shared / ".pgslow");
    ADD_FAILURE() << "made a workdir in a folder others may write";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("others may write it"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(shared / ".pgslow"));
}

}  // namespace
}  // namespace pgslow
