#include "apply/before_command.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <initializer_list>
#include <optional>
#include <set>

#include "apply/interrupt.h"
#include "apply/journal.h"
#include "apply/owner.h"
#include "apply/recovery.h"
#include "apply/workdir_lock.h"
#include "common/errors.h"
#include "common/printable.h"
#include "common/strings.h"

namespace pgslow::apply {

namespace fs = std::filesystem;

namespace {

// Commands that only read: they neither wait for nor refuse because of another pgslow at
// work, and do not create a workdir. They still repair an interrupted run when they can.
bool is_read_only(const std::string& command) {
  static const std::set<std::string> kReadOnly = {
      "status",       "knobs list",   "knobs show",    "knobs docs",
      "presets list", "presets show", "server status", "server conninfo",
      "check",        "plan",         "report",        "compare"};
  return kReadOnly.count(command) > 0;
}

bool is_command(const std::string& command, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (command == n) return true;
  }
  return false;
}

}  // namespace

void repair_before_command(const fs::path& workdir, const server::TargetSpec& managed,
                           const std::string& command) {
  const bool read_only = is_read_only(command);
  std::error_code ec;
  if (read_only && !fs::exists(workdir, ec)) return;  // nothing there to repair
  const std::string line = this_command_line();
  if (read_only) {
    std::optional<LockHolder> holder;
    if (!try_hold_workdir_lock_for_process(workdir, line, &holder)) {
      // Another pgslow works here; it repairs its own server. Reading goes on.
      spdlog::debug("the workdir is in use by pid {}", holder ? holder->who.pid : 0);
      return;
    }
  } else {
    hold_workdir_lock_for_process(workdir, line);
  }

  WorkdirJournal wj;
  try {
    wj = inspect_journal(workdir);
  } catch (const Error& e) {
    if (!is_command(command, {"server destroy"})) throw;
    spdlog::warn("{}", e.what());
    return;
  }
  if (!wj.journal) return;
  const Journal& j = *wj.journal;
  const bool destroying = command == "server destroy" && journal_matches_target(j, managed);
  if (destroying) {
    spdlog::warn("discarding the journal of {}: the cluster it protects is being destroyed",
                 describe_journal(j));
    remove_journal(workdir);
    return;
  }

  const std::string what_ran =
      printable(j.command.empty() ? std::string("pgslow run") : "`" + j.command + "`");
  const std::string restore_hint = "`" + command_for(j, "restore") + "`";
  if (wj.condition == JournalCondition::kKept) {
    if (is_command(command, {"apply", "restore", "recover", "status"}) ||
        starts_with(command, "mystery"))
      return;  // they report it
    spdlog::warn("{} is degraded on purpose by {}; {} undoes it", printable(j.server.description),
                 describe_journal(j), restore_hint);
    return;
  }
  if (wj.condition != JournalCondition::kInterrupted) return;
  if (is_command(command, {"recover", "restore"})) return;  // they do it, and say so

  // Only the managed cluster of this very workdir is restored without being named: any other
  // server's journal holds commands and paths that pgslow uses only when the user names the
  // same server.
  if (!journal_matches_target(j, managed)) {
    spdlog::warn("an interrupted {} left {} changed ({}); `{}` restores it", what_ran,
                 printable(j.server.description), printable(j.settings_summary()),
                 command_for(j, "recover"));
    return;
  }

  spdlog::warn(
      "the {} by pid {} was interrupted and left {} changed ({}); restoring its original "
      "configuration before anything else",
      what_ran, j.owner.pid, printable(j.server.description), printable(j.settings_summary()));
  InterruptGuard guard;
  try {
    RestoreOutcome out = restore_from_journal(workdir, *wj.journal, managed);
    spdlog::warn("restored {}: original configuration back and verified{}",
                 printable(j.server.description),
                 out.changes.empty() ? "" : " (" + printable(join(out.changes, "; ")) + ")");
    for (const std::string& k : out.kept) spdlog::warn("  {}", printable(k));
  } catch (const Error& e) {
    // A command that only reads, or stops the server, goes on: the journal stays, and
    // `pgslow recover` says the rest.
    if (is_command(command, {"server stop"}) || read_only) {
      spdlog::error("could not restore it: {}", e.what());
      return;
    }
    throw RuntimeError(fmt::format(
        "could not restore the configuration an interrupted run left behind: {}\nFix the cause "
        "and run `pgslow recover` (the journal {} keeps the original)",
        e.what(), journal_path(workdir).string()));
  }
  InterruptGuard::throw_if_interrupted();
}

}  // namespace pgslow::apply
