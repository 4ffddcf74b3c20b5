#include "experiment/pooler_path.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/clock.h"
#include "common/errors.h"
#include "pg/connection.h"
#include "pg/error.h"
#include "server/managed_cluster.h"

namespace pgslow::experiment {

PoolerPath::PoolerPath(std::optional<server::PoolerSpec> spec, server::ServerControl& server,
                       std::filesystem::path workdir)
    : spec_(std::move(spec)), server_(server), workdir_(std::move(workdir)) {
  if (spec_ && spec_->managed()) require_managed_cluster();
}

PoolerPath::~PoolerPath() = default;  // the PgBouncer stops itself

server::ManagedCluster& PoolerPath::require_managed_cluster() const {
  auto* cluster = dynamic_cast<server::ManagedCluster*>(&server_);
  if (cluster == nullptr) {
    throw InputError(fmt::format(
        "pgslow starts its own PgBouncer in front of its managed cluster only, and the target is "
        "{}: point at the target's own pooler instead (pooler: {{kind: external, conninfo: "
        "...}}, or --pooler 'host=... port=6432')",
        server_.describe()));
  }
  return *cluster;
}

std::optional<server::PoolerSpec> PoolerPath::route(const results::LoadSettings& load,
                                                    int& driver_pool) const {
  driver_pool = server::driver_pool_size(load.pooler, load.pool_size);
  return server::stage_pooler(spec_, load.pooler, load.pool_size, load.pooler_settings);
}

std::vector<results::KnobChange> PoolerPath::knob_changes(const results::LoadSettings& load) const {
  if (load.pooler_settings.empty()) return {};
  std::vector<std::string> names;
  for (const auto& entry : load.pooler_settings) names.push_back(entry.first);
  const auto without = server::stage_pooler(spec_, load.pooler, load.pool_size, {});
  int driver_pool = 0;
  const auto with = route(load, driver_pool);
  std::vector<results::KnobChange> out;
  for (const auto& c : server::pooler_setting_changes(
           without ? without->settings : std::map<std::string, std::string>{}, with->settings,
           names))
    out.push_back(results::KnobChange{std::string(server::kPoolerKnobPrefix) + c.name, c.before,
                                      c.after, std::string(results::kApplyByPooler)});
  return out;
}

std::string PoolerPath::client_conninfo(const std::string& direct, const std::string& database,
                                        const results::LoadSettings& load, int& driver_pool) {
  current_ = route(load, driver_pool);
  if (!current_) return direct;
  if (!current_->managed()) {
    // libpq takes the last of a repeated keyword: the stage's database over the pooler's.
    return database.empty() ? current_->conninfo : pg::with_database(current_->conninfo, database);
  }
  if (!pgbouncer_) {
    server::ManagedCluster& cluster = require_managed_cluster();
    server::PgBouncerOptions o;
    o.workdir = workdir_;
    o.server_socket_dir = cluster.socket_dir();
    o.server_port = cluster.port();
    o.settings = current_->settings;
    pgbouncer_ = std::make_unique<server::PgBouncer>(std::move(o));
  }
  if (pgbouncer_->is_running()) {
    // Another point of a sweep: its settings by RELOAD, read back.
    if (pgbouncer_->settings() != current_->settings) pgbouncer_->set(current_->settings);
  } else {
    if (started_pid_) spdlog::warn("PgBouncer is gone; starting it again for the next stage");
    pgbouncer_->set(current_->settings);
    pgbouncer_->start();
    started_pid_ = pgbouncer_->pid();
  }
  return pgbouncer_->conninfo(database.empty() ? "postgres" : database);
}

std::optional<std::string> PoolerPath::switch_load(const results::LoadSettings& load,
                                                   const std::string& database, double settle_s) {
  int driver_pool = 0;
  auto next = route(load, driver_pool);
  // Not through pgslow's PgBouncer: the two loads take the same path (the plan's rule), and
  // there is nothing to switch.
  if (!next || !next->managed()) return std::nullopt;
  if (!pgbouncer_ || !pgbouncer_->is_running())
    throw RuntimeError("PgBouncer is gone: the switchback run cannot switch its pool");
  current_ = next;
  if (pgbouncer_->settings() == next->settings) return std::nullopt;
  pgbouncer_->set(next->settings);
  // A larger pool opens server connections as clients wait. A smaller one closes only idle
  // ones, which a busy pool never has: RECONNECT closes each as it is released, and the pool
  // refills up to its new size. Until then the block would measure the old pool.
  auto setting = [&](std::string_view name) {
    return std::stoll(server::pooler_setting_value(next->settings, name));
  };
  long long allowed = setting("default_pool_size") + setting("reserve_pool_size");
  if (const long long per_database = setting("max_db_connections"); per_database > 0)
    allowed = std::min(allowed, per_database);
  const std::string pool = database.empty() ? "postgres" : database;
  const std::int64_t deadline = now_us() + static_cast<std::int64_t>(settle_s * 1e6);
  std::optional<long long> held;
  bool reconnected = false;
  for (;;) {
    if (auto s = stats(pool)) {
      held = s->servers_active + s->servers_idle + s->servers_used;
      if (*held <= allowed) return std::nullopt;
      if (!reconnected) {
        pgbouncer_->reconnect_database(pool);
        reconnected = true;
      }
    }
    if (now_us() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!held)
    return fmt::format(
        "PgBouncer's console did not answer within {:g} s of a switch to a pool of {}: its "
        "blocks may have measured the larger pool",
        settle_s, allowed);
  return fmt::format(
      "PgBouncer still held {} server connections {:g} s after its pool went to {}: its "
      "blocks may have measured the larger pool",
      *held, settle_s, allowed);
}

std::optional<server::PoolerStats> PoolerPath::stats(const std::string& database) const {
  if (!current_ || !current_->managed() || !pgbouncer_ || !pgbouncer_->is_running())
    return std::nullopt;
  try {
    return pgbouncer_->stats(database.empty() ? "postgres" : database);
  } catch (const pg::Error& e) {
    spdlog::debug("PgBouncer's console did not answer: {}", e.what());
    return std::nullopt;
  }
}

std::optional<std::string> PoolerPath::died() const {
  if (!current_ || !current_->managed() || !pgbouncer_ || !started_pid_ || pgbouncer_->is_running())
    return std::nullopt;
  return fmt::format(
      "PgBouncer (pid {}), the pooler between the clients and the server, died during the run "
      "(killed, or crashed): the clients' failures are the pooler's, not the server's. Last "
      "lines of {}:\n{}",
      *started_pid_, pgbouncer_->log_file().string(), pgbouncer_->log_tail(10));
}

std::optional<std::string> PoolerPath::prepared_statements_problem(const std::string& conninfo) {
  if (!current_ || !current_->managed()) return std::nullopt;
  const auto mode = current_->settings.find("pool_mode");
  // Session mode gives each client its own server connection: nothing to share. (A probe there
  // could also wait for a server connection the first client holds.)
  if (mode == current_->settings.end() || mode->second == "session") return std::nullopt;
  // Two clients prepare one name, one after the other, then the first runs it. A pooler that
  // does not track protocol-level prepared statements (PgBouncer before 1.21, or
  // max_prepared_statements 0) hands the second client the server connection the first
  // prepared on ("already exists"), or runs the first client's on another ("does not exist").
  const std::string name = fmt::format("pgslow_probe_{}_{}", ::getpid(), ++probes_);
  try {
    auto first = pg::Connection::open(conninfo, pg::SessionKind::kWorkload);
    auto second = pg::Connection::open(conninfo, pg::SessionKind::kWorkload);
    first.prepare(name, "SELECT 1");
    second.prepare(name, "SELECT 1");
    first.exec_prepared(name, {});
    return std::nullopt;
  } catch (const pg::Error& e) {
    return fmt::format(
        "prepared statements (-M prepared, pgslow's default; tpcc-lite prepares every statement) "
        "do not work through {} on PgBouncer {}: it gives clients server connections per "
        "transaction, and a statement prepared by one client is on a server connection another "
        "client then gets, or missing from the one the same client gets next. A probe before "
        "the run saw it: {}. Every statement of the workload would fail this way: this is the "
        "pooler, not a slow server. This run sends them unnamed instead (-M extended), the "
        "driver's fallback; to measure prepared statements use pool_mode: session, or "
        "PgBouncer 1.21 or later with max_prepared_statements",
        current_->describe(), pgbouncer_->version(), e.what());
  }
}

void PoolerPath::hold_during_reset(const std::string& database) {
  if (pgbouncer_ && !database.empty()) pgbouncer_->hold_database(database);
}

void PoolerPath::resume_after_reset(const std::string& database) {
  if (pgbouncer_ && !database.empty()) pgbouncer_->resume_database(database);
}

void PoolerPath::stop() {
  if (pgbouncer_) pgbouncer_->stop();
}

void add_pooler_counters(const server::PoolerStats& stats, evidence::Snapshot& snapshot) {
  snapshot.counters["pooler_wait_ms"] =
      evidence::Counter{static_cast<double>(stats.accrued_wait_us()) / 1000.0, "SHOW STATS"};
}

void add_pooler_evidence(const server::PoolerStats& before, const server::PoolerStats& after,
                         std::map<std::string, double>& evidence) {
  // Every client's wait for a server connection within the window, those still waiting at
  // either end included.
  evidence["pooler_wait_ms"] = static_cast<double>(std::max<std::int64_t>(
                                   0, after.accrued_wait_us() - before.accrued_wait_us())) /
                               1000.0;
  evidence["pooler_servers"] =
      static_cast<double>(after.servers_active + after.servers_idle + after.servers_used);
  evidence["pooler_clients_waiting"] = static_cast<double>(after.clients_waiting);
  evidence["pooler_max_wait_ms"] = static_cast<double>(after.max_wait_us) / 1000.0;
}

}  // namespace pgslow::experiment
