// Values parsed as PostgreSQL parses them (guc.c parse_int/parse_real/parse_bool).

#include "knobs/value.h"

#include <gtest/gtest.h>

namespace pgslow::knobs {
namespace {

BaseUnit unit(const char* pg_unit) {
  return *parse_base_unit(pg_unit);
}

TEST(Value, QuotedListsSplitAsTheServerSplitsThem) {
  using V = std::vector<std::string>;
  EXPECT_TRUE(is_quoted_list("search_path"));
  EXPECT_TRUE(is_quoted_list("shared_preload_libraries"));
  EXPECT_FALSE(is_quoted_list("log_destination"));  // a list, but of words, never quoted
  EXPECT_EQ(quoted_list_elements("search_path", "evil, pg_catalog"), (V{"evil", "pg_catalog"}));
  EXPECT_EQ(quoted_list_elements("search_path", " Evil ,\"My \"\"Schema\"\"\" "),
            (V{"evil", "My \"Schema\""}));
  EXPECT_EQ(quoted_list_elements("local_preload_libraries", "Lib,$libdir/x"),
            (V{"Lib", "$libdir/x"}));
  EXPECT_EQ(quoted_list_elements("search_path", "  "), V{});
  std::string why;
  EXPECT_FALSE(quoted_list_elements("search_path", "\"evil, x", &why));
  EXPECT_NE(why.find("does not close"), std::string::npos);
  EXPECT_FALSE(quoted_list_elements("search_path", "a,,b", &why));
  EXPECT_FALSE(quoted_list_elements("search_path", "\"a\" b", &why));
  EXPECT_TRUE(same_parameter_value("search_path", "evil,pg_catalog", "evil, pg_catalog"));
  EXPECT_TRUE(same_parameter_value("search_path", "\"$user\", public", "$user,public"));
  EXPECT_FALSE(same_parameter_value("search_path", "a, b", "b, a"));
  EXPECT_FALSE(same_parameter_value("log_line_prefix", "a,b", "a, b"));
}

TEST(Value, MemoryUnitsConvertToTheBaseUnit) {
  EXPECT_EQ(parse_int("8MB", unit("8kB")).setting, "1024");  // shared_buffers pages
  EXPECT_EQ(parse_int("2MB", unit("8kB")).setting, "256");
  EXPECT_EQ(parse_int("128kB", unit("8kB")).setting, "16");
  EXPECT_EQ(parse_int("128kB", unit("kB")).setting, "128");  // maintenance_work_mem
  EXPECT_EQ(parse_int("1GB", unit("MB")).setting, "1024");   // max_wal_size
  EXPECT_EQ(parse_int("16MB", unit("B")).setting, "16777216");
  EXPECT_EQ(parse_int("8 MB", unit("kB")).setting, "8192");   // space before the unit
  EXPECT_EQ(parse_int("1024", unit("8kB")).setting, "1024");  // bare number: base unit
}

TEST(Value, FractionsRoundToTheNextSmallerUnitThenToAnInteger) {
  EXPECT_EQ(parse_int("1.5MB", unit("kB")).setting, "1536");
  EXPECT_EQ(parse_int("0.5", unit("kB")).setting, "0");  // rint: round half to even
  EXPECT_EQ(parse_int("1.5", unit("kB")).setting, "2");
}

TEST(Value, TimeUnits) {
  EXPECT_EQ(parse_int("30s", unit("s")).setting, "30");
  EXPECT_EQ(parse_int("1min", unit("s")).setting, "60");
  EXPECT_EQ(parse_int("1min", unit("ms")).setting, "60000");
  EXPECT_EQ(parse_int("1h", unit("min")).setting, "60");
  EXPECT_EQ(parse_int("1d", unit("s")).setting, "86400");
  EXPECT_EQ(parse_int("1500us", unit("ms")).setting, "2");
  EXPECT_EQ(parse_int("30", unit("s")).setting, "30");
}

TEST(Value, UnitsAreCaseSensitiveAndMustBeKnown) {
  for (const char* bad : {"64 kb", "8mb", "8 MiB", "8MBx", "8MB 1"}) {
    auto v = parse_int(bad, unit("kB"));
    EXPECT_FALSE(v.ok()) << bad;
    EXPECT_NE(v.hint.find("kB"), std::string::npos) << bad;
  }
  EXPECT_FALSE(parse_int("30 sec", unit("s")).ok());
  EXPECT_FALSE(parse_int("8MB", unit("s")).ok());   // a memory unit for a time parameter
  EXPECT_FALSE(parse_int("8MB", BaseUnit{}).ok());  // no unit allowed at all
}

TEST(Value, IntegersAcceptHexOctalAndRejectJunk) {
  EXPECT_EQ(parse_int("0x10", BaseUnit{}).setting, "16");
  EXPECT_EQ(parse_int("010", BaseUnit{}).setting, "8");
  EXPECT_EQ(parse_int("-1", BaseUnit{}).setting, "-1");
  EXPECT_EQ(parse_int("1e3", BaseUnit{}).setting, "1000");
  for (const char* bad : {"", "abc", "nan", "1e400", "99999999999", "--1"}) {
    EXPECT_FALSE(parse_int(bad, BaseUnit{}).ok()) << bad;
  }
}

TEST(Value, RealsIncluding1e300) {
  auto v = parse_real("1e300", BaseUnit{});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v.number, 1e300);
  EXPECT_EQ(v.setting, "1e+300");  // what pg_settings shows (%g)
  EXPECT_EQ(parse_real("0.005", BaseUnit{}).setting, "0.005");
  EXPECT_EQ(parse_real("2ms", unit("ms")).setting, "2");
  EXPECT_FALSE(parse_real("1e400", BaseUnit{}).ok());
  EXPECT_FALSE(parse_real("nan", BaseUnit{}).ok());
  EXPECT_FALSE(parse_real("1,5", BaseUnit{}).ok());
}

TEST(Value, BooleansLikePostgres) {
  for (const char* yes : {"on", "ON", "true", "t", "tr", "yes", "y", "1", "True"}) {
    EXPECT_EQ(parse_bool(yes).setting, "on") << yes;
  }
  for (const char* no : {"off", "OFF", "of", "false", "f", "no", "n", "0"}) {
    EXPECT_EQ(parse_bool(no).setting, "off") << no;
  }
  for (const char* bad : {"o", "", "2", "truee", "onn", " on", "yes please"}) {
    EXPECT_FALSE(parse_bool(bad).ok()) << bad;
  }
}

TEST(Value, EnumsIgnoreCaseAndListTheAcceptedValues) {
  const std::vector<std::string> levels = {"minimal", "replica", "logical"};
  EXPECT_EQ(parse_enum("LOGICAL", levels).setting, "logical");
  EXPECT_EQ(parse_enum("Minimal", levels).setting, "minimal");
  EXPECT_EQ(parse_enum("hot_standby", levels, "wal_level").setting, "replica");
  auto bad = parse_enum("maximal", levels);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.hint, "accepted: minimal, replica, logical");
  const std::vector<std::string> sync = {"local", "remote_write", "remote_apply", "on", "off"};
  EXPECT_EQ(parse_enum("true", sync).setting, "on");  // hidden boolean spellings
  EXPECT_EQ(parse_enum("0", sync).setting, "off");
  EXPECT_FALSE(parse_enum("true", levels).ok());
}

TEST(Value, ControlCharactersAreRejectedQuotesAreNot) {
  EXPECT_TRUE(unsafe_value_problem("4MB\nshared_buffers = 1"));
  EXPECT_TRUE(unsafe_value_problem("a\rb"));
  EXPECT_TRUE(unsafe_value_problem(std::string_view("a\0b", 3)));
  EXPECT_TRUE(unsafe_value_problem("a\tb"));
  EXPECT_TRUE(unsafe_value_problem("\xff"));
  EXPECT_FALSE(unsafe_value_problem("it's \"quoted\""));
  EXPECT_FALSE(parse_value("x\ny", VarType::kString, BaseUnit{}).ok());
  EXPECT_EQ(parse_value("it's", VarType::kString, BaseUnit{}).setting, "it's");
}

TEST(Value, FormatWithUnitPicksTheLargestExactUnit) {
  EXPECT_EQ(format_with_unit(1024, unit("kB")), "1MB");
  EXPECT_EQ(format_with_unit(64, unit("kB")), "64kB");
  EXPECT_EQ(format_with_unit(16, unit("8kB")), "128kB");
}

// A computed value written as a person would: exact when whole in a unit, else two digits in
// the largest unit, or a whole number of the next smaller one rather than a fraction.
TEST(Value, FormatRoundedWritesComputedValuesAsAPersonWould) {
  EXPECT_EQ(format_rounded(256, unit("kB")), "256kB");
  EXPECT_EQ(format_rounded(16384, unit("kB")), "16MB");
  EXPECT_EQ(format_rounded(22.76 * 1024, unit("kB")), "23MB");
  EXPECT_EQ(format_rounded(5.62 * 1024, unit("kB")), "5800kB");
  EXPECT_EQ(format_rounded(90, unit("s")), "90s");
  EXPECT_EQ(format_rounded(3.76, unit("")), "3.8");
  EXPECT_DOUBLE_EQ(round_significant(0.01234, 2), 0.012);
  EXPECT_EQ(format_with_unit(16384, unit("8kB")), "128MB");
  EXPECT_EQ(format_with_unit(300, unit("s")), "5min");
  EXPECT_EQ(format_with_unit(1500, unit("ms")), "1500ms");
  EXPECT_EQ(format_with_unit(-1, unit("ms")), "-1");
  EXPECT_EQ(format_with_unit(0, unit("ms")), "0");
  EXPECT_EQ(format_with_unit(7, BaseUnit{}), "7");
}

TEST(Value, ListItems) {
  EXPECT_EQ(list_items("stderr, JSONLOG"), (std::vector<std::string>{"stderr", "jsonlog"}));
  EXPECT_TRUE(list_items(" , ").empty());
}

}  // namespace
}  // namespace pgslow::knobs
