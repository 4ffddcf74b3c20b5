#include "apply/sql.h"

#include "common/errors.h"
#include "common/strings.h"

namespace pgslow::apply {

namespace {
bool part_ok(std::string_view part) {
  if (part.empty()) return false;
  // Letters of either case: the server's own names include TimeZone and DateStyle, and
  // PostgreSQL folds an unquoted identifier to lower case and compares names without case.
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  char first = part.front();
  if (!(letter(first) || first == '_')) return false;
  for (char c : part) {
    if (!(letter(c) || (c >= '0' && c <= '9') || c == '_' || c == '$')) return false;
  }
  return true;
}

void check_name(std::string_view name) {
  if (!is_valid_parameter_name(name))
    throw InputError("\"" + std::string(name) + "\" is not a PostgreSQL parameter name");
}
}  // namespace

bool is_valid_parameter_name(std::string_view name) {
  if (name.size() > 63) return false;  // NAMEDATALEN - 1
  std::size_t dot = name.find('.');
  if (dot == std::string_view::npos) return part_ok(name);
  return part_ok(name.substr(0, dot)) && part_ok(name.substr(dot + 1));
}

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
