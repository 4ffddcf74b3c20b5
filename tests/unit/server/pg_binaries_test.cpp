// Finding the server programs, with fake installations in a temporary folder.

#include "server/pg_binaries.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "common/errors.h"
#include "server/managed_cluster.h"
#include "server/target.h"

namespace pgslow::server {
namespace {

namespace fs = std::filesystem;

class PgBinaries : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "pgslow-bin-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    // `postgres --version` runs as the server's user when the tests run as root: it must reach
    // the stand-ins.
    fs::permissions(root_, fs::perms(0755));
  }
  void TearDown() override { fs::remove_all(root_); }

  // A folder with executable stand-ins for the given programs.
  fs::path fake_bin(const fs::path& dir,
                    std::vector<std::string> programs = {"initdb", "pg_ctl", "postgres"}) {
    fs::create_directories(dir);
    for (const auto& p : programs) {
      std::ofstream(dir / p) << "#!/bin/sh\necho 'postgres (PostgreSQL) 15.8'\n";
      fs::permissions(dir / p, fs::perms(0755));
    }
    return dir;
  }

  PgBinSearch search_in_root() {
    PgBinSearch s;
    s.pg_config = "";  // the real one would find the machine's installation
    s.versions_root = root_ / "usr/lib/postgresql";
    s.path_env = "";
    return s;
  }

  fs::path root_;
};

TEST_F(PgBinaries, ExplicitDirectoryWinsAndMustBeComplete) {
  fake_bin(root_ / "usr/lib/postgresql/16/bin");
  auto s = search_in_root();
  s.explicit_dir = fake_bin(root_ / "custom");
  EXPECT_EQ(find_pg_bin(s), root_ / "custom");

  s.explicit_dir = fake_bin(root_ / "partial", {"initdb", "pg_ctl"});
  try {
    find_pg_bin(s);
    FAIL() << "a folder without postgres is not a server installation";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("--pg-bin"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("partial"), std::string::npos) << e.what();
  }
}

TEST_F(PgBinaries, NewestVersionedInstallationByNumberNotByName) {
  fake_bin(root_ / "usr/lib/postgresql/9.6/bin");
  fake_bin(root_ / "usr/lib/postgresql/15/bin");
  fake_bin(root_ / "usr/lib/postgresql/16/bin", {"initdb"});  // incomplete: skipped
  fake_bin(root_ / "usr/lib/postgresql/13/bin");
  EXPECT_EQ(find_pg_bin(search_in_root()), root_ / "usr/lib/postgresql/15/bin");
}

TEST_F(PgBinaries, PgConfigComesBeforeVersionedFolders) {
  fake_bin(root_ / "usr/lib/postgresql/17/bin");
  fs::path bin = fake_bin(root_ / "opt/pg/bin");
  fs::path pg_config = root_ / "pg_config";
  std::ofstream(pg_config) << "#!/bin/sh\necho '" << bin.string() << "'\n";
  fs::permissions(pg_config, fs::perms::owner_all);
  auto s = search_in_root();
  s.pg_config = pg_config.string();
  EXPECT_EQ(find_pg_bin(s), bin);
}

TEST_F(PgBinaries, PathIsTheLastResortAndSymlinksLeadToTheRealFolder) {
  fs::path real = fake_bin(root_ / "real/bin");
  fs::create_directories(root_ / "links");
  fs::create_symlink(real / "initdb", root_ / "links/initdb");
  auto s = search_in_root();
  s.path_env = (root_ / "empty").string() + ":" + (root_ / "links").string();
  EXPECT_EQ(find_pg_bin(s), real);
}

TEST_F(PgBinaries, NothingFoundSaysWhatWasTriedAndHowToFixIt) {
  auto s = search_in_root();
  s.pg_config = (root_ / "no-pg_config").string();
  try {
    find_pg_bin(s);
    FAIL() << "nothing is installed in the fake root";
  } catch (const RuntimeError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("no-pg_config"), std::string::npos) << m;
    EXPECT_NE(m.find("usr/lib/postgresql/*/bin"), std::string::npos) << m;
    EXPECT_NE(m.find("PATH"), std::string::npos) << m;
    EXPECT_NE(m.find("apt-get install postgresql-15"), std::string::npos) << m;
    EXPECT_NE(m.find("--pg-bin"), std::string::npos) << m;
  }
}

TEST_F(PgBinaries, VersionFromThePostgresProgram) {
  EXPECT_EQ(server_program_version(fake_bin(root_ / "v/bin")), "15.8");
  EXPECT_EQ(server_program_version(root_ / "missing"), "");
}

TEST(ManagedClusterLayout, PathsConninfoAndDefaults) {
  ManagedOptions o;
  o.workdir = "/srv/pgslow work";
  ManagedCluster c(o);
  EXPECT_EQ(*c.data_dir(), fs::path("/srv/pgslow work/cluster/data"));
  EXPECT_EQ(c.socket_dir(), fs::path("/srv/pgslow work/cluster/socket"));
  EXPECT_EQ(*c.log_file(), fs::path("/srv/pgslow work/cluster/server.log"));
  EXPECT_TRUE(c.allows_changes());
  EXPECT_EQ(c.kind(), TargetKind::kManaged);
  EXPECT_FALSE(c.is_initialized());
  EXPECT_FALSE(c.is_running());
  // The socket folder has a space: the value is quoted for libpq. No password is sent there
  // (issue #52): password='' and a passfile that cannot exist.
  EXPECT_TRUE(
      c.conninfo().starts_with("host='/srv/pgslow work/cluster/socket' port=0 "
                               "user=postgres dbname=postgres password='' "
                               "passfile=/dev/null/pgslow-no-passfile"))
      << c.conninfo();
}

// A deep workdir's socket goes where nobody else can take its name first as root: /run/pgslow
// (root's); /tmp for any other user.
TEST(ManagedClusterLayout, ADeepWorkdirMovesTheSocketWhereNoOneElseMakesNames) {
  ManagedOptions o;
  o.workdir = "/" + std::string(120, 'x');
  ManagedCluster c(o);
  const fs::path parent = c.socket_dir().parent_path();
  EXPECT_EQ(parent, fs::path(::geteuid() == 0 ? "/run/pgslow" : "/tmp"));
  EXPECT_EQ(c.socket_dir().filename().string().find("pgslow-"), 0u) << c.socket_dir();
  EXPECT_LE((c.socket_dir() / ".s.PGSQL.65535").string().size(), 107u);
}

// The cluster folder and the data directory belong to the server's user, who could put a link
// or a file as large as the disk where PG_VERSION or postmaster.pid should be: root follows no
// such link and reads no such file whole.
TEST_F(PgBinaries, TheServersFilesAreReadWithoutFollowingItsLinksNorWhole) {
  const fs::path work = root_ / "work";
  const fs::path data = work / "cluster" / "data";
  fs::create_directories(data);
  std::ofstream(data / "PG_VERSION") << "16\n";
  EXPECT_EQ(default_cluster_major(work, std::nullopt), 16);

  auto refusal = [&] {
    try {
      default_cluster_major(work, std::nullopt);
    } catch (const RuntimeError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::ofstream(root_ / "elsewhere") << "17\n";
  fs::remove(data / "PG_VERSION");
  fs::create_symlink(root_ / "elsewhere", data / "PG_VERSION");
  EXPECT_NE(refusal().find("symbolic link"), std::string::npos) << refusal();
  fs::remove(data / "PG_VERSION");
  {
    std::ofstream(data / "PG_VERSION") << "";
    ASSERT_EQ(::truncate((data / "PG_VERSION").c_str(), off_t{1} << 40), 0);  // sparse
  }
  EXPECT_NE(refusal().find("longer than"), std::string::npos) << refusal();
  fs::remove(data / "PG_VERSION");
  fs::rename(data, root_ / "data-elsewhere");
  fs::create_symlink(root_ / "data-elsewhere", data);
  EXPECT_NE(refusal().find("symbolic link"), std::string::npos) << refusal();
  fs::remove(data);
  fs::rename(root_ / "data-elsewhere", data);

  // A postmaster.pid as large as the disk names no running server, and is not read whole.
  {
    std::ofstream(data / "postmaster.pid") << "";
    ASSERT_EQ(::truncate((data / "postmaster.pid").c_str(), off_t{1} << 40), 0);
  }
  ManagedOptions o;
  o.workdir = work;
  EXPECT_FALSE(ManagedCluster(o).is_running());
}

TEST(Ports, PickedPortIsFreeAndNot5432) {
  int port = pick_free_port();
  EXPECT_GT(port, 0);
  EXPECT_NE(port, 5432);
  EXPECT_FALSE(port_in_use(port));
}

TEST(Targets, KindNames) {
  EXPECT_EQ(to_string(TargetKind::kManaged), "managed");
  EXPECT_EQ(to_string(TargetKind::kPgctl), "pgctl");
  EXPECT_EQ(to_string(TargetKind::kCommand), "command");
}

TEST(Targets, CommandTargetChecksItsSpecWithoutAServer) {
  TargetSpec spec;
  spec.kind = TargetKind::kCommand;
  EXPECT_THROW(open_target(spec), InputError);  // no conninfo
  spec.conninfo = "host=/nonexistent port=1";
  auto target = open_target(spec);
  EXPECT_FALSE(target->allows_changes());
  EXPECT_FALSE(target->data_dir().has_value());
  // No restart command: a restart-only setting cannot be applied, and it says so.
  try {
    target->restart(std::chrono::seconds(1));
    FAIL() << "no restart command";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("restart_command"), std::string::npos) << e.what();
  }
}

// A major version names one cluster of a workdir: the default cluster is its own version's, so
// --pg-version of that version opens cluster/, never a second cluster-N of the same version.
TEST(ClusterFolder, OneClusterPerMajorVersion) {
  EXPECT_EQ(cluster_folder(std::nullopt, 15), "cluster");
  EXPECT_EQ(cluster_folder(std::nullopt, std::nullopt), "cluster");
  EXPECT_EQ(cluster_folder(15, 15), "cluster");
  EXPECT_EQ(cluster_folder(18, 15), "cluster-18");
  EXPECT_EQ(cluster_folder(15, 18), "cluster-15");
  EXPECT_EQ(cluster_folder(16, std::nullopt), "cluster-16");  // the default's version unknown
}

}  // namespace
}  // namespace pgslow::server
