#include "workshop/dashboard.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/clock.h"
#include "common/errors.h"
#include "common/format.h"
#include "common/strings.h"
#include "evidence/evidence.h"
#include "evidence/wait_sampler.h"
#include "pg/connection.h"
#include "results/stats.h"
#include "results/waits.h"
#include "workshop/dashboard_server.h"

namespace pgslow::workshop {

using json = nlohmann::json;

namespace {

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

HttpResponse refuse(int status, const std::string& why) {
  HttpResponse res;
  res.status = status;
  res.body = why + "\n";
  return res;
}

// The header of a browser's token (a custom header: a page elsewhere cannot send it without
// asking first, and the dashboard answers no such question).
constexpr const char* kTokenHeader = "x-pgslow-token";

}  // namespace

struct Dashboard::Impl {
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
  std::shared_ptr<const std::string> current() const {
    if (dirty || !snapshot) {
      // Replacement characters for anything not UTF-8 (a server message, a status line): one
      // bad byte must not make every later answer a 500.
      snapshot = std::make_shared<const std::string>(
          state().dump(-1, ' ', false, json::error_handler_t::replace));
      dirty = false;
    }
    return snapshot;
  }

  json state() const {
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
      ev[k] = k.find("bytes") != std::string::npos ? format_size(c.total)
              : k == kLockWaits                    ? fmt::format("{:.1f} backend-s", c.total)
                                                   : fmt::format("{:.0f}", c.total);
    }
    if (std::string text = results::top_waits_text(backend_waits); !text.empty())
      ev["backend time"] = text;
    j["evidence"] = ev;
    j["evidence_stage"] = evidence_stage;
    j["evidence_since"] = evidence_since;
    j["reveal"] = reveal;
    j["cliff"] = cliff;
    json laptops_json = json::array();
    std::set<std::string> lessons;
    for (const RoomResult& r : laptops) {
      lessons.insert(r.lesson);
      laptops_json.push_back(
          {{"name", r.name},
           {"lesson", r.lesson},
           {"stage", r.stage},
           {"reference", r.reference},
           {"ratio", r.ratio},
           {"interval", r.low > 0 ? fmt::format("{} to {}", results::format_change(r.low),
                                                results::format_change(r.high))
                                  : "none"},
           {"text", r.text},
           {"machine", r.machine},
           {"envelope", r.envelope.empty() ? "none" : r.envelope}});
    }
    j["room_results"] = laptops_json;
    json agree = json::object();
    for (const std::string& l : lessons) agree[l] = room_intervals_overlap(laptops, l);
    j["room_agree"] = agree;
    return j;
  }

  // One reading of the server's counters (cluster-wide, every database).
  // `connected_db`: the database `conn` is connected to (read once per connection);
  // `data_dir`: a local server's (its postmaster now, for the wait line's /proc look-up).
  void sample(pg::Connection& conn, const std::string& connected_db,
              const std::optional<std::filesystem::path>& data_dir) {
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
    const pg::Result lock_waiting = conn.exec_params(evidence::kLockWaitsNowSql, {connected_db});
    const double waiting = static_cast<double>(lock_waiting.get_int64(0, 0));
    // Where those backends are now: CPU (active, no wait event) or their wait event, and on a
    // local server commit_delay's unreported sleep, as the stage's sampler reads it.
    const auto now_waiting = evidence::waits_now(
        conn, connected_db, data_dir ? evidence::postmaster_pid_of(*data_dir) : std::nullopt);
    const double t = now_s();
    std::lock_guard lock(mu);
    ++backend_waits.samples;
    for (const auto& [wait, n] : now_waiting) backend_waits.backends[wait] += n;
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
    if (last_sample) waits.total += waiting * std::min(t - *last_sample, kMaxSampleGap);
    last_sample = t;
    dirty = true;
  }

  // A new run of a stage: its counters start at zero (the caller holds mu).
  void restart_counters(const std::string& stage) {
    for (auto& [k, c] : counters) c.restart();
    counters[kLockWaits].restart();
    backend_waits = {};
    if (!stage.empty()) evidence_stage = stage;
    evidence_since = now_s();
    dirty = true;
  }

  void watch() {
    std::optional<pg::Connection> conn;
    std::string connected_to;  // the database `conn` was asked for ("": the server's default)
    std::string database_now;  // the database `conn` is connected to, as the server names it
    std::string watched;       // the server `conn` is connected to
    std::mutex wait_mu;
    while (!stopping) {
      try {
        std::string wanted;
        std::string conninfo;
        std::optional<std::filesystem::path> data_dir;
        {
          std::lock_guard lock(mu);
          wanted = database;
          conninfo = watched_server;
          data_dir = watched_data_dir;
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
          // By this name the run's wait sampler leaves the dashboard's readings out.
          evidence::name_evidence_connection(*conn);
          conn->exec("SET statement_timeout = '5s'");
          database_now = conn->query_value("SELECT current_database()").value_or("");
        }
        sample(*conn, database_now, data_dir);
      } catch (const std::exception& e) {
        spdlog::debug("dashboard: cannot read the server's counters now: {}", e.what());
        conn.reset();  // the server restarts between stages: reconnect next time
      }
      std::unique_lock lock(wait_mu);
      wake.wait_for(lock, std::chrono::seconds(1), [&] { return stopping.load(); });
    }
  }

  // The door: every request passes it before its handler, and before its body is read.
  std::optional<HttpResponse> door(const HttpRequest& req) {
    const bool post = req.method != "GET" && req.method != "HEAD";
    const std::string host_header = req.header("host");
    if (loopback && !is_loopback_host(host_header))
      return refuse(403, "this dashboard answers only to 127.0.0.1 and localhost");
    if (!(post ? *writes : *reads).allow(req.remote_addr, now_us())) {
      HttpResponse r = refuse(429, "too many requests from your address: slow down");
      r.headers["Retry-After"] = "1";
      return r;
    }
    if (!post) return std::nullopt;
    if (auto why = foreign_origin(req.header("origin"), req.header("sec-fetch-site"), host_header))
      return refuse(403, *why);
    return std::nullopt;
  }

  HttpResponse serve_state() const {
    HttpResponse res;
    res.content_type = "application/json";
    std::lock_guard lock(mu);
    // The shared snapshot is sent as it is: no copy, no lock while the bytes go out.
    res.shared_body = current();
    return res;
  }

  HttpResponse join(const HttpRequest& req) {
    std::lock_guard lock(mu);
    if (tokens.size() >= limits.max_tokens)
      return refuse(503, "too many browsers joined this dashboard");
    std::size_t& joined = joins[req.remote_addr];
    if (joined >= limits.joins_per_address()) {
      return refuse(429, fmt::format("{} browsers joined from your address already: that is "
                                     "this address's share of the room (the instructor's "
                                     "--room-per-address)",
                                     joined));
    }
    ++joined;
    const std::string token = new_browser_token();
    tokens.emplace(token, req.remote_addr);
    HttpResponse res;
    res.content_type = "application/json";
    res.body = json{{"token", token}}.dump();
    return res;
  }

  HttpResponse predict(const HttpRequest& req) {
    std::string why;
    const std::optional<std::string> name = room_name(req.param("name"), limits.max_field, &why);
    const std::optional<std::string> answer = room_text(req.param("answer"), limits.max_field);
    if (!name) return refuse(400, why);
    if (!answer) return refuse(400, "the prediction must be UTF-8 text");
    const std::string token = req.header(kTokenHeader);
    std::lock_guard lock(mu);
    if (!predictions_open) return refuse(409, "predictions are closed");
    if (name->empty() || answer->empty()) return refuse(400, "a name and a prediction, please");
    const auto joined = tokens.find(token);
    if (joined == tokens.end()) return refuse(401, "this browser has not joined: reload the page");
    return place(room, owners, *joined, RoomPrediction{*name, *answer}, "predictions");
  }

  // A laptop's result (`lesson --room`): the sender must have joined, like a browser, and
  // send nothing but a result, under a name no other token holds.
  HttpResponse result(const HttpRequest& req) {
    std::string why;
    std::optional<RoomResult> r = read_room_result(req.body, limits.max_field, &why);
    if (!r) return refuse(400, why);
    const std::optional<std::string> name = room_name(r->name, limits.max_field, &why);
    if (!name) return refuse(400, why);
    if (name->empty()) return refuse(400, "a result needs a name");
    r->name = *name;
    const std::string token = req.header(kTokenHeader);
    std::lock_guard lock(mu);
    const auto joined = tokens.find(token);
    if (joined == tokens.end()) return refuse(401, "this laptop has not joined: POST /join first");
    return place(laptops, laptop_owners, *joined, std::move(*r), "results");
  }

  // `item` as the entry of `owner` (its token and the address it joined from) in `items` (the
  // caller holds mu). Its own entry is replaced; a name another token holds (compared by
  // room_name_key) is refused; a new entry needs a place in the room and in its address's share.
  template <typename T>
  HttpResponse place(std::vector<T>& items, std::vector<std::string>& item_owners,
                     const std::pair<const std::string, std::string>& owner, T item,
                     const char* what) {
    const auto& [token, address] = owner;
    const std::string key = room_name_key(item.name);
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (item_owners[i] != token && room_name_key(items[i].name) == key) {
        return refuse(409, fmt::format("the name \"{}\" is taken by another browser (names "
                                       "that look alike are one name): choose another",
                                       item.name));
      }
    }
    HttpResponse res;
    const auto own = std::find(item_owners.begin(), item_owners.end(), token);
    if (own != item_owners.end()) {
      items[static_cast<std::size_t>(own - item_owners.begin())] = std::move(item);
      res.body = "updated";
    } else if (items.size() >= limits.room_size) {
      return refuse(409, fmt::format("the room is full ({} {})", limits.room_size, what));
    } else {
      const std::size_t from_address = static_cast<std::size_t>(
          std::count_if(item_owners.begin(), item_owners.end(), [&](const std::string& t) {
            const auto it = tokens.find(t);
            return it != tokens.end() && it->second == address;
          }));
      if (from_address >= limits.per_address) {
        return refuse(429, fmt::format("your address holds {} of the room's {} already, its "
                                       "share (the instructor's --room-per-address {})",
                                       from_address, what, limits.per_address));
      }
      items.push_back(std::move(item));
      item_owners.push_back(token);
      res.body = "thanks";
    }
    dirty = true;
    return res;
  }

  HttpResponse handle(const HttpRequest& req) {
    const bool read = req.method == "GET" || req.method == "HEAD";
    if (req.path == "/" || req.path == "/state") {
      if (!read) return refuse(405, "GET only");
      if (req.path == "/state") return serve_state();
      HttpResponse res;
      res.content_type = "text/html; charset=utf-8";
      res.shared_body = page;
      return res;
    }
    if (req.path == "/join" || req.path == "/predict" || req.path == "/result") {
      if (req.method != "POST") return refuse(405, "POST only");
      if (req.path == "/join") return join(req);
      return req.path == "/predict" ? predict(req) : result(req);
    }
    return refuse(404, "no such page");
  }
};

Dashboard::Dashboard(const std::string& address, std::string title, DashboardLimits limits)
    : impl_(std::make_unique<Impl>()) {
  impl_->title = std::move(title);
  auto [host, port] = split_address(address);
  impl_->host = host;
  Impl* d = impl_.get();
  d->limits = limits;
  d->loopback = is_loopback_host(host);
  d->reads = std::make_unique<RateLimiter>(limits.reads_per_s, limits.read_burst);
  d->writes = std::make_unique<RateLimiter>(limits.writes_per_s, limits.write_burst);
  ServerLimits server_limits;
  server_limits.max_body = limits.max_body;
  server_limits.request_ms = limits.request_ms;
  server_limits.per_address = limits.connections_per_address;
  auto no_store = [](HttpResponse res) {
    res.headers["Cache-Control"] = "no-store";
    return res;
  };
  try {
    d->server = std::make_unique<DashboardServer>(
        host, port, server_limits,
        [d, no_store](const HttpRequest& req) -> std::optional<HttpResponse> {
          std::optional<HttpResponse> refused = d->door(req);
          if (refused) return no_store(std::move(*refused));
          return std::nullopt;
        },
        [d, no_store](const HttpRequest& req) { return no_store(d->handle(req)); });
  } catch (const InputError& e) {
    throw InputError(fmt::format(
        "--dashboard {}: {}; give a free port (or 0 for any) on an address of this machine",
        address, e.what()));
  }
  d->port = d->server->port();
}

Dashboard::~Dashboard() {
  impl_->server.reset();  // no handler runs after this
  impl_->stopping = true;
  impl_->wake.notify_all();
  if (impl_->watcher.joinable()) impl_->watcher.join();
}

std::string Dashboard::host() const {
  return impl_->host;
}

int Dashboard::port() const {
  return impl_->port;
}

std::string Dashboard::url() const {
  return fmt::format("http://{}:{}/", impl_->host, impl_->port);
}

void Dashboard::update(const std::string& line) {
  std::lock_guard lock(impl_->mu);
  impl_->status = line;
  impl_->dirty = true;
}

void Dashboard::note(const std::string& line) {
  std::lock_guard lock(impl_->mu);
  impl_->status = line;
  impl_->dirty = true;
}

void Dashboard::tick(const ProgressTick& t) {
  std::lock_guard lock(impl_->mu);
  impl_->points.push_back({impl_->now_s(), t, static_cast<int>(impl_->stages.size()) - 1});
  impl_->dirty = true;
}

void Dashboard::stage_started(const StageMarker& m) {
  std::lock_guard lock(impl_->mu);
  impl_->stages.push_back({{"t", impl_->now_s()}, {"name", m.stage}, {"changes", m.changes}});
  impl_->restart_counters(m.stage);
  impl_->dirty = true;
}

void Dashboard::measuring(const std::string& stage, const std::string& database) {
  std::lock_guard lock(impl_->mu);
  impl_->database = database;
  impl_->restart_counters(stage);
  impl_->dirty = true;
}

void Dashboard::set_step(const std::string& step, const std::string& text) {
  std::lock_guard lock(impl_->mu);
  impl_->step = step;
  impl_->step_text = text;
  impl_->dirty = true;
}

void Dashboard::open_predictions(const std::string& question) {
  std::lock_guard lock(impl_->mu);
  impl_->question = question;
  impl_->predictions_open = true;
  impl_->dirty = true;
}

void Dashboard::close_predictions() {
  std::lock_guard lock(impl_->mu);
  impl_->predictions_open = false;
  impl_->dirty = true;
}

std::vector<RoomResult> Dashboard::room_results() const {
  std::lock_guard lock(impl_->mu);
  return impl_->laptops;
}

std::string room_result_body(const RoomResult& r) {
  return json{{"name", r.name},           {"lesson", r.lesson},    {"stage", r.stage},
              {"reference", r.reference}, {"ratio", r.ratio},      {"low", r.low},
              {"high", r.high},           {"text", r.text},        {"transactions", r.transactions},
              {"machine", r.machine},     {"envelope", r.envelope}}
      .dump();
}

std::optional<RoomResult> read_room_result(const std::string& body, std::size_t max_field,
                                           std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<RoomResult> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return fail("a result is a JSON object");
  RoomResult r;
  const std::map<std::string, std::string*> texts = {
      {"name", &r.name},           {"lesson", &r.lesson}, {"stage", &r.stage},
      {"reference", &r.reference}, {"text", &r.text},     {"machine", &r.machine},
      {"envelope", &r.envelope}};
  const std::map<std::string, double*> numbers = {
      {"ratio", &r.ratio}, {"low", &r.low}, {"high", &r.high}};
  for (const auto& [key, value] : j.items()) {
    if (auto t = texts.find(key); t != texts.end()) {
      if (!value.is_string()) return fail(fmt::format("\"{}\" must be text", key));
      std::optional<std::string> clean = room_text(value.get<std::string>(), max_field);
      if (!clean) return fail(fmt::format("\"{}\" must be UTF-8 text", key));
      *t->second = *clean;
    } else if (auto n = numbers.find(key); n != numbers.end()) {
      if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0)
        return fail(fmt::format("\"{}\" must be a number of at least 0", key));
      *n->second = value.get<double>();
    } else if (key == "transactions") {
      if (!value.is_number_unsigned()) return fail("\"transactions\" must be a count");
      r.transactions = value.get<std::uint64_t>();
    } else {
      return fail(
          fmt::format("\"{}\" is not part of a result (a laptop sends its effect, "
                      "its machine and its envelope only)",
                      room_text(key, 40).value_or("?")));
    }
  }
  if (r.name.empty() || r.lesson.empty()) return fail("a result needs a name and a lesson");
  if (!(r.ratio > 0)) return fail("\"ratio\" must be above 0");
  if (r.low > 0 && !(r.low <= r.ratio && r.ratio <= r.high))
    return fail("the interval must hold the ratio (low <= ratio <= high)");
  return r;
}

bool room_intervals_overlap(const std::vector<RoomResult>& results, const std::string& lesson) {
  double highest_low = 0;
  double lowest_high = std::numeric_limits<double>::infinity();
  for (const RoomResult& r : results) {
    if (r.lesson != lesson || !(r.low > 0)) continue;
    highest_low = std::max(highest_low, r.low);
    lowest_high = std::min(lowest_high, r.high);
  }
  return highest_low <= lowest_high;
}

std::vector<RoomPrediction> Dashboard::predictions() const {
  std::lock_guard lock(impl_->mu);
  return impl_->room;
}

void Dashboard::set_reveal(const std::string& text) {
  std::lock_guard lock(impl_->mu);
  impl_->reveal = text;
  impl_->dirty = true;
}

void Dashboard::open_cliff(const std::string& knob, const results::CliffPoint& from,
                           const std::string& to, double to_value) {
  std::lock_guard lock(impl_->mu);
  impl_->cliff = {{"knob", knob},
                  {"from", from.value},
                  {"to", to},
                  {"from_value", from.base_value},
                  {"to_value", to_value},
                  {"points", json::array()},
                  {"guesses", json::array()}};
  impl_->dirty = true;
}

void Dashboard::add_cliff_point(const results::CliffPoint& p) {
  std::lock_guard lock(impl_->mu);
  if (impl_->cliff.is_null()) return;
  json point = {{"order", p.order},
                {"value", p.value},
                {"base_value", p.base_value},
                {"ratio", p.effect.ratio},
                {"low", p.effect.low},
                {"high", p.effect.high},
                {"verdict", results::to_string(p.verdict)},
                {"looks", p.looks}};
  json& points = impl_->cliff["points"];
  auto same = std::find_if(points.begin(), points.end(),
                           [&](const json& q) { return q["order"] == p.order; });
  if (same != points.end()) {
    *same = std::move(point);
  } else {
    points.push_back(std::move(point));
  }
  impl_->dirty = true;
}

void Dashboard::set_cliff_guesses(std::vector<CliffGuessMark> guesses) {
  std::lock_guard lock(impl_->mu);
  if (impl_->cliff.is_null()) return;
  json marks = json::array();
  for (const CliffGuessMark& g : guesses)
    marks.push_back({{"name", g.name}, {"text", g.text}, {"value", g.value}});
  impl_->cliff["guesses"] = std::move(marks);
  impl_->dirty = true;
}

void Dashboard::watch_server(const std::string& conninfo,
                             std::optional<std::filesystem::path> data_dir) {
  {
    std::lock_guard lock(impl_->mu);
    impl_->watched_server = conninfo;
    impl_->watched_data_dir = std::move(data_dir);
  }
  if (impl_->watcher.joinable()) return;  // its next reading (within a second) is of this one
  impl_->watcher = std::thread([d = impl_.get()] { d->watch(); });
}

std::string Dashboard::state_json() const {
  std::lock_guard lock(impl_->mu);
  return *impl_->current();
}

}  // namespace pgslow::workshop
