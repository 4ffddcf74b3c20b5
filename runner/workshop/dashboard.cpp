#include "workshop/dashboard.h"

#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/errors.h"
#include "common/strings.h"
#include "pg/connection.h"

namespace pgslow::workshop {

using json = nlohmann::json;

namespace {

constexpr std::size_t kMaxPredictions = 500;  // a room, not the internet
constexpr std::size_t kMaxField = 200;        // characters of a name or an answer
constexpr const char* kAutovacuumRuns = "autovacuum runs";
constexpr const char* kLockWaits = "lock waits";

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

// Seconds between two readings that count as lock waiting at most: after a reconnect the gap
// is not all waiting.
constexpr double kMaxSampleGap = 2.0;

std::pair<std::string, int> split_address(const std::string& address) {
  std::string host = "127.0.0.1";
  int port = 8080;
  auto colon = address.rfind(':');
  std::string port_text;
  if (colon == std::string::npos) {
    if (!address.empty()) host = address;
  } else {
    if (colon > 0) host = address.substr(0, colon);
    port_text = address.substr(colon + 1);
  }
  if (!port_text.empty()) {
    try {
      std::size_t used = 0;
      port = std::stoi(port_text, &used);
      if (used != port_text.size() || port < 0 || port > 65535)
        throw std::invalid_argument("range");
    } catch (const std::exception&) {
      throw InputError(
          fmt::format("--dashboard {}: the port must be a number from 0 to 65535", address));
    }
  }
  return {host, port};
}

std::string clip(std::string s) {
  if (s.size() > kMaxField) s.resize(kMaxField);
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return trim(s);
}

}  // namespace

struct Dashboard::Impl {
  std::string title;
  std::string host;
  int port = 0;
  httplib::Server server;
  std::thread server_thread;
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
  std::string reveal;
  std::map<std::string, Counter> counters;
  double hit_ratio = -1;
  std::string evidence_stage;         // the stage whose run the counters cover
  double evidence_since = 0;          // t when that run began
  std::string database;               // the stage's database (measuring()); empty: the conninfo's
  std::string watched_server;         // the server watched (watch_server's latest conninfo)
  std::optional<double> last_sample;  // t of the previous reading (lock waits)

  std::atomic<bool> stopping{false};
  std::thread watcher;
  std::condition_variable wake;

  double now_s() const { return static_cast<double>(now_us() - t0) / 1e6; }

  json state() const {
    std::lock_guard lock(mu);
    json j;
    j["title"] = title;
    j["status"] = status;
    j["step"] = step;
    j["step_text"] = step_text;
    j["question"] = question;
    j["predictions_open"] = predictions_open;
    json pts = json::array();
    for (const Point& p : points) {
      pts.push_back({{"t", p.t},
                     {"elapsed", p.tick.elapsed_s},
                     {"warmup", p.tick.warmup},
                     {"tps", p.tick.tps},
                     {"p50_ms", p.tick.p50_us / 1e3},
                     {"p99_ms", p.tick.p99_us / 1e3},
                     {"failed", p.tick.failed_per_s},
                     {"stage", p.stage}});
    }
    j["points"] = pts;
    j["stages"] = stages;
    json room_json = json::array();
    for (const RoomPrediction& r : room)
      room_json.push_back({{"name", r.name}, {"answer", r.answer}});
    j["predictions"] = room_json;
    json ev = json::object();
    if (hit_ratio >= 0) ev["hit ratio"] = fmt::format("{:.2f}%", hit_ratio * 100);
    for (const auto& [k, c] : counters) {
      if (k == "blocks hit" || k == "blocks read") continue;  // the hit ratio shows them
      ev[k] = k.find("bytes") != std::string::npos ? format_bytes(c.total)
              : k == kLockWaits                    ? fmt::format("{:.1f} backend-s", c.total)
                                                   : fmt::format("{:.0f}", c.total);
    }
    j["evidence"] = ev;
    j["evidence_stage"] = evidence_stage;
    j["evidence_since"] = evidence_since;
    j["reveal"] = reveal;
    return j;
  }

  // One reading of the server's counters (cluster-wide, every database).
  void sample(pg::Connection& conn) {
    auto value = [&](std::string_view sql) -> std::optional<double> {
      auto v = conn.query_value(sql);
      if (!v) return std::nullopt;
      return std::stod(*v);
    };
    pg::Result db = conn.exec(
        "SELECT coalesce(sum(blks_hit),0), coalesce(sum(blks_read),0), coalesce(sum(temp_bytes),0) "
        "FROM pg_stat_database");
    const double hit = db.get_double(0, 0), read = db.get_double(0, 1), temp = db.get_double(0, 2);
    const int major =
        std::stoi(conn.query_value("SHOW server_version_num").value_or("150000")) / 10000;
    std::optional<double> checkpoints =
        major >= 17 ? value("SELECT num_timed + num_requested FROM pg_stat_checkpointer")
                    : value("SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter");
    std::optional<double> wal = value("SELECT wal_bytes FROM pg_stat_wal");
    // The workload's tables are in the connection's database (the stage's clone): the same
    // counter as the evidence key autovacuum_runs.
    std::optional<double> autovacuum =
        value("SELECT coalesce(sum(autovacuum_count), 0) FROM pg_stat_user_tables");
    // Backends of that database waiting on a heavyweight lock now; over time, backend-seconds
    // of lock waiting, as the evidence key lock_waits (sampled there every 100 ms, here every
    // second: coarser, same meaning).
    std::optional<double> waiting = value(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
        "AND datname = current_database()");
    const double t = now_s();
    std::lock_guard lock(mu);
    Counter& h = counters["blocks hit"];
    Counter& r = counters["blocks read"];
    const double hit_before = h.total, read_before = r.total;
    h.add(hit);
    r.add(read);
    const double dh = h.total - hit_before, dr = r.total - read_before;
    if (dh + dr > 0) hit_ratio = dh / (dh + dr);
    counters["temp bytes"].add(temp);
    if (checkpoints) counters["checkpoints"].add(*checkpoints);
    if (wal) counters["WAL bytes"].add(*wal);
    if (autovacuum) counters[kAutovacuumRuns].add(*autovacuum);
    Counter& waits = counters[kLockWaits];
    if (waiting && last_sample) waits.total += *waiting * std::min(t - *last_sample, kMaxSampleGap);
    last_sample = t;
  }

  // A new run of a stage: its counters start at zero (the caller holds mu).
  void restart_counters(const std::string& stage) {
    for (auto& [k, c] : counters) c.restart();
    counters[kLockWaits].restart();
    if (!stage.empty()) evidence_stage = stage;
    evidence_since = now_s();
  }

  void watch() {
    std::optional<pg::Connection> conn;
    std::string connected_to;  // the database `conn` is connected to
    std::string watched;       // the server `conn` is connected to
    std::mutex wait_mu;
    while (!stopping) {
      try {
        std::string wanted;
        std::string conninfo;
        {
          std::lock_guard lock(mu);
          wanted = database;
          conninfo = watched_server;
          if (conninfo != watched) {
            // Another server (the next version of `run --versions`): its counters are not
            // comparable with the last server's, so its first reading is only a starting point.
            for (auto& [k, c] : counters) c.last.reset();
            last_sample.reset();
          }
        }
        if (conn && (wanted != connected_to || conninfo != watched)) conn.reset();
        watched = conninfo;
        if (!conn || !conn->is_open()) {
          conn.reset();
          conn.emplace(pg::Connection::open(wanted.empty() ? conninfo
                                                           : pg::with_database(conninfo, wanted)));
          if (wanted != connected_to) {
            // A fresh clone's table counters start at zero: every run it has had counts.
            std::lock_guard lock(mu);
            counters[kAutovacuumRuns].last = wanted.empty() ? std::nullopt : std::optional(0.0);
          }
          connected_to = wanted;
          conn->exec("SET application_name = 'pgslow dashboard'");
          conn->exec("SET statement_timeout = '5s'");
        }
        sample(*conn);
      } catch (const std::exception& e) {
        spdlog::debug("dashboard: cannot read the server's counters now: {}", e.what());
        conn.reset();  // the server restarts between stages: reconnect next time
      }
      std::unique_lock lock(wait_mu);
      wake.wait_for(lock, std::chrono::seconds(1), [&] { return stopping.load(); });
    }
  }
};

Dashboard::Dashboard(const std::string& address, std::string title)
    : impl_(std::make_unique<Impl>()) {
  impl_->title = std::move(title);
  auto [host, port] = split_address(address);
  impl_->host = host;
  Impl* d = impl_.get();
  d->server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(dashboard_page(), "text/html; charset=utf-8");
  });
  d->server.Get("/state", [d](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content(d->state().dump(), "application/json");
  });
  d->server.Post("/predict", [d](const httplib::Request& req, httplib::Response& res) {
    const std::string name = clip(req.get_param_value("name"));
    const std::string answer = clip(req.get_param_value("answer"));
    std::lock_guard lock(d->mu);
    if (!d->predictions_open) {
      res.status = 409;
      res.set_content("predictions are closed", "text/plain");
      return;
    }
    if (name.empty() || answer.empty()) {
      res.status = 400;
      res.set_content("a name and a prediction, please", "text/plain");
      return;
    }
    for (RoomPrediction& r : d->room) {
      if (iequals(r.name, name)) {  // a second entry by the same name replaces the first
        r.answer = answer;
        res.set_content("updated", "text/plain");
        return;
      }
    }
    if (d->room.size() >= kMaxPredictions) {
      res.status = 429;
      return;
    }
    d->room.push_back({name, answer});
    res.set_content("thanks", "text/plain");
  });
  if (port == 0) {
    d->port = d->server.bind_to_any_port(host);
    if (d->port < 0) d->port = 0;
  } else {
    d->port = d->server.bind_to_port(host, port) ? port : 0;
  }
  if (d->port == 0) {
    throw InputError(
        fmt::format("--dashboard {}: cannot listen on {}:{} (in use, or not an address of "
                    "this machine)",
                    address, host, port));
  }
  d->server_thread = std::thread([d] { d->server.listen_after_bind(); });
}

Dashboard::~Dashboard() {
  impl_->stopping = true;
  impl_->wake.notify_all();
  if (impl_->watcher.joinable()) impl_->watcher.join();
  impl_->server.stop();
  if (impl_->server_thread.joinable()) impl_->server_thread.join();
}

std::string Dashboard::url() const {
  return fmt::format("http://{}:{}/", impl_->host, impl_->port);
}

void Dashboard::update(const std::string& line) {
  std::lock_guard lock(impl_->mu);
  impl_->status = line;
}

void Dashboard::note(const std::string& line) {
  std::lock_guard lock(impl_->mu);
  impl_->status = line;
}

void Dashboard::tick(const ProgressTick& t) {
  std::lock_guard lock(impl_->mu);
  impl_->points.push_back({impl_->now_s(), t, static_cast<int>(impl_->stages.size()) - 1});
}

void Dashboard::stage_started(const StageMarker& m) {
  std::lock_guard lock(impl_->mu);
  impl_->stages.push_back({{"t", impl_->now_s()}, {"name", m.stage}, {"changes", m.changes}});
  impl_->restart_counters(m.stage);
}

void Dashboard::measuring(const std::string& stage, const std::string& database) {
  std::lock_guard lock(impl_->mu);
  impl_->database = database;
  impl_->restart_counters(stage);
}

void Dashboard::set_step(const std::string& step, const std::string& text) {
  std::lock_guard lock(impl_->mu);
  impl_->step = step;
  impl_->step_text = text;
}

void Dashboard::open_predictions(const std::string& question) {
  std::lock_guard lock(impl_->mu);
  impl_->question = question;
  impl_->predictions_open = true;
}

void Dashboard::close_predictions() {
  std::lock_guard lock(impl_->mu);
  impl_->predictions_open = false;
}

std::vector<RoomPrediction> Dashboard::predictions() const {
  std::lock_guard lock(impl_->mu);
  return impl_->room;
}

void Dashboard::set_reveal(const std::string& text) {
  std::lock_guard lock(impl_->mu);
  impl_->reveal = text;
}

void Dashboard::watch_server(const std::string& conninfo) {
  {
    std::lock_guard lock(impl_->mu);
    impl_->watched_server = conninfo;
  }
  if (impl_->watcher.joinable()) return;  // its next reading (within a second) is of this one
  impl_->watcher = std::thread([d = impl_.get()] { d->watch(); });
}

std::string Dashboard::state_json() const {
  return impl_->state().dump();
}

}  // namespace pgslow::workshop
