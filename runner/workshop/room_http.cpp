#include "workshop/room_http.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "common/errors.h"
#include "common/safe_fs.h"
#include "common/strings.h"

namespace pgslow::workshop {

namespace {

using RoomClock = std::chrono::steady_clock;

constexpr int kRoomConnectMs = 5000;
constexpr int kRoomReadMs = 10000;
constexpr auto kRoomExchangeLimit = std::chrono::seconds(30);

[[noreturn]] void room_fail(const std::string& what) {
  throw RuntimeError(what);
}

std::string too_long() {
  return fmt::format(
      "its answer is longer than {} bytes (4 MiB), far more than a dashboard sends, so pgslow "
      "stopped reading it",
      kMaxRoomAnswer);
}

// "http://HOST[:PORT][/...]" split into host and port ("[::1]:8080" too).
std::pair<std::string, std::string> room_host_port(const std::string& url) {
  const std::string prefix = "http://";
  if (!url.starts_with(prefix)) room_fail("the dashboard's address is http://HOST:PORT");
  std::string rest = url.substr(prefix.size());
  rest = rest.substr(0, rest.find('/'));
  std::string host = rest;
  std::string port = "80";
  if (rest.starts_with("[")) {
    const std::size_t close = rest.find(']');
    if (close == std::string::npos) room_fail("the address has a '[' without its ']'");
    host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') port = rest.substr(close + 2);
  } else if (const std::size_t colon = rest.rfind(':'); colon != std::string::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.empty() || port.empty()) room_fail("the dashboard's address is http://HOST:PORT");
  return {host, port};
}

// Waits until `fd` can do `events`, at most `ms` and never past `deadline`.
void room_wait(int fd, short events, int ms, RoomClock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - RoomClock::now()).count();
  pollfd p{fd, events, 0};
  int r = 0;
  do {
    r = ::poll(&p, 1, static_cast<int>(std::max<long long>(0, std::min<long long>(ms, left))));
  } while (r < 0 && errno == EINTR);
  if (r < 0) room_fail(fmt::format("no answer ({})", std::strerror(errno)));
  if (r == 0) room_fail("no answer in time");
}

UniqueFd room_connect(const std::string& host, const std::string& port,
                      RoomClock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int e = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); e != 0)
    room_fail(fmt::format("no answer ({})", ::gai_strerror(e)));
  std::string why = "no address";
  UniqueFd out;
  for (addrinfo* a = found; a != nullptr && !out; a = a->ai_next) {
    UniqueFd fd(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) continue;
    if (::connect(fd.get(), a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      why = std::strerror(errno);
      continue;
    }
    try {
      room_wait(fd.get(), POLLOUT, kRoomConnectMs, deadline);
    } catch (const RuntimeError& e) {
      why = "no connection in time";
      continue;
    }
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      why = std::strerror(err);
      continue;
    }
    out = std::move(fd);
  }
  ::freeaddrinfo(found);
  if (!out) room_fail(fmt::format("no answer ({})", why));
  return out;
}

// An answer as it arrives: its head parsed once, a chunked body decoded chunk by chunk.
class RoomReader {
 public:
  // The answer in `raw` once it is complete (`eof`: the dashboard closed the connection).
  std::optional<RoomAnswer> complete(const std::string& raw, bool eof) {
    if (!head_done_ && !parse_head(raw)) return std::nullopt;
    if (chunked_) {
      if (!unchunk(raw)) return std::nullopt;
    } else if (length_) {
      if (raw.size() - pos_ < *length_) return std::nullopt;
      out_.body = raw.substr(pos_, *length_);
    } else {
      if (!eof) return std::nullopt;
      out_.body = raw.substr(pos_);
    }
    return out_;
  }

 private:
  bool parse_head(const std::string& raw) {
    const std::size_t head_end = raw.find("\r\n\r\n");
    if (head_end == std::string::npos) return false;
    if (!raw.starts_with("HTTP/1.") || raw.size() < 12 ||
        std::sscanf(raw.c_str() + 9, "%3d", &out_.status) != 1)
      room_fail("the answer is not HTTP");
    for (const std::string& line : split(raw.substr(0, head_end), '\n')) {
      const std::string l = to_lower(trim(line));
      if (l.starts_with("content-length:")) length_ = std::strtoull(l.c_str() + 15, nullptr, 10);
      if (l.starts_with("transfer-encoding:") && l.find("chunked") != std::string::npos)
        chunked_ = true;
    }
    if (length_ && *length_ > kMaxRoomAnswer) room_fail(too_long());
    pos_ = head_end + 4;
    head_done_ = true;
    return true;
  }

  // Takes the complete chunks from pos_ on; true at the last one (and its trailers).
  bool unchunk(const std::string& raw) {
    for (;;) {
      const std::size_t eol = raw.find("\r\n", pos_);
      if (eol == std::string::npos) return false;
      if (last_chunk_) {
        // Trailers, if any, end with an empty line.
        if (eol == pos_) return true;
        pos_ = eol + 2;
        continue;
      }
      const std::string line = raw.substr(pos_, eol - pos_);
      char* end = nullptr;
      const unsigned long long size = std::strtoull(line.c_str(), &end, 16);
      if (end == line.c_str()) room_fail("the answer is not HTTP (a chunk without its size)");
      if (size > kMaxRoomAnswer) room_fail(too_long());
      if (size == 0) {
        last_chunk_ = true;
        pos_ = eol + 2;
        continue;
      }
      if (raw.size() < eol + 2 + size + 2) return false;
      out_.body.append(raw, eol + 2, size);
      pos_ = eol + 2 + size + 2;
    }
  }

  RoomAnswer out_;
  bool head_done_ = false;
  bool chunked_ = false;
  bool last_chunk_ = false;
  std::optional<std::size_t> length_;
  std::size_t pos_ = 0;  // the first byte not yet taken
};

void room_send_all(int fd, const std::string& request, RoomClock::time_point deadline) {
  for (std::size_t done = 0; done < request.size();) {
    room_wait(fd, POLLOUT, kRoomReadMs, deadline);
    const ssize_t n = ::send(fd, request.data() + done, request.size() - done, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n < 0) room_fail(fmt::format("the request was not sent ({})", std::strerror(errno)));
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

RoomAnswer room_exchange(const std::string& url, const std::string& method, const std::string& path,
                         const std::vector<std::pair<std::string, std::string>>& headers,
                         const std::string& body, const std::string& content_type) {
  const auto deadline = RoomClock::now() + kRoomExchangeLimit;
  const auto [host, port] = room_host_port(url);
  UniqueFd fd = room_connect(host, port, deadline);
  std::string request = fmt::format(
      "{} {} HTTP/1.1\r\nHost: {}:{}\r\nConnection: close\r\nContent-Type: {}\r\n"
      "Content-Length: {}\r\n",
      method, path, host.find(':') == std::string::npos ? host : "[" + host + "]", port,
      content_type, body.size());
  for (const auto& [name, value] : headers) request += name + ": " + value + "\r\n";
  request += "\r\n" + body;
  room_send_all(fd.get(), request, deadline);
  std::string raw;
  RoomReader reader;
  char buf[65536];
  for (;;) {
    if (std::optional<RoomAnswer> done = reader.complete(raw, false)) return *done;
    room_wait(fd.get(), POLLIN, kRoomReadMs, deadline);
    // One byte past the cap at most: enough to tell a longer answer.
    const ssize_t n =
        ::recv(fd.get(), buf, std::min(sizeof buf, kMaxRoomAnswer + 1 - raw.size()), 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n < 0) room_fail(fmt::format("no answer ({})", std::strerror(errno)));
    if (n == 0) {
      if (std::optional<RoomAnswer> done = reader.complete(raw, true)) return *done;
      room_fail("the connection closed before the answer was complete");
    }
    raw.append(buf, static_cast<std::size_t>(n));
    if (raw.size() > kMaxRoomAnswer) room_fail(too_long());
  }
}

}  // namespace pgslow::workshop
