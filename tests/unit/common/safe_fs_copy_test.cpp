// common/safe_fs: copies of a tree the server's user owns (issue #52). A file of holes costs
// no disk in the data directory, so its copy must not cost any either; a file that grows is
// copied only as far as it was when opened; and a copy that would not fit is refused first.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/errors.h"
#include "common/paths.h"
#include "common/safe_fs.h"

namespace pgslow {
namespace {

namespace fs = std::filesystem;

constexpr off_t kOneGiB = off_t{1} << 30;

class SafeFsCopy : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pgslow-safe-fs-copy-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "data" / "base");
    ::chmod(dir_.c_str(), 0700);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `text` at `offset` of `path` (made when missing).
  static void write_at(const fs::path& path, off_t offset, const std::string& text) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    ASSERT_TRUE(fd);
    ASSERT_EQ(::pwrite(fd.get(), text.data(), text.size(), offset),
              static_cast<ssize_t>(text.size()));
  }
  static std::string read_at(const fs::path& path, off_t offset, std::size_t n) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    std::string out(n, '?');
    out.resize(
        static_cast<std::size_t>(std::max<ssize_t>(0, ::pread(fd.get(), out.data(), n, offset))));
    return out;
  }
  static struct stat stat_of(const fs::path& p) {
    struct stat st {};
    ::lstat(p.c_str(), &st);
    return st;
  }

  fs::path dir_;
};

TEST_F(SafeFsCopy, ASparseFileIsCopiedWithItsHoles) {
  // `truncate -s 1G` with a few bytes of data in it: what the server's user can plant.
  const fs::path big = dir_ / "data" / "base" / "x";
  write_at(big, 0, "head");
  write_at(big, kOneGiB / 2, "middle");
  ASSERT_EQ(::truncate(big.c_str(), kOneGiB), 0);
  std::ofstream(dir_ / "data" / "PG_VERSION") << "17\n";
  const std::uint64_t needed = [&] {
    UniqueFd top = open_folder(dir_);
    return allocated_bytes_in(top.get(), "data", dir_ / "data");
  }();
  EXPECT_LT(needed, std::uint64_t{1} << 20) << "the holes counted as data";

  UniqueFd top = open_folder(dir_);
  const TreeCopy copy =
      copy_tree_in(top.get(), "data", top.get(), "copy",
                   FileOwnership{::geteuid(), ::getegid(), 0700}, false, dir_ / "data");
  EXPECT_EQ(copy.files, 2u);
  EXPECT_EQ(copy.bytes, static_cast<std::uint64_t>(kOneGiB) + 3);
  const fs::path copied = dir_ / "copy" / "base" / "x";
  const struct stat st = stat_of(copied);
  EXPECT_EQ(st.st_size, kOneGiB);
  EXPECT_LT(static_cast<std::uint64_t>(st.st_blocks) * 512, std::uint64_t{1} << 20)
      << "the copy wrote the holes";
  EXPECT_EQ(read_at(copied, 0, 4), "head");
  EXPECT_EQ(read_at(copied, kOneGiB / 2, 6), "middle");
  EXPECT_EQ(read_at(copied, kOneGiB / 4, 4), std::string(4, '\0'));
  EXPECT_EQ(read_file(dir_ / "copy" / "PG_VERSION"), "17\n");
}

TEST_F(SafeFsCopy, AFileIsCopiedOnlyToTheSizeItHadWhenOpened) {
  // What grows after it was opened is not chased: the copy stops at the size given.
  const fs::path grows = dir_ / "grows";
  write_at(grows, 0, std::string(8192, 'a') + std::string(8192, 'b'));
  UniqueFd from(::open(grows.c_str(), O_RDONLY | O_CLOEXEC));
  UniqueFd to(::open((dir_ / "copy").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  ASSERT_TRUE(from && to);
  EXPECT_EQ(copy_allocated(from.get(), to.get(), 8192, grows), 8192u);
  EXPECT_EQ(read_file(dir_ / "copy"), std::string(8192, 'a'));
}

TEST_F(SafeFsCopy, ACopyThatDoesNotFitIsRefusedSayingWhatItNeedsAndWhatIsFree) {
  const std::uint64_t needed = std::uint64_t{3} << 30;
  const std::uint64_t free = std::uint64_t{1} << 30;
  try {
    require_room_for_copy(needed, free, "/srv/lab/cluster/data");
    FAIL() << "a copy of 3 GiB was allowed into 1 GiB";
  } catch (const RuntimeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("/srv/lab/cluster/data"), std::string::npos) << what;
    EXPECT_NE(what.find("3221225472 bytes (3072.0 MiB)"), std::string::npos) << what;
    EXPECT_NE(what.find("1073741824 bytes (1024.0 MiB) are free"), std::string::npos) << what;
  }
  EXPECT_NO_THROW(require_room_for_copy(free, free, "/srv/lab/cluster/data"));
  // What is free here is what fstatvfs says, and a real copy's need is far below it.
  UniqueFd top = open_folder(dir_);
  EXPECT_GT(free_bytes_in(top.get(), dir_), 0u);
}

}  // namespace
}  // namespace pgslow
