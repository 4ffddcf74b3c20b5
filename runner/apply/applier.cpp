#include "apply/applier.h"

#include <fmt/format.h>

#include <algorithm>

#include "apply/auto_conf.h"
#include "apply/command_settings.h"
#include "apply/interrupt.h"
#include "apply/restore.h"
#include "apply/server_lock.h"
#include "apply/server_state.h"
#include "apply/sql.h"
#include "common/clock.h"
#include "common/errors.h"
#include "common/log.h"
#include "common/strings.h"
#include "knobs/validate.h"
#include "pg/connection.h"
#include "pg/error.h"
#include "server/target_kind.h"

namespace pgslow::apply {

namespace fs = std::filesystem;

std::vector<results::KnobChange> ApplyResult::knob_changes() const {
  std::vector<results::KnobChange> out;
  for (const KnobApplied& k : applied)
    out.push_back({k.name, k.original_value, k.new_value, k.apply_by});
  return out;
}

bool ApplyResult::needs_reconnect() const {
  for (const KnobApplied& k : applied) {
    if (k.needs_reconnect) return true;
  }
  return false;
}

namespace {

bool same_server(const ServerRecord& a, const ServerRecord& b) {
  if (a.kind != b.kind) return false;
  if (a.data_dir || b.data_dir) return a.data_dir == b.data_dir;
  return pg::conninfo_without_secrets(a.conninfo) == pg::conninfo_without_secrets(b.conninfo);
}

}  // namespace

void require_permission(const server::ServerControl& server) {
  if (server.allows_changes()) return;
  throw InputError(fmt::format(
      "pgslow may not change the configuration of {}: only the managed cluster may be changed "
      "without asking. Nothing was changed. If this server is yours to degrade, say so with "
      "--allow-changes (or `allow_changes: true` in the scenario's target); pgslow then saves "
      "the original configuration in its journal and puts it back afterwards",
      server.describe()));
}

ServerRecord describe_server(const server::ServerControl& server,
                             const std::optional<server::TargetSpec>& spec) {
  return server::record_target(server, spec ? &*spec : nullptr);
}

Applier::Applier(server::ServerControl& server, fs::path workdir, const knobs::Catalog& catalog,
                 std::optional<server::TargetSpec> spec)
    : server_(server), workdir_(std::move(workdir)), catalog_(catalog), spec_(std::move(spec)) {}

Applier::~Applier() {
  if (!journal_ || journal_->state == JournalState::kKept) return;
  try {
    spdlog::warn("restoring the original configuration of {} (the run ended without it)",
                 server_.describe());
    restore();
  } catch (const std::exception& e) {
    spdlog::error(
        "could not restore the original configuration: {}. The journal {} keeps it; "
        "run `pgslow recover`",
        e.what(), journal_path(workdir_).string());
  }
}

namespace {

// Adds the original state of every name not yet in the journal.
void record_originals(Journal& j, const std::vector<std::string>& names,
                      const knobs::ServerSettings& current, pg::Connection& conn) {
  std::optional<std::optional<std::map<std::string, std::string>>> entries;
  std::optional<std::map<std::string, std::string>> files;
  for (const std::string& name : names) {
    if (j.find_touched(name)) continue;
    if (!entries) entries = auto_conf_entries(conn);
    const knobs::ServerSetting* s = current.find(name);
    OriginalParameter p;
    p.name = name;
    // Not yet touched by pgslow, so what runs now is the original (settings_before has it
    // from the first change, which is the same unless someone else changed it meanwhile).
    auto before = j.settings_before.find(name);
    p.setting = before != j.settings_before.end() ? before->second : s->setting;
    p.unit = s->unit;
    p.source = s->source;
    p.context = s->context;
    if (!files) files = source_files(conn);
    p.sourcefile = (*files)[to_lower(name)];
    if (*entries) {
      p.auto_conf_known = true;
      auto it = (*entries)->find(name);
      if (it != (*entries)->end()) p.auto_conf_value = it->second;
    }
    j.touched.push_back(std::move(p));
  }
}

std::string original_display(const Journal& j, const knobs::ServerSetting& s) {
  const OriginalParameter* p = j.find_touched(s.name);
  return display_value(s, p ? p->setting : s.setting);
}

// The knobs that act when a session starts: a library that is not there fails every new
// connection, while the session that set it goes on working.
bool acts_at_connection(std::string_view name) {
  return iequals(name, "session_preload_libraries") || iequals(name, "local_preload_libraries") ||
         iequals(name, "shared_preload_libraries");
}

}  // namespace

void Applier::require_new_sessions(pg::Connection& conn, Journal& j,
                                   const std::vector<std::string>& names) {
  std::string refused;
  try {
    pg::Connection::open(server_.conninfo());
    return;
  } catch (const pg::Error& e) {
    refused = e.server_message().empty() ? std::string(e.what()) : e.server_message();
  }
  std::vector<std::string> suspects;
  for (const std::string& n : names) {
    if (acts_at_connection(n)) suspects.push_back(n);
  }
  const std::string which =
      j.hidden ? std::string("a hidden setting") : join(suspects.empty() ? names : suspects, ", ");
  // A new session cannot put it back: the original goes back through this one, which still
  // works, before the usual restore (which connects anew) verifies it.
  spdlog::error("a new connection fails after setting {}; putting the original back", which);
  if (!server_.sets_parameters()) {
    reset_to_original_files(&conn, j, /*force=*/true);
    reload_and_wait(server_, conn, std::chrono::seconds(30), /*through_session=*/true);
  }
  throw RuntimeError(fmt::format(
      "the server took {}, but then refused every new connection: {}\npgslow put the original "
      "configuration back. Check the value (a library must be installed in the server's library "
      "folder: `SHOW dynamic_library_path`), then apply again.",
      which, trim(refused)));
}

// One knob of the stage: what was asked and what ran before.
struct StageChange {
  const knobs::SettingVerdict* verdict;
  const knobs::ServerSetting* before;
};

namespace {

// The stage's changes, by the server's name for each knob; a knob the server lacks goes to
// result.skipped.
std::vector<StageChange> stage_changes(const std::vector<knobs::SettingVerdict>& verdicts,
                                       const knobs::ServerSettings& current, ApplyResult& result) {
  std::vector<StageChange> changes;
  for (const knobs::SettingVerdict& v : verdicts) {
    if (v.verdict == knobs::Verdict::kSkipped) {
      result.skipped.push_back({v.setting.name, v.setting.value, v.reason});
      continue;
    }
    const knobs::ServerSetting* s = current.find(v.setting.name);
    // The identifier that goes into SQL is the server's own name for it, and must look like one.
    if (s == nullptr || !is_valid_parameter_name(s->name))
      throw InputError(v.setting.where.str() + ": \"" + v.setting.name +
                       "\" is not a parameter of this server");
    changes.push_back({&v, s});
  }
  return changes;
}

// Reads every value back: a mismatch is an error, not a warning.
// What `after` shows that differs from the stage (its values, and an earlier stage's knobs
// back at their originals); with `result`, the knobs that took are recorded in it.
std::vector<std::string> applied_mismatches(const knobs::ServerSettings& after,
                                            const std::vector<StageChange>& changes,
                                            const Journal& j, const std::vector<std::string>& names,
                                            ApplyResult* result) {
  std::vector<std::string> mismatches;
  for (const StageChange& c : changes) {
    const knobs::ServerSetting* now = after.find(c.before->name);
    if (now == nullptr) {
      mismatches.push_back(c.before->name + " is gone from pg_settings");
      continue;
    }
    if (!knobs::effective_value_matches(*now, *c.verdict) || now->pending_restart) {
      mismatches.push_back(fmt::format("{}: set to {}, but the server shows {}{}", now->name,
                                       c.verdict->setting.value, display_value(*now),
                                       now->pending_restart ? " (pending restart)" : ""));
      continue;
    }
    if (result == nullptr) continue;
    KnobApplied k;
    k.name = now->name;
    k.requested = c.verdict->setting.value;
    k.original_value = original_display(j, *now);
    k.previous_value = display_value(*c.before);
    k.new_value = display_value(*now);
    k.apply_by = c.verdict->verdict == knobs::Verdict::kRestart ? "restart" : "reload";
    k.needs_reconnect = c.verdict->needs_reconnect;
    result->applied.push_back(std::move(k));
  }
  // Knobs of an earlier stage that this one does not set are back at their original values.
  for (const OriginalParameter& p : j.touched) {
    bool in_stage = false;
    for (const std::string& n : names) in_stage = in_stage || n == p.name;
    const knobs::ServerSetting* now = after.find(p.name);
    if (in_stage || now == nullptr || now->setting == p.setting) continue;
    mismatches.push_back(fmt::format("{} should be back at {}, but the server shows {}", p.name,
                                     display_value(*now, p.setting), display_value(*now)));
  }
  return mismatches;
}

void verify_applied(const knobs::ServerSettings& after, const std::vector<StageChange>& changes,
                    const Journal& j, const std::vector<std::string>& names, ApplyResult& result) {
  const std::vector<std::string> mismatches = applied_mismatches(after, changes, j, names, &result);
  if (!mismatches.empty()) {
    throw RuntimeError(
        fmt::format("the server did not take the new settings:\n  {}", join(mismatches, "\n  ")));
  }
}

}  // namespace

Journal& Applier::open_journal(const knobs::ServerSettings& current, Operation op,
                               ApplyResult& result) {
  if (journal_) return *journal_;
  ServerRecord record = describe_server(server_, spec_);
  std::optional<Journal> existing = load_journal(workdir_);
  if (existing) {
    if (!same_server(existing->server, record)) {
      throw RuntimeError(fmt::format(
          "the journal {} belongs to another server ({}), not {}: run `pgslow recover` or "
          "`pgslow restore` on it first, or use another --workdir",
          journal_path(workdir_).string(), existing->server.description, record.description));
    }
    if (existing->state != JournalState::kKept) {
      throw RuntimeError(
          fmt::format("the journal {} records an unfinished change by pid {} (`{}`): run `pgslow "
                      "recover` first",
                      journal_path(workdir_).string(), existing->owner.pid, existing->command));
    }
    if (op == Operation::kRun) {
      throw RuntimeError(fmt::format(
          "{} carries a kept degradation from `{}` ({}); a run must start from the original "
          "configuration: run `pgslow restore` first",
          record.description, existing->command, existing->settings_summary()));
    }
    // A second `pgslow apply` over a kept one: same original, new settings.
    journal_ = std::move(existing);
    journal_on_disk_ = true;
    return *journal_;
  }
  Journal j;
  j.server = record;
  // A target that sets parameters with its own command leaves postgresql.auto.conf alone.
  std::optional<fs::path> data_dir = server_.data_dir();
  if (data_dir && !server_.sets_parameters()) {
    try {
      j.auto_conf = read_auto_conf(*data_dir);
    } catch (const RuntimeError& e) {
      // An original not read whole is never recorded: no journal, no change.
      throw RuntimeError(
          std::string(e.what()) +
          ". Nothing was changed: pgslow reads the original before its first change");
    }
  }
  j.settings_before = server_wide_settings(current);
  j.pending_restart_before = pending_restart(current, {});
  if (!j.pending_restart_before.empty()) {
    result.warnings.push_back(fmt::format(
        "the server already had a change waiting for a restart ({}); a restart by pgslow "
        "puts it in effect",
        join(j.pending_restart_before, ", ")));
  }
  journal_ = std::move(j);
  return *journal_;
}

void Applier::save_before_change(Journal& j) {
  const bool first_save = !journal_on_disk_;
  try {
    save_journal(workdir_, j);
  } catch (const Error& e) {
    if (!first_save) throw;
    // Nothing was changed yet and no journal exists: there is nothing to restore.
    journal_.reset();
    throw RuntimeError(
        fmt::format("{}. Nothing was changed: pgslow changes a server only after "
                    "its journal is on disk",
                    e.what()));
  }
  journal_on_disk_ = true;
  if (first_save) claim_server(server_, workdir_);
  crash_point(phase::kJournalWritten);
}

knobs::ServerSettings Applier::set_by_target(pg::Connection& conn, Journal& j,
                                             const std::vector<StageChange>& changes,
                                             const knobs::ServerSettings& current,
                                             ApplyResult& result) {
  // The target's own command sets the stage's values (and the originals of an earlier
  // stage's knobs) and makes them effective; no ALTER SYSTEM.
  std::vector<std::pair<const knobs::ServerSetting*, const knobs::SettingVerdict*>> stage;
  for (const StageChange& c : changes) stage.emplace_back(c.before, c.verdict);
  server::ParameterChange change = stage_parameters(j, stage, current, source_files(conn));
  crash_point(phase::kHalfApplied);
  server_.set_parameters(change, restart_timeout);
  result.restarted = change.restart_needed;
  result.reloaded = !change.restart_needed;
  std::vector<std::string> names;
  for (const StageChange& c : changes) names.push_back(c.before->name);
  // The command may return before the server shows the values (Patroni applies from its store
  // a second or a loop after `patronictl reload` returns): read until it does, or the timeout
  // passes and verify_applied names what is missing.
  return wait_until_visible(server_, conn, [&](const knobs::ServerSettings& after) {
    return applied_mismatches(after, changes, j, names, nullptr).empty();
  });
}

knobs::ServerSettings Applier::set_by_alter_system(pg::Connection& conn, Journal& j,
                                                   const std::vector<StageChange>& changes,
                                                   ApplyResult& result) {
  // Every stage starts from the original files, so the previous stage's knobs are gone.
  // Someone else's value of one of pgslow's knobs mid-run is replaced (and said so): the
  // stage must run with exactly its settings.
  ResetPlan reset;
  reset_to_original_files(&conn, j, /*force=*/true, &reset);
  for (const std::string& c : reset.conflicts)
    spdlog::warn("{}; this stage starts from the original", c);
  // The server's claim goes with the stage's settings (the original file has none).
  write_server_claim(conn, workdir_);
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const StageChange& c = changes[i];
    // ALTER SYSTEM validates the value and rewrites postgresql.auto.conf atomically; it cannot
    // run in a transaction block, hence one statement each.
    conn.exec(alter_system_set_value(conn, c.before->name, c.verdict->setting.value));
    if (i + 1 == (changes.size() + 1) / 2) crash_point(phase::kHalfApplied);
    InterruptGuard::throw_if_interrupted();
  }

  reload_and_wait(server_, conn);
  result.reloaded = true;
  knobs::ServerSettings after = knobs::ServerSettings::read(conn);
  // Only pgslow's own knobs are a reason to restart.
  std::vector<std::string> pending;
  for (const std::string& name : pending_restart(after, j.pending_restart_before)) {
    if (j.find_touched(name)) pending.push_back(name);
  }
  if (pending.empty()) return after;
  // The server was named when the run began; its path here pushed the line past 100 columns.
  spdlog::info("restarting the server for {}",
               j.hidden ? std::string("a hidden setting") : join(pending, ", "));
  crash_point(phase::kRestarting);
  restart_or_put_back(j);
  result.restarted = true;
  conn = pg::Connection::open(server_.conninfo());
  return knobs::ServerSettings::read(conn);
}

void Applier::restart_or_put_back(Journal& j) {
  try {
    server_.restart(restart_timeout);
  } catch (const Error& e) {
    // The server does not come back with these settings: the original file goes back in
    // the data directory and the server is started with it.
    const std::string cause = e.what();
    const std::string summary = j.settings_summary();  // j goes with the journal below
    spdlog::error("the server did not come back; putting the original configuration back");
    try {
      restore_original(server_, workdir_, j, restart_timeout, /*force=*/true);
      journal_.reset();
      journal_on_disk_ = false;
    } catch (const std::exception& again) {
      throw RuntimeError(
          fmt::format("the server did not start with {}: {}\n\nPutting the original configuration "
                      "back failed too: {}",
                      summary, cause, again.what()));
    }
    throw RuntimeError(
        fmt::format("the server did not start with {}: {}\n\npgslow put the original configuration "
                    "back; the server runs with it again.",
                    summary, cause));
  }
}

void Applier::put_back_after_failure() noexcept {
  if (!journal_) return;
  try {
    spdlog::warn("putting the original configuration of {} back", server_.describe());
    // pgslow's own values go, whatever they read as now (as at the start of every stage):
    // a failed apply leaves the server as it was.
    RestoreOutcome out =
        restore_original(server_, workdir_, *journal_, restart_timeout, /*force=*/true);
    for (const std::string& o : out.overridden) spdlog::warn("replaced by the original: {}", o);
    journal_.reset();
    journal_on_disk_ = false;
  } catch (const std::exception& e) {
    spdlog::error(
        "could not restore the original configuration: {}. The journal {} keeps "
        "it; run `pgslow recover`",
        e.what(), journal_path(workdir_).string());
  }
}

ApplyResult Applier::apply(const std::vector<knobs::Setting>& settings, Operation op,
                           const ApplyLabel& label) {
  const std::int64_t started = now_us();
  require_permission(server_);
  pg::Connection conn = pg::Connection::open(server_.conninfo());
  knobs::ServerSettings current = knobs::ServerSettings::read(conn);

  // Everything before the first change is validation: any error changes nothing.
  std::vector<knobs::SettingVerdict> verdicts = knobs::validate(settings, catalog_, current);
  std::vector<ConfigError> problems = knobs::all_problems(verdicts);
  if (has_errors(problems)) throw InputError(problems);

  ApplyResult result;
  for (const ConfigError& p : problems) result.warnings.push_back(p.message);
  const std::vector<StageChange> changes = stage_changes(verdicts, current, result);
  std::vector<std::string> names;
  for (const StageChange& c : changes) names.push_back(c.before->name);
  InterruptGuard::throw_if_interrupted();

  // One server, one owner: no other pgslow (from any workdir) may be changing it.
  server_lock_ = lock_server(server_, workdir_);
  // ... nor hold a kept change of another workdir: the server carries that claim itself.
  require_server_unclaimed(conn, workdir_);

  // The journal, durably, before the first change.
  Journal& j = open_journal(current, op, result);
  j.owner = current_process();
  j.command = label.command.empty() ? this_command_line() : label.command;
  j.operation = op;
  j.state = JournalState::kChanging;
  j.stage = label.stage;
  j.presets = label.presets;
  j.hidden = j.hidden || hidden_;
  j.settings.clear();
  for (const StageChange& c : changes)
    j.settings.push_back({c.before->name, c.verdict->setting.value});
  record_originals(j, names, current, conn);
  // What pgslow is about to write for each knob, recorded first: an entry restore later finds
  // that is neither the original nor one of these was written by someone else.
  for (const StageChange& c : changes) {
    OriginalParameter* p = j.find_touched(c.before->name);
    const std::string& v = c.verdict->setting.value;
    if (p &&
        std::find(p->pgslow_values.begin(), p->pgslow_values.end(), v) == p->pgslow_values.end())
      p->pgslow_values.push_back(v);
  }
  save_before_change(j);

  try {
    knobs::ServerSettings after = server_.sets_parameters()
                                      ? set_by_target(conn, j, changes, current, result)
                                      : set_by_alter_system(conn, j, changes, result);
    InterruptGuard::throw_if_interrupted();
    verify_applied(after, changes, j, names, result);
    require_new_sessions(conn, j, names);
  } catch (...) {
    put_back_after_failure();
    throw;
  }
  result.seconds = static_cast<double>(now_us() - started) / 1e6;
  return result;
}

void Applier::keep() {
  if (!journal_) return;
  journal_->state = JournalState::kKept;
  save_journal(workdir_, *journal_);
}

void Applier::restore(bool force) {
  if (!journal_) return;
  RestoreOutcome out = restore_original(server_, workdir_, *journal_, restart_timeout, force);
  for (const std::string& k : out.kept) spdlog::warn("{}", k);
  for (const std::string& o : out.overridden) spdlog::warn("replaced by the original: {}", o);
  journal_.reset();
  journal_on_disk_ = false;
  server_lock_.reset();  // the original is back: another pgslow may have the server now
}

}  // namespace pgslow::apply
