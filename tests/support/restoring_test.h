#pragma once
// The base of an integration suite whose every test must leave the shared cluster as it found
// it: after each test, no journal is left in the shared workdir and postgresql.auto.conf is
// byte for byte what it was before the suite. It also gives the suite a private folder for the
// files its tests write (scenarios, settings, workdirs), removed after the suite.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "apply/journal.h"
#include "common/paths.h"
#include "tests/support/cluster_fixture.h"

namespace pgslow::testing {

class RestoringTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    original_auto_conf_ = read_file(cluster_auto_conf());
    dir_ = std::filesystem::temp_directory_path() /
           ("pgslow-test-files-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  void TearDown() override {
    EXPECT_FALSE(std::filesystem::exists(apply::journal_path(cluster_workdir())))
        << "a journal was left behind";
    EXPECT_EQ(read_file(cluster_auto_conf()), original_auto_conf_)
        << "postgresql.auto.conf differs";
  }

  // Writes `text` to the suite's folder as `name` and returns its path.
  static std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  static std::string file(const std::string& name) { return (dir_ / name).string(); }

  static inline std::string original_auto_conf_;
  static inline std::filesystem::path dir_;
};

}  // namespace pgslow::testing
