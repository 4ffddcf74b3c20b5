#include "apply/sql.h"

#include "common/errors.h"
#include "common/strings.h"

namespace pgslow::apply {

namespace {
void check_name(std::string_view name) {
  if (!is_valid_parameter_name(name))
    throw InputError("\"" + std::string(name) + "\" is not a PostgreSQL parameter name");
}
}  // namespace

std::string alter_system_set(std::string_view name, std::string_view quoted_value) {
  check_name(name);
  return "ALTER SYSTEM SET " + std::string(name) + " = " + std::string(quoted_value);
}

std::string alter_system_reset(std::string_view name) {
  check_name(name);
  if (iequals(name, "all")) throw InputError("pgslow never runs ALTER SYSTEM RESET ALL");
  return "ALTER SYSTEM RESET " + std::string(name);
}

}  // namespace pgslow::apply
