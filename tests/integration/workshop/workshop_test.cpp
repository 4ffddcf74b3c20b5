// Workshop mode on a real server where speed is measured: mystery fixes ranked by the share of
// the loss they recover, and the live dashboard driven by headless Chromium during a real run,
// and flooded during one. These run under the measured_speed lock.

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "apply/bytes.h"
#include "apply/journal.h"
#include "common/paths.h"
#include "common/strings.h"
#include "knobs/catalog.h"
#include "pg/connection.h"
#include "report/json.h"
#include "tests/integration/workshop/workshop_support.h"
#include "tests/support/cluster_fixture.h"
#include "tests/support/pgslow_process.h"
#include "workshop/dashboard.h"
#include "workshop/mystery.h"

namespace pgslow::testing {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

// Two planted causes (index scans off and a 10 ms commit delay). Three fixes, scored by the share
// of the lost performance each recovers, in a DBA's order: the right one, the same with
// needless knobs (a shotgun: as good, more knobs), then the partial one (the commit delay
// alone). A fix the server refuses is reported, not run. Each fix is measured against the
// broken and the healthy server in its own command, through the lab's seam.
TEST(Mystery, FixesAreScoredInTheOrderADbaWouldRankThem) {
  const Snapshot before = snapshot();
  const knobs::Catalog catalog = knobs::Catalog::load_default();
  std::uint64_t seed = 0;
  for (std::uint64_t s = 1; s < 500 && seed == 0; ++s) {
    const workshop::MysteryAnswer a = workshop::choose_mystery(3, s, catalog);
    auto has = [&](const char* k) {
      return std::any_of(a.culprits.begin(), a.culprits.end(),
                         [&](const knobs::Setting& c) { return c.name == k; });
    };
    if (has("enable_indexscan") && has("commit_delay")) seed = s;
  }
  ASSERT_NE(seed, 0u) << "no seed plants index scans off with a commit delay";
  // Four one-second samples per run: the fewest that give a run its own interval.
  const std::vector<std::string> timing = {"--duration", "4", "--warmup", "0.5"};
  auto with_timing = [&](std::vector<std::string> a) {
    a.insert(a.end(), timing.begin(), timing.end());
    return args(a);
  };
  const Finished start = run_pgslow(
      with_timing({"mystery", "start", "--difficulty", "3", "--seed", std::to_string(seed)}));
  ASSERT_EQ(start.exit_code, 0) << start.output;

  // tpcb-like looks rows up by key: index scans back on and no commit delay is all of the cure
  // (bitmap scans play no part).
  const std::vector<std::string> right = {"enable_indexscan=on", "commit_delay=0"};
  std::vector<std::string> shotgun = right;
  shotgun.push_back("jit=off");
  auto fix = [&](const std::string& who, const std::vector<std::string>& changes) {
    std::vector<std::string> a = {"mystery", "fix", "--name", who};
    a.insert(a.end(), changes.begin(), changes.end());
    return run_pgslow(with_timing(a));
  };
  const Finished partial_fix = fix("partial", {"commit_delay=0"});
  ASSERT_EQ(partial_fix.exit_code, 0) << partial_fix.output;
  const Finished right_fix = fix("right", right);
  ASSERT_EQ(right_fix.exit_code, 0) << right_fix.output;
  EXPECT_NE(right_fix.output.find("SCOREBOARD"), std::string::npos) << right_fix.output;
  const Finished shotgun_fix = fix("shotgun", shotgun);
  ASSERT_EQ(shotgun_fix.exit_code, 0) << shotgun_fix.output;
  // Each of its changes was also left out once (which of them did nothing is the unit tests'
  // to check on a simulated server: runs of four seconds here drift by tens of percent).
  EXPECT_NE(shotgun_fix.output.find("the fix against the fix without it"), std::string::npos)
      << shotgun_fix.output;
  // Refused by the server: reported, not run, no measurement.
  const Finished refused = fix("refused", {"random_page_cost=-1"});
  ASSERT_EQ(refused.exit_code, 0) << refused.output;
  EXPECT_NE(refused.output.find("refused, not run: random_page_cost=-1"), std::string::npos)
      << refused.output;

  const Finished board = run_pgslow(args({"mystery", "scoreboard", "--format", "json"}));
  ASSERT_EQ(board.exit_code, 0) << board.output;
  const json fixes = json::parse(board.output).at("fixes");
  ASSERT_EQ(fixes.size(), 4u) << board.output;
  std::vector<std::string> order;
  for (const json& f : fixes) order.push_back(f.at("who").get<std::string>());
  auto fix_of = [&](const std::string& who) -> const json& {
    for (const json& f : fixes)
      if (f.at("who") == who) return f;
    return fixes[0];
  };
  // With intervals: the right fix recovers about all of it, the partial one clearly less.
  const json& r = fix_of("right").at("recovered");
  const json& p = fix_of("partial").at("recovered");
  ASSERT_TRUE(r.at("known").get<bool>()) << board.output;
  // "About all": healthy and fixed are separate runs of four seconds, and a machine that drifts
  // between them once put the whole interval 6% above 1.0. More than 25% above it would be a
  // scoring fault (the fix measured against the wrong reference), not drift.
  EXPECT_LE(r.at("low").get<double>(), 1.25) << board.output;
  // When the two intervals overlap the scoreboard puts them in one tier, fewer knobs first
  // (report/workshop.cpp): on a machine busy enough to widen them that far (two suites side by
  // side once did), the order is the honest "cannot tell", not the one checked here.
  const bool told_apart = p.at("high").get<double>() < r.at("low").get<double>();
  if (told_apart) {
    EXPECT_EQ(order, (std::vector<std::string>{"right", "shotgun", "partial", "refused"}))
        << board.output;
    EXPECT_GE(r.at("high").get<double>(), 0.8) << board.output;
  }
  EXPECT_EQ(fix_of("shotgun").at("changes").size(), 3u) << board.output;
  EXPECT_EQ(order.back(), "refused") << board.output;
  EXPECT_FALSE(fixes[3].at("ran").get<bool>()) << board.output;

  // The mystery is still applied between fixes, and the reveal puts the original back.
  EXPECT_TRUE(fs::exists(apply::journal_path(workdir())));
  const fs::path record_dir = fs::path(::testing::TempDir()) / "pgslow-fix-record";
  fs::remove_all(record_dir);
  const Finished reveal = run_pgslow(args({"mystery", "reveal", "--record", record_dir.string()}));
  ASSERT_EQ(reveal.exit_code, 0) << reveal.output;
  EXPECT_EQ(snapshot(), before);
  // The instructor's record keeps the answer and the ranked fixes.
  const json record = json::parse(read_file(record_dir / "record.json"));
  ASSERT_EQ(record.at("mysteries").size(), 1u) << record.dump(2);
  EXPECT_EQ(record.at("mysteries")[0].at("fixes").at("fixes")[0].at("who"), order.front())
      << record.dump(2);
  fs::remove_all(record_dir);
  if (!told_apart)
    GTEST_SKIP() << "the run could not tell the right fix from the partial one (their intervals "
                    "overlap), so their order is the scoreboard's tie-break: "
                 << board.output;
}

// ---- the dashboard in headless Chromium ------------------------------------------------

json state(httplib::Client& client) {
  auto res = client.Get("/state");
  if (!res || res->status != 200) return json::object();
  return json::parse(res->body);
}

std::size_t points(httplib::Client& client) {
  json s = state(client);
  return s.contains("points") ? s["points"].size() : 0;
}

// The evidence counters are counts over the current run of a stage, like the report's
// evidence window: lock waiting accumulates (backend-seconds) while a backend of the run's
// database waits, and starts again at zero with the next run.
TEST(Dashboard, EvidenceCountersMoveDuringARunAndStartAgainWithTheNext) {
  const std::string db = "pgslow_dashboard_locks";
  {
    pg::Connection admin = pg::Connection::open(conninfo());
    admin.exec("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
    admin.exec("CREATE DATABASE " + db);
  }
  const std::string in_db = pg::with_database(conninfo(), db);
  pg::Connection::open(in_db).exec(
      "CREATE TABLE hot (id int PRIMARY KEY); INSERT INTO hot VALUES (1)");
  workshop::Dashboard board("127.0.0.1:0", "counters");
  board.watch_server(conninfo());
  board.stage_started({"locks", {}});
  board.measuring("locks", db);
  auto evidence = [&] { return json::parse(board.state_json()); };
  auto lock_waits = [&] {
    const json s = evidence();
    const auto& ev = s["evidence"];
    return ev.contains("lock waits") ? std::stod(ev["lock waits"].get<std::string>()) : -1.0;
  };

  pg::Connection holder = pg::Connection::open(in_db, pg::SessionKind::kWorkload);
  holder.exec("BEGIN");
  holder.exec("UPDATE hot SET id = 1 WHERE id = 1");
  std::thread waiter([&] {
    pg::Connection w = pg::Connection::open(in_db, pg::SessionKind::kWorkload);
    w.exec("UPDATE hot SET id = 1 WHERE id = 1");  // blocks until the holder commits
  });
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  double waited = 0;
  while ((waited = lock_waits()) < 2.0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  holder.exec("COMMIT");
  waiter.join();
  EXPECT_GE(waited, 2.0) << board.state_json();
  const json s = evidence();
  EXPECT_EQ(s["evidence_stage"], "locks");
  EXPECT_TRUE(s["evidence"].contains("autovacuum runs")) << s.dump();
  for (const auto& [key, value] : s["evidence"].items())
    EXPECT_EQ(key.find(" now"), std::string::npos) << key << ": a level, not a counter";

  // The next run (the reference measured again) counts from zero, and says so.
  board.measuring("baseline", db);
  EXPECT_EQ(lock_waits(), 0.0) << board.state_json();
  EXPECT_EQ(evidence()["evidence_stage"], "baseline");
  pg::Connection::open(conninfo()).exec("DROP DATABASE " + db + " WITH (FORCE)");
}

// Peak resident memory of a process (VmHWM), in kB; -1 when it is gone.
long peak_rss_kb(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (starts_with(line, "VmHWM:")) return std::stol(line.substr(6));
  }
  return -1;
}

// One request from a loopback address of its own (each attacker has its own rate bucket; the
// room member's is untouched): `head` is sent, then `body` (ignoring a refused rest), and the
// answer's status is returned (0 when the connection was cut).
int raw_request(const std::string& from, int port, const std::string& head,
                const std::string& body = "") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in src{}, dst{};
  src.sin_family = dst.sin_family = AF_INET;
  inet_pton(AF_INET, from.c_str(), &src.sin_addr);
  dst.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof dst) != 0) {
    ::close(fd);
    return 0;
  }
  ::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
  for (std::size_t at = 0; at < body.size(); at += 16384) {
    if (::send(fd, body.data() + at, std::min<std::size_t>(16384, body.size() - at), MSG_NOSIGNAL) <
        0)
      break;
  }
  char buf[64] = {};
  const ssize_t n = ::recv(fd, buf, sizeof buf - 1, 0);
  ::close(fd);
  std::cmatch m;
  return n > 0 && std::regex_search(buf, m, std::regex("^HTTP/1\\.1 ([0-9]{3})"))
             ? std::stoi(m[1].str())
             : 0;
}

// The requests of one attacker, in turn: /state, a head claiming 1 GB, 256 KB really sent in
// chunks, a prediction that is not UTF-8, a join.
int attack(const std::string& from, int port, int i) {
  const std::string host = "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  const std::string form = "Content-Type: application/x-www-form-urlencoded\r\n";
  switch (i % 5) {
    case 0:
      return raw_request(from, port, "GET /state HTTP/1.1\r\n" + host + "\r\n");
    case 1:
      return raw_request(
          from, port,
          "POST /predict HTTP/1.1\r\n" + host + form + "Content-Length: 1000000000\r\n\r\n");
    case 2: {
      std::string chunks;
      for (int k = 0; k < 16; ++k) chunks += "4000\r\n" + std::string(16384, 'a') + "\r\n";
      return raw_request(
          from, port,
          "POST /predict HTTP/1.1\r\n" + host + form + "Transfer-Encoding: chunked\r\n\r\n",
          chunks + "0\r\n\r\n");
    }
    case 3: {
      const std::string body = "name=%FF%FEbot&answer=%C3";
      return raw_request(from, port,
                         "POST /predict HTTP/1.1\r\n" + host + form +
                             "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n",
                         body);
    }
    default:
      return raw_request(from, port,
                         "POST /join HTTP/1.1\r\n" + host + "Content-Length: 0\r\n\r\n");
  }
}

// Streams a chunked body of `total` bytes to /result from `from`, as long as the dashboard takes
// it (issue #36: 4 x 400 MB made pgslow 2 GB). Returns the answer's status (0: cut off) and the
// bytes pushed in `pushed`.
int stream_chunked(const std::string& from, int port, std::size_t total, std::size_t* pushed) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in src{}, dst{};
  src.sin_family = dst.sin_family = AF_INET;
  inet_pton(AF_INET, from.c_str(), &src.sin_addr);
  dst.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  *pushed = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof dst) != 0) {
    ::close(fd);
    return 0;
  }
  const std::string head =
      "POST /result HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
      "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  ::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
  const std::string chunk = "10000\r\n" + std::string(65536, '[') + "\r\n";
  while (*pushed < total &&
         ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(chunk.size()))
    *pushed += chunk.size();
  char buf[64] = {};
  const ssize_t n = ::recv(fd, buf, sizeof buf - 1, 0);
  ::close(fd);
  return n > 12 && starts_with(buf, "HTTP/1.1 ") ? std::atoi(buf + 9) : 0;
}

// Connections that send their head a byte at a time (issue #36: a dozen starved every client).
// Each is opened again when the dashboard cuts it off, until `stop`.
void dribble(const std::string& from, int port, const std::atomic<bool>& stop,
             std::atomic<int>* cut_off) {
  const std::string head = "GET /state HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
  while (!stop) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in src{}, dst{};
    src.sin_family = dst.sin_family = AF_INET;
    inet_pton(AF_INET, from.c_str(), &src.sin_addr);
    dst.sin_port = htons(static_cast<std::uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) == 0 &&
        ::connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof dst) == 0) {
      ::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
      while (!stop && ::send(fd, "a", 1, MSG_NOSIGNAL) == 1) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 300) > 0) {  // answered (408) or closed: open another
          ++*cut_off;
          break;
        }
      }
    }
    ::close(fd);
  }
}

// The flood, bounded: while a stage is measured, four attackers (loopback addresses of
// their own) send 400 requests (large bodies, bodies claimed and not sent, text that is not
// UTF-8, joins, polls), four more stream 400 MB chunked bodies and a dozen connections dribble
// their heads, while a room member polls /state. The member is served throughout, the run
// completes, and pgslow's peak memory stays under 256 MB and grows by little.
TEST(Dashboard, AFloodDuringAMeasuredRunLeavesThePageServingAndMemoryBounded) {
  const fs::path dir = write_lesson_files();
  PgslowProcess p(
      args({"run", (dir / "scenario.yaml").string(), "--out", (dir / "out-flood").string(),
            "--duration", "8", "--dashboard", "127.0.0.1:0"}));
  ASSERT_TRUE(p.wait_for_output("dashboard: http://127.0.0.1:", 120s)) << p.output();
  std::smatch m;
  const std::string out = p.output();
  ASSERT_TRUE(std::regex_search(out, m, std::regex("dashboard: http://127.0.0.1:([0-9]+)/")));
  const int port = std::stoi(m[1]);
  httplib::Client member("127.0.0.1", port);
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  auto measuring = [&] {
    const json s = state(member);
    if (!s.contains("points")) return false;
    for (const auto& pt : s["points"])
      if (!pt.value("warmup", true)) return true;
    return false;
  };
  while (!measuring()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << p.output();
    std::this_thread::sleep_for(50ms);
  }
  const long before_kb = peak_rss_kb(p.pid());
  ASSERT_GT(before_kb, 0);

  std::atomic<int> done{0};
  std::array<std::map<int, int>, 4> statuses;
  std::vector<std::thread> attackers;
  std::atomic<bool> stop_dribbling{false};
  std::atomic<int> cut_off{0};
  std::vector<std::thread> dribblers;
  for (int d = 0; d < 12; ++d) {
    dribblers.emplace_back([&, d] {
      dribble("127.0.1." + std::to_string(2 + d % 3), port, stop_dribbling, &cut_off);
    });
  }
  std::array<std::size_t, 4> pushed{};
  std::array<int, 4> chunked_status{};
  for (int a = 0; a < 4; ++a) {
    attackers.emplace_back([&, a] {
      chunked_status[a] = stream_chunked("127.0.2." + std::to_string(a + 2), port,
                                         std::size_t{400} * 1024 * 1024, &pushed[a]);
      for (int i = 0; i < 100; ++i)
        ++statuses[a][attack("127.0.0." + std::to_string(a + 2), port, i)];
      ++done;
    });
  }
  int served = 0, refused = 0;
  // The member polls at the page's pace (a few a second) until the attackers are done and every
  // dribbling connection has been cut off once (the dashboard's 5 s deadline).
  const auto attack_deadline = std::chrono::steady_clock::now() + 60s;
  while ((done < 4 || cut_off < 12) && std::chrono::steady_clock::now() < attack_deadline) {
    auto res = member.Get("/state");
    if (res && res->status == 200 && json::accept(res->body)) {
      ++served;
    } else {
      ++refused;
    }
    std::this_thread::sleep_for(200ms);
  }
  for (auto& t : attackers) t.join();
  stop_dribbling = true;
  for (auto& t : dribblers) t.join();
  EXPECT_GE(cut_off.load(), 12) << "slow connections the dashboard did not cut off";
  EXPECT_GE(served, 20) << "the member polled too little while the attack held connections";
  for (int a = 0; a < 4; ++a) {
    EXPECT_LT(pushed[a], std::size_t{64} * 1024 * 1024) << "the dashboard kept reading a body";
    EXPECT_TRUE(chunked_status[a] == 413 || chunked_status[a] == 0) << chunked_status[a];
  }
  auto res = member.Get("/state");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(json::accept(res->body));
  EXPECT_EQ(refused, 0) << served << " served";

  std::map<int, int> all;
  for (const auto& s : statuses)
    for (const auto& [code, n] : s) all[code] += n;
  std::string seen;
  for (const auto& [code, n] : all) seen += fmt::format("{}: {} ", code, n);
  EXPECT_EQ(all[500], 0) << seen;
  EXPECT_GT(all[413] + all[429], 100) << seen;  // big bodies and the flood refused
  EXPECT_EQ(all[200] + all[413] + all[429] + all[400] + all[0], 400) << seen;

  // Then the sustained flood of /state (it took a third of the machine), bounded to a
  // few seconds of a measured window: the report must say the machine was disturbed.
  std::vector<std::thread> flooders;
  const auto flood_end = std::chrono::steady_clock::now() + 5s;
  std::atomic<int> flooded{0};
  for (int a = 0; a < 4; ++a) {
    flooders.emplace_back([&, a] {
      const std::string from = "127.0.0." + std::to_string(a + 2);
      const std::string head =
          "GET /state HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n\r\n";
      while (std::chrono::steady_clock::now() < flood_end && !p.exited()) {
        raw_request(from, port, head);
        ++flooded;
      }
    });
  }
  for (auto& t : flooders) t.join();
  auto after_flood = member.Get("/state");
  ASSERT_TRUE(after_flood) << flooded << " flooding requests";
  EXPECT_EQ(after_flood->status, 200);

  const long after_kb = peak_rss_kb(p.pid());
  EXPECT_LT(after_kb - before_kb, 64 * 1024)
      << "peak RSS " << before_kb << " -> " << after_kb << " kB";
  EXPECT_LT(after_kb, 256 * 1024) << "peak RSS " << after_kb << " kB";
  std::printf(
      "flood: peak RSS %ld -> %ld kB; %d member polls served; %d slow connections cut "
      "off; chunked bytes pushed %zu %zu %zu %zu\n",
      before_kb, after_kb, served, cut_off.load(), pushed[0], pushed[1], pushed[2], pushed[3]);
  ASSERT_TRUE(p.wait_for_output("Results:", 300s)) << p.output();
  p.wait();
  EXPECT_EQ(p.exit_code(), 0) << p.output();
  const std::string report = read_file(dir / "out-flood" / "report.md");
  EXPECT_NE(report.find("the machine was disturbed"), std::string::npos)
      << flooded << " flooding requests\n"
      << report;
}

// The browser this test starts is a neighbour that steals the CPU while the lesson measures:
// three short (stage, baseline) pairs, not one long run of each, give the reveal's 63x enough
// degrees of freedom to be called (a baseline measured twice has one).
TEST(Dashboard, ChromiumSeesTheRunLiveAndTheRoomsPredictionReachesTheReveal) {
  const std::string chromium = find_chromium();
  if (chromium.empty())
    GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
  const Browser browser(chromium);
  const fs::path dir = write_lesson_files();
  PgslowProcess p(args({"lesson", (dir / "lesson.yaml").string(), "--answers",
                        (dir / "answers.yaml").string(), "--out", (dir / "out-dashboard").string(),
                        "--duration", "5", "--repeats", "3", "--dashboard", "127.0.0.1:0",
                        "--wait-predictions", "1", "--wait-timeout", "120", "--linger", "120"}));
  ASSERT_TRUE(p.wait_for_output("dashboard: http://127.0.0.1:", 120s)) << p.output();
  std::smatch m;
  const std::string out = p.output();
  ASSERT_TRUE(std::regex_search(out, m, std::regex("dashboard: (http://127.0.0.1:([0-9]+)/)")))
      << out;
  const std::string url = m[1];
  httplib::Client client("127.0.0.1", std::stoi(m[2]));

  // A participant enters a prediction through the page (the form, filled from the link).
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (!state(client).value("predictions_open", false)) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << p.output();
    std::this_thread::sleep_for(50ms);
  }
  const std::string form = browser.dom(url + "?name=Zoe&answer=slower%2C%2050x&submit=1");
  EXPECT_NE(form.find("data-sent=\"true\""), std::string::npos) << form.substr(0, 2000);

  // Two screenshots a few seconds of the run apart differ.
  std::size_t n = 0;
  while ((n = points(client)) < 2) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << p.output();
    std::this_thread::sleep_for(50ms);
  }
  const std::string first = browser.screenshot(url, workdir() / "dashboard-1.png");
  while (points(client) < n + 3) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << p.output();
    std::this_thread::sleep_for(50ms);
  }
  const std::string second = browser.screenshot(url, workdir() / "dashboard-2.png");
  ASSERT_FALSE(first.empty());
  ASSERT_FALSE(second.empty());
  EXPECT_NE(first, second);

  // The reveal carries the page's prediction, scored against the measurement.
  ASSERT_TRUE(p.wait_for_output("Results:", 300s)) << p.output();
  const std::string reveal = section(p.output(), "== REVEAL", "== DIAGNOSE");
  EXPECT_TRUE(std::regex_search(reveal, std::regex("Zoe \\(page\\) +tps +slower, 50x +right")))
      << reveal;

  // The TPS chart holds every per-second point of the run's report, in order.
  const std::string dom = browser.dom(url);
  std::smatch s;
  ASSERT_TRUE(
      std::regex_search(dom, s, std::regex("data-series=\"tps\" data-values=\"([0-9,]*)\"")))
      << dom;
  std::vector<long> drawn;
  for (const std::string& v : split(s[1].str(), ',')) {
    if (!v.empty()) drawn.push_back(std::stol(v));
  }
  const results::Run run =
      report::read_json(read_file(dir / "out-dashboard" / "report.json"), "report.json");
  std::size_t at = 0, expected = 0;
  for (const auto& stage : run.stages) {
    for (const auto& rep : stage.repeats) {
      for (double v : rep.tps_per_second) {
        ++expected;
        while (at < drawn.size() && drawn[at] != std::lround(v)) ++at;
        EXPECT_LT(at, drawn.size()) << "the chart lacks the point " << v << " of " << stage.name;
        if (at < drawn.size()) ++at;
      }
    }
  }
  EXPECT_GE(expected, 20u);
  EXPECT_NE(dom.find("data-step=\"diagnose\""), std::string::npos);
  // The evidence counters cover the current run, and say which: the last was the reference
  // measured again after the stage.
  EXPECT_NE(dom.find("since this run of baseline began"), std::string::npos) << dom;
  EXPECT_NE(dom.find("backend-s"), std::string::npos) << dom;
  p.signal(SIGKILL);  // lingering: the configuration was restored before "Results:"
  p.wait();
}

}  // namespace
}  // namespace pgslow::testing
