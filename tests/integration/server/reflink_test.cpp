// Resetting a stage's data by copy-on-write clone (issue #41), for real: on a small XFS made
// with reflink=1 and on a btrfs, each on a loop device (tests/support/reflink_mount.h),
// PostgreSQL 18 clones the
// template's files; on this machine's ext4 the reset falls back to the template copy. Both say
// which in what they report, and neither leaves a checkpoint of its own in the measured window.

#include "common/reflink.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "common/process.h"
#include "common/progress.h"
#include "experiment/lab_session.h"
#include "knobs/catalog.h"
#include "pg/connection.h"
#include "server/managed_cluster.h"
#include "server/pg_versions.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/data_checksum.h"
#include "tests/support/pgslow_process.h"
#include "tests/support/reflink_mount.h"
#include "workload/dataset.h"
#include "workload/registry.h"

namespace pgslow {
namespace {

namespace fs = std::filesystem;

constexpr long kExt4Magic = 0xEF53;

std::uint64_t free_bytes(const fs::path& p) {
  struct statvfs s {};
  EXPECT_EQ(::statvfs(p.c_str(), &s), 0);
  return static_cast<std::uint64_t>(s.f_bavail) * s.f_frsize;
}

// The share of `file`'s bytes in extents it shares with another file (FIEMAP's
// FIEMAP_EXTENT_SHARED): a clone's, until written. Asked of the file itself, so btrfs's lazily
// updated free space does not enter into it.
double shared_share(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  EXPECT_GE(fd, 0) << file;
  if (fd < 0) return 0;
  constexpr unsigned kExtents = 256;
  std::vector<char> buf(sizeof(struct fiemap) + kExtents * sizeof(struct fiemap_extent));
  double shared = 0, total = 0;
  std::uint64_t start = 0;
  for (bool last = false; !last;) {
    std::fill(buf.begin(), buf.end(), 0);
    auto* fm = reinterpret_cast<struct fiemap*>(buf.data());
    fm->fm_start = start;
    fm->fm_length = FIEMAP_MAX_OFFSET - start;
    fm->fm_flags = FIEMAP_FLAG_SYNC;
    fm->fm_extent_count = kExtents;
    if (::ioctl(fd, FS_IOC_FIEMAP, fm) != 0 || fm->fm_mapped_extents == 0) break;
    for (unsigned i = 0; i < fm->fm_mapped_extents; ++i) {
      const struct fiemap_extent& e = fm->fm_extents[i];
      total += static_cast<double>(e.fe_length);
      if (e.fe_flags & FIEMAP_EXTENT_SHARED) shared += static_cast<double>(e.fe_length);
      last = last || (e.fe_flags & FIEMAP_EXTENT_LAST);
      start = e.fe_logical + e.fe_length;
    }
  }
  ::close(fd);
  return total > 0 ? shared / total : 0;
}

bool installed(int major) {
  return server::installed_pg_bin(major, server::pg_cache_root()).has_value();
}

// One stage of a workload on `server`, through the one measuring seam, with its evidence.
results::StageResult measure_one_stage(server::ServerControl& server, const fs::path& workdir,
                                       const std::string& workload, int scale) {
  experiment::LabOptions o;
  o.changes_configuration = false;
  o.workdir = workdir;
  const knobs::Catalog catalog{};
  workload::WorkloadParams params;
  params.scale = scale;
  params.clients = 2;
  SilentProgress quiet;
  experiment::LabSession lab(server, catalog, workload::find_workload(workload), params, o, quiet);
  lab.prepare();
  experiment::Trial trial;
  trial.configuration.name = "first second";
  trial.timing.warmup_s = 0;  // the window opens right after the reset
  trial.timing.duration_s = 1;
  trial.timing.workers = 1;
  trial.timing.wait_sampling = false;
  results::StageResult r = lab.measure(trial);
  r.description = lab.reset_method();  // carried out for the test to read
  return r;
}

TEST(Reflink, ProbeSaysNoOnExt4) {
  struct statfs s {};
  const fs::path tmp = fs::temp_directory_path();
  ASSERT_EQ(::statfs(tmp.c_str(), &s), 0);
  if (s.f_type != kExt4Magic) GTEST_SKIP() << tmp << " is not ext4 on this machine";
  const ReflinkSupport r = probe_reflink(tmp);
  EXPECT_FALSE(r.supported);
  EXPECT_NE(r.why.find("FICLONE"), std::string::npos) << r.why;
}

// Each test of the clone path runs on both file systems of Linux that clone files: an XFS made
// with reflink=1 and a btrfs, each a loop-mounted image.
class OnCloningFs : public ::testing::TestWithParam<testing::ReflinkMount::Filesystem> {
 protected:
  void SetUp() override {
    std::string why;
    mount_ = testing::ReflinkMount::make(std::uint64_t{1} << 30, why, GetParam());
    if (!mount_)
      GTEST_SKIP() << "no " << testing::ReflinkMount::name(GetParam()) << " here: " << why;
  }
  std::unique_ptr<testing::ReflinkMount> mount_;
};

INSTANTIATE_TEST_SUITE_P(Reflink, OnCloningFs,
                         ::testing::Values(testing::ReflinkMount::Filesystem::kXfs,
                                           testing::ReflinkMount::Filesystem::kBtrfs),
                         [](const auto& fs_param) {
                           return testing::ReflinkMount::name(fs_param.param);
                         });

TEST_P(OnCloningFs, ProbeSaysYes) {
  const ReflinkSupport r = probe_reflink(mount_->make_folder("probe"));
  EXPECT_TRUE(r.supported) << r.why;
}

// PostgreSQL 18 on XFS or btrfs: the reset clones, the clone holds the template's rows at the same
// places, it passes the workload's consistency checks, and it took almost no space.
TEST_P(OnCloningFs, Pg18ResetClonesTheTemplateByteForByte) {
  if (!installed(18)) GTEST_SKIP() << "PostgreSQL 18 is not installed (`pgslow server install 18`)";
  testing::TemporaryCluster cluster(mount_->make_folder("pg18"), 18);
  workload::WorkloadParams params;
  params.scale = 1;
  const workload::Workload& w = workload::find_workload("tpcc-lite");
  workload::Dataset ds(cluster.get().conninfo(), w, params);
  SilentProgress quiet;
  ds.load(quiet);
  ds.set_reset_method(workload::ResetMethod::kServerClone);
  const std::uint64_t template_bytes = ds.data_bytes();
  ds.reset();  // a first clone, so the next reset's drop is measured too
  const std::uint64_t free_before = free_bytes(mount_->path());
  const workload::ResetResult r = ds.reset();
  const std::uint64_t free_after = free_bytes(mount_->path());
  EXPECT_EQ(r.method, workload::ResetMethod::kServerClone);
  EXPECT_EQ(
      testing::table_checksums(r.conninfo),
      testing::table_checksums(pg::with_database(cluster.get().conninfo(), ds.template_name())));
  for (const auto& c : workload::check_data(w, r.conninfo, params))
    EXPECT_TRUE(c.passed) << c.clause << ": " << c.detail;
  // The clone's largest table shares its blocks with the template's: a byte copy shares none.
  pg::Connection clone = pg::Connection::open(r.conninfo);
  const fs::path stock(clone
                           .exec("SELECT current_setting('data_directory') || '/' || "
                                 "pg_relation_filepath('stock')")
                           .get(0, 0));
  clone.close();
  EXPECT_GT(shared_share(stock), 0.9) << stock;
  // And the space: a byte copy would take the template's size again (the checkpoints' WAL and
  // the drop's freed space move the count a little either way). btrfs counts its free space
  // lazily and in whole chunks, so only XFS's count is compared.
  const double used = static_cast<double>(free_before) - static_cast<double>(free_after);
  if (GetParam() == testing::ReflinkMount::Filesystem::kXfs) {
    EXPECT_LT(used, static_cast<double>(template_bytes) / 4)
        << "template " << template_bytes << " bytes";
  }
  std::cout << "clone reset of " << template_bytes << " bytes: " << r.seconds * 1e3 << " ms\n";
}

// The seam chooses the clone by itself on XFS or btrfs with 18, says so, and the first second after
// the reset counts no requested checkpoint: the reset's two have been counted before the window.
TEST_P(OnCloningFs, Pg18StageSaysCloneAndItsFirstSecondHasNoCheckpoint) {
  if (!installed(18)) GTEST_SKIP() << "PostgreSQL 18 is not installed (`pgslow server install 18`)";
  const fs::path parent = mount_->make_folder("stage18");
  testing::TemporaryCluster cluster(parent, 18);
  const results::StageResult r =
      measure_one_stage(cluster.get(), cluster.workdir(), "tpcb-like", 1);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.description, "clone (PG18 file_copy_method=clone)");
  ASSERT_TRUE(r.evidence.count("checkpoints_requested")) << "no checkpoint evidence";
  EXPECT_EQ(r.evidence.at("checkpoints_requested"), 0);
  EXPECT_GT(r.reset_seconds, 0);
}

// This machine's ext4: the template copy, said so, and no checkpoint of it in the window.
TEST(ResetOnExt4, StageSaysTemplateCopyAndItsFirstSecondHasNoCheckpoint) {
  struct statfs s {};
  ASSERT_EQ(::statfs(testing::cluster_workdir().c_str(), &s), 0);
  if (s.f_type != kExt4Magic) GTEST_SKIP() << "the test cluster is not on ext4 here";
  const results::StageResult r =
      measure_one_stage(testing::cluster(), testing::cluster_workdir(), "tpcb-like", 1);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.description, "template copy (FILE_COPY)");
  ASSERT_TRUE(r.evidence.count("checkpoints_requested")) << "no checkpoint evidence";
  EXPECT_EQ(r.evidence.at("checkpoints_requested"), 0);
}

// `pgslow server snapshot` then `bench --from-snapshot` in a workdir under `parent`, on the
// default cluster: the snapshot says how it copied (`how`), is root's, and brings back a
// template that was dropped after it was taken.
void snapshot_round_trip(const fs::path& parent, const std::string& how) {
  const int major = *server::default_cluster_major(parent, std::nullopt);
  testing::TemporaryWorkdir workdir({major}, parent);
  auto pgslow = [&](std::vector<std::string> args) {
    return testing::run_pgslow_in(workdir.path(), std::move(args), std::chrono::seconds(300));
  };
  ASSERT_EQ(pgslow({"server", "start"}).exit_code, 0);
  ASSERT_EQ(pgslow({"load", "-w", "tpcb-like", "--scale", "1"}).exit_code, 0);
  const testing::Finished snap = pgslow({"server", "snapshot", "loaded"});
  ASSERT_EQ(snap.exit_code, 0) << snap.output;
  EXPECT_NE(snap.output.find(how), std::string::npos) << snap.output;
  const fs::path kept = workdir.path() / "snapshots" / "cluster" / "loaded";
  struct stat st {};
  ASSERT_EQ(::lstat(kept.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid()) << "the snapshot must be pgslow's, not the server user's";
  EXPECT_NE(pgslow({"server", "status"}).output.find("snapshots   loaded"), std::string::npos);

  const server::ManagedCluster c = workdir.cluster(major);
  pg::Connection conn = pg::Connection::open(c.conninfo());
  conn.exec("DROP DATABASE pgslow_tpl_tpcb_like_1 WITH (FORCE)");
  const testing::Finished bench = pgslow(
      {"bench", "-w", "tpcb-like", "--scale", "1", "--duration", "1", "--from-snapshot", "loaded"});
  ASSERT_EQ(bench.exit_code, 0) << bench.output;
  EXPECT_NE(bench.output.find("started from " + kept.string()), std::string::npos) << bench.output;
  EXPECT_EQ(bench.output.find("loaded tpcb-like"), std::string::npos)
      << "the template came back with the snapshot, not by a new load:\n"
      << bench.output;
  const testing::Finished unknown = pgslow(
      {"bench", "-w", "tpcb-like", "--scale", "1", "--duration", "1", "--from-snapshot", "other"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.output.find("has no snapshot 'other' (it has: loaded)"), std::string::npos)
      << unknown.output;

  // Removed, it is gone from the folder and the status; the cluster keeps running its data.
  const testing::Finished removed = pgslow({"server", "remove-snapshot", "loaded"});
  ASSERT_EQ(removed.exit_code, 0) << removed.output;
  EXPECT_NE(removed.output.find("removed the snapshot " + kept.string()), std::string::npos)
      << removed.output;
  EXPECT_NE(::lstat(kept.c_str(), &st), 0);
  EXPECT_EQ(pgslow({"server", "status"}).output.find("snapshots"), std::string::npos);
  EXPECT_TRUE(workdir.cluster(major).is_running());
  const testing::Finished again = pgslow({"server", "remove-snapshot", "loaded"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.output.find("has no snapshot 'loaded' (it has none)"), std::string::npos)
      << again.output;
}

TEST(Snapshot, OnExt4ItIsCopiedAndSaysSo) {
  snapshot_round_trip(fs::temp_directory_path(), "copied byte for byte");
}

TEST_P(OnCloningFs, SnapshotIsClonedAndSaysSo) {
  snapshot_round_trip(mount_->make_folder("snap"), "cloned copy-on-write (reflink)");
}

// The server's user plants a link in its data directory: root's copy refuses it, naming it,
// and leaves no partial snapshot behind.
TEST(Snapshot, ALinkInTheDataDirectoryIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "the root boundary is root's";
  const fs::path parent = fs::temp_directory_path();
  const int major = *server::default_cluster_major(parent, std::nullopt);
  testing::TemporaryWorkdir workdir({major}, parent);
  auto pgslow = [&](std::vector<std::string> args) {
    return testing::run_pgslow_in(workdir.path(), std::move(args), std::chrono::seconds(300));
  };
  ASSERT_EQ(pgslow({"server", "start"}).exit_code, 0);
  const fs::path link = workdir.path() / "cluster" / "data" / "base" / "evil";
  ProcessOptions as_postgres;
  as_postgres.run_as = "postgres";
  ASSERT_TRUE(run_process({"ln", "-s", "/etc/shadow", link.string()}, as_postgres).ok());
  const testing::Finished snap = pgslow({"server", "snapshot", "bad"});
  EXPECT_EQ(snap.exit_code, 1);
  EXPECT_NE(snap.output.find("refuses to copy " + link.string()), std::string::npos) << snap.output;
  const fs::path kept = workdir.path() / "snapshots" / "cluster";
  for (const auto& entry : fs::directory_iterator(kept))
    ADD_FAILURE() << "left behind: " << entry.path();
  EXPECT_EQ(pgslow({"server", "status"}).output.find("snapshots"), std::string::npos);

  // A pgslow change on the cluster (its claim, pgslow.owner): neither a snapshot nor a start
  // from one, whose data would drop what `pgslow restore` has to put back.
  fs::remove(link);
  ASSERT_EQ(pgslow({"server", "snapshot", "good"}).exit_code, 0);
  std::ofstream(workdir.path() / "cluster" / "data" / "pgslow.owner") << "elsewhere\n";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"server", "snapshot", "claimed"},
        std::vector<std::string>{"bench", "-w", "tpcb-like", "--duration", "1", "--from-snapshot",
                                 "good"}}) {
    const testing::Finished r = pgslow(args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("Run `pgslow restore`"), std::string::npos) << r.output;
  }
  fs::remove(workdir.path() / "cluster" / "data" / "pgslow.owner");
}

}  // namespace
}  // namespace pgslow
