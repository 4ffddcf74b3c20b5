#pragma once
// Small string helpers shared by every module. Look here before writing another.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/printable.h"  // printable(): text safe for a terminal

namespace pgslow {

std::string trim(std::string_view s);
std::string to_lower(std::string_view s);
bool iequals(std::string_view a, std::string_view b);
bool starts_with(std::string_view s, std::string_view prefix);
std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
// A description's first sentence (up to the first ". "), for a list of one line per entry.
std::string first_sentence(const std::string& text);

// A PostgreSQL parameter name as it may go into SQL as an identifier: [A-Za-z_][A-Za-z0-9_$]*,
// at most one dot (a custom "extension.name" parameter), at most 63 bytes. Letters of either
// case: the server's own TimeZone and DateStyle (PostgreSQL compares names without case).
bool is_valid_parameter_name(std::string_view name);

// UTF-8 (one place for it: YAML input, the dashboard's door). The length of the sequence
// starting at s[i], or 0 when it is not valid UTF-8 (overlong forms, surrogates and code points
// above U+10FFFF included).
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);
bool is_valid_utf8(std::string_view s);
// At most `max_bytes` of `s`, cut at a character boundary (never inside a UTF-8 sequence).
std::string clip_utf8(std::string_view s, std::size_t max_bytes);

// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word`, if it is close enough to be a plausible typo.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

// "5s", "1min", "500ms", "2h", or a bare number of seconds; nullopt when not a duration.
std::optional<double> parse_duration(std::string_view text);

}  // namespace pgslow
