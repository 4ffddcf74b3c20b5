// The dashboard in a room (docs/workshop.md): each attack a stranger in the room can make on
// the page, reproduced over loopback and shown refused. The door's rules are also tested alone.

#include "workshop/dashboard.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <set>

#include "common/strings.h"
#include "workshop/dashboard_door.h"

namespace pgslow::workshop {
namespace {

using json = nlohmann::json;

// ---- the door alone ----

TEST(DashboardDoor, RoomTextRefusesInvalidUtf8AndClipsOnACharacterBoundary) {
  EXPECT_FALSE(room_text("Ann\xff", 200));
  EXPECT_FALSE(room_text("\xc3", 200));              // a sequence cut short
  EXPECT_FALSE(room_text("\xc0\xaf", 200));          // overlong '/'
  EXPECT_FALSE(room_text("\xed\xa0\x80", 200));      // a surrogate
  EXPECT_EQ(room_text("  Zoë\tB  ", 200), "Zoë B");  // C0 made spaces, trimmed
  // 150 "é" (2 bytes each) clipped at 201 bytes: 100 whole characters, never half of one.
  std::string accented;
  for (int i = 0; i < 150; ++i) accented += "\xc3\xa9";
  const std::optional<std::string> clipped = room_text(accented, 201);
  ASSERT_TRUE(clipped);
  EXPECT_EQ(clipped->size(), 200u);
  EXPECT_TRUE(is_valid_utf8(*clipped));
}

TEST(DashboardDoor, RateLimiterRefusesBeyondTheBurstAndRefillsWithTime) {
  RateLimiter limiter(/*per_second=*/2, /*burst=*/3);
  const std::int64_t t = 1'000'000;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.allow("10.0.0.1", t));
  EXPECT_FALSE(limiter.allow("10.0.0.1", t));
  EXPECT_TRUE(limiter.allow("10.0.0.2", t));            // another address has its own bucket
  EXPECT_TRUE(limiter.allow("10.0.0.1", t + 500'000));  // half a second: one more token
  EXPECT_FALSE(limiter.allow("10.0.0.1", t + 500'000));
}

TEST(DashboardDoor, RateLimiterForgetsIdleAddressesSoItStaysBounded) {
  RateLimiter limiter(1, 1, /*max_clients=*/8);
  for (int i = 0; i < 100; ++i) {
    // Each address is idle again (its bucket full) a second later.
    EXPECT_TRUE(limiter.allow("10.0.0." + std::to_string(i), std::int64_t{i} * 1'000'000));
    EXPECT_LE(limiter.clients(), 8u);
  }
  // Eight busy addresses at once: a ninth is refused rather than the map growing.
  RateLimiter busy(1, 1, 8);
  for (int i = 0; i < 8; ++i) busy.allow("10.1.0." + std::to_string(i), 0);
  EXPECT_FALSE(busy.allow("10.1.0.99", 0));
  EXPECT_EQ(busy.clients(), 8u);
}

TEST(DashboardDoor, APostFromAnotherOriginIsForeign) {
  EXPECT_FALSE(foreign_origin("http://127.0.0.1:8080", "same-origin", "127.0.0.1:8080"));
  EXPECT_FALSE(foreign_origin("", "", "127.0.0.1:8080"));  // curl: no browser, no CSRF
  EXPECT_TRUE(foreign_origin("http://evil.example", "", "127.0.0.1:8080"));
  EXPECT_TRUE(foreign_origin("http://127.0.0.1:9999", "", "127.0.0.1:8080"));
  EXPECT_TRUE(foreign_origin("null", "", "127.0.0.1:8080"));
  EXPECT_TRUE(foreign_origin("", "cross-site", "127.0.0.1:8080"));
}

TEST(DashboardDoor, OnlyLoopbackNamesAreLoopback) {
  for (const char* h : {"127.0.0.1", "127.0.0.1:8080", "localhost:80", "[::1]:8080", "127.1.2.3"})
    EXPECT_TRUE(is_loopback_host(h)) << h;
  for (const char* h : {"evil.example:8080", "127.0.0.1.evil.example", "10.0.0.1", "", "0.0.0.0"})
    EXPECT_FALSE(is_loopback_host(h)) << h;
}

TEST(DashboardDoor, BrowserTokensAre128RandomBits) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    const std::string t = new_browser_token();
    EXPECT_EQ(t.size(), 32u);
    EXPECT_EQ(t.find_first_not_of("0123456789abcdef"), std::string::npos) << t;
    seen.insert(t);
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST(DashboardDoor, ListeningBeyondLoopbackSaysWhoCanReachIt) {
  EXPECT_FALSE(exposure_warning("127.0.0.1", 8080));
  const std::optional<std::string> w = exposure_warning("0.0.0.0", 8080);
  ASSERT_TRUE(w);
  EXPECT_NE(w->find("0.0.0.0:8080"), std::string::npos) << *w;
  EXPECT_NE(w->find("anyone"), std::string::npos) << *w;
  EXPECT_NE(w->find("every network"), std::string::npos) << *w;
}

// ---- a live dashboard on loopback ----

struct Room {
  explicit Room(DashboardLimits limits = {}) : board("127.0.0.1:0", "room", limits) {
    board.open_predictions("How does throughput change?");
  }
  httplib::Client client() const { return httplib::Client("127.0.0.1", board.port()); }
  std::string join() const {
    auto res = client().Post("/join", "", "text/plain");
    if (!res || res->status != 200) return "";
    return json::parse(res->body).at("token").get<std::string>();
  }
  int predict(const std::string& token, const std::string& name, const std::string& answer,
              httplib::Headers headers = {}) const {
    headers.emplace("X-Pgslow-Token", token);
    httplib::Params form = {{"name", name}, {"answer", answer}};
    auto res = client().Post("/predict", headers, form);
    return res ? res->status : -1;
  }
  int state_status() const {
    auto res = client().Get("/state");
    if (!res) return -1;
    if (res->status == 200 && !json::accept(res->body)) return -2;  // not JSON
    return res->status;
  }
  Dashboard board;
};

// Generous rates: the tests below send more than a person would, on purpose.
DashboardLimits generous() {
  DashboardLimits l;
  l.reads_per_s = l.writes_per_s = 1000;
  l.read_burst = l.write_burst = 1000;
  return l;
}

// ---- a room of laptops: results posted to /result ----

RoomResult laptop(const std::string& name, double ratio, double low, double high) {
  RoomResult r;
  r.name = name;
  r.lesson = "cache";
  r.stage = "tiny";
  r.reference = "baseline";
  r.ratio = ratio;
  r.low = low;
  r.high = high;
  r.text = "some effect";
  r.transactions = 1234;
  r.machine = "2 CPUs";
  return r;
}

TEST(RoomResult, OnlyAResultIsRead) {
  std::string why;
  const RoomResult sent = laptop("Ann", 0.5, 0.4, 0.6);
  const std::optional<RoomResult> back = read_room_result(room_result_body(sent), 200, &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(room_result_body(*back), room_result_body(sent));
  // Anything but a result: a conninfo or a path has no field to travel in.
  json extra = json::parse(room_result_body(sent));
  extra["conninfo"] = "host=/tmp password=secret";
  EXPECT_FALSE(read_room_result(extra.dump(), 200, &why));
  EXPECT_NE(why.find("\"conninfo\" is not part of a result"), std::string::npos) << why;
  json bad = json::parse(room_result_body(sent));
  bad["ratio"] = "fast";
  EXPECT_FALSE(read_room_result(bad.dump(), 200, &why));
  bad["ratio"] = -1;
  EXPECT_FALSE(read_room_result(bad.dump(), 200, &why));
  bad["ratio"] = 0.9;  // outside its own interval
  EXPECT_FALSE(read_room_result(bad.dump(), 200, &why));
  json nameless = json::parse(room_result_body(sent));
  nameless.erase("name");
  EXPECT_FALSE(read_room_result(nameless.dump(), 200, &why));
  EXPECT_FALSE(read_room_result("not json", 200, &why));
  EXPECT_FALSE(read_room_result("{\"name\": \"Ann\xff\"}", 200, &why));
}

TEST(RoomResult, IntervalsOverlapOrNot) {
  EXPECT_TRUE(
      room_intervals_overlap({laptop("a", 0.5, 0.4, 0.6), laptop("b", 0.55, 0.45, 0.7)}, "cache"));
  EXPECT_FALSE(
      room_intervals_overlap({laptop("a", 0.5, 0.4, 0.6), laptop("b", 0.8, 0.7, 0.9)}, "cache"));
  // Another lesson's result is not compared.
  RoomResult other = laptop("c", 0.1, 0.05, 0.2);
  other.lesson = "wal";
  EXPECT_TRUE(room_intervals_overlap({laptop("a", 0.5, 0.4, 0.6), other}, "cache"));
}

TEST(Dashboard, AForgedResultWithoutATokenIsRefused) {
  Room room(generous());
  const std::string body = room_result_body(laptop("Mallory", 0.5, 0.4, 0.6));
  auto post = [&](const std::string& token, const std::string& b) {
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("X-Pgslow-Token", token);
    auto res = room.client().Post("/result", headers, b, "application/json");
    return res ? res->status : -1;
  };
  EXPECT_EQ(post("", body), 401);
  EXPECT_EQ(post("00000000000000000000000000000000", body), 401);
  EXPECT_TRUE(room.board.room_results().empty());
  const std::string token = room.join();
  ASSERT_FALSE(token.empty());
  json extra = json::parse(body);
  extra["path"] = "/etc/passwd";
  EXPECT_EQ(post(token, extra.dump()), 400);
  EXPECT_EQ(post(token, body), 200);
  // The same laptop again replaces its own result.
  EXPECT_EQ(post(token, room_result_body(laptop("Ann", 0.6, 0.5, 0.7))), 200);
  ASSERT_EQ(room.board.room_results().size(), 1u);
  EXPECT_EQ(room.board.room_results()[0].name, "Ann");
  const json state = json::parse(room.board.state_json());
  EXPECT_EQ(state.at("room_results").size(), 1u);
  EXPECT_TRUE(state.at("room_agree").at("cache").get<bool>());
}

TEST(Dashboard, InvalidUtf8IsRefusedAtTheDoorAndStateKeepsServing) {
  Room room(generous());
  const std::string token = room.join();
  ASSERT_FALSE(token.empty());
  EXPECT_EQ(room.predict(token, "Mallory\xff\xfe", "slower"), 400);
  EXPECT_EQ(room.predict(token, "Mallory", "slower \xc3"), 400);
  EXPECT_EQ(room.state_status(), 200);
  EXPECT_TRUE(room.board.predictions().empty());
  // Not UTF-8 from elsewhere (a server message in the status line): replaced, still served.
  room.board.note("server said \xff\xfe");
  EXPECT_EQ(room.state_status(), 200);
}

TEST(Dashboard, ALongAccentedNameIsClippedOnACharacterAndStateKeepsServing) {
  Room room(generous());
  std::string name = "Z";  // one byte first: 200 bytes would split a 2-byte "é"
  for (int i = 0; i < 150; ++i) name += "\xc3\xa9";
  EXPECT_EQ(room.predict(room.join(), name, "slower, 2x"), 200);
  ASSERT_EQ(room.board.predictions().size(), 1u);
  const std::string kept = room.board.predictions().front().name;
  EXPECT_EQ(kept.size(), 199u);
  EXPECT_TRUE(is_valid_utf8(kept));
  EXPECT_EQ(room.state_status(), 200);
  EXPECT_NO_THROW(json::parse(room.board.state_json()));
}

// Sends only the head of a POST that claims a 1 GB body, and reads the answer: the door
// answers before a byte of the body is read.
std::string claim_a_huge_body(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return "";
  }
  const std::string head = "POST /predict HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                           "\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                           "Content-Length: 1000000000\r\n\r\n";
  if (::send(fd, head.data(), head.size(), MSG_NOSIGNAL) < 0) {
    ::close(fd);
    return "";
  }
  std::string answer;
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) answer.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return answer;
}

TEST(Dashboard, AHugeBodyIsRefusedBeforeItIsRead) {
  Room room(generous());
  const std::string answer = claim_a_huge_body(room.board.port());
  EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer;
  // A body over the limit that is really sent is refused too.
  httplib::Headers headers = {{"X-Pgslow-Token", room.join()}};
  auto res = room.client().Post("/predict", headers, std::string(64 * 1024, 'a'),
                                "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_EQ(room.state_status(), 200);
}

TEST(Dashboard, APageOnAnotherOriginCannotPost) {
  Room room(generous());
  const std::string token = room.join();
  EXPECT_EQ(room.predict(token, "Alice", "faster", {{"Origin", "http://evil.example"}}), 403);
  EXPECT_EQ(room.predict(token, "Alice", "faster", {{"Sec-Fetch-Site", "cross-site"}}), 403);
  auto join = room.client().Post("/join", {{"Origin", "http://evil.example"}}, "", "text/plain");
  ASSERT_TRUE(join);
  EXPECT_EQ(join->status, 403);
  EXPECT_TRUE(room.board.predictions().empty());
  // The page's own origin posts.
  const std::string own = "http://127.0.0.1:" + std::to_string(room.board.port());
  EXPECT_EQ(room.predict(token, "Alice", "faster", {{"Origin", own}}), 200);
}

TEST(Dashboard, AnotherSiteNamedLikeLoopbackIsRefused) {
  Room room(generous());  // DNS rebinding: evil.example resolving to 127.0.0.1
  auto res = room.client().Get("/state", {{"Host", "evil.example:8080"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
}

TEST(Dashboard, NoOneAnswersAsSomeoneElse) {
  Room room(generous());
  const std::string alice = room.join(), mallory = room.join();
  ASSERT_NE(alice, mallory);
  EXPECT_EQ(room.predict(alice, "Alice", "slower, 3x"), 200);
  EXPECT_EQ(room.predict(mallory, "ALICE", "faster"), 409);  // another browser's name
  EXPECT_EQ(room.predict("", "Alice", "faster"), 401);       // no token
  EXPECT_EQ(room.predict("0123456789abcdef0123456789abcdef", "Bob", "faster"), 401);
  EXPECT_EQ(room.predict(alice, "Alice", "slower, 4x"), 200);  // her own, changed
  const std::vector<RoomPrediction> p = room.board.predictions();
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].answer, "slower, 4x");
}

TEST(Dashboard, TheRoomSizeIsTheInstructors) {
  DashboardLimits limits = generous();
  limits.room_size = 3;
  Room room(limits);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(room.predict(room.join(), "P" + std::to_string(i), "x"), 200);
  EXPECT_EQ(room.predict(room.join(), "Late", "x"), 409);
  EXPECT_EQ(room.board.predictions().size(), 3u);
}

TEST(Dashboard, AFloodFromOneAddressCannotFillTheRoom) {
  Room room;  // the default limits
  int refused = 0;
  for (int i = 0; i < 600; ++i) {
    auto res = room.client().Post("/join", "", "text/plain");
    ASSERT_TRUE(res);
    if (res->status == 429) {
      ++refused;
      continue;
    }
    const std::string token = json::parse(res->body).at("token").get<std::string>();
    if (room.predict(token, "bot" + std::to_string(i), "x") == 429) ++refused;
  }
  EXPECT_GT(refused, 500);
  EXPECT_LE(room.board.predictions().size(), 20u);  // the write burst, not the 100 places
}

TEST(Dashboard, StateIsOneSnapshotUntilSomethingChanges) {
  Room room(generous());
  const std::string first = room.board.state_json();
  EXPECT_EQ(room.board.state_json(), first);
  room.board.tick(ProgressTick{});
  const std::string second = room.board.state_json();
  EXPECT_NE(second, first);
  EXPECT_EQ(json::parse(second)["points"].size(), 1u);
  auto res = room.client().Get("/state");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body, second);
}

}  // namespace
}  // namespace pgslow::workshop
