#include "workshop/dashboard_door.h"

#include <fmt/format.h>
#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "common/strings.h"

namespace pgslow::workshop {

RateLimiter::RateLimiter(double per_second, double burst, std::size_t max_clients)
    : per_second_(per_second), burst_(std::max(burst, 1.0)), max_clients_(max_clients) {}

bool RateLimiter::allow(const std::string& client, std::int64_t now_us) {
  std::lock_guard lock(mu_);
  auto it = buckets_.find(client);
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_clients_) forget_idle(now_us);
    if (buckets_.size() >= max_clients_) return false;  // every bucket busy: a flood
    it = buckets_.emplace(client, Bucket{burst_, now_us}).first;
  }
  Bucket& b = it->second;
  const double elapsed = static_cast<double>(std::max<std::int64_t>(now_us - b.at_us, 0)) / 1e6;
  b.tokens = std::min(burst_, b.tokens + elapsed * per_second_);
  b.at_us = now_us;
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

std::size_t RateLimiter::clients() const {
  std::lock_guard lock(mu_);
  return buckets_.size();
}

void RateLimiter::forget_idle(std::int64_t now_us) {
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    const double elapsed = static_cast<double>(now_us - it->second.at_us) / 1e6;
    if (it->second.tokens + elapsed * per_second_ >= burst_) {
      it = buckets_.erase(it);
    } else {
      ++it;
    }
  }
}

namespace {

// "http://host:port/..." -> "host:port" (lower case); "" when it is not an http(s) URL.
std::string authority_of(const std::string& url) {
  const std::string lower = to_lower(url);
  std::string rest;
  if (starts_with(lower, "http://")) {
    rest = lower.substr(7);
  } else if (starts_with(lower, "https://")) {
    rest = lower.substr(8);
  } else {
    return "";
  }
  return rest.substr(0, rest.find('/'));
}

}  // namespace

std::optional<std::string> foreign_origin(const std::string& origin, const std::string& fetch_site,
                                          const std::string& host) {
  if (!fetch_site.empty() && fetch_site != "same-origin" && fetch_site != "none")
    return fmt::format("a page on another site (Sec-Fetch-Site: {}) may not post here", fetch_site);
  if (origin.empty()) return std::nullopt;  // not a browser's cross-site request
  if (origin == "null" || authority_of(origin) != to_lower(host))
    return "a page on another origin may not post here (only the dashboard's own page)";
  return std::nullopt;
}

bool is_loopback_host(const std::string& host) {
  std::string name = to_lower(host);
  if (starts_with(name, "[")) {
    name = name.substr(1, name.find(']') == std::string::npos ? 0 : name.find(']') - 1);
  } else if (const auto colon = name.rfind(':'); colon != std::string::npos) {
    name = name.substr(0, colon);
  }
  if (name == "localhost" || name == "::1") return true;
  const std::vector<std::string> parts = split(name, '.');
  if (parts.size() != 4 || parts[0] != "127") return false;
  return std::all_of(parts.begin(), parts.end(), [](const std::string& p) {
    return !p.empty() && p.size() <= 3 &&
           std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
  });
}

std::string new_browser_token() {
  unsigned char bytes[16];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw RuntimeError("the dashboard cannot read random bytes (getrandom failed)");
    got += static_cast<std::size_t>(n);
  }
  std::string out;
  for (unsigned char b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

std::optional<std::string> exposure_warning(const std::string& host, int port) {
  if (is_loopback_host(host)) return std::nullopt;
  const std::string who = host == "0.0.0.0" || host == "::" || host.empty()
                              ? "every network this machine is on"
                              : "the network of " + host;
  return fmt::format(
      "WARNING: the dashboard listens on {}:{}: anyone who can reach that address from {} "
      "(the room, and further if no firewall stops it) can open the page and send predictions. "
      "Limits: one prediction per browser, a room of --room-size, --room-per-address places "
      "per address, requests per address rate-limited.",
      host, port, who);
}

std::optional<std::string> room_text(const std::string& text, std::size_t max_bytes) {
  if (!is_valid_utf8(text)) return std::nullopt;
  std::string s = text;
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return trim(clip_utf8(trim(s), max_bytes));
}

}  // namespace pgslow::workshop

namespace pgslow::workshop {

namespace {

// The code points of valid UTF-8 `s`.
std::vector<char32_t> code_points(std::string_view s) {
  std::vector<char32_t> out;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = utf8_sequence_length(s, i);
    auto c = static_cast<char32_t>(static_cast<unsigned char>(s[i]));
    if (len > 1) c &= (0xFFu >> (len + 1));
    for (std::size_t k = 1; k < len; ++k)
      c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
    out.push_back(c);
    i += std::max<std::size_t>(len, 1);
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// Characters that show nothing: zero-width spaces and joiners, direction marks and overrides,
// the soft hyphen, variation selectors, Hangul fillers, the byte order mark.
bool invisible(char32_t c) {
  return c == 0xAD || c == 0x34F || c == 0x61C || c == 0x115F || c == 0x1160 || c == 0x17B4 ||
         c == 0x17B5 || c == 0x180E || (c >= 0x200B && c <= 0x200F) ||
         (c >= 0x202A && c <= 0x202E) || (c >= 0x2060 && c <= 0x206F) || c == 0x3164 ||
         (c >= 0xFE00 && c <= 0xFE0F) || c == 0xFEFF || c == 0xFFA0 ||
         (c >= 0xE0000 && c <= 0xE0FFF);
}

// Characters that show as a space.
bool wide_space(char32_t c) {
  return c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

enum class Script { kNone, kLatin, kGreek, kCyrillic };

Script script_of(char32_t c) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
      (c >= 0xC0 && c <= 0x24F && c != 0xD7 && c != 0xF7) || (c >= 0x1E00 && c <= 0x1EFF))
    return Script::kLatin;
  if ((c >= 0x370 && c <= 0x3FF) || (c >= 0x1F00 && c <= 0x1FFF)) return Script::kGreek;
  if ((c >= 0x400 && c <= 0x52F) || (c >= 0x1C80 && c <= 0x1C8F)) return Script::kCyrillic;
  return Script::kNone;
}

// The table of looks_like, by script: a character and the Latin letter it passes for.
// clang-format off
constexpr std::pair<char32_t, char32_t> kLookAlikes[] = {
    // Cyrillic
    {0x410, 'A'}, {0x412, 'B'}, {0x415, 'E'}, {0x41A, 'K'}, {0x41C, 'M'}, {0x41D, 'H'}, {0x41E, 'O'},
    {0x420, 'P'}, {0x421, 'C'}, {0x422, 'T'}, {0x423, 'Y'}, {0x425, 'X'}, {0x405, 'S'}, {0x406, 'I'},
    {0x408, 'J'}, {0x4AE, 'Y'}, {0x500, 'D'}, {0x51A, 'Q'}, {0x51C, 'W'}, {0x4C0, 'I'}, {0x430, 'a'},
    {0x435, 'e'}, {0x43E, 'o'}, {0x440, 'p'}, {0x441, 'c'}, {0x443, 'y'}, {0x445, 'x'}, {0x455, 's'},
    {0x456, 'i'}, {0x458, 'j'}, {0x501, 'd'}, {0x4BB, 'h'}, {0x51B, 'q'}, {0x51D, 'w'}, {0x4CF, 'l'},
    {0x43A, 'k'}, {0x475, 'v'}, {0x457, 'i'}, {0x451, 'e'},
    // Greek
    {0x391, 'A'}, {0x392, 'B'}, {0x395, 'E'}, {0x396, 'Z'}, {0x397, 'H'}, {0x399, 'I'}, {0x39A, 'K'},
    {0x39C, 'M'}, {0x39D, 'N'}, {0x39F, 'O'}, {0x3A1, 'P'}, {0x3A4, 'T'}, {0x3A5, 'Y'}, {0x3A7, 'X'},
    {0x3BF, 'o'}, {0x3B1, 'a'}, {0x3B9, 'i'}, {0x3BA, 'k'}, {0x3BD, 'v'}, {0x3C1, 'p'}, {0x3C5, 'u'},
    {0x3C7, 'x'},
    // Latin-1 letters, unaccented
    {0xC0, 'A'}, {0xC1, 'A'}, {0xC2, 'A'}, {0xC3, 'A'}, {0xC4, 'A'}, {0xC5, 'A'}, {0xC7, 'C'},
    {0xC8, 'E'}, {0xC9, 'E'}, {0xCA, 'E'}, {0xCB, 'E'}, {0xCC, 'I'}, {0xCD, 'I'}, {0xCE, 'I'},
    {0xCF, 'I'}, {0xD1, 'N'}, {0xD2, 'O'}, {0xD3, 'O'}, {0xD4, 'O'}, {0xD5, 'O'}, {0xD6, 'O'},
    {0xD8, 'O'}, {0xD9, 'U'}, {0xDA, 'U'}, {0xDB, 'U'}, {0xDC, 'U'}, {0xDD, 'Y'}, {0xE0, 'a'},
    {0xE1, 'a'}, {0xE2, 'a'}, {0xE3, 'a'}, {0xE4, 'a'}, {0xE5, 'a'}, {0xE7, 'c'}, {0xE8, 'e'},
    {0xE9, 'e'}, {0xEA, 'e'}, {0xEB, 'e'}, {0xEC, 'i'}, {0xED, 'i'}, {0xEE, 'i'}, {0xEF, 'i'},
    {0xF1, 'n'}, {0xF2, 'o'}, {0xF3, 'o'}, {0xF4, 'o'}, {0xF5, 'o'}, {0xF6, 'o'}, {0xF8, 'o'},
    {0xF9, 'u'}, {0xFA, 'u'}, {0xFB, 'u'}, {0xFC, 'u'}, {0xFD, 'y'}, {0xFF, 'y'},
};
// clang-format on

// Cyrillic and Greek letters drawn like a Latin one, and Latin-1 letters with their accent off:
// the Latin letter they pass for (a subset of Unicode's confusables, the ones a name would use).
char32_t looks_like(char32_t c) {
  static const std::map<char32_t, char32_t> kLike(std::begin(kLookAlikes), std::end(kLookAlikes));
  const auto it = kLike.find(c);
  return it == kLike.end() ? c : it->second;
}

}  // namespace

std::optional<std::string> room_name(const std::string& text, std::size_t max_bytes,
                                     std::string* why) {
  const std::optional<std::string> clean = room_text(text, max_bytes);
  if (!clean) {
    if (why != nullptr) *why = "the name must be UTF-8 text";
    return std::nullopt;
  }
  std::string out;
  std::set<Script> scripts;
  for (char32_t c : code_points(*clean)) {
    if (invisible(c)) continue;
    if (wide_space(c)) c = ' ';
    if (c >= 0xFF01 && c <= 0xFF5E) c = c - 0xFF01 + '!';  // full-width ASCII
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    if (const Script s = script_of(c); s != Script::kNone) scripts.insert(s);
    append_utf8(out, c);
  }
  if (scripts.size() > 1) {
    if (why != nullptr) {
      *why =
          "the name mixes Latin, Cyrillic or Greek letters (some look alike): write it in one "
          "alphabet";
    }
    return std::nullopt;
  }
  return trim(out);
}

std::string room_name_key(const std::string& name) {
  std::string folded;
  for (char32_t c : code_points(name)) {
    if (invisible(c) || (c >= 0x300 && c <= 0x36F)) continue;  // combining accents too
    if (wide_space(c) || c == ' ') continue;
    c = looks_like(c);
    if (c >= 'A' && c <= 'Z') c = c - 'A' + 'a';
    if (c == 'i' || c == '1' || c == '|') c = 'l';  // "I" and "l" are drawn alike in most fonts
    if (c == '0') c = 'o';
    if ((c >= 0x410 && c <= 0x42F) || (c >= 0x391 && c <= 0x3A9)) c += 0x20;  // lower case
    if (c >= 0x400 && c <= 0x40F) c += 0x50;
    append_utf8(folded, c);
  }
  std::string key;
  for (std::size_t i = 0; i < folded.size(); ++i) {
    if (folded.compare(i, 2, "rn") == 0) {
      key += 'm';
      ++i;
    } else if (folded.compare(i, 2, "vv") == 0) {
      key += 'w';
      ++i;
    } else {
      key += folded[i];
    }
  }
  return key;
}

}  // namespace pgslow::workshop
