#pragma once
// The dashboard's door (docs/workshop.md, "The dashboard in a room"): what every request passes
// before it reaches the page, /state or a prediction. The page faces a room of strangers, so
// each client address gets a small token bucket, posts must come from the page's own origin,
// every browser owns its prediction through a token the server issued, and text must be UTF-8.
// Kept apart from the server so that each rule is tested without a network.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace pgslow::workshop {

// What the instructor can set (--room-size) and what the door allows.
struct DashboardLimits {
  std::size_t room_size = 100;     // predictions the page accepts (one per browser)
  std::size_t per_address = 2;     // places one client address may take (--room-per-address)
  std::size_t max_body = 4096;     // bytes of a request body: a name and an answer are small
  std::size_t max_field = 200;     // bytes of a name or an answer (clipped on a character)
  double reads_per_s = 20;         // GET requests per client address, sustained ...
  double read_burst = 60;          // ... and at once (a room behind one NAT address shares them)
  double writes_per_s = 1;         // POST requests (join, predict) per client address ...
  double write_burst = 20;         // ... and at once
  std::size_t max_tokens = 10000;  // browsers that may join in all
  int request_ms = 5000;           // a request must arrive whole within this (slow ones are cut)
  std::size_t connections_per_address = 16;  // open at once; the room's are brief
  // Browsers one client address may join: a few per place (a new tab joins again), so that no
  // address uses up max_tokens for the room.
  std::size_t joins_per_address() const { return 4 * per_address + 8; }
};

// A token bucket per client address. Idle (full) buckets are forgotten when there are more
// than `max_clients`, so the map stays bounded however many addresses knock.
class RateLimiter {
 public:
  RateLimiter(double per_second, double burst, std::size_t max_clients = 4096);
  // Takes a token from `client`'s bucket at `now_us` (microseconds of any steady clock);
  // false when the bucket is empty (answer 429).
  bool allow(const std::string& client, std::int64_t now_us);
  std::size_t clients() const;

 private:
  struct Bucket {
    double tokens = 0;
    std::int64_t at_us = 0;
  };
  void forget_idle(std::int64_t now_us);
  double per_second_;
  double burst_;
  std::size_t max_clients_;
  mutable std::mutex mu_;
  std::map<std::string, Bucket> buckets_;
};

// Why a POST is refused as coming from another site (a page elsewhere making the participant's
// browser post, CSRF), or nullopt. `origin` and `fetch_site` are the request's Origin and
// Sec-Fetch-Site headers (empty when absent: a script without a browser), `host` its Host.
std::optional<std::string> foreign_origin(const std::string& origin, const std::string& fetch_site,
                                          const std::string& host);

// Whether a Host header names this machine's loopback (127.x.x.x, localhost, [::1]), with or
// without a port. A dashboard bound to loopback answers only those: a foreign name that resolves
// to 127.0.0.1 (DNS rebinding) is another site.
bool is_loopback_host(const std::string& host);

// A browser's token: 128 random bits from the kernel's CSPRNG (getrandom), as 32 hex digits.
std::string new_browser_token();

// What to print when the dashboard listens beyond loopback (who can reach it), or nullopt for
// a loopback address.
std::optional<std::string> exposure_warning(const std::string& host, int port);

// A participant's name or answer as the door takes it: nullopt when it is not UTF-8 (the
// caller answers 400), else trimmed, control characters made spaces, clipped to `max_bytes`
// on a character boundary.
std::optional<std::string> room_text(const std::string& text, std::size_t max_bytes);

// A participant's name as the room shows it (dashboard_names.cpp): room_text, then what cannot
// be seen folded away (zero-width and direction characters dropped; no-break and other wide
// spaces made one space) and styled letters made plain (full-width, mathematical, circled:
// "𝐁𝐨𝐛" is "Bob"). nullopt with `why` when it is not UTF-8, mixes the letters of two scripts
// (a look-alike of a Latin name: "Аlice" with a Cyrillic А), or holds letters of a script whose
// look-alikes are not checked (Cherokee, Lisu, Canadian syllabics, ...).
std::optional<std::string> room_name(const std::string& text, std::size_t max_bytes,
                                     std::string* why);

// What two names are compared by: their Latin skeleton, in the spirit of Unicode's UTS #39.
// Case, accents, combining marks and spaces folded away, and every letter that passes for a
// Latin letter or digit read as that one whatever its script (Greek "βοβ", Cyrillic "ьоь",
// small capitals "ʙᴏʙ", "ⓑⓞⓑ" are "bob"; "I" and "l", "rn" and "m" are one). Two names with
// the same key are the same person to the room.
std::string room_name_key(const std::string& name);

// The client a connection's limits are kept for (per-address connections, request rates,
// places in the room): an IPv4 address as it is, an IPv4-mapped IPv6 address as its IPv4
// address, any other IPv6 address as its /64 ("2001:db8:1:2::/64": a host picks addresses in
// its /64 at will). Text that is no address is returned as it is.
std::string client_key(const std::string& address);

}  // namespace pgslow::workshop
