#include "apply/server_state.h"

#include <thread>

#include "apply/interrupt.h"
#include "common/clock.h"
#include "common/errors.h"
#include "common/log.h"
#include "knobs/value.h"

namespace pgslow::apply {

bool server_accepts_connections(const server::ServerControl& server) {
  try {
    pg::Connection conn = pg::Connection::open(server.conninfo());
    conn.exec("SELECT 1");
    return true;
  } catch (const std::exception& e) {
    if (pg::is_login_refused(e.what())) {
      throw RuntimeError(fmt::format(
          "{} refused pgslow's login ({}). pgslow stores no password: give it the libpq way "
          "(PGPASSWORD, ~/.pgpass or a service file) and run the command again. Nothing was "
          "changed",
          server.describe(), e.what()));
    }
    spdlog::debug("the server does not accept connections: {}", e.what());
    return false;
  }
}

void reload_and_wait(server::ServerControl& server, pg::Connection& conn,
                     std::chrono::seconds timeout, bool through_session) {
  const std::string query = "SELECT pg_catalog.pg_conf_load_time()::text";
  std::optional<std::string> before = conn.query_value(query);
  if (through_session) {
    conn.exec("SELECT pg_catalog.pg_reload_conf()");
  } else {
    server.reload();
  }
  // The postmaster re-reads the files, then signals every backend; ours re-reads them before
  // its next statement once the signal has arrived. Poll until it has.
  const std::int64_t deadline = now_us() + std::chrono::microseconds(timeout).count();
  while (true) {
    if (conn.query_value(query) != before) return;
    if (now_us() > deadline) {
      throw RuntimeError("the server did not reload its configuration within " +
                         std::to_string(timeout.count()) + " s after " + server.describe() +
                         " was asked to (pg_conf_load_time() did not change)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

knobs::ServerSettings wait_until_visible(
    const server::ServerControl& server, pg::Connection& conn,
    const std::function<bool(const knobs::ServerSettings&)>& shows, std::chrono::seconds timeout) {
  const std::int64_t started = now_us();
  const std::int64_t deadline = started + std::chrono::microseconds(timeout).count();
  for (;;) {
    knobs::ServerSettings now;
    try {
      conn = pg::Connection::open(server.conninfo());
      now = knobs::ServerSettings::read(conn);
    } catch (const pg::Error& e) {
      // Restarting under the target's command: ask again, until the deadline. A refused login
      // will not change by waiting.
      if (now_us() > deadline || pg::is_login_refused(e.what())) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    const bool in = shows(now);
    if (in || now_us() > deadline) {
      const double waited_s = static_cast<double>(now_us() - started) / 1e6;
      if (in && waited_s >= 1)
        spdlog::info("{} showed the values {:.1f} s after its command returned", server.describe(),
                     waited_s);
      return now;
    }
    InterruptGuard::throw_if_interrupted();  // Ctrl-C ends the wait, as it ends a run
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::vector<std::string> pending_restart(const knobs::ServerSettings& settings,
                                         const std::vector<std::string>& ignore) {
  std::vector<std::string> out;
  for (const auto& [name, s] : settings.by_name) {
    if (!s.pending_restart) continue;
    bool ignored = false;
    for (const std::string& i : ignore) ignored = ignored || i == name;
    if (!ignored) out.push_back(name);
  }
  return out;
}

std::map<std::string, std::string> server_wide_settings(const knobs::ServerSettings& settings) {
  std::map<std::string, std::string> out;
  for (const auto& [name, s] : settings.by_name) {
    if (s.source == "client" || s.source == "session" || s.source == "interactive") continue;
    out[name] = s.setting;
  }
  return out;
}

std::optional<std::map<std::string, std::string>> auto_conf_entries(pg::Connection& conn) {
  try {
    pg::Result r = conn.exec(
        "SELECT name, setting FROM pg_catalog.pg_file_settings "
        "WHERE sourcefile LIKE '%/postgresql.auto.conf' AND error IS NULL ORDER BY seqno");
    std::map<std::string, std::string> out;
    for (int i = 0; i < r.rows(); ++i) out[std::string(r.get(i, 0))] = std::string(r.get(i, 1));
    return out;
  } catch (const pg::Error& e) {
    // pg_file_settings needs superuser (or pg_read_all_settings): without it the original
    // auto.conf entries stay unknown and restore falls back to pg_settings' source.
    spdlog::debug("cannot read pg_file_settings: {}", e.server_message());
    return std::nullopt;
  }
}

std::string display_value(const knobs::ServerSetting& like, const std::string& setting) {
  if (like.unit.empty()) return setting;
  std::optional<knobs::BaseUnit> unit = knobs::parse_base_unit(like.unit);
  if (!unit || unit->kind == knobs::BaseUnit::Kind::kNone) return setting + " " + like.unit;
  try {
    std::size_t used = 0;
    double value = std::stod(setting, &used);
    if (used != setting.size()) return setting;
    if (value < 0) return setting;  // -1 and friends mean "derived" or "off"
    return knobs::format_with_unit(value, *unit);
  } catch (const std::exception&) {
    return setting;
  }
}

std::string display_value(const knobs::ServerSetting& setting) {
  return display_value(setting, setting.setting);
}

}  // namespace pgslow::apply
