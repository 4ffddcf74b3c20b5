#include "workshop/dashboard_door.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
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

std::string client_key(const std::string& address) {
  in6_addr six{};
  if (::inet_pton(AF_INET6, address.c_str(), &six) != 1) return address;
  char text[INET6_ADDRSTRLEN] = "";
  const unsigned char* b = six.s6_addr;
  if (std::all_of(b, b + 10, [](unsigned char x) { return x == 0; }) && b[10] == 0xFF &&
      b[11] == 0xFF) {  // ::ffff:a.b.c.d
    inet_ntop(AF_INET, &six.s6_addr[12], text, sizeof text);
    return text;
  }
  std::fill(std::begin(six.s6_addr) + 8, std::end(six.s6_addr), 0);
  inet_ntop(AF_INET6, &six, text, sizeof text);
  return std::string(text) + "/64";
}

}  // namespace pgslow::workshop
