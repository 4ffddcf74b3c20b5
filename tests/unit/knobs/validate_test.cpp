// Validation against a hand-made PostgreSQL 15 pg_settings table (no server).

#include "knobs/validate.h"

#include <gtest/gtest.h>

#include "tests/fuzz/pg15_settings.h"

namespace pgslow::knobs {
namespace {

using pgslow::testing::pg15_settings;
using pgslow::testing::small_catalog;

Setting at(std::string name, std::string value, int line = 1) {
  return Setting{std::move(name), std::move(value), SourceLocation{"s.yaml", line, 1}};
}

SettingVerdict one(Setting s) {
  auto v = validate({std::move(s)}, small_catalog(), pg15_settings());
  EXPECT_EQ(v.size(), 1u);
  return v.front();
}

std::string first_error(const SettingVerdict& v) {
  for (const auto& p : v.problems) {
    if (p.severity == ConfigError::Severity::kError) return p.str();
  }
  return {};
}

TEST(Validate, ReloadRestartAndTheExpectedSetting) {
  auto sb = one(at("shared_buffers", "8MB"));
  EXPECT_EQ(sb.verdict, Verdict::kRestart);
  EXPECT_EQ(sb.expected_setting, "1024");
  auto wm = one(at("work_mem", "64kB"));
  EXPECT_EQ(wm.verdict, Verdict::kReload);
  EXPECT_EQ(wm.expected_setting, "64");
  auto lc = one(at("log_connections", "on"));
  EXPECT_EQ(lc.verdict, Verdict::kReload);
  EXPECT_TRUE(lc.needs_reconnect);
  auto rpc = one(at("random_page_cost", "1e300"));
  EXPECT_EQ(rpc.verdict, Verdict::kReload);
  EXPECT_EQ(rpc.expected_setting, "1e+300");
  EXPECT_EQ(one(at("wal_level", "LOGICAL")).expected_setting, "logical");
  EXPECT_EQ(one(at("checkpoint_timeout", "30")).expected_setting, "30");
  EXPECT_EQ(one(at("autovacuum_naptime", "1min")).expected_setting, "60");
}

TEST(Validate, AbsentOnThisVersionIsSkippedWithTheVersion) {
  for (const char* name :
       {"summarize_wal", "io_method", "io_workers", "autovacuum_vacuum_max_threshold"}) {
    auto v = one(at(name, "1"));
    EXPECT_EQ(v.verdict, Verdict::kSkipped) << name;
    EXPECT_TRUE(v.problems.empty()) << name;
  }
  EXPECT_EQ(one(at("summarize_wal", "on")).reason, "needs PostgreSQL 17");
  EXPECT_EQ(one(at("io_method", "worker")).reason, "needs PostgreSQL 18");
  EXPECT_EQ(one(at("checkpoint_segments", "3")).reason, "removed in PostgreSQL 10");
}

TEST(Validate, BelowTheMinimumNamesTheVersionThatAcceptsIt) {
  auto v = one(at("maintenance_work_mem", "128kB", 7));
  EXPECT_EQ(v.verdict, Verdict::kError);
  EXPECT_EQ(first_error(v),
            "s.yaml:7:1: error: maintenance_work_mem = 128kB is below this server's minimum 1MB "
            "(PostgreSQL 15; 17 and later accept 64kB) (use at least 1MB)");
  auto high = one(at("wal_writer_delay", "20s"));
  EXPECT_EQ(high.verdict, Verdict::kError);
  EXPECT_NE(first_error(high).find("above this server's maximum 10s"), std::string::npos);
  EXPECT_EQ(one(at("shared_buffers", "64kB")).verdict, Verdict::kError);  // below 16 pages
  EXPECT_EQ(one(at("random_page_cost", "-1")).verdict, Verdict::kError);
  EXPECT_EQ(one(at("random_page_cost", "1.7976931348623157e308")).verdict, Verdict::kReload);
}

TEST(Validate, UnknownNamesSuggestTheClosestKnob) {
  auto v = one(at("sahred_buffers", "8MB"));
  EXPECT_EQ(v.verdict, Verdict::kError);
  EXPECT_EQ(first_error(v),
            "s.yaml:1:1: error: unknown parameter 'sahred_buffers' (did you mean "
            "'shared_buffers'?)");
}

TEST(Validate, WrongTypesUnitsAndEnums) {
  EXPECT_NE(first_error(one(at("work_mem", "lots"))).find("work_mem = 'lots' is not a number"),
            std::string::npos);
  EXPECT_NE(first_error(one(at("work_mem", "64 kb"))).find("has an unknown unit"),
            std::string::npos);
  EXPECT_NE(first_error(one(at("enable_seqscan", "maybe"))).find("is not a boolean"),
            std::string::npos);
  EXPECT_NE(
      first_error(one(at("wal_level", "maximal"))).find("(accepted: minimal, replica, logical)"),
      std::string::npos);
  EXPECT_NE(first_error(one(at("block_size", "4096"))).find("context internal"), std::string::npos);
  EXPECT_NE(first_error(one(at("log_destination", "stderr,jsonlog,xml"))).find("'xml'"),
            std::string::npos);
  EXPECT_EQ(one(at("log_destination", "stderr,jsonlog")).verdict, Verdict::kReload);
}

TEST(Validate, ValuesWithLineBreaksNeverPass) {
  auto v = one(at("log_line_prefix", "x\nshared_buffers = 1"));
  EXPECT_EQ(v.verdict, Verdict::kError);
  EXPECT_NE(first_error(v).find("line break"), std::string::npos);
  EXPECT_EQ(one(at("log_line_prefix", "it's \"%m\"")).verdict, Verdict::kReload);
}

TEST(Validate, CrossParameterRulesOverTheResultingConfiguration) {
  const auto server = pg15_settings();
  const auto catalog = small_catalog();
  // wal_level = minimal with the server's max_wal_senders = 10.
  auto v = validate({at("wal_level", "minimal")}, catalog, server);
  EXPECT_EQ(v[0].verdict, Verdict::kError);
  EXPECT_NE(first_error(v[0]).find("needs max_wal_senders = 0"), std::string::npos);
  // ... fixed in the same settings.
  v = validate({at("wal_level", "minimal"), at("max_wal_senders", "0")}, catalog, server);
  EXPECT_EQ(v[0].verdict, Verdict::kRestart);
  EXPECT_EQ(v[1].verdict, Verdict::kRestart);
  // max_wal_size below two 16MB segments.
  v = validate({at("max_wal_size", "16MB")}, catalog, server);
  EXPECT_NE(first_error(v[0]).find("at least twice wal_segment_size (16MB)"), std::string::npos);
  EXPECT_EQ(validate({at("max_wal_size", "32MB")}, catalog, server)[0].verdict, Verdict::kReload);
  // min_wal_size above max_wal_size: a warning.
  v = validate({at("min_wal_size", "2GB")}, catalog, server);
  EXPECT_EQ(v[0].verdict, Verdict::kReload);
  ASSERT_EQ(v[0].problems.size(), 1u);
  EXPECT_EQ(v[0].problems[0].severity, ConfigError::Severity::kWarning);
  // max_connections at or below the reserved slots.
  v = validate({at("max_connections", "3")}, catalog, server);
  EXPECT_NE(first_error(v[0]).find("must be less than max_connections"), std::string::npos);
  // csvlog without the collector: a warning on log_destination.
  v = validate({at("log_destination", "csvlog")}, catalog, server);
  EXPECT_EQ(v[0].verdict, Verdict::kReload);
  EXPECT_FALSE(v[0].problems.empty());
  v = validate({at("log_destination", "csvlog"), at("logging_collector", "on")}, catalog, server);
  EXPECT_TRUE(v[0].problems.empty());
}

TEST(Validate, PitfallsThatNameTheValueAreWarnings) {
  auto v = one(at("shared_buffers", "128kB"));
  EXPECT_EQ(v.verdict, Verdict::kRestart);
  ASSERT_EQ(v.problems.size(), 1u);
  EXPECT_EQ(v.problems[0].severity, ConfigError::Severity::kWarning);
  EXPECT_NE(v.problems[0].message.find("no unpinned buffers"), std::string::npos);
  EXPECT_TRUE(one(at("shared_buffers", "8MB")).problems.empty());
}

TEST(Validate, SettingTheSameKnobTwiceIsAnError) {
  auto v =
      validate({at("work_mem", "1MB"), at("WORK_MEM", "2MB", 2)}, small_catalog(), pg15_settings());
  EXPECT_EQ(v[0].verdict, Verdict::kReload);
  EXPECT_EQ(v[1].verdict, Verdict::kError);
}

TEST(Validate, EffectiveValueMatches) {
  const auto server = pg15_settings();
  const auto check = [&](const char* name, const char* value, const char* now) {
    auto v = validate({at(name, value)}, small_catalog(), server).front();
    ServerSetting s = *server.find(name);
    s.setting = now;
    return effective_value_matches(s, v);
  };
  EXPECT_TRUE(check("random_page_cost", "1e300", "1e+300"));
  EXPECT_FALSE(check("random_page_cost", "1e300", "4"));
  EXPECT_TRUE(check("enable_seqscan", "true", "on"));
  EXPECT_TRUE(check("enable_seqscan", "0", "off"));
  EXPECT_FALSE(check("enable_seqscan", "1", "off"));
  EXPECT_TRUE(check("wal_level", "LOGICAL", "logical"));
  EXPECT_TRUE(check("shared_buffers", "8MB", "1024"));
  EXPECT_FALSE(check("shared_buffers", "8MB", "16384"));
  EXPECT_TRUE(check("log_destination", "stderr,jsonlog", "stderr,jsonlog"));
  EXPECT_TRUE(check("log_destination", "stderr, jsonlog", "stderr,jsonlog"));
  EXPECT_FALSE(check("log_destination", "stderr,jsonlog", "stderr"));
  EXPECT_TRUE(check("cpu_index_tuple_cost", "0.0051234567", "0.00512346"));
}

TEST(Validate, OfflineChecksNamesAndSafety) {
  auto p = check_offline({at("sahred_buffers", "8MB"), at("work_mem", "a\nb", 2)}, small_catalog());
  ASSERT_EQ(p.size(), 2u);
  EXPECT_NE(p[0].str().find("did you mean 'shared_buffers'?"), std::string::npos);
  EXPECT_NE(p[1].str().find("line break"), std::string::npos);
}

}  // namespace
}  // namespace pgslow::knobs
