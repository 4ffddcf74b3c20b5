#include "apply/sql.h"

#include "common/errors.h"
#include "common/strings.h"
#include "knobs/value.h"
#include "pg/connection.h"

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

std::string setting_literals(std::string_view name, std::string_view value,
                             const std::function<std::string(std::string_view)>& quote) {
  if (!knobs::is_quoted_list(name)) return quote(value);
  auto elements = knobs::quoted_list_elements(name, value);
  if (!elements || elements->empty()) return quote(value);
  std::string out;
  for (const std::string& e : *elements) out += (out.empty() ? "" : ", ") + quote(e);
  return out;
}

std::string alter_system_set_value(const pg::Connection& conn, std::string_view name,
                                   std::string_view value) {
  return alter_system_set(name, setting_literals(name, value, [&](std::string_view v) {
                            return conn.quote_literal(v);
                          }));
}

std::string alter_system_reset(std::string_view name) {
  check_name(name);
  if (iequals(name, "all")) throw InputError("pgslow never runs ALTER SYSTEM RESET ALL");
  return "ALTER SYSTEM RESET " + std::string(name);
}

}  // namespace pgslow::apply
