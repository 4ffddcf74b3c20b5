#pragma once
// The live dashboard's state behind Dashboard (dashboard.h), shared by its two halves:
// dashboard.cpp (what the run feeds it, the server watcher, the /state document) and
// dashboard_requests.cpp (what the room's browsers and laptops ask of it).

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "pg/connection.h"
#include "results/waits.h"
#include "workshop/dashboard.h"
#include "workshop/dashboard_server.h"

namespace pgslow::workshop {

using json = nlohmann::json;

struct Dashboard::Impl {
  struct Point {
    double t = 0;  // seconds since the dashboard started
    ProgressTick tick;
    int stage = -1;
  };

  // A server counter as it moved since the current run of a stage began (the report's evidence
  // window, live): summed over positive deltas between readings, so a restart (counters back to
  // zero) does not make it jump backwards; restart() starts a new run at zero.
  struct Counter {
    double total = 0;
    std::optional<double> last;
    void add(double now) {
      if (last && now >= *last) total += now - *last;
      last = now;
    }
    void restart() { total = 0; }
  };
  std::string title;
  std::string host;
  int port = 0;
  std::unique_ptr<DashboardServer> server;  // last to start, first to stop
  std::shared_ptr<const std::string> page = std::make_shared<const std::string>(dashboard_page());
  std::int64_t t0 = now_us();

  mutable std::mutex mu;
  std::vector<Point> points;
  std::vector<json> stages;  // {t, name, changes}
  std::string status;
  std::string step = "run";
  std::string step_text;
  std::string question;
  bool predictions_open = false;
  std::vector<RoomPrediction> room;
  std::vector<std::string> owners;  // owners[i]: the browser token that owns room[i]
  std::vector<RoomResult> laptops;  // posted to /result
  std::vector<std::string> laptop_owners;
  std::map<std::string, std::string> tokens;  // issued by /join: token -> the address it joined
  std::map<std::string, std::size_t> joins;   // tokens issued per client address
  std::string reveal;
  json cliff;  // null until open_cliff: {knob, from, to, from_value, to_value, points, guesses}
  std::map<std::string, Counter> counters;
  double hit_ratio = -1;
  std::string evidence_stage;  // the stage whose run the counters cover
  double evidence_since = 0;   // t when that run began
  std::string database;        // the stage's database (measuring()); empty: the conninfo's
  std::string watched_server;  // the server watched (watch_server's latest conninfo)
  std::optional<std::filesystem::path> watched_data_dir;  // and its data directory, when local
  std::optional<double> last_sample;                      // t of the previous reading (lock waits)
  // Backends of the watched database per wait event, summed over the readings since the run
  // began: the report's wait profile, live (sampled here once a second, there every 10 ms).
  results::WaitProfile backend_waits;

  DashboardLimits limits;
  bool loopback = true;  // bound to loopback: only loopback Host names are answered
  std::unique_ptr<RateLimiter> reads, writes;
  mutable std::shared_ptr<const std::string> snapshot;  // /state, built once per change
  mutable bool dirty = true;                            // (both under mu)

  std::atomic<bool> stopping{false};
  std::thread watcher;
  std::condition_variable wake;

  double now_s() const { return static_cast<double>(now_us() - t0) / 1e6; }

  // The /state document now (the caller holds mu): rebuilt after a change, else shared.
  std::shared_ptr<const std::string> current() const;

  json state() const;

  // One reading of the server's counters (cluster-wide, every database).
  // `connected_db`: the database `conn` is connected to (read once per connection);
  // `data_dir`: a local server's (its postmaster now, for the wait line's /proc look-up).
  void sample(pg::Connection& conn, const std::string& connected_db,
              const std::optional<std::filesystem::path>& data_dir);

  // A new run of a stage: its counters start at zero (the caller holds mu).
  void restart_counters(const std::string& stage);

  void watch();

  // The door: every request passes it before its handler, and before its body is read.
  std::optional<HttpResponse> door(const HttpRequest& req);

  HttpResponse serve_state() const;

  HttpResponse join(const HttpRequest& req);

  HttpResponse predict(const HttpRequest& req);

  // A laptop's result (`lesson --room`): the sender must have joined, like a browser, and
  // send nothing but a result, under a name no other token holds.
  HttpResponse result(const HttpRequest& req);

  // `item` as the entry of `owner` (its token and the address it joined from) in `items` (the
  // caller holds mu). Its own entry is replaced; a name another token holds (compared by
  // room_name_key) is refused; a new entry needs a place in the room and in its address's share.
  template <typename T>
  HttpResponse place(std::vector<T>& items, std::vector<std::string>& item_owners,
                     const std::pair<const std::string, std::string>& owner, T item,
                     const char* what);

  HttpResponse handle(const HttpRequest& req);
};

}  // namespace pgslow::workshop
