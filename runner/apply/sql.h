#pragma once
// The statements that change a server's configuration. A parameter name goes into SQL as an
// identifier, so it must be one of the server's own pg_settings names (checked by the caller)
// and look like one (checked here); a value goes in only as a quoted literal
// (pg::Connection::quote_literal, which knows the connection's encoding and
// standard_conforming_strings).

#include <functional>
#include <string>
#include <string_view>

namespace pgslow::pg {
class Connection;
}

namespace pgslow::apply {

// A name is checked by pgslow::is_valid_parameter_name (common/strings.h), the one rule.

// "ALTER SYSTEM SET name = <quoted_value>"; throws InputError for an invalid name.
std::string alter_system_set(std::string_view name, std::string_view quoted_value);
// The right-hand side of ALTER SYSTEM SET for `value`: one quoted literal, or for a quoted list
// (knobs::is_quoted_list) one literal per element ('evil', 'pg_catalog'), so the server stores
// the list it is rather than one name holding a comma. `quote` quotes one literal. A value that
// is not a list the server reads goes as one literal (validation refuses it earlier).
std::string setting_literals(std::string_view name, std::string_view value,
                             const std::function<std::string(std::string_view)>& quote);
// alter_system_set with setting_literals, quoted for `conn`.
std::string alter_system_set_value(const pg::Connection& conn, std::string_view name,
                                   std::string_view value);
// "ALTER SYSTEM RESET name"; throws InputError for an invalid name. Never RESET ALL: it would
// erase entries pgslow did not write.
std::string alter_system_reset(std::string_view name);

}  // namespace pgslow::apply
