#include "apply/sql.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "common/strings.h"

namespace pgslow::apply {
namespace {

TEST(ParameterName, AcceptsRealNamesOnly) {
  EXPECT_TRUE(is_valid_parameter_name("shared_buffers"));
  EXPECT_TRUE(is_valid_parameter_name("auto_explain.log_min_duration"));
  EXPECT_TRUE(is_valid_parameter_name("_x1"));
  EXPECT_FALSE(is_valid_parameter_name(""));
  // The server's own mixed-case names (PostgreSQL compares names without case).
  EXPECT_TRUE(is_valid_parameter_name("TimeZone"));
  EXPECT_TRUE(is_valid_parameter_name("DateStyle"));
  EXPECT_FALSE(is_valid_parameter_name("work_mem; DROP TABLE x"));
  EXPECT_FALSE(is_valid_parameter_name("work_mem = '1'"));
  EXPECT_FALSE(is_valid_parameter_name("\"work_mem\""));
  EXPECT_FALSE(is_valid_parameter_name("a.b.c"));
  EXPECT_FALSE(is_valid_parameter_name("1abc"));
  EXPECT_FALSE(is_valid_parameter_name(std::string(64, 'a')));
}

// search_path: "evil, pg_catalog" went as one literal, which the server stores as one quoted
// schema name; a list goes as one literal per element.
TEST(AlterSystem, AListGoesAsOneLiteralPerElement) {
  auto quote = [](std::string_view v) { return "'" + std::string(v) + "'"; };
  EXPECT_EQ(setting_literals("search_path", "evil, pg_catalog", quote), "'evil', 'pg_catalog'");
  EXPECT_EQ(setting_literals("search_path", "\"$user\", public", quote), "'$user', 'public'");
  EXPECT_EQ(setting_literals("Search_Path", "Evil", quote), "'evil'");
  EXPECT_EQ(setting_literals("session_preload_libraries", "Auto_Explain,pg_stat_statements", quote),
            "'Auto_Explain', 'pg_stat_statements'");
  // Not a list: one literal, commas and all.
  EXPECT_EQ(setting_literals("log_line_prefix", "%m, %p", quote), "'%m, %p'");
  EXPECT_EQ(setting_literals("search_path", "", quote), "''");
}

TEST(AlterSystem, BuildsOneStatementPerParameter) {
  EXPECT_EQ(alter_system_set("work_mem", "'64kB'"), "ALTER SYSTEM SET work_mem = '64kB'");
  EXPECT_EQ(alter_system_reset("work_mem"), "ALTER SYSTEM RESET work_mem");
  EXPECT_THROW(alter_system_set("work_mem;", "'1'"), InputError);
  EXPECT_THROW(alter_system_reset("all"), InputError);
  EXPECT_THROW(alter_system_reset("ALL"), InputError);
  EXPECT_EQ(alter_system_set("TimeZone", "'UTC'"), "ALTER SYSTEM SET TimeZone = 'UTC'");
  EXPECT_THROW(alter_system_reset("x y"), InputError);
}

}  // namespace
}  // namespace pgslow::apply
