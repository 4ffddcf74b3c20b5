#include "knobs/value.h"

#include <fmt/format.h>
#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/strings.h"
#include "common/yaml.h"

namespace pgslow::knobs {

namespace {

struct UnitName {
  const char* name;
  double size;  // bytes or microseconds
};

// Largest first, as PostgreSQL's conversion tables: a fractional value is rounded to a
// multiple of the next smaller unit ("1.5MB" -> 1536kB).
constexpr UnitName kMemoryUnits[] = {{"TB", 1024.0 * 1024 * 1024 * 1024},
                                     {"GB", 1024.0 * 1024 * 1024},
                                     {"MB", 1024.0 * 1024},
                                     {"kB", 1024.0},
                                     {"B", 1.0}};
constexpr UnitName kTimeUnits[] = {{"d", 86400e6}, {"h", 3600e6}, {"min", 60e6},
                                   {"s", 1e6},     {"ms", 1e3},   {"us", 1.0}};

const char* kMemoryHint = "valid units are B, kB, MB, GB and TB; case matters";
const char* kTimeHint = "valid units are us, ms, s, min, h and d; case matters";

bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

ParsedValue fail(std::string message, std::string hint = {}) {
  ParsedValue v;
  v.error = std::move(message);
  v.hint = std::move(hint);
  return v;
}

std::string format_real(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", value);
  return buf;
}

// convert_to_base_unit: `unit_text` is what follows the number (whitespace allowed after).
std::optional<double> convert_to_base_unit(double value, std::string_view unit_text,
                                           const BaseUnit& base) {
  std::size_t end = 0;
  while (end < unit_text.size() && !is_space(unit_text[end])) ++end;
  const std::string_view unit = unit_text.substr(0, end);
  for (std::size_t k = end; k < unit_text.size(); ++k) {
    if (!is_space(unit_text[k])) return std::nullopt;  // garbage after the unit
  }
  const UnitName* table = base.kind == BaseUnit::Kind::kMemory ? kMemoryUnits : kTimeUnits;
  const std::size_t n =
      base.kind == BaseUnit::Kind::kMemory ? std::size(kMemoryUnits) : std::size(kTimeUnits);
  for (std::size_t i = 0; i < n; ++i) {
    if (unit != table[i].name) continue;
    double converted = value * (table[i].size / base.size);
    if (i + 1 < n) {
      const double next = table[i + 1].size / base.size;
      converted = std::rint(converted / next) * next;
    }
    return converted;
  }
  return std::nullopt;
}

// The number and unit part shared by parse_int and parse_real. `integer_first` follows
// parse_int: strtol with base 0 (hex 0x.., octal 0..), re-parsed as a double when it stops at
// '.', 'e' or overflows.
ParsedValue parse_number(std::string_view value, const BaseUnit& unit, bool integer_first) {
  const std::string text(value);
  const char* begin = text.c_str();
  char* end = nullptr;
  double val = 0;
  errno = 0;
  if (integer_first) {
    val = static_cast<double>(std::strtol(begin, &end, 0));
    if (*end == '.' || *end == 'e' || *end == 'E' || errno == ERANGE) {
      errno = 0;
      val = std::strtod(begin, &end);
    }
  } else {
    val = std::strtod(begin, &end);
  }
  if (end == begin || errno == ERANGE || std::isnan(val)) {
    return fail("is not a number",
                integer_first ? "a whole number, optionally with a unit" : "a number");
  }
  while (is_space(*end)) ++end;
  if (*end != '\0') {
    if (unit.kind == BaseUnit::Kind::kNone) {
      return fail("is not a number (this parameter takes no unit)");
    }
    auto converted = convert_to_base_unit(val, end, unit);
    if (!converted) {
      return fail("has an unknown unit",
                  unit.kind == BaseUnit::Kind::kMemory ? kMemoryHint : kTimeHint);
    }
    val = *converted;
  }
  ParsedValue out;
  out.number = val;
  return out;
}

}  // namespace

std::optional<VarType> parse_vartype(std::string_view vartype) {
  if (vartype == "bool") return VarType::kBool;
  if (vartype == "integer") return VarType::kInteger;
  if (vartype == "real") return VarType::kReal;
  if (vartype == "enum") return VarType::kEnum;
  if (vartype == "string") return VarType::kString;
  return std::nullopt;
}

std::string_view vartype_name(VarType t) {
  switch (t) {
    case VarType::kBool:
      return "bool";
    case VarType::kInteger:
      return "integer";
    case VarType::kReal:
      return "real";
    case VarType::kEnum:
      return "enum";
    case VarType::kString:
      return "string";
  }
  return "string";
}

std::optional<BaseUnit> parse_base_unit(std::string_view pg_unit) {
  BaseUnit u;
  u.name = std::string(pg_unit);
  if (pg_unit.empty()) return u;
  // pg_settings writes memory units with a multiplier: "8kB" (pages), "16MB" (old WAL segs).
  std::size_t digits = 0;
  while (digits < pg_unit.size() && std::isdigit(static_cast<unsigned char>(pg_unit[digits]))) {
    ++digits;
  }
  const double multiplier =
      digits == 0 ? 1.0 : std::strtod(std::string(pg_unit.substr(0, digits)).c_str(), nullptr);
  const std::string_view name = pg_unit.substr(digits);
  for (const auto& m : kMemoryUnits) {
    if (name == m.name) {
      u.kind = BaseUnit::Kind::kMemory;
      u.size = multiplier * m.size;
      return u;
    }
  }
  for (const auto& t : kTimeUnits) {
    if (name == t.name) {
      u.kind = BaseUnit::Kind::kTime;
      u.size = multiplier * t.size;
      return u;
    }
  }
  return std::nullopt;
}

std::optional<std::string> unsafe_value_problem(std::string_view value) {
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r') {
      return std::string("contains a line break; a parameter value must be one line");
    }
    if (c == '\0') return std::string("contains a NUL byte");
    if (u < 0x20 || u == 0x7F) {
      return fmt::format("contains the control character 0x{:02X}", u);
    }
  }
  SourceLocation unused;
  if (yaml::text_problem(value, unused)) return std::string("is not valid UTF-8 text");
  return std::nullopt;
}

ParsedValue parse_bool(std::string_view value) {
  // parse_bool_with_len: any prefix of true/false/yes/no, "on"/"off" (at least 2 letters),
  // 1 and 0; case-insensitive; no surrounding spaces.
  const std::size_t len = value.size();
  const auto prefix_of = [&](const char* word, std::size_t min_len) {
    const std::size_t n = std::max(len, min_len);
    return len > 0 && len <= std::strlen(word) && ::strncasecmp(value.data(), word, n) == 0;
  };
  std::optional<bool> b;
  if (len > 0) {
    switch (std::tolower(static_cast<unsigned char>(value[0]))) {
      case 't':
        if (prefix_of("true", 1)) b = true;
        break;
      case 'f':
        if (prefix_of("false", 1)) b = false;
        break;
      case 'y':
        if (prefix_of("yes", 1)) b = true;
        break;
      case 'n':
        if (prefix_of("no", 1)) b = false;
        break;
      case 'o':
        if (len >= 2 && prefix_of("on", 2)) {
          b = true;
        } else if (len >= 2 && prefix_of("off", 2)) {
          b = false;
        }
        break;
      case '1':
        if (len == 1) b = true;
        break;
      case '0':
        if (len == 1) b = false;
        break;
      default:
        break;
    }
  }
  if (!b) {
    return fail("is not a boolean", "use on or off (also true/false, yes/no, 1/0)");
  }
  ParsedValue out;
  out.number = *b ? 1 : 0;
  out.setting = *b ? "on" : "off";
  return out;
}

ParsedValue parse_int(std::string_view value, const BaseUnit& unit) {
  ParsedValue out = parse_number(value, unit, /*integer_first=*/true);
  if (!out.ok()) return out;
  out.number = std::rint(out.number);
  if (out.number > INT_MAX || out.number < INT_MIN) {
    return fail("is outside the integer range",
                fmt::format("at most {}", format_with_unit(INT_MAX, unit)));
  }
  out.setting = std::to_string(static_cast<long long>(out.number));
  return out;
}

ParsedValue parse_real(std::string_view value, const BaseUnit& unit) {
  ParsedValue out = parse_number(value, unit, /*integer_first=*/false);
  if (!out.ok()) return out;
  out.setting = format_real(out.number);
  return out;
}

ParsedValue parse_enum(std::string_view value, const std::vector<std::string>& accepted,
                       std::string_view parameter) {
  for (const auto& a : accepted) {
    if (iequals(a, value)) {
      ParsedValue out;
      out.setting = a;
      return out;
    }
  }
  // Hidden spellings config_enum_lookup_by_name also takes (guc_tables.c *_options[] with
  // hidden = true): boolean synonyms of on/off, and the pre-9.6 names of wal_level.
  const bool has_on_off = std::find(accepted.begin(), accepted.end(), "on") != accepted.end() &&
                          std::find(accepted.begin(), accepted.end(), "off") != accepted.end();
  const std::string lowered = to_lower(value);
  if (has_on_off) {
    for (const char* t : {"true", "yes", "1"}) {
      if (lowered == t) {
        ParsedValue out;
        out.setting = "on";
        return out;
      }
    }
    for (const char* f : {"false", "no", "0"}) {
      if (lowered == f) {
        ParsedValue out;
        out.setting = "off";
        return out;
      }
    }
  }
  if (parameter == "wal_level" && (lowered == "archive" || lowered == "hot_standby")) {
    ParsedValue out;
    out.setting = "replica";
    return out;
  }
  return fail("is not one of the accepted values", "accepted: " + join(accepted, ", "));
}

ParsedValue parse_value(std::string_view value, VarType type, const BaseUnit& unit,
                        const std::vector<std::string>& enumvals, std::string_view parameter) {
  if (auto bad = unsafe_value_problem(value)) {
    return fail(*bad, "write the value on one line without control characters");
  }
  switch (type) {
    case VarType::kBool:
      return parse_bool(value);
    case VarType::kInteger:
      return parse_int(value, unit);
    case VarType::kReal:
      return parse_real(value, unit);
    case VarType::kEnum:
      return parse_enum(value, enumvals, parameter);
    case VarType::kString:
      break;
  }
  ParsedValue out;
  out.setting = std::string(value);
  return out;
}

std::string format_with_unit(double base_value, const BaseUnit& unit) {
  if (unit.kind == BaseUnit::Kind::kNone || base_value <= 0 ||
      base_value != std::floor(base_value)) {
    if (base_value == std::floor(base_value) && std::fabs(base_value) < 1e15) {
      return std::to_string(static_cast<long long>(base_value)) +
             (base_value > 0 || unit.kind == BaseUnit::Kind::kNone ? unit.name : "");
    }
    return format_real(base_value) + unit.name;
  }
  const double amount = base_value * unit.size;  // bytes or microseconds
  const UnitName* table = unit.kind == BaseUnit::Kind::kMemory ? kMemoryUnits : kTimeUnits;
  const std::size_t n =
      unit.kind == BaseUnit::Kind::kMemory ? std::size(kMemoryUnits) : std::size(kTimeUnits);
  for (std::size_t i = 0; i < n; ++i) {
    const double q = amount / table[i].size;
    if (q == std::floor(q) && q >= 1) {
      return fmt::format("{}{}", static_cast<long long>(q), table[i].name);
    }
  }
  return std::to_string(static_cast<long long>(base_value)) + unit.name;
}

double round_significant(double v, int digits) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale =
      std::pow(10, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * scale) / scale;
}

std::string format_rounded(double base_value, const BaseUnit& unit) {
  if (unit.kind == BaseUnit::Kind::kNone || base_value <= 0) {
    return format_real(round_significant(base_value, 2)) + unit.name;
  }
  const double amount = base_value * unit.size;  // bytes or microseconds
  const UnitName* table = unit.kind == BaseUnit::Kind::kMemory ? kMemoryUnits : kTimeUnits;
  const std::size_t n =
      unit.kind == BaseUnit::Kind::kMemory ? std::size(kMemoryUnits) : std::size(kTimeUnits);
  auto whole = [](double q) { return std::fabs(q - std::round(q)) <= 1e-9 * q; };
  std::size_t i = 0;
  while (i + 1 < n && amount / table[i].size < 1) ++i;
  const double q = amount / table[i].size;
  if (whole(q)) return fmt::format("{}{}", std::llround(q), table[i].name);
  const double r = round_significant(q, 2);
  if (whole(r) || i + 1 == n)
    return fmt::format("{}{}", std::max(1LL, std::llround(r)), table[i].name);
  // A fraction: a whole number of the next smaller unit (at least 60 of it), two digits.
  const double smaller = amount / table[i + 1].size;
  const double s = whole(smaller) ? smaller : round_significant(smaller, 2);
  return fmt::format("{}{}", std::llround(s), table[i + 1].name);
}

std::vector<std::string> list_items(std::string_view value) {
  std::vector<std::string> out;
  for (const auto& part : split(value, ',')) {
    std::string item = to_lower(trim(part));
    if (item.size() >= 2 && item.front() == '"' && item.back() == '"') {
      item = item.substr(1, item.size() - 2);
    }
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool is_quoted_list(std::string_view parameter) {
  // The server's GUC_LIST_QUOTE parameters (PostgreSQL 15 to 18).
  for (const char* name :
       {"search_path", "temp_tablespaces", "session_preload_libraries", "shared_preload_libraries",
        "local_preload_libraries", "unix_socket_directories"}) {
    if (iequals(parameter, name)) return true;
  }
  return false;
}

std::optional<std::vector<std::string>> quoted_list_elements(std::string_view parameter,
                                                             std::string_view value,
                                                             std::string* why) {
  // Names are folded to lower case unless quoted; libraries and folders are paths, kept.
  const bool names = iequals(parameter, "search_path") || iequals(parameter, "temp_tablespaces");
  auto fail = [&](std::string reason) -> std::optional<std::vector<std::string>> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  std::vector<std::string> out;
  if (trim(value).empty()) return out;
  std::size_t i = 0;
  auto space = [&] {
    while (i < value.size() && std::isspace(static_cast<unsigned char>(value[i]))) ++i;
  };
  while (true) {
    space();
    std::string element;
    if (i < value.size() && value[i] == '"') {
      ++i;
      bool closed = false;
      while (i < value.size()) {
        if (value[i] == '"') {
          if (i + 1 < value.size() && value[i + 1] == '"') {
            element += '"';
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        element += value[i++];
      }
      if (!closed) return fail("a double quote does not close");
      if (element.empty()) return fail("an element is an empty quoted name (\"\")");
      space();
    } else {
      const std::size_t start = i;
      while (i < value.size() && value[i] != ',' && value[i] != '"') ++i;
      element = trim(value.substr(start, i - start));
      if (element.empty()) return fail("an element is empty (two commas in a row?)");
      if (names) element = to_lower(element);
    }
    out.push_back(std::move(element));
    if (i == value.size()) return out;
    if (value[i] != ',') return fail("elements must be separated by commas");
    ++i;
  }
}

bool same_parameter_value(std::string_view parameter, std::string_view a, std::string_view b) {
  if (a == b) return true;
  if (!is_quoted_list(parameter)) return false;
  auto x = quoted_list_elements(parameter, a);
  auto y = quoted_list_elements(parameter, b);
  return x && y && *x == *y;
}

}  // namespace pgslow::knobs
