// Files of the server's user that pgslow reads (issue #52): postgresql.auto.conf and the claim
// pgslow.owner can be made any size, even sparse and larger than the disk. Each is read with a
// cap, so neither memory nor the journal grows with what that user planted.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "apply/auto_conf.h"
#include "apply/journal.h"
#include "apply/server_lock.h"
#include "common/errors.h"

namespace pgslow::apply {
namespace {

namespace fs = std::filesystem;

constexpr off_t kOneGiB = off_t{1} << 30;
// Far below what reading the planted gigabyte whole took (5.9 GB for auto.conf).
constexpr long kMaxGrowthKiB = 64 * 1024;

long peak_rss_kib() {
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

class ServerFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pgslow-server-files-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::chmod(dir_.c_str(), 0700);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `name` in the folder, `size` bytes long with no block of data: a hole, as `truncate -s`.
  void plant_sparse(const std::string& name, off_t size, const std::string& head = "") const {
    std::ofstream(dir_ / name) << head;
    ASSERT_EQ(::truncate((dir_ / name).c_str(), size), 0);
  }

  fs::path dir_;
};

TEST_F(ServerFiles, AnAutoConfLargerThanTheCapIsRefusedNamingItAndTheCap) {
  plant_sparse("postgresql.auto.conf", kOneGiB, "work_mem = '5MB'\n");
  const long before = peak_rss_kib();
  try {
    read_auto_conf(dir_);
    FAIL() << "a 1 GiB postgresql.auto.conf was read";
  } catch (const RuntimeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find((dir_ / "postgresql.auto.conf").string()), std::string::npos) << what;
    EXPECT_NE(what.find(std::to_string(kMaxAutoConfBytes)), std::string::npos) << what;
    EXPECT_NE(what.find("1073741824 bytes"), std::string::npos) << what;
  }
  EXPECT_LT(peak_rss_kib() - before, kMaxGrowthKiB);
}

TEST_F(ServerFiles, AnAutoConfUpToTheCapIsReadWhole) {
  // The largest file pgslow takes: its bytes, exactly, so restore puts back what was there.
  std::string text = "work_mem = '5MB'\n";
  text.resize(kMaxAutoConfBytes, '#');
  std::ofstream(dir_ / "postgresql.auto.conf", std::ios::binary) << text;
  const OriginalFile f = read_auto_conf(dir_);
  EXPECT_TRUE(f.existed);
  EXPECT_EQ(f.bytes, text);
  // One byte more is refused.
  std::ofstream(dir_ / "postgresql.auto.conf", std::ios::binary | std::ios::app) << "#";
  EXPECT_THROW(read_auto_conf(dir_), RuntimeError);
}

TEST_F(ServerFiles, AnOversizeClaimIsIgnoredWithoutReadingIt) {
  plant_sparse("pgslow.owner", kOneGiB, "/some/workdir\n");
  const long before = peak_rss_kib();
  // Only a hint: ignored (with a warning), so the journal of this workdir decides.
  EXPECT_EQ(server_claimed_by(dir_), std::nullopt);
  EXPECT_LT(peak_rss_kib() - before, kMaxGrowthKiB);
  // A claim of the usual size is still read.
  fs::remove(dir_ / "pgslow.owner");
  std::ofstream(dir_ / "pgslow.owner") << "/some/workdir\n";
  EXPECT_EQ(server_claimed_by(dir_), fs::path("/some/workdir"));
}

TEST_F(ServerFiles, AJournalLargerThanAnyJournalIsRefused) {
  // A claim names the workdir whose journal is read: never whole, whatever it holds.
  plant_sparse("journal.json", kOneGiB);
  ::chmod((dir_ / "journal.json").c_str(), 0600);
  const long before = peak_rss_kib();
  try {
    load_journal(dir_);
    FAIL() << "a 1 GiB journal was read";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find((dir_ / "journal.json").string()), std::string::npos)
        << e.what();
  }
  EXPECT_LT(peak_rss_kib() - before, kMaxGrowthKiB);
}

}  // namespace
}  // namespace pgslow::apply
