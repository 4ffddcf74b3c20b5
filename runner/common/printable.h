#pragma once
// Text from files anyone may write (scenario and stage names, a journal, a results file) made
// safe for a terminal. Header-only so that the report renderers, which link nothing of the
// runner, use the same rule.

#include <cstdio>
#include <string>
#include <string_view>

namespace pgslow {

namespace detail {
// The length of a control character at s[i] (1 for C0 and DEL, 2 for a UTF-8 C1, 3 for a
// bidirectional control: U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069, which reorder
// what follows them on the screen), or 0.
inline std::size_t control_at(std::string_view s, std::size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x20 || c == 0x7f) return 1;
  if (c == 0xc2 && i + 1 < s.size()) {
    const unsigned char n = static_cast<unsigned char>(s[i + 1]);
    if (n >= 0x80 && n <= 0x9f) return 2;
  }
  if (c == 0xe2 && i + 2 < s.size()) {
    const unsigned char n = static_cast<unsigned char>(s[i + 1]);
    const unsigned char m = static_cast<unsigned char>(s[i + 2]);
    if (n == 0x80 && (m == 0x8e || m == 0x8f || (m >= 0xaa && m <= 0xae))) return 3;
    if (n == 0x81 && m >= 0xa6 && m <= 0xa9) return 3;
  }
  return 0;
}

// The code point of the 3-byte sequence at s[i] (a bidirectional control).
inline unsigned int code_point3(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned int>(s[i + k]) & 0xffu; };
  return ((b(0) & 0x0fu) << 12) | ((b(1) & 0x3fu) << 6) | (b(2) & 0x3fu);
}
}  // namespace detail

// `s` safe to show on a terminal: control characters (C0, DEL, C1: they start escape
// sequences) become \xNN, bidirectional controls (they reorder the text after them) \uNNNN,
// a tab a space; everything else, UTF-8 included, stays.
inline std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = detail::control_at(s, i);
    if (n == 0) {
      out += s[i++];
      continue;
    }
    if (s[i] == '\t') {
      out += ' ';
    } else if (n == 3) {
      char buf[12];
      std::snprintf(buf, sizeof buf, "\\u%04x", detail::code_point3(s, i));
      out += buf;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(s[i + n - 1]));
      out += buf;
    }
    i += n;
  }
  return out;
}

// Whether `s` holds a control character (tab included): printable would change it.
inline bool has_control_characters(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (detail::control_at(s, i) != 0) return true;
  }
  return false;
}

// Why `name` cannot name a file or folder of pgslow's own (a scenario's, lesson's or mystery's
// results folder under results/, a sweep point's): a path of its own, a way out of the folder,
// control characters; empty when it can. The one check every such name goes through.
inline std::string unsafe_file_name_reason(const std::string& name) {
  if (has_control_characters(name)) return "holds control characters";
  if (name.empty()) return "is empty";
  if (name.front() == '/' || name.front() == '~') return "is an absolute path";
  if (name.find_first_of("/\\") != std::string::npos) return "holds a path separator";
  if (name.front() == '.' || name.find("..") != std::string::npos)
    return "starts with '.' or holds \"..\" (a path out of results/)";
  if (name.size() > 100) return "is longer than 100 characters";
  return {};
}

}  // namespace pgslow
