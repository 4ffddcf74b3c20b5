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
