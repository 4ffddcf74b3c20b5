// --good-version/--bad-version and --bad-from on canned text: `postgres --describe-config`
// parsed, two versions' defaults compared in their base units, what cannot be compared or
// carried named with the reason.

#include "search/sources.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace pgslow::search {
namespace {

// As PostgreSQL prints them (tabs; numbers' and booleans' values are not their defaults there).
const char* kSixteen =
    "effective_io_concurrency\tuser\tResource Usage / Asynchronous Behavior\tINTEGER\t0\t0\t1000"
    "\tNumber of simultaneous requests.\t\n"
    "jit\tuser\tQuery Tuning / Other Planner Options\tBOOLEAN\tFALSE\t\t\tAllow JIT.\t\n"
    "wal_sync_method\tsighup\tWrite-Ahead Log / Settings\tENUM\tfdatasync\t\t\tSync method.\t\n"
    "vacuum_cost_page_miss\tuser\tResource Usage\tINTEGER\t0\t0\t10000\tMiss cost.\t\n"
    "old_setting\tuser\tDeveloper Options\tBOOLEAN\tFALSE\t\t\tGone in 18.\t\n"
    "block_size\tinternal\tPreset Options\tINTEGER\t0\t8192\t8192\tBlock size.\t\n"
    "data_directory\tpostmaster\tFile Locations\tSTRING\t\t\t\tData dir.\t\n"
    "malformed line without tabs\n";
const char* kEighteen =
    "effective_io_concurrency\tuser\tResource Usage / I/O\tINTEGER\t0\t0\t1000\tRequests.\t\n"
    "jit\tuser\tQuery Tuning / Other Planner Options\tBOOLEAN\tFALSE\t\t\tAllow JIT.\t\n"
    "wal_sync_method\tsighup\tWrite-Ahead Log / Settings\tENUM\tFDATASYNC\t\t\tSync method.\t\n"
    "vacuum_cost_page_miss\tuser\tResource Usage\tINTEGER\t0\t0\t10000\tMiss cost.\t\n"
    "io_method\tpostmaster\tResource Usage / I/O\tENUM\tworker\t\t\tI/O method.\t\n"
    "block_size\tinternal\tPreset Options\tINTEGER\t0\t8192\t8192\tBlock size.\t\n"
    "data_directory\tpostmaster\tFile Locations\tSTRING\tsomewhere\t\t\tData dir.\t\n";

// What `postgres -C` prints for the numbers and booleans of each.
void fill(std::map<std::string, DescribedSetting>& d,
          const std::map<std::string, std::string>& values) {
  for (auto& [name, s] : d) {
    auto it = values.find(name);
    if (it != values.end()) s.value = it->second;
  }
}

knobs::ServerSettings target() {
  knobs::ServerSettings t;
  t.major = 17;
  for (const char* name : {"effective_io_concurrency", "jit", "wal_sync_method",
                           "vacuum_cost_page_miss", "block_size", "data_directory"}) {
    knobs::ServerSetting x;
    x.name = name;
    x.context = "user";
    t.by_name[name] = x;
  }
  return t;
}

const Excluded* excluded(const std::vector<Excluded>& list, const std::string& name) {
  auto it = std::find_if(list.begin(), list.end(),
                         [&](const Excluded& e) { return e.setting.name == name; });
  return it == list.end() ? nullptr : &*it;
}

TEST(VersionDefaults, DescribeConfigParsesEachSettingsTypeAndContext) {
  const auto d = parse_describe_config(kSixteen);
  ASSERT_EQ(d.size(), 7u);  // the malformed line is skipped
  EXPECT_EQ(d.at("effective_io_concurrency").vartype, "integer");
  EXPECT_EQ(d.at("jit").vartype, "bool");
  EXPECT_EQ(d.at("wal_sync_method").vartype, "enum");
  EXPECT_EQ(d.at("wal_sync_method").value, "fdatasync");  // an enum's boot value is printed
  EXPECT_EQ(d.at("block_size").context, "internal");
  EXPECT_EQ(d.at("data_directory").vartype, "string");
}

TEST(VersionDefaults, DifferingDefaultsAreCandidatesAndTheRestIsNamedWithItsReason) {
  auto sixteen = parse_describe_config(kSixteen);
  auto eighteen = parse_describe_config(kEighteen);
  fill(sixteen, {{"effective_io_concurrency", "1"},
                 {"jit", "on"},
                 {"vacuum_cost_page_miss", "2"},
                 {"old_setting", "off"},
                 {"block_size", "8192"}});
  fill(eighteen, {{"effective_io_concurrency", "16"},
                  {"jit", "on"},
                  {"vacuum_cost_page_miss", "2.0"},
                  {"block_size", "16384"}});
  const DefaultsComparison c = compare_defaults(16, sixteen, 18, eighteen, target());

  // Only effective_io_concurrency differs and applies: enums compare by meaning (FDATASYNC),
  // numbers numerically (2 = 2.0).
  ASSERT_EQ(c.differing.size(), 1u);
  EXPECT_EQ(c.differing[0].name, "effective_io_concurrency");
  EXPECT_EQ(c.differing[0].good_value, "1");
  EXPECT_EQ(c.differing[0].bad_value, "16");
  ASSERT_EQ(c.good.configuration.settings.size(), 1u);
  EXPECT_EQ(c.good.configuration.settings[0].value, "1");
  EXPECT_EQ(c.bad.configuration.settings[0].value, "16");
  EXPECT_EQ(c.bad.configuration.label, "PostgreSQL 18 defaults");

  const Excluded* gone = excluded(c.not_comparable, "old_setting");
  ASSERT_NE(gone, nullptr);
  EXPECT_NE(gone->reason.find("only in PostgreSQL 16"), std::string::npos) << gone->reason;
  const Excluded* added = excluded(c.not_comparable, "io_method");
  ASSERT_NE(added, nullptr);
  EXPECT_NE(added->reason.find("new in PostgreSQL 18"), std::string::npos) << added->reason;
  const Excluded* internal = excluded(c.not_comparable, "block_size");
  ASSERT_NE(internal, nullptr);
  EXPECT_NE(internal->reason.find("internal"), std::string::npos) << internal->reason;
  const Excluded* files = excluded(c.not_comparable, "data_directory");
  ASSERT_NE(files, nullptr);
  EXPECT_NE(files->reason.find("own files"), std::string::npos) << files->reason;
  EXPECT_EQ(excluded(c.not_comparable, "jit"), nullptr) << "the same default is not listed";
}

TEST(VersionDefaults, ASettingTheTargetLacksIsNotComparable) {
  auto sixteen = parse_describe_config(kSixteen);
  auto eighteen = parse_describe_config(kEighteen);
  fill(sixteen, {{"effective_io_concurrency", "1"}});
  fill(eighteen, {{"effective_io_concurrency", "16"}});
  knobs::ServerSettings t = target();
  t.by_name.erase("effective_io_concurrency");
  const DefaultsComparison c = compare_defaults(16, sixteen, 18, eighteen, t);
  EXPECT_TRUE(c.differing.empty());
  const Excluded* e = excluded(c.not_comparable, "effective_io_concurrency");
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->reason.find("server under test (PostgreSQL 17) does not have it"), std::string::npos)
      << e->reason;
}

TEST(ServerSource, NonDefaultSettingsLeaveOutWhatBelongsToThatServer) {
  knobs::ServerSettings s;
  s.major = 16;
  auto add = [&](const std::string& name, const std::string& value, const std::string& source,
                 const std::string& unit = "", const std::string& vartype = "string") {
    knobs::ServerSetting x;
    x.name = name;
    x.setting = value;
    x.unit = unit;
    x.vartype = vartype;
    x.context = "user";
    x.source = source;
    s.by_name[name] = x;
  };
  add("shared_buffers", "16384", "configuration file", "8kB", "integer");
  add("work_mem", "65536", "global", "kB", "integer");  // ALTER SYSTEM
  add("port", "5433", "configuration file", "", "integer");
  add("data_directory", "/var/lib/x", "override");
  add("application_name", "psql", "client");
  add("random_page_cost", "4", "default", "", "real");
  add("log_directory", "log", "configuration file");
  const Sourced from = non_default_settings(s, "server host=db");
  std::vector<std::string> names;
  for (const auto& x : from.configuration.settings) names.push_back(x.name + "=" + x.value);
  EXPECT_EQ(names, (std::vector<std::string>{"shared_buffers=128MB", "work_mem=64MB"}));
  ASSERT_EQ(from.left_out.size(), 2u);
  EXPECT_NE(excluded(from.left_out, "port"), nullptr);
  EXPECT_NE(excluded(from.left_out, "port")->reason.find("how clients reach"), std::string::npos);
  EXPECT_NE(excluded(from.left_out, "log_directory")->reason.find("own files"), std::string::npos);
}

}  // namespace
}  // namespace pgslow::search
