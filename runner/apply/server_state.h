#pragma once
// What apply and restore read from the live server: pg_settings (through
// knobs::ServerSettings), postgresql.auto.conf's entries as the server sees them, and whether a
// reload has reached this session.

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "knobs/validate.h"
#include "pg/connection.h"
#include "server/server_control.h"

namespace pgslow::apply {

// Whether the server accepts a connection now. A server that answers but refuses the login
// (no password, a wrong one) is running: that throws RuntimeError saying how to give the
// password, instead of reading as a server that is down (which restore would try to start).
bool server_accepts_connections(const server::ServerControl& server);

// Asks the server to reload (the ServerControl's way) and waits until `conn`'s session has
// re-read the configuration (pg_conf_load_time changes), so pg_settings and pending_restart
// read through `conn` afterwards are current. Throws RuntimeError after `timeout`.
// With `through_session`, the reload is asked for by pg_reload_conf() on `conn` itself: when
// no new session can connect (a preload library that is not there), only this one can.
void reload_and_wait(server::ServerControl& server, pg::Connection& conn,
                     std::chrono::seconds timeout = std::chrono::seconds(30),
                     bool through_session = false);

// Parameters whose new value in the configuration files waits for a restart, less `ignore`
// (those already pending before pgslow came).
std::vector<std::string> pending_restart(const knobs::ServerSettings& settings,
                                         const std::vector<std::string>& ignore);

// name -> setting of every parameter whose value is the server's (not one this session set:
// sources "client", "session", "interactive"), to compare before and after.
std::map<std::string, std::string> server_wide_settings(const knobs::ServerSettings& settings);

// The entries of postgresql.auto.conf (name -> value as written), from pg_file_settings;
// nullopt when this role may not read it.
std::optional<std::map<std::string, std::string>> auto_conf_entries(pg::Connection& conn);

// A setting as a person reads it: "128MB" for shared_buffers = 16384 (8kB units), "on", "5s".
std::string display_value(const knobs::ServerSetting& setting);
// Same for a raw setting text in that parameter's unit.
std::string display_value(const knobs::ServerSetting& like, const std::string& setting);

// A target whose own command sets the parameters may show them only later (an HA manager
// applies from its store on its next loop): reads the settings through a new session to
// `server` until `shows` says they are in, kVisibleTimeout at most, and returns the last read
// (`conn` is that session). Says so when it had to wait.
inline constexpr std::chrono::seconds kVisibleTimeout{30};
knobs::ServerSettings wait_until_visible(
    const server::ServerControl& server, pg::Connection& conn,
    const std::function<bool(const knobs::ServerSettings&)>& shows,
    std::chrono::seconds timeout = kVisibleTimeout);

}  // namespace pgslow::apply
