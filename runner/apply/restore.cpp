#include "apply/restore.h"

#include <fmt/format.h>

#include "apply/auto_conf.h"
#include "apply/interrupt.h"
#include "apply/server_state.h"
#include "apply/sql.h"
#include "common/errors.h"
#include "common/log.h"
#include "knobs/validate.h"

namespace pgslow::apply {

namespace {

// The statement that puts one parameter back to its original entry, for a server pgslow
// reaches only by connection (no file access).
std::string restore_statement(pg::Connection& conn, const OriginalParameter& p) {
  if (p.auto_conf_known) {
    if (p.auto_conf_value) return alter_system_set(p.name, conn.quote_literal(*p.auto_conf_value));
    return alter_system_reset(p.name);
  }
  // pg_file_settings was not readable: a value that came from a configuration file is set
  // again (in the server's base unit, which ALTER SYSTEM reads the same way), anything else
  // goes back to the files' or the built-in default.
  if (p.source == "configuration file")
    return alter_system_set(p.name, conn.quote_literal(p.setting));
  return alter_system_reset(p.name);
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  for (const std::string& x : v) {
    if (x == s) return true;
  }
  return false;
}

// Every server-wide value that differs from the journal's record, as readable lines.
std::vector<std::string> differences(const Journal& journal, const knobs::ServerSettings& now) {
  std::vector<std::string> out;
  std::map<std::string, std::string> current = server_wide_settings(now);
  for (const auto& [name, before] : journal.settings_before) {
    if (contains(journal.pending_restart_before, name)) continue;
    auto it = current.find(name);
    if (it == current.end() || it->second == before) continue;
    const knobs::ServerSetting* s = now.find(name);
    out.push_back(fmt::format("{} is {}, was {}", name, display_value(*s, it->second),
                              display_value(*s, before)));
  }
  return out;
}

void start_if_down(server::ServerControl& server, std::chrono::seconds timeout,
                   RestoreOutcome& out) {
  if (server_accepts_connections(server)) return;
  spdlog::info("{} is not running; starting it with its original configuration", server.describe());
  try {
    server.restart(timeout);
    out.started = true;
  } catch (const Error& e) {
    // A pg_ctl left behind by a killed pgslow may have started it meanwhile: then it is up
    // (and the reload below makes sure it runs the original configuration).
    if (!server_accepts_connections(server)) throw;
    spdlog::debug("the server came up while pgslow was starting it: {}", e.what());
  }
}

}  // namespace

bool reset_to_original_files(pg::Connection* conn, const Journal& journal) {
  if (journal.auto_conf) {
    if (auto_conf_matches(*journal.auto_conf)) return false;
    write_auto_conf(*journal.auto_conf);
    return true;
  }
  if (conn == nullptr)
    throw RuntimeError("the server " + journal.server.description +
                       " is reached only by connection, and it does not accept one now; start "
                       "it, then run `pgslow recover`");
  for (const OriginalParameter& p : journal.touched) conn->exec(restore_statement(*conn, p));
  return !journal.touched.empty();
}

RestoreOutcome restore_original(server::ServerControl& server, const std::filesystem::path& workdir,
                                Journal& journal, std::chrono::seconds timeout) {
  RestoreOutcome out;
  if (journal.state != JournalState::kRestoring) {
    journal.state = JournalState::kRestoring;
    save_journal(workdir, journal);
  }
  crash_point(phase::kRestoring);

  // A local server gets its file back first, so that a start (if it is down) already reads it.
  if (journal.auto_conf) out.file_written = reset_to_original_files(nullptr, journal);
  start_if_down(server, timeout, out);

  pg::Connection conn = pg::Connection::open(server.conninfo());
  knobs::ServerSettings running = knobs::ServerSettings::read(conn);
  if (!journal.auto_conf) out.file_written = reset_to_original_files(&conn, journal);
  // Always reload: the file may have been restored by an earlier, interrupted attempt whose
  // reload never happened.
  reload_and_wait(server, conn);
  out.reloaded = true;
  knobs::ServerSettings reloaded = knobs::ServerSettings::read(conn);
  std::vector<std::string> pending = pending_restart(reloaded, journal.pending_restart_before);
  if (!pending.empty()) {
    spdlog::info("restarting {} to put back {}", server.describe(),
                 journal.hidden ? std::string("a hidden setting") : fmt::format("{}", fmt::join(pending, ", ")));
    server.restart(timeout);
    out.restarted = true;
    conn = pg::Connection::open(server.conninfo());
  }

  knobs::ServerSettings now = knobs::ServerSettings::read(conn);
  std::vector<std::string> problems = differences(journal, now);
  if (journal.auto_conf && !auto_conf_matches(*journal.auto_conf))
    problems.push_back(journal.auto_conf->path.string() + " differs from the original bytes");
  if (!problems.empty()) {
    throw RuntimeError(fmt::format(
        "the original configuration of {} is back in place, but the server does not show it:\n"
        "  {}\nThe journal {} is kept; `pgslow recover` tries again.",
        server.describe(), fmt::join(problems, "\n  "), journal_path(workdir).string()));
  }
  for (const auto& [name, s] : running.by_name) {
    const knobs::ServerSetting* after = now.find(name);
    if (after && after->setting != s.setting && journal.settings_before.count(name)) {
      out.changes.push_back(
          fmt::format("{} back to {} (was {})", name, display_value(*after), display_value(s)));
    }
  }
  remove_journal(workdir);
  return out;
}

}  // namespace pgslow::apply
