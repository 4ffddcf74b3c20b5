// postgresql.conf parsing: values, quoting, units, includes, and errors with file:line.

#include "search/conf_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace pgslow::search {
namespace {

namespace fs = std::filesystem;

class ConfFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("pgslow-conf-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p;
  }
  static std::vector<knobs::Setting> parse(const std::string& text,
                                           std::vector<ConfigError>& problems) {
    return parse_conf(text, "test.conf", ".", problems);
  }
  fs::path dir_;
};

std::string value_of(const std::vector<knobs::Setting>& s, const std::string& name) {
  for (const auto& x : s)
    if (x.name == name) return x.value;
  return "<absent>";
}

TEST_F(ConfFile, ValuesCommentsUnitsAndOptionalEquals) {
  std::vector<ConfigError> problems;
  auto s = parse(
      "# a comment\n"
      "\n"
      "shared_buffers = 128MB          # units\n"
      "Work_Mem 4MB\n"  // no '=', name case folded
      "random_page_cost=1e300\n"
      "  checkpoint_timeout = 30s\n"
      "log_min_duration_statement = -1\n"
      "search_path = '\"$user\", public'\n"
      "wal_level = replica\r\n"  // CRLF line
      "my.custom_setting = on\n",
      problems);
  EXPECT_TRUE(problems.empty()) << problems[0].str();
  EXPECT_EQ(value_of(s, "shared_buffers"), "128MB");
  EXPECT_EQ(value_of(s, "work_mem"), "4MB");
  EXPECT_EQ(value_of(s, "random_page_cost"), "1e300");
  EXPECT_EQ(value_of(s, "checkpoint_timeout"), "30s");
  EXPECT_EQ(value_of(s, "log_min_duration_statement"), "-1");
  EXPECT_EQ(value_of(s, "search_path"), "\"$user\", public");
  EXPECT_EQ(value_of(s, "wal_level"), "replica");
  EXPECT_EQ(value_of(s, "my.custom_setting"), "on");
  EXPECT_EQ(s[0].where.line, 3);
  EXPECT_EQ(s[0].where.file, "test.conf");
}

TEST_F(ConfFile, QuotedValuesWithDoubledQuotesAndBackslashEscapes) {
  std::vector<ConfigError> problems;
  auto s = parse(
      "log_line_prefix = '%m [%p] ''quoted'' # not a comment'\n"
      "archive_command = 'cp %p /arch\\\\%f'\n"
      "application_name = 'tab\\there\\101'\n"
      "cluster_name = ''\n",
      problems);
  ASSERT_TRUE(problems.empty()) << problems[0].str();
  EXPECT_EQ(value_of(s, "log_line_prefix"), "%m [%p] 'quoted' # not a comment");
  EXPECT_EQ(value_of(s, "archive_command"), "cp %p /arch\\%f");
  EXPECT_EQ(value_of(s, "application_name"),
            "tab\there"
            "A");
  EXPECT_EQ(value_of(s, "cluster_name"), "");
}

TEST_F(ConfFile, LaterSettingsWin) {
  std::vector<ConfigError> problems;
  auto s = parse("work_mem = 4MB\nshared_buffers = 1GB\nwork_mem = 64MB\n", problems);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].name, "shared_buffers");
  EXPECT_EQ(s[1].name, "work_mem");
  EXPECT_EQ(s[1].value, "64MB");
  EXPECT_EQ(s[1].where.line, 3);
}

TEST_F(ConfFile, SyntaxErrorsNameTheLineAndContinue) {
  std::vector<ConfigError> problems;
  auto s = parse(
      "work_mem = 4 MB\n"          // 1: two tokens
      "= 5\n"                      // 2: no name
      "log_line_prefix = 'open\n"  // 3: unterminated
      "shared_buffers =\n"         // 4: no value
      "fsync = off;\n"             // 5: stray ';'
      "effective_cache_size = 4GB\n",
      problems);
  ASSERT_EQ(problems.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(problems[static_cast<std::size_t>(i)].where.line, i + 1)
        << problems[static_cast<std::size_t>(i)].str();
    EXPECT_EQ(problems[static_cast<std::size_t>(i)].where.file, "test.conf");
  }
  EXPECT_NE(problems[0].message.find("unexpected text after the value of work_mem"),
            std::string::npos);
  EXPECT_NE(problems[2].message.find("unterminated"), std::string::npos);
  EXPECT_NE(problems[3].message.find("missing value for shared_buffers"), std::string::npos);
  EXPECT_EQ(problems[0].str().rfind("test.conf:1:", 0), 0u) << problems[0].str();
  // The good line after the bad ones is still read.
  EXPECT_EQ(value_of(s, "effective_cache_size"), "4GB");
}

TEST_F(ConfFile, IncludesResolveRelativeToTheIncludingFile) {
  write("main.conf",
        "work_mem = 1MB\n"
        "include 'sub/a.conf'\n"
        "include_if_exists = 'missing.conf'\n"
        "include_dir 'conf.d'\n"
        "shared_buffers = 256MB\n");
  write("sub/a.conf", "work_mem = 2MB\ninclude 'b.conf'\n");  // b.conf is beside a.conf
  write("sub/b.conf", "random_page_cost = 1.1\n");
  write("conf.d/20-late.conf", "work_mem = 8MB\n");
  write("conf.d/10-early.conf", "work_mem = 4MB\nshared_buffers = 1GB\n");
  write("conf.d/.hidden.conf", "work_mem = 99MB\n");
  write("conf.d/notes.txt", "work_mem = 98MB\n");
  auto s = load_conf_file(dir_ / "main.conf");
  EXPECT_EQ(value_of(s, "work_mem"), "8MB");  // 20-late.conf is read after 10-early.conf
  EXPECT_EQ(value_of(s, "random_page_cost"), "1.1");
  EXPECT_EQ(value_of(s, "shared_buffers"), "256MB");  // after the include_dir
  for (const auto& x : s)
    if (x.name == "work_mem") {
      EXPECT_NE(x.where.file.find("20-late.conf"), std::string::npos);
    }
}

TEST_F(ConfFile, MissingIncludeIsAnErrorAtTheIncludingLine) {
  write("main.conf", "work_mem = 1MB\n\ninclude 'nope.conf'\n");
  try {
    load_conf_file(dir_ / "main.conf");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.problems().size(), 1u);
    EXPECT_EQ(e.problems()[0].where.line, 3);
    EXPECT_NE(e.problems()[0].where.file.find("main.conf"), std::string::npos);
    EXPECT_NE(e.problems()[0].message.find("nope.conf does not exist"), std::string::npos);
  }
}

TEST_F(ConfFile, IncludeCycleIsReported) {
  write("a.conf", "include 'b.conf'\n");
  write("b.conf", "work_mem = 1MB\ninclude 'a.conf'\n");
  try {
    load_conf_file(dir_ / "a.conf");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.problems().size(), 1u);
    EXPECT_NE(e.problems()[0].message.find("include cycle"), std::string::npos);
    EXPECT_EQ(e.problems()[0].where.line, 2);
  }
}

TEST_F(ConfFile, MissingFileAndBinaryFileAreRefused) {
  EXPECT_THROW(load_conf_file(dir_ / "absent.conf"), InputError);
  fs::path bin = dir_ / "bin.conf";
  std::ofstream(bin, std::ios::binary) << std::string("work_mem = 1MB\n\0\x01\x02", 18);
  try {
    load_conf_file(bin);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("binary"), std::string::npos);
  }
}

TEST_F(ConfFile, TellsConfFromYaml) {
  EXPECT_TRUE(looks_like_conf_file(write("x.conf", "a: b\n")));
  EXPECT_FALSE(looks_like_conf_file(write("x.yaml", "a = b\n")));
  EXPECT_TRUE(looks_like_conf_file(write("plain", "# c\nwork_mem = '1MB' # x: y\n")));
  EXPECT_FALSE(looks_like_conf_file(write("plain2", "settings:\n  work_mem: 1MB\n")));
}

}  // namespace
}  // namespace pgslow::search
