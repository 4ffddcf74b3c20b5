#include "workshop/dashboard_server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <list>
#include <vector>

#include "common/clock.h"
#include "common/errors.h"
#include "common/strings.h"
#include "workshop/dashboard_door.h"

namespace pgslow::workshop {

namespace {

// Bytes of chunk framing allowed around `max_body` bytes of data (one-byte chunks cost six).
std::size_t chunked_raw_limit(std::size_t max_body) {
  return 8 * max_body + 1024;
}
// A connection that was answered is read (and what it sends dropped) this long and this much
// before it is closed, so that a client still sending receives the answer rather than a reset.
constexpr int kDrainMs = 1000;
constexpr std::size_t kDrainBytes = 64 * 1024;
// Bytes read from one connection per turn of the loop: a fast sender does not hold the loop.
constexpr std::size_t kTurnBytes = 64 * 1024;

const char* reason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Payload Too Large";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    default:
      return status < 500 ? "Error" : "Internal Server Error";
  }
}

std::string response_head(const HttpResponse& r, std::size_t length) {
  std::string head = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n", r.status,
      reason(r.status), r.content_type, length);
  for (const auto& [name, value] : r.headers) head += fmt::format("{}: {}\r\n", name, value);
  return head + "\r\n";
}

// An answer said once, without waiting for the client to take it (a refusal at the door of the
// loop: the connection is closed right after).
void say_and_close(int fd, const HttpResponse& r) {
  const std::string whole = response_head(r, r.body.size()) + r.body;
  (void)::send(fd, whole.data(), whole.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::close(fd);
}

HttpResponse plain(int status, std::string text) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(text) + "\n";
  return r;
}

std::string address_of(const sockaddr_storage& sa) {
  char text[INET6_ADDRSTRLEN] = "";
  if (sa.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(sa).sin_addr, text, sizeof text);
  } else if (sa.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(sa).sin6_addr, text, sizeof text);
  }
  return text;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The value of `name` in "a=1&b=2", decoded; nullopt when absent.
std::optional<std::string> form_value(std::string_view form, const std::string& name) {
  for (const std::string& pair : split(form, '&')) {
    const auto eq = pair.find('=');
    if (url_decode(std::string_view(pair).substr(0, eq)) != name) continue;
    return eq == std::string::npos ? "" : url_decode(std::string_view(pair).substr(eq + 1));
  }
  return std::nullopt;
}

}  // namespace

std::string HttpRequest::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

std::string HttpRequest::param(const std::string& name) const {
  if (auto v = form_value(query, name)) return *v;
  if (starts_with(to_lower(header("content-type")), "application/x-www-form-urlencoded")) {
    if (auto v = form_value(body, name)) return *v;
  }
  return "";
}

std::string url_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 &&
               hex_value(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

Chunked read_chunked(std::string_view raw, std::size_t max_body) {
  Chunked c;
  std::size_t pos = 0;
  auto line_end = [&](std::size_t from) { return raw.find("\r\n", from); };
  for (;;) {
    const std::size_t eol = line_end(pos);
    if (eol == std::string_view::npos) {
      if (raw.size() - pos > 256) c.state = Chunked::State::kMalformed;  // no size line is long
      return c;
    }
    std::string_view size = raw.substr(pos, eol - pos);
    size = size.substr(0, size.find(';'));  // a chunk extension says nothing to us
    while (!size.empty() && (size.back() == ' ' || size.back() == '\t')) size.remove_suffix(1);
    if (size.empty() || size.size() > 8 ||
        !std::all_of(size.begin(), size.end(), [](char ch) { return hex_value(ch) >= 0; })) {
      c.state = size.size() > 8 ? Chunked::State::kTooLarge : Chunked::State::kMalformed;
      return c;
    }
    std::size_t n = 0;
    for (char ch : size) n = n * 16 + static_cast<std::size_t>(hex_value(ch));
    pos = eol + 2;
    if (n == 0) {  // the last chunk, then trailer lines up to an empty one
      for (;;) {
        const std::size_t end = line_end(pos);
        if (end == std::string_view::npos) return c;
        if (end == pos) {
          c.state = Chunked::State::kComplete;
          c.used = end + 2;
          return c;
        }
        pos = end + 2;
      }
    }
    if (c.body.size() + n > max_body) {
      c.state = Chunked::State::kTooLarge;
      return c;
    }
    if (raw.size() < pos + n + 2) return c;
    if (raw.substr(pos + n, 2) != "\r\n") {
      c.state = Chunked::State::kMalformed;
      return c;
    }
    c.body.append(raw.substr(pos, n));
    pos += n + 2;
  }
}

// Every connection and what it has come to. The loop owns them; nothing else touches them.
struct DashboardServer::Loop {
  enum class Phase { kHead, kBody, kWrite, kDrain };
  struct Conn {
    int fd = -1;
    std::string addr;
    Phase phase = Phase::kHead;
    std::int64_t deadline_us = 0;
    std::string in;  // what arrived: the head, then the body as sent
    std::size_t head_len = 0;
    bool chunked = false;
    std::size_t content_length = 0;
    HttpRequest req;
    std::string out_head;
    std::shared_ptr<const std::string> out_body;
    std::string own_body;
    std::size_t sent = 0;
    std::size_t drained = 0;
  };

  ServerLimits limits;
  Door door;
  Handler handle;
  std::list<Conn> conns;
  std::map<std::string, std::size_t> per_address;
  std::int64_t accept_after_us = 0;  // accepting paused until then (out of descriptors)

  std::int64_t ms(int n) const { return now_us() + std::int64_t{n} * 1000; }

  void close(std::list<Conn>::iterator it) {
    if (it->fd >= 0) ::close(it->fd);
    if (--per_address[it->addr] == 0) per_address.erase(it->addr);
    conns.erase(it);
  }

  void accept_all(int listen_fd) {
    for (;;) {
      sockaddr_storage sa{};
      socklen_t len = sizeof sa;
      const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&sa), &len,
                               SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        // Out of descriptors (or memory): the waiting connection stays in the backlog, and the
        // loop does not spin on it; it is taken a little later.
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
          accept_after_us = ms(100);
        return;  // EAGAIN: none waiting
      }
      const std::string addr = client_key(address_of(sa));
      const auto held_it = per_address.find(addr);
      const std::size_t held = held_it == per_address.end() ? 0 : held_it->second;
      const bool busy = conns.size() >= limits.max_connections / 2;
      if (held >= limits.per_address || (busy && held >= limits.busy_per_address)) {
        // Answered at once and let go: this address holds its share of the connections.
        say_and_close(
            fd, plain(503, "too many open connections from your address: try again in a moment"));
        continue;
      }
      if (conns.size() >= limits.max_connections && !make_room_for(held)) {
        say_and_close(fd, plain(503, "the dashboard is full: try again in a moment"));
        continue;
      }
      ++per_address[addr];
      Conn c;
      c.fd = fd;
      c.addr = addr;
      c.deadline_us = ms(limits.request_ms);
      c.req.remote_addr = addr;
      conns.push_back(std::move(c));
    }
  }

  // The dashboard is full and an address holding `held` connections knocks: the oldest
  // request still arriving from the address that holds the most goes (503), when that address
  // holds more than the newcomer would. So addresses that hold connections open cannot keep
  // the others out, however many of them there are; false when no one holds more.
  bool make_room_for(std::size_t held) {
    auto victim = conns.end();
    std::size_t most = held + 1;
    for (auto it = conns.begin(); it != conns.end(); ++it) {
      if (it->phase != Phase::kHead && it->phase != Phase::kBody) continue;
      const std::size_t n = per_address[it->addr];
      if (n > most) {
        most = n;
        victim = it;
      }
    }
    if (victim == conns.end()) return false;
    say_and_close(victim->fd, plain(503,
                                    "the dashboard is full and your request was still "
                                    "arriving: try again in a moment"));
    victim->fd = -1;
    close(victim);
    return true;
  }

  void answer(Conn& c, HttpResponse r) {
    if (c.req.method == "HEAD") {
      const std::size_t length = r.shared_body ? r.shared_body->size() : r.body.size();
      c.out_head = response_head(r, length);
      r.shared_body.reset();
      r.body.clear();
    } else {
      c.out_head = response_head(r, r.shared_body ? r.shared_body->size() : r.body.size());
    }
    c.out_body = std::move(r.shared_body);
    c.own_body = std::move(r.body);
    c.in.clear();
    c.in.shrink_to_fit();
    c.phase = Phase::kWrite;
    c.deadline_us = ms(limits.write_ms);
  }

  // The head has arrived whole: parse it, let the door see it, then wait for the body.
  void read_head(Conn& c) {
    const std::string_view head = std::string_view(c.in).substr(0, c.head_len - 4);
    std::vector<std::string> lines;
    std::size_t pos = 0;
    while (pos <= head.size()) {
      const std::size_t eol = head.find("\r\n", pos);
      lines.emplace_back(head.substr(pos, eol == std::string_view::npos ? eol : eol - pos));
      if (eol == std::string_view::npos) break;
      pos = eol + 2;
    }
    const std::vector<std::string> start = split(lines[0], ' ');
    if (start.size() != 3 || !starts_with(start[2], "HTTP/1.") || start[1].empty() ||
        start[1][0] != '/')
      return answer(c, plain(400, "not an HTTP/1.1 request"));
    c.req.method = start[0];
    const auto q = start[1].find('?');
    c.req.path = start[1].substr(0, q);
    if (q != std::string::npos) c.req.query = start[1].substr(q + 1);
    for (std::size_t i = 1; i < lines.size(); ++i) {
      const auto colon = lines[i].find(':');
      if (colon == std::string::npos || colon == 0)
        return answer(c, plain(400, "a header line without a name"));
      const std::string name = to_lower(lines[i].substr(0, colon));
      const std::string value = trim(lines[i].substr(colon + 1));
      auto [it, fresh] = c.req.headers.emplace(name, value);
      if (!fresh) {
        // Two of these could be read two ways (request smuggling): refuse rather than choose.
        if (name == "host" || name == "content-length" || name == "transfer-encoding")
          return answer(c, plain(400, fmt::format("the header {} appears twice", name)));
        it->second += ", " + value;
      }
    }
    const std::string length = c.req.header("content-length");
    const std::string coding = to_lower(c.req.header("transfer-encoding"));
    if (!length.empty() && !coding.empty())
      return answer(c, plain(400, "Content-Length and Transfer-Encoding together"));
    if (!coding.empty() && coding != "chunked")
      return answer(c, plain(501, "a body is sent as it is or chunked, nothing else"));
    if (!length.empty() && !all_digits(length))
      return answer(c, plain(400, "Content-Length is not a number"));
    if (length.size() > 9 || (!length.empty() && std::stoul(length) > limits.max_body)) {
      return answer(c, plain(413, fmt::format("a request body holds {} bytes at most; this one "
                                              "was refused before it was read",
                                              limits.max_body)));
    }
    c.chunked = !coding.empty();
    c.content_length = length.empty() ? 0 : std::stoul(length);
    if (std::optional<HttpResponse> refused = door(c.req)) return answer(c, std::move(*refused));
    if (iequals(c.req.header("expect"), "100-continue")) {
      constexpr std::string_view kGoOn = "HTTP/1.1 100 Continue\r\n\r\n";
      (void)::send(c.fd, kGoOn.data(), kGoOn.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    c.phase = Phase::kBody;
    read_body(c);
  }

  // Whether the body has arrived whole (then handled), or is refused.
  void read_body(Conn& c) {
    const std::string_view raw = std::string_view(c.in).substr(c.head_len);
    if (c.chunked) {
      Chunked body = read_chunked(raw, limits.max_body);
      if (body.state == Chunked::State::kIncomplete &&
          raw.size() > chunked_raw_limit(limits.max_body))
        body.state = Chunked::State::kTooLarge;
      switch (body.state) {
        case Chunked::State::kIncomplete:
          return;
        case Chunked::State::kTooLarge:
          return answer(c, plain(413, fmt::format("a request body holds {} bytes at most (chunked "
                                                  "or not); this one was cut off there",
                                                  limits.max_body)));
        case Chunked::State::kMalformed:
          return answer(c, plain(400, "the chunked body is malformed"));
        case Chunked::State::kComplete:
          c.req.body = std::move(body.body);
          break;
      }
    } else {
      if (raw.size() < c.content_length) return;
      c.req.body = std::string(raw.substr(0, c.content_length));
    }
    HttpResponse r;
    try {
      r = handle(c.req);
    } catch (const std::exception& e) {
      spdlog::warn("dashboard: {} {} failed: {}", c.req.method, printable(c.req.path), e.what());
      r = plain(500, "the dashboard failed on this request");
    }
    answer(c, std::move(r));
  }

  // How many bytes this connection may still add to `in` now.
  std::size_t room_for(const Conn& c) const {
    if (c.phase == Phase::kHead)
      return limits.max_head + 4 - std::min(c.in.size(), limits.max_head + 4);
    if (!c.chunked) return c.head_len + c.content_length - c.in.size();
    const std::size_t cap = c.head_len + chunked_raw_limit(limits.max_body) + 1;
    return cap - std::min(cap, c.in.size());
  }

  // Reads what arrived; false when the connection is done with (closed).
  bool readable(std::list<Conn>::iterator it) {
    Conn& c = *it;
    char buf[4096];
    std::size_t turn = 0;
    while (turn < kTurnBytes &&
           (c.phase == Phase::kHead || c.phase == Phase::kBody || c.phase == Phase::kDrain)) {
      const std::size_t want =
          c.phase == Phase::kDrain ? sizeof buf : std::min(sizeof buf, room_for(c));
      if (want == 0) break;
      const ssize_t n = ::recv(c.fd, buf, want, 0);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        close(it);  // the client went away (or is done reading our answer)
        return false;
      }
      if (n < 0) break;
      turn += static_cast<std::size_t>(n);
      if (c.phase == Phase::kDrain) {
        c.drained += static_cast<std::size_t>(n);
        if (c.drained > kDrainBytes) {
          close(it);
          return false;
        }
        continue;
      }
      c.in.append(buf, static_cast<std::size_t>(n));
      if (c.phase == Phase::kHead) {
        const std::size_t end = c.in.find("\r\n\r\n");
        if (end == std::string::npos || end + 4 > limits.max_head) {
          if (c.in.size() > limits.max_head) {
            answer(c, plain(431, fmt::format("a request's line and headers hold {} bytes at most",
                                             limits.max_head)));
          }
          continue;
        }
        c.head_len = end + 4;
        read_head(c);
      }
      if (c.phase == Phase::kBody) read_body(c);
    }
    return true;
  }

  // Sends what it can of the answer; false when the connection is closed.
  bool writable(std::list<Conn>::iterator it) {
    Conn& c = *it;
    const std::string_view body = c.out_body ? std::string_view(*c.out_body) : c.own_body;
    while (c.sent < c.out_head.size() + body.size()) {
      const std::string_view part = c.sent < c.out_head.size()
                                        ? std::string_view(c.out_head).substr(c.sent)
                                        : body.substr(c.sent - c.out_head.size());
      const ssize_t n = ::send(c.fd, part.data(), part.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
      if (n <= 0) {
        close(it);
        return false;
      }
      c.sent += static_cast<std::size_t>(n);
    }
    // All sent: say so, and read what the client still sends until it closes (bounded).
    ::shutdown(c.fd, SHUT_WR);
    c.out_body.reset();
    c.own_body.clear();
    c.phase = Phase::kDrain;
    c.deadline_us = ms(kDrainMs);
    return true;
  }

  void expire(std::int64_t now) {
    for (auto it = conns.begin(); it != conns.end();) {
      auto next = std::next(it);
      if (now >= it->deadline_us) {
        if (it->phase == Phase::kHead || it->phase == Phase::kBody) {
          say_and_close(it->fd, plain(408, fmt::format("a request must arrive whole within {} ms",
                                                       limits.request_ms)));
          it->fd = -1;
        }
        close(it);
      }
      it = next;
    }
  }
};

DashboardServer::DashboardServer(const std::string& host, int port, ServerLimits limits, Door door,
                                 Handler handle)
    : loop_(std::make_unique<Loop>()) {
  loop_->limits = limits;
  loop_->door = std::move(door);
  loop_->handle = std::move(handle);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  std::string why = "not an address of this machine";
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    why = gai_strerror(rc);
    found = nullptr;
  }
  for (addrinfo* a = found; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
      listen_fd_ = fd;
    } else {
      why = std::strerror(errno);
      ::close(fd);
    }
  }
  if (found != nullptr) ::freeaddrinfo(found);
  if (listen_fd_ < 0) throw InputError(fmt::format("cannot listen on {}:{} ({})", host, port, why));
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(bound).sin6_port
                                            : reinterpret_cast<const sockaddr_in&>(bound).sin_port);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    ::close(listen_fd_);
    throw RuntimeError(
        fmt::format("the dashboard cannot create an eventfd: {}", std::strerror(errno)));
  }
  thread_ = std::thread([this] { run(); });
}

DashboardServer::~DashboardServer() {
  stopping_ = true;
  const std::uint64_t one = 1;
  (void)::write(wake_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  while (!loop_->conns.empty()) loop_->close(loop_->conns.begin());
  ::close(listen_fd_);
  ::close(wake_fd_);
}

void DashboardServer::run() {
  Loop& loop = *loop_;
  std::vector<pollfd> fds;
  std::vector<std::list<Loop::Conn>::iterator> polled;
  while (!stopping_) {
    fds.clear();
    polled.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    const bool accepting = now_us() >= loop.accept_after_us;
    fds.push_back({listen_fd_, static_cast<short>(accepting ? POLLIN : 0), 0});
    std::int64_t next_deadline = accepting ? now_us() + 1'000'000 : loop.accept_after_us;
    for (auto it = loop.conns.begin(); it != loop.conns.end(); ++it) {
      const short events = it->phase == Loop::Phase::kWrite ? POLLOUT : POLLIN;
      fds.push_back({it->fd, events, 0});
      polled.push_back(it);
      next_deadline = std::min(next_deadline, it->deadline_us);
    }
    const auto wait_ms =
        static_cast<int>(std::max<std::int64_t>(next_deadline - now_us(), 0) / 1000 + 1);
    if (::poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) {
      spdlog::warn("dashboard: poll failed: {}", std::strerror(errno));
      return;
    }
    if (stopping_) return;
    for (std::size_t i = 0; i < polled.size(); ++i) {
      const short got = fds[i + 2].revents;
      if (got == 0) continue;
      auto it = polled[i];
      if (it->phase == Loop::Phase::kWrite) {
        if ((got & (POLLOUT | POLLERR | POLLHUP)) != 0) loop.writable(it);
      } else if (loop.readable(it) && it->phase == Loop::Phase::kWrite) {
        loop.writable(it);  // answered: most answers go out at once
      }
    }
    if ((fds[1].revents & POLLIN) != 0) loop.accept_all(listen_fd_);
    loop.expire(now_us());
  }
}

}  // namespace pgslow::workshop
