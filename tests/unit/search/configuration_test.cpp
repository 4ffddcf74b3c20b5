// The candidate set: the difference of good and bad, validated against a server's settings
// (built here by hand: no server needed).

#include "search/configuration.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace pgslow::search {
namespace {

namespace fs = std::filesystem;

knobs::ServerSetting row(std::string name, std::string setting, std::string unit,
                         std::string vartype, std::string context, std::string min_val = "",
                         std::string max_val = "", std::vector<std::string> enumvals = {}) {
  knobs::ServerSetting s;
  s.name = std::move(name);
  s.setting = std::move(setting);
  s.unit = std::move(unit);
  s.vartype = std::move(vartype);
  s.context = std::move(context);
  s.min_val = std::move(min_val);
  s.max_val = std::move(max_val);
  s.enumvals = std::move(enumvals);
  s.boot_val = s.reset_val = s.setting;
  s.source = "default";
  return s;
}

knobs::ServerSettings server15() {
  knobs::ServerSettings s;
  s.version_num = 150010;
  s.major = 15;
  for (auto r :
       {row("shared_buffers", "16384", "8kB", "integer", "postmaster", "16", "1073741823"),
        row("work_mem", "4096", "kB", "integer", "user", "64", "2147483647"),
        row("effective_cache_size", "524288", "8kB", "integer", "user", "1", "2147483647"),
        row("random_page_cost", "4", "", "real", "user", "0", "1.79769e+308"),
        row("cpu_index_tuple_cost", "0.005", "", "real", "user", "0", "1.79769e+308"),
        row("enable_seqscan", "on", "", "bool", "user"), row("jit", "on", "", "bool", "user")})
    s.by_name[r.name] = r;
  return s;
}

knobs::Catalog catalog() {
  knobs::Catalog c;
  knobs::Knob k;
  k.name = "summarize_wal";
  k.category = "wal";
  k.since = 17;
  c.add_knob(k);
  return c;
}

Configuration config(std::vector<std::pair<std::string, std::string>> kv) {
  Configuration c;
  int line = 1;
  for (auto& [k, v] : kv) c.settings.push_back({k, v, {"test.conf", line++, 1}});
  return c;
}

const Candidate* find(const Difference& d, const std::string& name) {
  for (const auto& c : d.candidates)
    if (c.change.name == name) return &c;
  return nullptr;
}

TEST(Difference, NormalisedValuesAreIdentical) {
  auto d = difference(
      config({{"shared_buffers", "1GB"}, {"enable_seqscan", "on"}, {"work_mem", "4MB"}}),
      config({{"shared_buffers", "1024MB"}, {"enable_seqscan", "TRUE"}, {"work_mem", "64MB"}}),
      catalog(), server15());
  EXPECT_EQ(d.identical, (std::vector<std::string>{"shared_buffers", "enable_seqscan"}));
  ASSERT_EQ(d.candidates.size(), 1u);
  EXPECT_EQ(d.candidates[0].change.name, "work_mem");
  EXPECT_EQ(d.candidates[0].good_value, "4MB");
  EXPECT_EQ(d.candidates[0].change.value, "64MB");
  EXPECT_FALSE(d.candidates[0].needs_restart);
  EXPECT_EQ(d.good.size(), 3u);
}

TEST(Difference, OnlyInBadRestartAndServerValue) {
  auto d = difference(config({}),
                      config({{"shared_buffers", "8MB"},
                              {"random_page_cost", "1e300"},
                              {"jit", "on"}}),  // jit is already on: no difference
                      catalog(), server15());
  ASSERT_EQ(d.candidates.size(), 2u);
  const Candidate* sb = find(d, "shared_buffers");
  ASSERT_NE(sb, nullptr);
  EXPECT_TRUE(sb->needs_restart);
  EXPECT_FALSE(sb->good_value.has_value());
  EXPECT_EQ(sb->server_value, "128MB");
  EXPECT_EQ(sb->describe(), "shared_buffers: (server value 128MB) -> 8MB [restart]");
  EXPECT_EQ(d.identical, std::vector<std::string>{"jit"});
}

TEST(Difference, OnlyInGoodGoesBackToTheServerValue) {
  auto d = difference(config({{"effective_cache_size", "8GB"}, {"work_mem", "4MB"}}), config({}),
                      catalog(), server15());
  // work_mem 4MB is what the server has anyway; effective_cache_size differs.
  EXPECT_EQ(d.identical, std::vector<std::string>{"work_mem"});
  ASSERT_EQ(d.candidates.size(), 1u);
  const Candidate& c = d.candidates[0];
  EXPECT_TRUE(c.back_to_server_value);
  EXPECT_EQ(c.change.name, "effective_cache_size");
  EXPECT_EQ(c.change.value, "4GB");
  EXPECT_EQ(c.describe(), "effective_cache_size: 8GB -> (server value 4GB)");
}

TEST(Difference, SkippedAndInvalidChangesAreReportedNotDropped) {
  auto d = difference(config({}),
                      config({{"summarize_wal", "on"},
                              {"work_mem", "lots"},
                              {"no_such_knob", "1"},
                              {"random_page_cost", "1e300"}}),
                      catalog(), server15());
  ASSERT_EQ(d.candidates.size(), 1u);
  ASSERT_EQ(d.excluded.size(), 3u);
  EXPECT_EQ(d.excluded[0].setting.name, "summarize_wal");
  EXPECT_FALSE(d.excluded[0].invalid);
  EXPECT_NE(d.excluded[0].reason.find("17"), std::string::npos) << d.excluded[0].reason;
  EXPECT_TRUE(d.excluded[1].invalid);
  EXPECT_EQ(d.excluded[1].setting.where.line, 2);
  EXPECT_TRUE(d.excluded[2].invalid);
  EXPECT_NE(d.excluded[2].reason.find("unknown parameter"), std::string::npos);
}

TEST(Difference, InvalidGoodIsAnInputError) {
  EXPECT_THROW(difference(config({{"work_mem", "lots"}}), config({}), catalog(), server15()),
               InputError);
}

TEST(LoadConfiguration, DefaultConfFileYamlAndTypos) {
  knobs::Catalog c = catalog();
  knobs::Preset p;
  p.name = "tiny-cache";
  p.settings = {{"shared_buffers", "8MB", {}}};
  c.add_preset(p);
  EXPECT_TRUE(load_configuration("default", c).settings.empty());
  EXPECT_EQ(load_configuration("tiny-cache", c).settings.size(), 1u);

  fs::path dir = fs::temp_directory_path() / "pgslow-bisect-config-test";
  fs::create_directories(dir);
  std::ofstream(dir / "old.conf") << "Work_Mem = 4MB\nwork_mem = 8MB\n";
  auto conf = load_configuration((dir / "old.conf").string(), c);
  ASSERT_EQ(conf.settings.size(), 1u);
  EXPECT_EQ(conf.settings[0].name, "work_mem");
  EXPECT_EQ(conf.settings[0].value, "8MB");

  std::ofstream(dir / "bad.yaml") << "work_mem: 64MB\nrandom_page_cost: 1e300\n";
  auto yaml = load_configuration((dir / "bad.yaml").string(), c);
  EXPECT_EQ(yaml.settings.size(), 2u);

  // A bare name is a preset or nothing: a file of that name in the current folder (a shared
  // /tmp, as root) is never read; the same file as a path is.
  const fs::path here = fs::current_path();
  fs::current_path(dir);
  std::ofstream(dir / "planted") << "work_mem: 64MB\n";
  EXPECT_THROW(load_configuration("planted", c), InputError);
  EXPECT_EQ(load_configuration("./planted", c).settings.size(), 1u);
  std::ofstream(dir / "postgresql.conf") << "work_mem = 8MB\n";
  EXPECT_EQ(load_configuration("postgresql.conf", c).settings.size(), 1u);
  fs::current_path(here);

  // A path that is not there is named as a missing file, never as a preset.
  try {
    load_configuration("missing.conf", c);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "no such file: missing.conf");
  }

  try {
    load_configuration("tiny-cahce", c);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'tiny-cache'"), std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pgslow::search
