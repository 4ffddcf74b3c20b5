// Issue #52: what pgslow's libpq sends to, and takes from, a peer on a local socket that the
// server's user controls. A fake server on a Unix socket in a fresh folder asks for a
// cleartext password (AuthenticationCleartextPassword, 'R' type 3) or answers a query with
// rows without end; pgslow must send no password and stop reading at its cap.

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pg/connection.h"
#include "pg/error.h"

namespace pgslow::pg {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPort = "5999";

bool read_exactly(int fd, void* buf, std::size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t got = ::read(fd, p, n);
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

bool write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

void put32(std::string& out, std::uint32_t v) {
  v = htonl(v);
  out.append(reinterpret_cast<const char*>(&v), 4);
}

void put16(std::string& out, std::uint16_t v) {
  v = htons(v);
  out.append(reinterpret_cast<const char*>(&v), 2);
}

// A protocol message: type byte, length (itself included), body.
std::string message(char type, const std::string& body) {
  std::string out(1, type);
  put32(out, static_cast<std::uint32_t>(body.size() + 4));
  return out + body;
}

std::string int32_body(std::uint32_t v) {
  std::string b;
  put32(b, v);
  return b;
}

// Just enough of the PostgreSQL protocol, one connection at a time on its own thread.
class FakeServer {
 public:
  // kTrustThenCopyOut: every query but the first SET is answered with a CopyOutResponse, as a
  // program that wants the session left mid-COPY (where plain PQexec would read all it sends).
  enum class Mode { kAskCleartextPassword, kTrustThenManyRows, kTrustThenCopyOut };

  FakeServer(Mode mode, int rows, std::size_t row_bytes)
      : mode_(mode), rows_(rows), row_bytes_(row_bytes) {
    char tmpl[] = "/tmp/pgslow-fake-server-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string path = dir_ + "/.s.PGSQL." + kPort;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 8) != 0)
      throw std::runtime_error("cannot listen at " + path);
    thread_ = std::thread([this] { serve(); });
  }

  ~FakeServer() {
    // Wakes the blocked accept(): the thread ends, nothing waits on a timer.
    ::shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    ::close(listen_fd_);
    fs::remove_all(dir_);
  }

  const std::string& dir() const { return dir_; }

  std::vector<std::string> passwords() {
    std::lock_guard<std::mutex> lock(mutex_);
    return passwords_;
  }

 private:
  void serve() {
    for (;;) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      handle(fd);
      ::close(fd);
    }
  }

  // The startup packet, answering SSL and GSS encryption requests with 'N' first.
  bool read_startup(int fd) {
    for (;;) {
      std::uint32_t len = 0;
      if (!read_exactly(fd, &len, 4)) return false;
      len = ntohl(len);
      if (len < 8 || len > 10000) return false;
      std::string body(len - 4, '\0');
      if (!read_exactly(fd, body.data(), body.size())) return false;
      std::uint32_t code = 0;
      std::memcpy(&code, body.data(), 4);
      code = ntohl(code);
      if (code == 80877103 || code == 80877104) {
        if (!write_all(fd, "N")) return false;
        continue;
      }
      return true;
    }
  }

  bool read_message(int fd, char& type, std::string& body) {
    std::uint32_t len = 0;
    if (!read_exactly(fd, &type, 1) || !read_exactly(fd, &len, 4)) return false;
    len = ntohl(len);
    if (len < 4 || len > (1u << 20)) return false;
    body.assign(len - 4, '\0');
    return read_exactly(fd, body.data(), body.size());
  }

  void handle(int fd) {
    if (!read_startup(fd)) return;
    char type = 0;
    std::string body;
    if (mode_ == Mode::kAskCleartextPassword) {
      write_all(fd, message('R', int32_body(3)));
      if (read_message(fd, type, body) && type == 'p') {
        std::lock_guard<std::mutex> lock(mutex_);
        passwords_.push_back(body.substr(0, body.find('\0')));
      }
      static const char kFatal[] = "SFATAL\0C28P01\0Mpassword authentication failed\0";
      write_all(fd, message('E', std::string(kFatal, sizeof kFatal)));
      return;
    }
    std::string hello = message('R', int32_body(0));
    static const char kVersion[] = "server_version\00015.0";
    hello += message('S', std::string(kVersion, sizeof kVersion));
    hello += message('K', int32_body(4242) + int32_body(1));
    hello += message('Z', "I");
    if (!write_all(fd, hello)) return;
    while (read_message(fd, type, body)) {
      if (type != 'Q') return;  // 'X': the client is done
      if (body.rfind("SET", 0) == 0) {
        if (!write_all(fd, message('C', std::string("SET\0", 4)) + message('Z', "I"))) return;
        continue;
      }
      if (mode_ == Mode::kTrustThenCopyOut) {
        std::string copy;
        copy += '\0';  // text format
        put16(copy, 1);
        put16(copy, 0);
        if (!write_all(fd, message('H', copy))) return;
        continue;
      }
      std::string description;
      put16(description, 1);
      description += std::string("x\0", 2);
      put32(description, 0);
      put16(description, 0);
      put32(description, 25);  // text
      put16(description, 0xffff);
      put32(description, 0xffffffff);
      put16(description, 0);
      if (!write_all(fd, message('T', description))) return;
      std::string row;
      put16(row, 1);
      put32(row, static_cast<std::uint32_t>(row_bytes_));
      row += std::string(row_bytes_, 'x');
      const std::string data_row = message('D', row);
      for (int i = 0; i < rows_; ++i) {
        if (!write_all(fd, data_row)) return;  // the client closed: as it should
      }
      const std::string done = "SELECT " + std::to_string(rows_);
      write_all(fd, message('C', done + std::string(1, '\0')) + message('Z', "I"));
    }
  }

  Mode mode_;
  int rows_;
  std::size_t row_bytes_;
  std::string dir_;
  int listen_fd_ = -1;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::string> passwords_;
};

// Sets an environment variable for the test's length.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { ::unsetenv(name_); }

 private:
  const char* name_;
};

std::string connect_error(const std::string& conninfo) {
  try {
    Connection::open(conninfo);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LocalSocketConninfo, SendsNoPasswordWhateverTheEnvironmentAndPassfileHold) {
  FakeServer server(FakeServer::Mode::kAskCleartextPassword, 0, 0);
  // A password file that matches any server, and PGPASSWORD: what root may have.
  const std::string passfile = server.dir() + "/pgpass";
  std::ofstream(passfile) << "*:*:*:*:from-the-passfile\n";
  fs::permissions(passfile, fs::perms::owner_read | fs::perms::owner_write);
  ScopedEnv file("PGPASSFILE", passfile);

  // The control: an ordinary conninfo sends the password file's entry, then PGPASSWORD's...
  const std::string plain =
      "host=" + server.dir() + " port=" + kPort + " user=postgres dbname=postgres";
  EXPECT_NE(connect_error(plain), "");
  {
    ScopedEnv password("PGPASSWORD", "from-pgpassword");
    EXPECT_NE(connect_error(plain), "");
    // ...and password='' alone still lets the password file speak.
    EXPECT_NE(connect_error(plain + " password=''"), "");
    EXPECT_EQ(server.passwords(), (std::vector<std::string>{"from-the-passfile", "from-pgpassword",
                                                            "from-the-passfile"}));

    // pgslow's: nothing, even with both there.
    const std::string error = connect_error(local_socket_conninfo(server.dir(), kPort, "postgres"));
    EXPECT_EQ(server.passwords().size(), 3u) << "a password was sent: " << error;
    // libpq 15 finds no password to send; 16+ refuses the request itself (require_auth=none).
    if (PQlibVersion() < 160000) {
      EXPECT_NE(error.find("no password supplied"), std::string::npos) << error;
    }
    EXPECT_NE(error, "");
    // The error shows the conninfo without inventing a secret.
    EXPECT_NE(error.find("password=''"), std::string::npos) << error;
  }
}

TEST(LocalSocketConninfo, QuotesEveryValue) {
  const std::string c = local_socket_conninfo("/tmp/x hostaddr=127.0.0.1", "5432 host=evil",
                                              "it's \\ db", "postgres");
  PQconninfoOption* options = PQconninfoParse(c.c_str(), nullptr);
  ASSERT_NE(options, nullptr) << c;
  std::map<std::string, std::string> got;
  for (PQconninfoOption* o = options; o->keyword; ++o) {
    if (o->val) got[o->keyword] = o->val;
  }
  PQconninfoFree(options);
  EXPECT_EQ(got["host"], "/tmp/x hostaddr=127.0.0.1");
  EXPECT_EQ(got.count("hostaddr"), 0u);
  EXPECT_EQ(got["port"], "5432 host=evil");
  EXPECT_EQ(got["dbname"], "it's \\ db");
  EXPECT_EQ(got["user"], "postgres");
  EXPECT_EQ(got["password"], "");
  EXPECT_EQ(got["passfile"], "/dev/null/pgslow-no-passfile");
  EXPECT_EQ(got.count("require_auth"), PQlibVersion() >= 160000 ? 1u : 0u);
  // Plain values stay bare; anything else is one quoted value.
  EXPECT_EQ(conninfo_value("/run/postgresql"), "/run/postgresql");
  EXPECT_EQ(conninfo_value(""), "''");
  EXPECT_EQ(conninfo_value("a b"), "'a b'");
  EXPECT_EQ(conninfo_value("it's"), "'it\\'s'");
  EXPECT_EQ(conninfo_value("a\\b"), "'a\\\\b'");
  EXPECT_EQ(conninfo_value("a\tb"), "'a\tb'");
  EXPECT_EQ(with_database("host=/tmp", "x port=1"), "host=/tmp dbname='x port=1'");
}

// Resident memory at its peak since the last reset, in MB.
long peak_rss_mb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6) / 1024;
  }
  return -1;
}

TEST(ResultCap, AServerSendingRowsWithoutEndIsCutOffWithMemoryBounded) {
  // 1,500 rows of 1 MB, as the finding's fake server sent (1.56 GB RSS before).
  FakeServer server(FakeServer::Mode::kTrustThenManyRows, 1500, 1 << 20);
  std::ofstream("/proc/self/clear_refs") << "5";  // resets VmHWM
  Connection conn = Connection::open(local_socket_conninfo(server.dir(), kPort, "postgres"));
  try {
    conn.exec("SELECT repeat('x', 1000000) FROM generate_series(1, 1500)");
    FAIL() << "the whole answer was read";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("more than 100000 rows or 32 MB"), std::string::npos) << what;
    EXPECT_NE(what.find(server.dir()), std::string::npos) << "names the server: " << what;
    EXPECT_EQ(e.error_class(), ErrorClass::kOther);
  }
  EXPECT_FALSE(conn.is_open());
  const long peak = peak_rss_mb();
  std::printf("peak RSS while the fake server sent 1,500 MB: %ld MB\n", peak);
#ifndef __SANITIZE_ADDRESS__  // its shadow memory and quarantine are not pgslow's
  EXPECT_LT(peak, 128) << "MB";
#endif
}

TEST(ResultCap, ManySmallRowsAreCutOffByCount) {
  FakeServer server(FakeServer::Mode::kTrustThenManyRows, 150000, 1);
  Connection conn = Connection::open(local_socket_conninfo(server.dir(), kPort, "postgres"));
  EXPECT_THROW(conn.query_value("SELECT 'x' FROM generate_series(1, 150000)"), Error);
  EXPECT_FALSE(conn.is_open());
  // A console session is capped too; the workload's (the measured path) is not.
  Connection console = Connection::open(local_socket_conninfo(server.dir(), kPort, "pgbouncer"),
                                        SessionKind::kConsole);
  EXPECT_THROW(console.exec("SHOW POOLS"), Error);
  Connection workload = Connection::open(local_socket_conninfo(server.dir(), kPort, "postgres"),
                                         SessionKind::kWorkload);
  EXPECT_EQ(workload.exec("SELECT 'x' FROM generate_series(1, 150000)").rows(), 150000);
}

// A peer that answers pgslow's query with a COPY it did not ask for would leave the session
// mid-COPY, where a later query was read whole: the session is closed at once instead.
TEST(ResultCap, ACopyNobodyAskedForClosesTheSession) {
  FakeServer server(FakeServer::Mode::kTrustThenCopyOut, 0, 0);
  Connection conn = Connection::open(local_socket_conninfo(server.dir(), kPort, "postgres"));
  try {
    conn.exec("SELECT 1");
    FAIL() << "a COPY answer was taken as a result";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a COPY it was not asked for"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(conn.is_open());
}

TEST(ResultCap, RowsUnderTheCapArriveWhole) {
  FakeServer server(FakeServer::Mode::kTrustThenManyRows, 1000, 100);
  Connection conn = Connection::open(local_socket_conninfo(server.dir(), kPort, "postgres"));
  const Result r = conn.exec("SELECT repeat('x', 100) FROM generate_series(1, 1000)");
  ASSERT_EQ(r.rows(), 1000);
  EXPECT_EQ(r.columns(), 1);
  EXPECT_EQ(r.column("x"), 0);
  EXPECT_EQ(r.get(999, 0), std::string(100, 'x'));
  EXPECT_TRUE(conn.is_open());
}

}  // namespace
}  // namespace pgslow::pg
