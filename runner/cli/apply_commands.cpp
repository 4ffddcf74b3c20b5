// pgslow apply | restore | recover | status: the journal's commands; before_command wires
// apply::repair_before_command.
// docs/journal.md explains what pgslow promises and how these keep the promise.

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "apply/applier.h"
#include "apply/before_command.h"
#include "apply/interrupt.h"
#include "apply/recovery.h"
#include "apply/server_state.h"
#include "apply/workdir_lock.h"
#include "cli/commands.h"
#include "common/clock.h"
#include "common/errors.h"
#include "common/format.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/progress.h"
#include "common/strings.h"
#include "knobs/catalog.h"
#include "knobs/validate.h"
#include "knobs/value.h"
#include "pg/connection.h"
#include "report/text.h"
#include "server/managed_cluster.h"
#include "server/pgbouncer.h"
#include "server/target.h"
#include "server/target_kind.h"

namespace pgslow::cli {

namespace {

namespace fs = std::filesystem;

// A preset name or a settings file, resolved to settings.
struct Resolved {
  std::vector<knobs::Setting> settings;
  std::string label;
  std::vector<std::string> presets;
};

Resolved resolve_settings_arg(const knobs::Catalog& catalog, const std::string& arg) {
  Resolved r;
  if (const knobs::Preset* preset = catalog.find_preset(arg)) {
    r.settings = catalog.expand_for_server(*preset, "pgslow apply");
    r.label = preset->name;
    r.presets = {preset->name};
    return r;
  }
  std::error_code ec;
  // A bare name is a preset or nothing: the current folder is not read (names_a_file). A path
  // is never a preset's name: when it is not a file, that is what is wrong.
  if (names_a_file(arg)) {
    if (!fs::is_regular_file(arg, ec)) throw InputError(file_argument_problem(arg));
    knobs::SettingsFile file = knobs::load_settings_file(arg);
    r.settings = knobs::resolve_settings(file, catalog);
    r.label = file.name.empty() ? arg : file.name;
    r.presets = file.includes;
    return r;
  }
  std::vector<std::string> names;
  for (const knobs::Preset& p : catalog.presets()) names.push_back(p.name);
  std::optional<std::string> near = closest_match(arg, names);
  throw InputError(fmt::format(
      "no preset or settings file named '{}'{}; `pgslow presets list` shows the presets, and "
      "a settings file is read only as a path (./{} or a name ending in .yaml)",
      arg, near ? fmt::format(" (did you mean '{}'?)", *near) : "", arg));
}

void print_apply_result(const std::string& label, const server::ServerControl& server,
                        const apply::ApplyResult& r) {
  std::string how = r.restarted ? "restarted" : "reloaded";
  fmt::print("applied {} to {}: {} knob{}, {}, {:.1f} s\n", label, server.describe(),
             r.applied.size(), r.applied.size() == 1 ? "" : "s", how, r.seconds);
  if (!r.applied.empty()) {
    report::TextTable t{{"knob", "original", "now", "applied by"}, {}, {}};
    for (const apply::KnobApplied& k : r.applied)
      t.rows.push_back({k.name, k.original_value, k.new_value, k.apply_by});
    fmt::print("{}", t.render("  "));
  }
  for (const results::SkippedKnob& s : r.skipped)
    fmt::print("  skipped {} = {}: {}\n", s.name, s.value, s.reason);
  for (const std::string& w : r.warnings) fmt::print("  warning: {}\n", w);
  if (r.needs_reconnect())
    fmt::print("  note: some knobs reach only new sessions; reconnect to see them\n");
}

void print_restore(const std::string& what, const apply::RestoreOutcome& out,
                   const std::string& server) {
  std::vector<std::string> how;
  if (out.started) how.push_back("started");
  if (out.restarted) how.push_back("restarted");
  if (!out.started && !out.restarted) how.push_back("reloaded");
  fmt::print("{} {}: original configuration back and verified ({})\n", what, printable(server),
             join(how, ", "));
  for (const std::string& c : out.changes) fmt::print("  {}\n", printable(c));
  for (const std::string& k : out.kept) fmt::print("  {}\n", printable(k));
  for (const std::string& o : out.overridden)
    fmt::print("  replaced by the original (--force-restore): {}\n", printable(o));
}

// The server a restore or recover names: the options given, else the managed cluster of the
// workdir.
server::TargetSpec restore_target(const Context& ctx, const TargetOptions& t) {
  server::TargetSpec spec = target_spec(ctx, t);
  spec.allow_changes = true;  // putting the original back is not a change
  return spec;
}

// "30s", "5min", "500ms" or a bare number of seconds, parsed the way PostgreSQL parses a time
// setting.
double parse_hold(const std::string& text) {
  knobs::ParsedValue v = knobs::parse_real(text, knobs::parse_base_unit("s").value());
  if (!v.ok() || v.number <= 0)
    throw InputError(fmt::format("--for {}: not a duration (e.g. 30s, 5min, 500ms)", text));
  return v.number;
}

// Keeps a transient apply in place for `seconds` (or until Ctrl-C / SIGTERM), with a progress
// line once a second.
void hold(double seconds, const std::string& label) {
  apply::crash_point(apply::phase::kWorkload);
  ConsoleProgress progress;
  const std::int64_t end = now_us() + static_cast<std::int64_t>(seconds * 1e6);
  // Once for every reader (a pipe, a watcher); the countdown below only on a terminal.
  progress.note(fmt::format("{} in effect for {} (Ctrl-C restores now)", label,
                            format_latency_us(seconds * 1e6)));
  std::int64_t next_line = now_us() + 1000000;
  while (now_us() < end && !apply::InterruptGuard::interrupted()) {
    if (now_us() >= next_line) {
      double left = static_cast<double>(end - now_us()) / 1e6;
      progress.update(fmt::format("{} in effect: {} left (Ctrl-C restores now)", label,
                                  format_latency_us(left * 1e6)));
      next_line = now_us() + 1000000;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void apply_command(Context& ctx, const std::string& arg, const TargetOptions& targs,
                   const std::string& hold_for) {
  before_command(ctx, "apply");
  const double hold_seconds = hold_for.empty() ? 0 : parse_hold(hold_for);
  knobs::Catalog catalog = knobs::Catalog::load_default();
  Resolved resolved = resolve_settings_arg(catalog, arg);
  server::TargetSpec spec = target_spec(ctx, targs);
  // open_target starts only the managed cluster; any other server is refused here, before
  // anything is touched, unless changes were allowed.
  std::unique_ptr<server::ServerControl> server = server::open_target(spec);
  apply::require_permission(*server);
  apply::InterruptGuard guard;
  apply::Applier applier(*server, ctx.workdir, catalog, spec);
  const apply::Operation op = hold_seconds > 0 ? apply::Operation::kRun : apply::Operation::kApply;
  apply::ApplyResult result = applier.apply(
      resolved.settings, op, {resolved.label, resolved.presets, apply::this_command_line()});
  print_apply_result(resolved.label, *server, result);
  std::fflush(stdout);  // a watcher (or a test) sees it while the settings are in effect
  if (hold_seconds <= 0) {
    if (apply::InterruptGuard::interrupted()) {
      applier.restore();
      apply::InterruptGuard::throw_if_interrupted();
    }
    applier.keep();
    fmt::print(
        "{} stays degraded: `pgslow status` shows it, `pgslow restore` puts the original "
        "configuration back\n",
        server->describe());
    return;
  }
  hold(hold_seconds, resolved.label);
  applier.restore();
  fmt::print("restored {}: original configuration back and verified\n", server->describe());
  apply::InterruptGuard::throw_if_interrupted();
}

void restore_command(Context& ctx, const TargetOptions& targs, bool force) {
  before_command(ctx, "restore");
  apply::WorkdirJournal wj = apply::inspect_journal(ctx.workdir);
  if (!wj.journal) {
    fmt::print("nothing to restore: no journal in {}; pgslow left no change behind\n",
               ctx.workdir.string());
    return;
  }
  apply::InterruptGuard guard;  // a Ctrl-C must not cut a restore in half
  apply::RestoreOutcome out =
      apply::restore_from_journal(ctx.workdir, *wj.journal, restore_target(ctx, targs), force);
  print_restore("restored", out, wj.journal->server.description);
  apply::InterruptGuard::throw_if_interrupted();
}

void recover_command(Context& ctx, const TargetOptions& targs, bool force) {
  before_command(ctx, "recover");
  apply::WorkdirJournal wj = apply::inspect_journal(ctx.workdir);
  switch (wj.condition) {
    case apply::JournalCondition::kNone:
      fmt::print("clean: no journal in {}; nothing to recover\n", ctx.workdir.string());
      return;
    case apply::JournalCondition::kKept:
      fmt::print(
          "nothing to recover: {} is degraded on purpose by {}; `pgslow restore` undoes "
          "it\n",
          printable(wj.journal->server.description), apply::describe_journal(*wj.journal));
      return;
    case apply::JournalCondition::kInUse:
      throw RuntimeError(fmt::format("the journal belongs to pid {}, which is still running ({})",
                                     wj.journal->owner.pid, printable(wj.journal->command)));
    case apply::JournalCondition::kInterrupted:
      break;
  }
  fmt::print("found the journal of an interrupted {}; restoring\n",
             apply::describe_journal(*wj.journal));
  apply::InterruptGuard guard;
  apply::RestoreOutcome out =
      apply::restore_from_journal(ctx.workdir, *wj.journal, restore_target(ctx, targs), force);
  print_restore("recovered", out, wj.journal->server.description);
  apply::InterruptGuard::throw_if_interrupted();
}

// The values a journal's settings have now, when the server answers.
std::map<std::string, knobs::ServerSetting> current_values(const server::ServerControl& server) {
  std::map<std::string, knobs::ServerSetting> out;
  try {
    pg::Connection conn = pg::Connection::open(server.conninfo());
    for (auto& [name, s] : knobs::ServerSettings::read(conn).by_name) out[name] = s;
  } catch (const std::exception& e) {
    spdlog::debug("cannot read the server's settings: {}", e.what());
  }
  return out;
}

void status_command(Context& ctx, const TargetOptions& targs) {
  before_command(ctx, "status");
  report::TextTable status{{"", ""}, {}, {}};  // key/value: no header
  status.rows.push_back({"workdir", fs::absolute(ctx.workdir).lexically_normal().string()});
  std::optional<apply::LockHolder> holder;
  if (!apply::process_holds_workdir_lock(ctx.workdir)) holder = apply::lock_holder(ctx.workdir);
  if (holder) {
    status.rows.push_back(
        {"in use", holder->who.pid > 0
                       ? fmt::format("by pid {} ({})", holder->who.pid, printable(holder->command))
                       : std::string("by another pgslow process")});
  }

  apply::WorkdirJournal wj = apply::inspect_journal(ctx.workdir);
  // status reads the server the target options name (by default the managed cluster of its
  // workdir and --pg-version) without starting it; a journal's other server is described,
  // never reached with the journal's commands (status runs nothing a journal names).
  const server::TargetSpec given = target_spec(ctx, targs);
  std::unique_ptr<server::ServerControl> server = server::target_kind(given.kind).reopen(given);
  const bool journal_is_given = wj.journal && apply::journal_matches_target(*wj.journal, given);
  bool down = false;  // the server the options name is not running: exit 4 after the status
  if (wj.journal && !journal_is_given) {
    status.rows.push_back(
        {"server", fmt::format("{} (`{}` names it)", printable(wj.journal->server.description),
                               apply::command_for(*wj.journal, "restore"))});
  } else if (auto* managed = dynamic_cast<server::ManagedCluster*>(server.get())) {
    server::ClusterStatus s = managed->status();
    down = !s.running;
    std::string state = !s.initialized ? "not created (`pgslow server start` creates it)"
                        : s.running    ? fmt::format("running (pid {})", s.pid.value_or(0))
                                       : "stopped (`pgslow server start` starts it)";
    status.rows.push_back(
        {"server", fmt::format("{}: {}{}", managed->describe(), state,
                               s.version.empty() ? "" : ", PostgreSQL " + s.version)});
  } else {
    down = !apply::server_accepts_connections(*server);
    status.rows.push_back(
        {"server", fmt::format("{}: {}", server->describe(),
                               down ? "does not accept connections" : "accepts connections")});
  }

  const apply::Journal* j = wj.journal ? &*wj.journal : nullptr;
  switch (wj.condition) {
    case apply::JournalCondition::kNone:
      status.rows.push_back({"config", "clean: no change by pgslow (no journal)"});
      break;
    case apply::JournalCondition::kKept:
      status.rows.push_back(
          {"config", fmt::format("DEGRADED on purpose by {}", apply::describe_journal(*j))});
      break;
    case apply::JournalCondition::kInUse:
      status.rows.push_back({"config", fmt::format("being changed by a running pgslow: {}",
                                                   apply::describe_journal(*j))});
      break;
    case apply::JournalCondition::kInterrupted:  // before_command could not take the lock
      status.rows.push_back(
          {"config", fmt::format("left changed by an interrupted {}; `pgslow recover` "
                                 "restores it",
                                 apply::describe_journal(*j))});
      break;
  }
  if (j) {
    std::string original =
        j->auto_conf ? fmt::format("original postgresql.auto.conf ({} bytes, sha256 {})",
                                   j->auto_conf->bytes.size(), j->auto_conf->sha256.substr(0, 16))
                     : fmt::format("original values of {} parameters", j->touched.size());
    status.rows.push_back(
        {"journal",
         fmt::format("{}: {} {}, {}", apply::journal_path(ctx.workdir).string(),
                     apply::to_string(j->operation), apply::to_string(j->state), original)});
  }
  fmt::print("{}", status.render());
  if (j && j->hidden) {
    fmt::print(
        "\nA workshop mystery is applied: its settings stay hidden until `pgslow mystery "
        "reveal`.\n");
  } else if (j && !j->settings.empty()) {
    std::map<std::string, knobs::ServerSetting> now;
    if (journal_is_given) now = current_values(*server);
    report::TextTable knobs_table{{"knob", "original", "now"}, {}, {}};
    for (const apply::JournalSetting& s : j->settings) {
      const apply::OriginalParameter* p = j->find_touched(s.name);
      auto it = now.find(to_lower(s.name));
      std::string original = p ? p->setting : "?";
      if (p && it != now.end()) original = apply::display_value(it->second, p->setting);
      knobs_table.rows.push_back(
          {printable(s.name), original,
           it != now.end() ? apply::display_value(it->second) : printable(s.value) + " (set)"});
    }
    fmt::print("\n");
    fmt::print("{}", knobs_table.render("  "));
  }
  if (wj.condition == apply::JournalCondition::kKept)
    fmt::print("\n`pgslow restore` puts the original configuration back.\n");
  if (down) throw ExitStatus(kExitServerDown);
}

}  // namespace

void add_apply_commands(CLI::App& app, Context& ctx) {
  {
    CLI::App* cmd = app.add_subcommand(
        "apply", "apply a preset or settings file and leave it in place (a kept degradation)");
    auto arg = std::make_shared<std::string>();
    auto targs = std::make_shared<TargetOptions>();
    auto hold_for = std::make_shared<std::string>();
    cmd->add_option("preset", *arg, "a preset name (`pgslow presets list`) or a settings file")
        ->required();
    add_target_options(cmd, *targs);
    cmd->add_option("--for", *hold_for,
                    "keep the settings only this long (30s, 5min), then restore; Ctrl-C "
                    "restores early");
    cmd->callback([&ctx, arg, targs, hold_for] { apply_command(ctx, *arg, *targs, *hold_for); });
  }
  for (const char* name : {"restore", "recover"}) {
    const bool restore = std::string(name) == "restore";
    CLI::App* cmd = app.add_subcommand(
        name, restore ? "put the original configuration back (undoes `pgslow apply`)"
                      : "repair a server left changed by an interrupted run; safe at any time");
    auto targs = std::make_shared<TargetOptions>();
    auto force = std::make_shared<bool>(false);
    add_target_options(cmd, *targs);
    cmd->add_flag("--force-restore", *force,
                  "put the original back even where someone else changed a knob pgslow "
                  "changed too (their value is printed, then replaced)");
    cmd->callback([&ctx, targs, force, restore] {
      if (restore) {
        restore_command(ctx, *targs, *force);
      } else {
        recover_command(ctx, *targs, *force);
      }
    });
  }
  {
    CLI::App* cmd = app.add_subcommand(
        "status", "the workdir's server: clean or degraded, and what the journal holds");
    auto targs = std::make_shared<TargetOptions>();
    add_target_options(cmd, *targs);
    cmd->callback([&ctx, targs] { status_command(ctx, *targs); });
  }
}

void before_command(Context& ctx, const std::string& command) {
  apply::repair_before_command(ctx.workdir, managed_target(ctx), command);
  // A run killed with -9 leaves its PgBouncer, with the settings of its stage: it goes too.
  server::stop_left_over_pgbouncer(ctx.workdir);
}

}  // namespace pgslow::cli
