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
#include "workshop/dashboard_state.h"

namespace pgslow::workshop {

namespace {

constexpr const char* kAutovacuumRuns = "autovacuum runs";
constexpr const char* kLockWaits = "lock waits";

// Seconds between two readings that count as lock waiting at most: after a reconnect the gap
// is not all waiting.
constexpr double kMaxSampleGap = 2.0;

std::pair<std::string, int> split_address(const std::string& address) {
  std::string host = "127.0.0.1";
  int port = 8080;
  auto colon = address.rfind(':');
  std::string port_text;
  if (colon == std::string::npos) {
    // A bare number is a port on the default host (`--dashboard 18183`), else a host.
    const bool digits =
        !address.empty() && address.find_first_not_of("0123456789") == std::string::npos;
    if (digits)
      port_text = address;
    else if (!address.empty())
      host = address;
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

}  // namespace

// The /state document now (the caller holds mu): rebuilt after a change, else shared.
std::shared_ptr<const std::string> Dashboard::Impl::current() const {
  if (dirty || !snapshot) {
    // Replacement characters for anything not UTF-8 (a server message, a status line): one
    // bad byte must not make every later answer a 500.
    snapshot = std::make_shared<const std::string>(
        state().dump(-1, ' ', false, json::error_handler_t::replace));
    dirty = false;
  }
  return snapshot;
}

json Dashboard::Impl::state() const {
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
void Dashboard::Impl::sample(pg::Connection& conn, const std::string& connected_db,
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
void Dashboard::Impl::restart_counters(const std::string& stage) {
  for (auto& [k, c] : counters) c.restart();
  counters[kLockWaits].restart();
  backend_waits = {};
  if (!stage.empty()) evidence_stage = stage;
  evidence_since = now_s();
  dirty = true;
}

void Dashboard::Impl::watch() {
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
        conn.emplace(
            pg::Connection::open(wanted.empty() ? conninfo : pg::with_database(conninfo, wanted)));
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
