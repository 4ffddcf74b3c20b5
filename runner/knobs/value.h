#pragma once
// Parameter values parsed the way PostgreSQL parses them (src/backend/utils/misc/guc.c:
// parse_bool, parse_int, parse_real, convert_to_base_unit, config_enum_lookup_by_name), so
// pgslow rejects exactly what the server would reject and knows what pg_settings.setting will
// show afterwards.
//
// Safety: a value ends up inside ALTER SYSTEM SET name = '<value>'. pgslow REJECTS every
// control character (newline, carriage return, tab, NUL, ...) with a clear error: no
// PostgreSQL parameter needs one, and a newline in postgresql.auto.conf would corrupt it.
// Quote characters (' and ") are legal in a few string parameters (archive_command,
// log_line_prefix); they are accepted, and the apply code must pass the value through
// pg::Connection::quote_literal, never by pasting it into SQL.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pgslow::knobs {

// pg_settings.vartype
enum class VarType { kBool, kInteger, kReal, kEnum, kString };
std::optional<VarType> parse_vartype(std::string_view vartype);
std::string_view vartype_name(VarType t);

// The base unit of a numeric parameter (pg_settings.unit): memory in bytes per unit
// ("8kB" -> 8192) or time in microseconds per unit ("ms" -> 1000).
struct BaseUnit {
  enum class Kind { kNone, kMemory, kTime };
  Kind kind = Kind::kNone;
  double size = 1;   // bytes or microseconds of one base unit
  std::string name;  // as pg_settings shows it: "8kB", "ms", ""
};
// nullopt for a unit pgslow does not know (a future PostgreSQL); treat as unitless.
std::optional<BaseUnit> parse_base_unit(std::string_view pg_unit);

// A parsed value, or why it is not one.
struct ParsedValue {
  // Set when the value is invalid: what is wrong, to follow the value ("has an unknown unit").
  std::optional<std::string> error;
  std::string hint;   // what would be accepted
  double number = 0;  // numeric value in the base unit (bool: 0/1)
  // What pg_settings.setting shows once the value is in effect: "on"/"off", the integer in
  // the base unit, the real as %g, the enum value in its canonical spelling, the string.
  std::string setting;
  bool ok() const { return !error.has_value(); }
};

// Control characters (and invalid text) that must never reach ALTER SYSTEM; nullopt if safe.
std::optional<std::string> unsafe_value_problem(std::string_view value);

ParsedValue parse_bool(std::string_view value);
ParsedValue parse_int(std::string_view value, const BaseUnit& unit);
ParsedValue parse_real(std::string_view value, const BaseUnit& unit);
// Case-insensitive against `accepted` (pg_settings.enumvals), plus the hidden spellings the
// server also accepts (on/off synonyms, wal_level archive/hot_standby).
ParsedValue parse_enum(std::string_view value, const std::vector<std::string>& accepted,
                       std::string_view parameter = {});
// Dispatch on the type.
ParsedValue parse_value(std::string_view value, VarType type, const BaseUnit& unit,
                        const std::vector<std::string>& enumvals = {},
                        std::string_view parameter = {});

// A value in the base unit shown as a person would write it: 1024 with unit kB -> "1MB",
// 30 with unit s -> "30s", 1 with unit 8kB -> "8kB"; the largest unit that divides exactly.
std::string format_with_unit(double base_value, const BaseUnit& unit);
// A computed value (a sweep's point between two written ones) as a person would write it:
// exact when it is a whole number of some unit (256kB), else rounded to two significant
// digits in the largest unit it reaches, or to a whole number of the next smaller unit when
// that leaves a fraction (22.7MB -> 23MB; 5.6MB -> 5800kB; 90 s -> 90s, not 1.5min).
std::string format_rounded(double base_value, const BaseUnit& unit);
// `v` rounded to `digits` significant digits (3.76 -> 3.8).
double round_significant(double v, int digits);

// Splits a list-valued string parameter ("stderr, jsonlog") into lower-cased items.
std::vector<std::string> list_items(std::string_view value);

// Whether `parameter` is one of PostgreSQL's quoted lists (search_path, temp_tablespaces,
// session/shared/local_preload_libraries, unix_socket_directories): ALTER SYSTEM must get
// each element as a literal of its own, or the whole text becomes one quoted name
// ("evil, pg_catalog" as a single schema).
bool is_quoted_list(std::string_view parameter);
// The elements of such a list as the server splits them: at commas outside double quotes, a
// quoted element unquoted ("" is one "), an unquoted one trimmed and, for the lists of names
// (search_path, temp_tablespaces), lower-cased. Empty for an empty value; nullopt (the reason
// in `why`) when a quote does not close or an element is empty.
std::optional<std::vector<std::string>> quoted_list_elements(std::string_view parameter,
                                                             std::string_view value,
                                                             std::string* why = nullptr);
// Whether two values of `parameter` mean the same: element by element for a quoted list,
// else the same text.
bool same_parameter_value(std::string_view parameter, std::string_view a, std::string_view b);

}  // namespace pgslow::knobs
