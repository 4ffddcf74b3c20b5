// common/safe_fs: the file steps root takes beside the server's user. Each test plants what
// that user (or any other) could, and shows that root neither follows it nor writes through it.

#include "common/safe_fs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/errors.h"
#include "common/paths.h"
#include "common/process.h"

namespace pgslow {
namespace {

namespace fs = std::filesystem;

class SafeFs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pgslow-safe-fs-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::chmod(dir_.c_str(), 0755);
    victim_ = dir_ / "victim";
    std::ofstream(victim_) << "precious\n";
    ::chmod(victim_.c_str(), 0600);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Another user's ids: `nobody` when it exists (the tests that need it run as root).
  std::optional<SystemUser> other() const {
    if (::geteuid() != 0) return std::nullopt;
    return find_system_user("nobody");
  }
  void expect_victim_untouched() const {
    EXPECT_EQ(read_file(victim_), "precious\n");
    struct stat st {};
    ASSERT_EQ(::stat(victim_.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, ::geteuid());
    EXPECT_EQ(st.st_mode & 07777, 0600u);
  }

  fs::path dir_;
  fs::path victim_;
};

TEST_F(SafeFs, ReplaceFileInNeverWritesThroughAPlantedName) {
  UniqueFd dir = open_folder(dir_);
  // Every name of the form the old code used, for the next pids, leads to the victim.
  for (int pid = ::getpid() - 5; pid < ::getpid() + 50; ++pid)
    fs::create_symlink(victim_, dir_ / ("conf.tmp." + std::to_string(pid)));
  replace_file_in(dir.get(), "conf", "new bytes\n", FileOwnership{::geteuid(), ::getegid(), 0640},
                  dir_ / "conf", "conf.tmp.");
  EXPECT_EQ(read_file(dir_ / "conf"), "new bytes\n");
  struct stat st {};
  ASSERT_EQ(::lstat((dir_ / "conf").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  expect_victim_untouched();
}

TEST_F(SafeFs, ReplaceFileInReplacesALinkRatherThanWritingItsTarget) {
  fs::create_symlink(victim_, dir_ / "conf");
  UniqueFd dir = open_folder(dir_);
  replace_file_in(dir.get(), "conf", "mine\n", FileOwnership{::geteuid(), ::getegid(), 0600},
                  dir_ / "conf", "conf.tmp.");
  EXPECT_FALSE(fs::is_symlink(dir_ / "conf"));
  EXPECT_EQ(read_file(dir_ / "conf"), "mine\n");
  expect_victim_untouched();
}

TEST_F(SafeFs, OpenFileInRefusesALinkAndASecondName) {
  UniqueFd dir = open_folder(dir_);
  fs::create_symlink(victim_, dir_ / "link");
  EXPECT_THROW(open_file_in(dir.get(), "link", O_RDONLY, dir_ / "link"), RuntimeError);
  ASSERT_EQ(::link(victim_.c_str(), (dir_ / "hard").c_str()), 0);
  try {
    open_file_in(dir.get(), "hard", O_RDONLY, dir_ / "hard");
    ADD_FAILURE() << "a hard link was opened";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("2 names"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(open_file_in(dir.get(), "missing", O_RDONLY, dir_ / "missing"));
  EXPECT_THROW(open_file_in(dir.get(), "../victim", O_RDONLY, dir_ / "x"), RuntimeError);
}

// A FIFO planted under a name root reads (postmaster.pid) would block the open until someone
// wrote to it: it opens at once and is refused as not a regular file.
TEST_F(SafeFs, OpenFileInRefusesAFifoWithoutWaitingOnIt) {
  UniqueFd dir = open_folder(dir_);
  ASSERT_EQ(::mkfifo((dir_ / "postmaster.pid").c_str(), 0644), 0);
  try {
    read_file_in(dir.get(), "postmaster.pid", dir_ / "postmaster.pid", 64 * 1024);
    ADD_FAILURE() << "a FIFO was read";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
}

// A file the server's user writes (postmaster.pid) could be made sparse and larger than the
// memory: it is refused at the limit, never read whole.
TEST_F(SafeFs, ReadFileInRefusesAFileLongerThanItsLimit) {
  UniqueFd dir = open_folder(dir_);
  {
    UniqueFd huge(::open((dir_ / "huge").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600));
    ASSERT_TRUE(huge);
    ASSERT_EQ(::ftruncate(huge.get(), off_t{1} << 40), 0);  // 1 TiB, sparse
  }
  try {
    read_file_in(dir.get(), "huge", dir_ / "huge", 4096);
    ADD_FAILURE() << "a file longer than the limit was read";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("longer than 4096 bytes"), std::string::npos) << e.what();
  }
  std::ofstream(dir_ / "exact") << std::string(4096, 'x');
  EXPECT_EQ(read_file_in(dir.get(), "exact", dir_ / "exact", 4096)->size(), 4096u);
  EXPECT_EQ(*read_file_in(dir.get(), "victim", victim_), "precious\n");  // no limit given
}

TEST_F(SafeFs, RemoveTreeRemovesLinksNeverWhatTheyLeadTo) {
  const fs::path outside = dir_ / "outside";
  fs::create_directories(outside);
  std::ofstream(outside / "keep") << "keep\n";
  const fs::path tree = dir_ / "tree";
  fs::create_directories(tree / "a" / "b");
  std::ofstream(tree / "a" / "b" / "f") << "x";
  fs::create_symlink(outside, tree / "a" / "to-outside");
  fs::create_symlink(victim_, tree / "to-victim");
  EXPECT_TRUE(remove_tree(tree));
  EXPECT_FALSE(fs::exists(tree));
  EXPECT_EQ(read_file(outside / "keep"), "keep\n");
  expect_victim_untouched();
  EXPECT_FALSE(remove_tree(tree));
}

// Issue #36 finding 6: a tree far deeper than the descriptors a process may hold goes, with
// links at every depth removed and never followed, and the descriptors left as they were.
TEST_F(SafeFs, RemoveTreeRemovesATreeDeeperThanTheDescriptorLimit) {
  const fs::path outside = dir_ / "outside";
  fs::create_directories(outside);
  std::ofstream(outside / "keep") << "keep\n";
  UniqueFd here = open_folder(dir_);
  ASSERT_EQ(::mkdirat(here.get(), "tree", 0700), 0);
  here = open_folder_in(here.get(), "tree", dir_ / "tree");
  constexpr int kDepth = 1000;
  for (int level = 0; level < kDepth; ++level) {
    ASSERT_EQ(::symlinkat(outside.c_str(), here.get(), "to-outside"), 0);
    ASSERT_EQ(::symlinkat(victim_.c_str(), here.get(), "to-victim"), 0);
    UniqueFd file(::openat(here.get(), "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    ASSERT_TRUE(file);
    ASSERT_EQ(::mkdirat(here.get(), "d", 0700), 0);
    here = open_folder_in(here.get(), "d", dir_ / "tree");
  }
  here = UniqueFd();
  // Far fewer descriptors than the tree is deep: a removal that held one per level fails.
  struct rlimit was {};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &was), 0);
  struct rlimit low = was;
  low.rlim_cur = 256;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  const int first_free_before = ::dup(0);
  ::close(first_free_before);
  bool removed = false;
  try {
    removed = remove_tree(dir_ / "tree");
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
  ::setrlimit(RLIMIT_NOFILE, &was);
  EXPECT_TRUE(removed);
  EXPECT_FALSE(fs::exists(dir_ / "tree"));
  EXPECT_EQ(read_file(outside / "keep"), "keep\n");
  expect_victim_untouched();
  const int first_free_after = ::dup(0);
  ::close(first_free_after);
  EXPECT_EQ(first_free_after, first_free_before) << "a descriptor was left open";
}

// A data directory's copy (server snapshot): every file and folder with its bytes and mode,
// the copy given the owner asked for; on this machine's ext4 the files are copied, not cloned.
TEST_F(SafeFs, CopyTreeCopiesFilesAndFoldersWithTheirModes) {
  const fs::path tree = dir_ / "data";
  fs::create_directories(tree / "base" / "1");
  std::ofstream(tree / "PG_VERSION") << "18\n";
  std::ofstream(tree / "base" / "1" / "1259") << std::string(100'000, 'r');
  ::chmod((tree / "base" / "1" / "1259").c_str(), 0640);
  ::chmod(tree.c_str(), 0750);
  UniqueFd at = open_folder(dir_);
  const FileOwnership mine{::geteuid(), ::getegid(), 0700};
  const TreeCopy c = copy_tree_in(at.get(), "data", at.get(), "copy", mine, true, tree);
  EXPECT_EQ(c.files, 2u);
  EXPECT_EQ(c.bytes, 100'003u);
  EXPECT_EQ(read_file(dir_ / "copy" / "PG_VERSION"), "18\n");
  EXPECT_EQ(read_file(dir_ / "copy" / "base" / "1" / "1259"), std::string(100'000, 'r'));
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "copy" / "base" / "1" / "1259").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  ASSERT_EQ(::stat((dir_ / "copy").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_THROW(copy_tree_in(at.get(), "data", at.get(), "copy", mine, true, tree), RuntimeError)
      << "the copy's folder must be new";
}

// A link (or a FIFO) the server's user plants in its data directory is refused, naming it,
// never followed; nothing of the partial copy stays.
TEST_F(SafeFs, CopyTreeRefusesALinkAndLeavesNoPartialCopy) {
  const fs::path tree = dir_ / "data";
  fs::create_directories(tree / "base");
  std::ofstream(tree / "base" / "a") << "a";
  fs::create_symlink(victim_, tree / "base" / "to-victim");
  UniqueFd at = open_folder(dir_);
  const FileOwnership mine{::geteuid(), ::getegid(), 0700};
  try {
    copy_tree_in(at.get(), "data", at.get(), "copy", mine, false, tree);
    ADD_FAILURE() << "a link was copied";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find((tree / "base" / "to-victim").string()), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "copy"));
  expect_victim_untouched();
  fs::remove(tree / "base" / "to-victim");
  ASSERT_EQ(::mkfifo((tree / "base" / "fifo").c_str(), 0600), 0);
  EXPECT_THROW(copy_tree_in(at.get(), "data", at.get(), "copy", mine, false, tree), RuntimeError);
  EXPECT_FALSE(fs::exists(dir_ / "copy"));
}

// A file of another user's in the tree is refused: only the tree's owner's files are copied.
TEST_F(SafeFs, CopyTreeRefusesAnotherUsersFile) {
  const auto nobody = other();
  if (!nobody) GTEST_SKIP() << "needs root and a `nobody` user";
  const fs::path tree = dir_ / "data";
  fs::create_directories(tree);
  std::ofstream(tree / "theirs") << "x";
  ASSERT_EQ(::chown((tree / "theirs").c_str(), nobody->uid, nobody->gid), 0);
  UniqueFd at = open_folder(dir_);
  EXPECT_THROW(copy_tree_in(at.get(), "data", at.get(), "copy",
                            FileOwnership{::geteuid(), ::getegid(), 0700}, true, tree),
               RuntimeError);
  EXPECT_FALSE(fs::exists(dir_ / "copy"));
}

TEST_F(SafeFs, MakeFolderInRefusesALinkInItsPlace) {
  UniqueFd dir = open_folder(dir_);
  fs::create_symlink(dir_ / "elsewhere", dir_ / "socket");
  fs::create_directories(dir_ / "elsewhere");
  EXPECT_THROW(make_folder_in(dir.get(), "socket", dir_ / "socket"), RuntimeError);
  UniqueFd made = make_folder_in(dir.get(), "fresh", dir_ / "fresh");
  EXPECT_TRUE(made);
  EXPECT_TRUE(fs::is_directory(dir_ / "fresh"));
}

TEST_F(SafeFs, TrustedPathRefusesAForeignLinkInAStickyFolder) {
  std::optional<SystemUser> nobody = other();
  if (!nobody) GTEST_SKIP() << "needs root and the nobody user";
  const fs::path target = dir_ / "private";
  fs::create_directories(target);
  ::chmod(target.c_str(), 0700);
  const fs::path shared = dir_ / "shared";
  fs::create_directories(shared);
  ::chmod(shared.c_str(), 01777);
  fs::create_symlink(target, shared / "link");
  ASSERT_EQ(::lchown((shared / "link").c_str(), nobody->uid, nobody->gid), 0);
  for (const fs::path& p : {shared / "link", shared / "link" / "below"}) {
    try {
      require_trusted_workdir(p);
      ADD_FAILURE() << p << " was trusted";
    } catch (const RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find("symbolic link of uid " + std::to_string(nobody->uid)),
                std::string::npos)
          << e.what();
    }
    EXPECT_THROW(create_workdir(p), RuntimeError);
  }
  EXPECT_TRUE(fs::is_empty(target)) << "a folder was made through the link";
  EXPECT_THROW(open_folder(shared / "link"), RuntimeError);
  // Root's own link in the same sticky folder is fine.
  fs::create_symlink(target, shared / "root-link");
  EXPECT_NO_THROW(require_trusted_workdir(shared / "root-link"));
  EXPECT_NO_THROW(open_folder(shared / "root-link"));
}

TEST_F(SafeFs, TrustedPathRefusesAFolderUnderAnotherUsersFolder) {
  std::optional<SystemUser> nobody = other();
  if (!nobody) GTEST_SKIP() << "needs root and the nobody user";
  const fs::path theirs = dir_ / "theirs";
  fs::create_directories(theirs / "mine");
  ASSERT_EQ(::chown(theirs.c_str(), nobody->uid, nobody->gid), 0);
  try {
    require_trusted_path(theirs / "mine", "the cache");
    ADD_FAILURE() << "trusted a folder whose parent another user owns";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("refuses the cache"), std::string::npos) << e.what();
  }
  // A world-writable folder of root's (not sticky) is refused too.
  const fs::path open = dir_ / "open";
  fs::create_directories(open / "x");
  ::chmod(open.c_str(), 0777);
  EXPECT_THROW(require_trusted_path(open / "x", "the workdir"), RuntimeError);
  // Its own folders are fine, existing or not.
  EXPECT_NO_THROW(require_trusted_path(dir_ / "not-yet" / "deeper", "the workdir"));
}

TEST_F(SafeFs, OpenFolderFollowsOnlyLinksOfTrustedFolders) {
  std::optional<SystemUser> nobody = other();
  if (!nobody) GTEST_SKIP() << "needs root and the nobody user";
  const fs::path theirs = dir_ / "theirs";
  fs::create_directories(theirs);
  ASSERT_EQ(::chown(theirs.c_str(), nobody->uid, nobody->gid), 0);
  fs::create_symlink(dir_, theirs / "data");
  EXPECT_THROW(open_folder(theirs / "data"), RuntimeError);
  // Their own folder itself is reachable (the data directory is the server user's).
  EXPECT_NO_THROW(open_folder(theirs));
}

// Issue #36: what pgslow takes instructions from (a scenario, the catalog, a script) is read only
// when no one else could have written it or the folders on the way.
TEST_F(SafeFs, ReadTrustedFileRefusesWhatAnotherUserCouldHaveWritten) {
  std::optional<SystemUser> nobody = other();
  if (!nobody) GTEST_SKIP() << "needs root and the nobody user";
  std::ofstream(dir_ / "mine.yaml") << "mine\n";
  EXPECT_EQ(read_trusted_file(dir_ / "mine.yaml", "the scenario"), "mine\n");
  auto refusal = [](const fs::path& p) {
    try {
      read_trusted_file(p, "the scenario");
    } catch (const RuntimeError& e) {
      return std::string(e.what());
    }
    return std::string("read");
  };
  // A file of another user's, in root's own folder.
  std::ofstream(dir_ / "theirs.yaml") << "theirs\n";
  ASSERT_EQ(::chown((dir_ / "theirs.yaml").c_str(), nobody->uid, nobody->gid), 0);
  EXPECT_NE(refusal(dir_ / "theirs.yaml").find("uid " + std::to_string(nobody->uid)),
            std::string::npos);
  // Root's file that anyone may write.
  std::ofstream(dir_ / "open.yaml") << "open\n";
  ::chmod((dir_ / "open.yaml").c_str(), 0666);
  EXPECT_NE(refusal(dir_ / "open.yaml").find("mode 0666"), std::string::npos);
  // Root's file in a world-writable folder (not sticky): anyone could have replaced it.
  const fs::path open = dir_ / "open";
  fs::create_directories(open);
  ::chmod(open.c_str(), 0777);
  std::ofstream(open / "quick.yaml") << "planted\n";
  EXPECT_NE(refusal(open / "quick.yaml").find("refuses the scenario"), std::string::npos);
  // In a sticky folder only a file of root's counts; a link there only when it is root's, and
  // its target is judged again.
  const fs::path shared = dir_ / "shared";
  fs::create_directories(shared);
  ::chmod(shared.c_str(), 01777);
  std::ofstream(shared / "root.yaml") << "root's\n";
  EXPECT_EQ(read_trusted_file(shared / "root.yaml", "the scenario"), "root's\n");
  std::ofstream(shared / "nobody.yaml") << "nobody's\n";
  ASSERT_EQ(::chown((shared / "nobody.yaml").c_str(), nobody->uid, nobody->gid), 0);
  EXPECT_NE(refusal(shared / "nobody.yaml").find("others may write"), std::string::npos);
  fs::create_symlink(victim_, shared / "link.yaml");
  ASSERT_EQ(::lchown((shared / "link.yaml").c_str(), nobody->uid, nobody->gid), 0);
  EXPECT_NE(refusal(shared / "link.yaml"), "read");
  fs::create_symlink(dir_ / "theirs.yaml", shared / "root-link.yaml");
  EXPECT_NE(refusal(shared / "root-link.yaml").find("theirs.yaml"), std::string::npos);
  fs::create_symlink(dir_ / "mine.yaml", shared / "good-link.yaml");
  EXPECT_EQ(read_trusted_file(shared / "good-link.yaml", "the scenario"), "mine\n");
  // A folder on the way that another user owns.
  const fs::path theirs = dir_ / "theirs";
  fs::create_directories(theirs / "sub");
  std::ofstream(theirs / "sub" / "quick.yaml") << "x\n";
  ASSERT_EQ(::chown(theirs.c_str(), nobody->uid, nobody->gid), 0);
  EXPECT_NE(refusal(theirs / "sub" / "quick.yaml"), "read");
  EXPECT_THROW(read_trusted_file(dir_ / "missing.yaml", "the scenario"), RuntimeError);
  expect_victim_untouched();
}

// A results folder (or an --output file's folder) is checked before root writes into it.
TEST_F(SafeFs, OutputFoldersRefuseAPlantedLinkAndAcceptAStickyFolderOfRoots) {
  std::optional<SystemUser> nobody = other();
  if (!nobody) GTEST_SKIP() << "needs root and the nobody user";
  const fs::path shared = dir_ / "shared";
  fs::create_directories(shared);
  ::chmod(shared.c_str(), 01777);
  const fs::path target = dir_ / "private";
  fs::create_directories(target);
  fs::create_symlink(target, shared / "results");
  ASSERT_EQ(::lchown((shared / "results").c_str(), nobody->uid, nobody->gid), 0);
  EXPECT_THROW(create_output_folders(shared / "results" / "quick-1", "the results folder"),
               RuntimeError);
  EXPECT_THROW(write_file_durably(shared / "results" / "report.md", "x"), RuntimeError);
  EXPECT_TRUE(fs::is_empty(target)) << "root wrote through the link";
  // A world-writable folder that is not sticky is refused; a sticky one of root's is not.
  const fs::path open = dir_ / "open";
  fs::create_directories(open);
  ::chmod(open.c_str(), 0777);
  EXPECT_THROW(write_file_durably(open / "report.md", "x"), RuntimeError);
  EXPECT_FALSE(fs::exists(open / "report.md"));
  EXPECT_NO_THROW(write_file_durably(shared / "report.md", "x", 0644));
  EXPECT_NO_THROW(create_output_folders(shared / "mine" / "quick-1", "the results folder"));
  struct stat st {};
  ASSERT_EQ(::stat((shared / "mine").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
}

}  // namespace
}  // namespace pgslow
