#include "apply/recovery.h"

#include <fmt/format.h>

#include "apply/applier.h"
#include "common/errors.h"
#include "common/process.h"
#include "common/strings.h"
#include "pg/error.h"
#include "server/target.h"
#include "server/target_kind.h"

namespace pgslow::apply {

namespace fs = std::filesystem;

WorkdirJournal inspect_journal(const fs::path& workdir) {
  WorkdirJournal out;
  out.journal = load_journal(workdir);
  if (!out.journal) return out;
  const Journal& j = *out.journal;
  if (j.owner == current_process() || is_alive(j.owner)) {
    // A kept apply's owner has long exited; a live owner is a run or apply still at work.
    out.condition =
        j.state == JournalState::kKept ? JournalCondition::kKept : JournalCondition::kInUse;
  } else {
    out.condition = j.needs_recovery() ? JournalCondition::kInterrupted : JournalCondition::kKept;
  }
  return out;
}

namespace {

std::string recorded(const Journal& j, const char* key) {
  auto it = j.server.target.find(key);
  return it == j.server.target.end() ? std::string() : it->second;
}

}  // namespace

bool journal_matches_target(const Journal& j, const server::TargetSpec& given, std::string* why) {
  return server::record_matches(j.server, given, why);
}

std::string target_options_for(const Journal& j) {
  const server::TargetKindOps* kind = server::find_target_kind(j.server.kind);
  std::vector<std::string> args = kind ? kind->options(j.server) : std::vector<std::string>{};
  return args.empty() ? std::string() : printable(shell_quote(args));
}

// Whether the journal protects pgslow's own cluster of a workdir (the target-kind table says).
bool protects_workdir_cluster(const Journal& j) {
  const server::TargetKindOps* kind = server::find_target_kind(j.server.kind);
  return kind && kind->in_workdir;
}

std::string command_for(const Journal& j, const std::string& verb) {
  const std::string version = protects_workdir_cluster(j) ? recorded(j, "pg_version") : "";
  const std::string options = target_options_for(j);
  return "pgslow " +
         (version.empty() ? std::string()
                          : printable(shell_quote({"--pg-version", version})) + " ") +
         verb + (options.empty() ? std::string() : " " + options);
}

std::unique_ptr<server::ServerControl> open_journal_server(const Journal& j,
                                                           const server::TargetSpec& given) {
  std::string why;
  if (!journal_matches_target(j, given, &why)) {
    throw RuntimeError(fmt::format(
        "the journal of {} does not protect the server this command names: {}. pgslow runs no "
        "command and writes no file a journal names unless you name the same server{}",
        printable(j.server.description), printable(why),
        protects_workdir_cluster(j)
            ? " (run `" + command_for(j, "recover") + "` with the --workdir the journal belongs to)"
            : ": `" + command_for(j, "recover") + "` (or `" + command_for(j, "restore") + "`)"));
  }
  // Not open_target: that would start a managed cluster, and recovery must first put the
  // original file back.
  return server::target_kind(given.kind).reopen(given);
}

RestoreOutcome restore_from_journal(const fs::path& workdir, Journal& journal,
                                    const server::TargetSpec& given, bool force) {
  std::unique_ptr<server::ServerControl> server = open_journal_server(journal, given);
  return restore_original(*server, workdir, journal, std::chrono::seconds(120), force);
}

std::string describe_journal(const Journal& j) {
  std::string who = j.command.empty() ? std::string("pgslow") : "`" + j.command + "`";
  return printable(
      fmt::format("{} (pid {}, {}): {}", who, j.owner.pid, j.created_at, j.settings_summary()));
}

}  // namespace pgslow::apply
