// A room's address may lead anywhere (issue #52): `lesson --room URL` reads the dashboard's
// answers at most kMaxRoomAnswer bytes, so an endless answer cannot fill the memory of the
// participant's pgslow (often root). Each test serves one hostile answer over loopback.

#include "workshop/room.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "common/errors.h"

namespace pgslow::workshop {
namespace {

// Far below what reading the 1.2 GB answer whole took (2.1 GB).
constexpr long kMaxGrowthKiB = 64 * 1024;
// The most the hostile server sends: a client that never stops reading fails the RSS check.
constexpr std::size_t kMaxSent = std::size_t{1} << 30;

long peak_rss_kib() {
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

// One connection on 127.0.0.1 answered with `head`, then `chunk` again and again until the
// client goes away (or kMaxSent; or once). The thread ends when the client closes its end.
class HostileRoom {
 public:
  HostileRoom(std::string head, std::string chunk, bool once = false)
      : head_(std::move(head)), chunk_(std::move(chunk)), once_(once) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    auto* sa = reinterpret_cast<sockaddr*>(&addr);
    if (::bind(listener_, sa, len) != 0 || ::listen(listener_, 4) != 0 ||
        ::getsockname(listener_, sa, &len) != 0)
      throw std::runtime_error("cannot listen on 127.0.0.1");
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~HostileRoom() {
    finish();
    ::close(listener_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Waits for the client to go away; the bytes of the answer sent until then.
  std::size_t finish() {
    if (thread_.joinable()) thread_.join();
    return sent_;
  }

 private:
  void serve() {
    const int conn = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) return;
    // The request's head, to its blank line.
    std::string request;
    char buf[4096];
    while (request.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::recv(conn, buf, sizeof buf, 0);
      if (n <= 0) break;
      request.append(buf, static_cast<std::size_t>(n));
    }
    bool open = ::send(conn, head_.data(), head_.size(), MSG_NOSIGNAL) >= 0;
    while (open && !chunk_.empty() && sent_ < kMaxSent && !(once_ && sent_ > 0)) {
      const ssize_t n = ::send(conn, chunk_.data(), chunk_.size(), MSG_NOSIGNAL);
      open = n > 0;
      if (open) sent_ += static_cast<std::size_t>(n);
    }
    // Until the client closes its end: it has then given up reading.
    while (::recv(conn, buf, sizeof buf, 0) > 0) {
    }
    ::close(conn);
  }

  std::string head_;
  std::string chunk_;
  bool once_ = false;  // `chunk` sent once, not again and again
  int listener_ = -1;
  int port_ = 0;
  std::size_t sent_ = 0;
  std::thread thread_;
};

// A chunk of the chunked encoding: its size in hex, its bytes.
std::string chunk_of(std::size_t size) {
  char hex[32];
  std::snprintf(hex, sizeof hex, "%zx\r\n", size);
  return hex + std::string(size, 'x') + "\r\n";
}

// A room that answers with `head`, then `repeated` again and again: the client stops at the
// cap, naming it, with its memory and what the room got to send bounded.
void expect_cut_off_at_the_cap(const std::string& head, const std::string& repeated) {
  const long before = peak_rss_kib();
  std::string error;
  std::size_t sent = 0;
  {
    HostileRoom room(head, repeated);
    try {
      check_room(room.url());
    } catch (const InputError& e) {
      error = e.what();
    }
    sent = room.finish();
  }
  EXPECT_NE(error.find("longer than " + std::to_string(kMaxRoomAnswer) + " bytes"),
            std::string::npos)
      << error;
  EXPECT_LT(peak_rss_kib() - before, kMaxGrowthKiB);
  EXPECT_LT(sent, kMaxSent) << "pgslow read the whole endless answer";
}

TEST(Room, AnEndlessChunkedStateIsCutOffAtTheCap) {
  expect_cut_off_at_the_cap(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
      "Transfer-Encoding: chunked\r\n\r\n",
      chunk_of(65536));
}

TEST(Room, AnAnswerWhoseLengthIsTooLargeIsRefusedBeforeItsBody) {
  std::string error;
  {
    // Announces 5 GB and sends none of it: refused from the header alone.
    HostileRoom room("HTTP/1.1 200 OK\r\nContent-Length: 5000000000\r\n\r\n", "");
    try {
      check_room(room.url());
    } catch (const InputError& e) {
      error = e.what();
    }
  }
  EXPECT_NE(error.find("longer than " + std::to_string(kMaxRoomAnswer) + " bytes"),
            std::string::npos)
      << error;
}

TEST(Room, HeadersWithoutEndAreCutOffAtTheCap) {
  // cpp-httplib's client read these whole: 1 GB of header lines took it to 2.1 GB.
  std::string lines;
  for (int i = 0; i < 64; ++i) lines += "X-Filler: " + std::string(1000, 'a') + "\r\n";
  expect_cut_off_at_the_cap("HTTP/1.1 200 OK\r\n", lines);
}

TEST(Room, AnAnswerOfTheUsualSizeIsRead) {
  // The dashboard's own way: a chunked answer, then the connection closed.
  HostileRoom room("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                   "7\r\n{\"a\":1}\r\n0\r\n\r\n", /*once=*/true);
  const RoomAnswer a = room_exchange(room.url(), "GET", "/state");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "{\"a\":1}");
}

TEST(Room, JoiningARoomThatAnswersEndlesslyFailsNamingTheRoom) {
  const long before = peak_rss_kib();
  std::string error;
  {
    HostileRoom room("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", chunk_of(65536));
    try {
      send_to_room(room.url(), RoomResult{});
    } catch (const RuntimeError& e) {
      error = e.what();
    }
    EXPECT_NE(error.find(room.url()), std::string::npos) << error;
  }
  EXPECT_NE(error.find("could not join the room"), std::string::npos) << error;
  EXPECT_LT(peak_rss_kib() - before, kMaxGrowthKiB);
}

}  // namespace
}  // namespace pgslow::workshop
