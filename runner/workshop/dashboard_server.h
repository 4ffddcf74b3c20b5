#pragma once
// The dashboard's HTTP server (docs/workshop.md, "The dashboard in a room"). Its own, small and
// bounded, because a room member controls every byte it reads: one thread polls every
// connection, so a slow client holds no worker; a request (line, headers and body, chunked or
// not) must arrive whole within a deadline and within a few kilobytes, counted while it is read;
// each client address may hold only a few connections at once. One request per connection.
//
//   DashboardServer server("0.0.0.0", 8080, ServerLimits{}, door, handle);

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace pgslow::workshop {

struct HttpRequest {
  std::string method;                          // "GET"
  std::string path;                            // "/state", without the query
  std::string query;                           // "name=Ann&answer=x", still %-encoded
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;                            // de-chunked
  std::string remote_addr;                     // "127.0.0.2"
  std::string header(const std::string& lower_name) const;
  // A parameter of the query or of a form body (application/x-www-form-urlencoded), decoded.
  std::string param(const std::string& name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::map<std::string, std::string> headers;
  std::string body;
  std::shared_ptr<const std::string> shared_body;  // sent as it is, instead of body (no copy)
};

struct ServerLimits {
  std::size_t max_head = 16 * 1024;  // request line and headers together
  std::size_t max_body = 4096;       // a body, counted de-chunked and as sent
  int request_ms = 5000;             // the whole request must arrive within this ...
  int write_ms = 5000;               // ... and the answer be taken within this
  std::size_t max_connections = 256;
  std::size_t per_address = 16;  // connections one client address may hold at once ...
  // ... and once half of max_connections are open: a handful of addresses fill half the
  // dashboard at most, and the rest is shared by many.
  std::size_t busy_per_address = 2;
};

// How far a chunked body has arrived: the body so far, and whether it is complete, too large
// (more than `max_body` bytes of data, or framing that cannot belong to one) or malformed.
struct Chunked {
  enum class State { kIncomplete, kComplete, kTooLarge, kMalformed } state = State::kIncomplete;
  std::string body;
  std::size_t used = 0;  // bytes of `raw` the complete body took (with its trailer)
};
Chunked read_chunked(std::string_view raw, std::size_t max_body);

// %-decoding of a query or form value ('+' is a space).
std::string url_decode(std::string_view s);

class DashboardServer {
 public:
  // Sees a request's line and headers before its body is read: an answer refuses it there.
  using Door = std::function<std::optional<HttpResponse>(const HttpRequest&)>;
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  // Listens on host:port (port 0: any free port). Throws InputError when it cannot.
  DashboardServer(const std::string& host, int port, ServerLimits limits, Door door,
                  Handler handle);
  ~DashboardServer();
  DashboardServer(const DashboardServer&) = delete;
  DashboardServer& operator=(const DashboardServer&) = delete;
  int port() const { return port_; }

 private:
  struct Loop;
  void run();
  int port_ = 0;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  std::unique_ptr<Loop> loop_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace pgslow::workshop
