#include "common/strings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace pgslow {

std::string trim(std::string_view s) {
  auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t len = 0;
  unsigned int cp = 0;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr unsigned int kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLength[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

bool is_valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = utf8_sequence_length(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string clip_utf8(std::string_view s, std::size_t max_bytes) {
  std::size_t end = 0;
  while (end < s.size()) {
    const std::size_t len = std::max<std::size_t>(utf8_sequence_length(s, end), 1);
    if (end + len > max_bytes) break;
    end += len;
  }
  return std::string(s.substr(0, end));
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && to_lower(a) == to_lower(b);
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    auto pos = s.find(sep, start);
    out.emplace_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

std::string first_sentence(const std::string& text) {
  const auto end = text.find(". ");
  return end == std::string::npos ? text : text.substr(0, end + 1);
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  const std::string lowered = to_lower(word);
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(lowered, to_lower(c));
    if (!best || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  // A typo changes a few characters; anything further is a different word.
  if (best && best_distance <= std::max<std::size_t>(2, word.size() / 3)) return best;
  return std::nullopt;
}

namespace {
bool parameter_name_part(std::string_view part) {
  if (part.empty()) return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  char first = part.front();
  if (!(letter(first) || first == '_')) return false;
  for (char c : part) {
    if (!(letter(c) || (c >= '0' && c <= '9') || c == '_' || c == '$')) return false;
  }
  return true;
}
}  // namespace

bool is_valid_parameter_name(std::string_view name) {
  if (name.size() > 63) return false;  // NAMEDATALEN - 1
  std::size_t dot = name.find('.');
  if (dot == std::string_view::npos) return parameter_name_part(name);
  return parameter_name_part(name.substr(0, dot)) && parameter_name_part(name.substr(dot + 1));
}

std::optional<double> parse_duration(std::string_view text) {
  std::string s = trim(text);
  if (s.empty()) return std::nullopt;
  std::size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i == 0) return std::nullopt;
  double number = 0;
  try {
    std::size_t used = 0;
    number = std::stod(s.substr(0, i), &used);
    if (used != i) return std::nullopt;
  } catch (...) {
    return std::nullopt;
  }
  std::string unit = to_lower(trim(s.substr(i)));
  double factor = 0;
  if (unit.empty() || unit == "s" || unit == "sec" || unit == "secs" || unit == "seconds") {
    factor = 1;
  } else if (unit == "ms") {
    factor = 0.001;
  } else if (unit == "min" || unit == "m" || unit == "minutes") {
    factor = 60;
  } else if (unit == "h" || unit == "hours") {
    factor = 3600;
  } else {
    return std::nullopt;
  }
  double seconds = number * factor;
  if (!std::isfinite(seconds) || seconds < 0) return std::nullopt;
  return seconds;
}

}  // namespace pgslow
