#pragma once
// The statements that change a server's configuration. A parameter name goes into SQL as an
// identifier, so it must be one of the server's own pg_settings names (checked by the caller)
// and look like one (checked here); a value goes in only as a quoted literal
// (pg::Connection::quote_literal, which knows the connection's encoding and
// standard_conforming_strings).

#include <string>
#include <string_view>

namespace pgslow::apply {

// A name is checked by pgslow::is_valid_parameter_name (common/strings.h), the one rule.

// "ALTER SYSTEM SET name = <quoted_value>"; throws InputError for an invalid name.
std::string alter_system_set(std::string_view name, std::string_view quoted_value);
// "ALTER SYSTEM RESET name"; throws InputError for an invalid name. Never RESET ALL: it would
// erase entries pgslow did not write.
std::string alter_system_reset(std::string_view name);

}  // namespace pgslow::apply
