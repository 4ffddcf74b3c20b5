#include "apply/restore.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

#include "apply/auto_conf.h"
#include "apply/command_settings.h"
#include "apply/interrupt.h"
#include "apply/server_lock.h"
#include "apply/server_state.h"
#include "apply/sql.h"
#include "common/errors.h"
#include "common/log.h"
#include "common/strings.h"
#include "knobs/validate.h"
#include "knobs/value.h"

namespace pgslow::apply {

namespace {

using Entries = std::map<std::string, std::string>;  // lower-case name -> decoded value

// The statement that puts one parameter back to its original entry, for a server pgslow
// reaches only by connection (no file access).
std::string restore_statement(pg::Connection& conn, const OriginalParameter& p) {
  if (p.auto_conf_known) {
    if (p.auto_conf_value) return alter_system_set_value(conn, p.name, *p.auto_conf_value);
    return alter_system_reset(p.name);
  }
  // pg_file_settings was not readable: a value that came from a configuration file is set
  // again (in the server's base unit, which ALTER SYSTEM reads the same way), anything else
  // goes back to the files' or the built-in default.
  if (p.source == "configuration file") return alter_system_set_value(conn, p.name, p.setting);
  return alter_system_reset(p.name);
}

bool is_touched(const Journal& j, const std::string& name) {
  return j.find_touched(name) != nullptr;
}

std::optional<std::string> entry(const Entries& e, const std::string& name) {
  auto it = e.find(to_lower(name));
  if (it == e.end()) return std::nullopt;
  return it->second;
}

std::string shown(const std::optional<std::string>& v) {
  return v ? "'" + *v + "'" : "no entry";
}

// Compares what postgresql.auto.conf holds now with the original, parameter by parameter.
// `original` holds the original entries of every parameter `known` says is known.
ResetPlan compare_entries(const Journal& j, const Entries& original, const Entries& current,
                          bool foreign_too, const std::set<std::string>& unknown = {}) {
  ResetPlan plan;
  for (const OriginalParameter& p : j.touched) {
    if (unknown.count(to_lower(p.name))) continue;
    std::optional<std::string> o = entry(original, p.name);
    std::optional<std::string> c = entry(current, p.name);
    if (c == o || (c && o && knobs::same_parameter_value(p.name, *c, *o))) continue;
    // The server writes a list its own way ("evil,pg_catalog" as "evil, pg_catalog").
    bool ours = false;
    for (const std::string& v : p.pgslow_values)
      ours = ours || (c && knobs::same_parameter_value(p.name, *c, v));
    if (ours) continue;
    plan.conflict_names.push_back(p.name);
    plan.conflicts.push_back(fmt::format(
        "{}: someone else changed it to {} in postgresql.auto.conf; pgslow had set {}, the "
        "original is {}",
        p.name, shown(c),
        p.pgslow_values.empty() ? std::string("nothing yet") : "'" + p.pgslow_values.back() + "'",
        shown(o)));
  }
  if (!foreign_too) return plan;
  std::set<std::string> names;
  for (const auto& [n, v] : original) names.insert(n);
  for (const auto& [n, v] : current) names.insert(n);
  for (const std::string& n : names) {
    if (is_touched(j, n) || n == kServerClaimParameter) continue;
    std::optional<std::string> o = entry(original, n);
    std::optional<std::string> c = entry(current, n);
    if (c == o) continue;
    plan.foreign.push_back(
        fmt::format("{} = {} in postgresql.auto.conf (originally {}), set by "
                    "someone else since pgslow's change: kept",
                    n, shown(c), shown(o)));
  }
  return plan;
}

Entries values(const std::map<std::string, AutoConfEntry>& entries) {
  Entries out;
  for (const auto& [name, e] : entries) out[name] = e.value;
  return out;
}

// A local server: the file on disk against the journal's original bytes.
ResetPlan plan_local(const Journal& j, const OriginalFile& now) {
  return compare_entries(j, values(parse_auto_conf(j.auto_conf->bytes)),
                         values(parse_auto_conf(now.bytes)), true);
}

// A server reached by connection: pg_file_settings against the recorded original entries.
ResetPlan plan_remote(const Journal& j, pg::Connection& conn) {
  std::optional<std::map<std::string, std::string>> now = auto_conf_entries(conn);
  if (!now) return {};  // not readable: conflicts cannot be seen
  Entries original;
  Entries current;
  std::set<std::string> unknown;
  for (const OriginalParameter& p : j.touched) {
    if (!p.auto_conf_known) unknown.insert(to_lower(p.name));
    if (p.auto_conf_value) original[to_lower(p.name)] = *p.auto_conf_value;
  }
  for (const auto& [name, value] : *now) current[to_lower(name)] = value;
  return compare_entries(j, original, current, false, unknown);
}

void require_no_conflict(const ResetPlan& plan, bool force) {
  if (plan.conflicts.empty() || force) return;
  throw RuntimeError(fmt::format(
      "someone else changed {} that pgslow changed too, since pgslow's change:\n  {}\nNothing "
      "was restored: pgslow does not pick one of the two values for you. Either put back the "
      "original yourself (then `pgslow restore` finishes the rest), or run the restore again "
      "with --force-restore, which puts the original back and prints the value it replaces",
      plan.conflict_names.size() == 1 ? "a parameter" : "parameters",
      join(plan.conflicts, "\n  ")));
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

// Where a parameter's value comes from now ("/etc/postgresql.conf:12"), empty when not a file
// or not readable.
std::string source_file(pg::Connection& conn, const std::string& name) {
  try {
    pg::Result r = conn.exec_params(
        "SELECT coalesce(sourcefile, '') || coalesce(':' || sourceline, '') FROM "
        "pg_catalog.pg_settings WHERE name = $1",
        pg::make_params(name));
    return r.rows() == 1 ? std::string(r.get(0, 0)) : std::string();
  } catch (const pg::Error& e) {
    spdlog::debug("cannot read the source file of {}: {}", name, e.server_message());
    return {};
  }
}

bool is_auto_conf(const std::string& source) {
  return source.find("postgresql.auto.conf") != std::string::npos;
}

}  // namespace

namespace {

// postgresql.auto.conf as it is now, to be compared with the journal's original; nullopt when
// it cannot be read (over the size cap: the server's user wrote it after pgslow's change) and
// `force` says to put the original back over it anyway. Without `force` that is an error that
// says so, so a grown file cannot hold the restore up for good.
std::optional<OriginalFile> current_auto_conf(const OriginalFile& original, bool force) {
  try {
    return read_auto_conf(original.path.parent_path());
  } catch (const RuntimeError& e) {
    if (force) return std::nullopt;
    throw RuntimeError(std::string(e.what()) +
                       " It is not what pgslow left there: someone else wrote it. `pgslow "
                       "restore --force-restore` writes the original back over it.");
  }
}

}  // namespace

bool reset_to_original_files(pg::Connection* conn, const Journal& journal, bool force,
                             ResetPlan* plan_out) {
  ResetPlan plan;
  bool changed = false;
  if (journal.auto_conf) {
    const OriginalFile& original = *journal.auto_conf;
    const std::optional<OriginalFile> current = current_auto_conf(original, force);
    if (!current) {
      write_auto_conf(original);
      changed = true;
    } else if (const OriginalFile& now = *current;
               now.existed != original.existed || now.bytes != original.bytes) {
      plan = plan_local(journal, now);
      require_no_conflict(plan, force);
      if (plan.foreign.empty()) {
        // Nobody else changed the file: the original bytes, exactly.
        write_auto_conf(original);
        changed = true;
      } else {
        std::set<std::string> names;
        for (const OriginalParameter& p : journal.touched) names.insert(to_lower(p.name));
        names.insert(kServerClaimParameter);  // pgslow's claim goes with its settings
        OriginalFile merged = original;
        merged.bytes = merge_auto_conf(now.bytes, original.bytes, names);
        if (!original.existed) {
          merged.existed = true;
          merged.mode = now.mode;
          merged.uid = now.uid;
          merged.gid = now.gid;
        }
        if (merged.bytes != now.bytes) {
          write_auto_conf(merged);
          changed = true;
        }
      }
    }
  } else {
    if (conn == nullptr)
      throw RuntimeError("the server " + journal.server.description +
                         " is reached only by connection, and it does not accept one now; start "
                         "it, then run `pgslow recover`");
    plan = plan_remote(journal, *conn);
    require_no_conflict(plan, force);
    for (const OriginalParameter& p : journal.touched) conn->exec(restore_statement(*conn, p));
    changed = !journal.touched.empty();
  }
  if (plan_out) *plan_out = std::move(plan);
  return changed;
}

namespace {

// The target's own command puts the originals back and makes them effective (it starts a
// server that is down: a restart is asked for then). `running`: the settings before, when it was
// up.
void put_back_by_target(server::ServerControl& server, Journal& journal,
                        std::chrono::seconds timeout, RestoreOutcome& out,
                        knobs::ServerSettings& running) {
  std::optional<pg::Connection> up;
  std::map<std::string, std::string> files;
  if (server_accepts_connections(server)) {
    up = pg::Connection::open(server.conninfo());
    running = knobs::ServerSettings::read(*up);
    files = source_files(*up);
  }
  server::ParameterChange change =
      original_parameters(journal, up ? &running : nullptr, up ? &files : nullptr);
  const bool was_up = up.has_value();
  up.reset();  // no session of ours in the way of the command's restart
  server.set_parameters(change, timeout);
  if (!was_up) {
    // Started with the originals as their sources say; now that the server shows which file
    // holds each value, the entries that belong to another file are removed.
    pg::Connection now = pg::Connection::open(server.conninfo());
    knobs::ServerSettings started = knobs::ServerSettings::read(now);
    std::map<std::string, std::string> started_files = source_files(now);
    server::ParameterChange again = original_parameters(journal, &started, &started_files);
    if (!again.settings.empty()) {
      now = pg::Connection();
      server.set_parameters(again, timeout);
    }
  }
  out.file_written = true;
  out.started = !was_up;
  out.restarted = was_up && change.restart_needed;
  out.reloaded = !change.restart_needed;
}

// A local server: the original file back (first, so that a start already reads it), a reload,
// and a restart when one of pgslow's own parameters needs it. Returns a session to the server.
pg::Connection put_back_locally(server::ServerControl& server, const std::filesystem::path& workdir,
                                Journal& journal, std::chrono::seconds timeout, bool force,
                                RestoreOutcome& out, ResetPlan& plan,
                                knobs::ServerSettings& running) {
  pg::Connection conn;
  // A local server gets its file back first, so that a start (if it is down) already reads it.
  if (journal.auto_conf) out.file_written = reset_to_original_files(nullptr, journal, force, &plan);
  start_if_down(server, timeout, out);

  conn = pg::Connection::open(server.conninfo());
  running = knobs::ServerSettings::read(conn);
  if (!journal.auto_conf) {
    out.file_written = reset_to_original_files(&conn, journal, force, &plan);
    release_server_marker(conn, workdir);
  }
  // Always reload: the file may have been restored by an earlier, interrupted attempt whose
  // reload never happened.
  reload_and_wait(server, conn);
  out.reloaded = true;
  knobs::ServerSettings reloaded = knobs::ServerSettings::read(conn);
  // Only pgslow's own parameters are a reason to restart: a change someone else left pending
  // is theirs to put in effect.
  std::vector<std::string> pending;
  for (const std::string& name : pending_restart(reloaded, journal.pending_restart_before)) {
    if (is_touched(journal, name)) pending.push_back(name);
  }
  if (!pending.empty()) {
    spdlog::info("restarting {} to put back {}", server.describe(),
                 journal.hidden ? std::string("a hidden setting")
                                : fmt::format("{}", fmt::join(pending, ", ")));
    server.restart(timeout);
    out.restarted = true;
    conn = pg::Connection::open(server.conninfo());
  }
  return conn;
}

// Verify what pgslow owns: each parameter it changed has its original value again, unless
// a configuration file other than postgresql.auto.conf now sets it (someone else's edit).
// What `now` shows that is not the original; someone else's values (kept) go to `kept`.
std::vector<std::string> restore_problems(const server::ServerControl& server,
                                          const Journal& journal, pg::Connection& conn,
                                          const knobs::ServerSettings& now, const ResetPlan& plan,
                                          std::vector<std::string>* kept) {
  std::vector<std::string> problems;
  for (const OriginalParameter& p : journal.touched) {
    const knobs::ServerSetting* s = now.find(p.name);
    if (s == nullptr || s->setting == p.setting) continue;
    // (A target that sets parameters itself writes a configuration file of its own: there a
    // value from a file is not someone else's edit.)
    std::string source = server.sets_parameters() ? std::string() : source_file(conn, s->name);
    if (!source.empty() && !is_auto_conf(source)) {
      if (kept == nullptr) continue;
      kept->push_back(
          fmt::format("{} is {} from {}, where someone else set it since "
                      "pgslow's change (originally {}): kept",
                      s->name, display_value(*s), source, display_value(*s, p.setting)));
      continue;
    }
    problems.push_back(
        fmt::format("{} is {}, was {}", s->name, display_value(*s), display_value(*s, p.setting)));
  }
  if (journal.auto_conf && plan.foreign.empty() && plan.conflicts.empty() &&
      !auto_conf_matches(*journal.auto_conf))
    problems.push_back(journal.auto_conf->path.string() + " differs from the original bytes");
  return problems;
}

void verify_restored(server::ServerControl& server, const std::filesystem::path& workdir,
                     const Journal& journal, pg::Connection& conn, const knobs::ServerSettings& now,
                     const ResetPlan& plan, RestoreOutcome& out) {
  const std::vector<std::string> problems =
      restore_problems(server, journal, conn, now, plan, &out.kept);
  if (!problems.empty()) {
    throw RuntimeError(fmt::format(
        "the original configuration of {} is back in place, but the server does not show it:\n"
        "  {}\nThe journal {} is kept; `pgslow recover` tries again.",
        server.describe(), fmt::join(problems, "\n  "), journal_path(workdir).string()));
  }
}

// Server-wide values that differ from before pgslow's change without being pgslow's (someone
// else's edits, kept and named), and pgslow's own that went back.
void name_changes(const Journal& journal, const knobs::ServerSettings& running,
                  const knobs::ServerSettings& now, RestoreOutcome& out) {
  // Someone else's edits (postgresql.conf, ALTER SYSTEM).
  std::map<std::string, std::string> after = server_wide_settings(now);
  for (const auto& [name, before] : journal.settings_before) {
    auto it = after.find(name);
    if (it == after.end() || it->second == before || is_touched(journal, name)) continue;
    const knobs::ServerSetting* s = now.find(name);
    bool named = false;
    for (const std::string& k : out.kept) named = named || starts_with(k, name + " ");
    if (named || s == nullptr) continue;
    out.kept.push_back(
        fmt::format("{} is {} (was {} before pgslow's change), changed by someone "
                    "else: kept",
                    name, display_value(*s, it->second), display_value(*s, before)));
  }
  for (const auto& [name, s] : running.by_name) {
    const knobs::ServerSetting* a = now.find(name);
    if (a && a->setting != s.setting && is_touched(journal, name)) {
      out.changes.push_back(
          fmt::format("{} back to {} (was {})", name, display_value(*a), display_value(s)));
    }
  }
}

}  // namespace

RestoreOutcome restore_original(server::ServerControl& server, const std::filesystem::path& workdir,
                                Journal& journal, std::chrono::seconds timeout, bool force) {
  RestoreOutcome out;
  // Someone else's value of a knob pgslow changed stops the restore before anything (the
  // journal's state included) changes.
  if (journal.auto_conf) {
    if (const auto now = current_auto_conf(*journal.auto_conf, force))
      require_no_conflict(plan_local(journal, *now), force);
  } else if (server_accepts_connections(server)) {
    pg::Connection conn = pg::Connection::open(server.conninfo());
    require_no_conflict(plan_remote(journal, conn), force);
  }
  if (journal.state != JournalState::kRestoring) {
    journal.state = JournalState::kRestoring;
    try {
      save_journal(workdir, journal);
    } catch (const Error& e) {
      // The journal on disk still says "changing" or "kept", which recovery treats alike; a
      // full disk must not stop the restore itself.
      spdlog::warn("{} (restoring anyway)", e.what());
    }
  }
  crash_point(phase::kRestoring);

  ResetPlan plan;
  pg::Connection conn;
  knobs::ServerSettings running;
  if (server.sets_parameters()) {
    put_back_by_target(server, journal, timeout, out, running);
    conn = pg::Connection::open(server.conninfo());
  } else {
    conn = put_back_locally(server, workdir, journal, timeout, force, out, plan, running);
  }

  // A target's command may return before the server shows the originals (wait_until_visible).
  const knobs::ServerSettings now =
      server.sets_parameters()
          ? wait_until_visible(
                server, conn,
                [&](const knobs::ServerSettings& shown) {
                  return restore_problems(server, journal, conn, shown, plan, nullptr).empty();
                })
          : knobs::ServerSettings::read(conn);
  verify_restored(server, workdir, journal, conn, now, plan, out);
  for (std::string& f : plan.foreign) out.kept.push_back(std::move(f));
  if (force) out.overridden = plan.conflicts;
  name_changes(journal, running, now, out);
  remove_journal(workdir);
  release_server_claim(journal.server.data_dir, workdir);
  return out;
}

}  // namespace pgslow::apply
