#pragma once
// Small string helpers shared by every module. Look here before writing another.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pgslow {

std::string trim(std::string_view s);
std::string to_lower(std::string_view s);
bool iequals(std::string_view a, std::string_view b);
bool starts_with(std::string_view s, std::string_view prefix);
std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);

// `s` safe to show on a terminal: control characters (C0, DEL, C1, which start escape
// sequences) become \xNN, a tab a space; everything else, UTF-8 included, stays.
std::string printable(std::string_view s);
// Whether `s` holds a control character (printable would change it; tab included).
bool has_control_characters(std::string_view s);

// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word`, if it is close enough to be a plausible typo.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

// Human units: "1.5 MB", "12.3 ms", "4,321".
std::string format_bytes(double bytes);
std::string format_duration_us(double micros);
std::string format_count(std::uint64_t n);

}  // namespace pgslow
