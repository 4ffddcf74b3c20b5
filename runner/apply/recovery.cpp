#include "apply/recovery.h"

#include <fmt/format.h>

#include "apply/applier.h"
#include "common/errors.h"
#include "common/process.h"
#include "common/strings.h"
#include "pg/error.h"
#include "server/managed_cluster.h"
#include "server/target.h"

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

bool same_path(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::equivalent(a, b, ec)) return true;
  return fs::absolute(a).lexically_normal() == fs::absolute(b).lexically_normal();
}

server::ManagedOptions managed_options(const server::TargetSpec& given) {
  server::ManagedOptions options;
  options.workdir = given.workdir;
  options.pg_bin = given.pg_bin;
  options.pg_version = given.pg_version;  // <workdir>/cluster-N
  return options;
}

std::string kind_of(server::TargetKind kind) {
  return std::string(server::to_string(kind));
}

}  // namespace

bool journal_matches_target(const Journal& j, const server::TargetSpec& given, std::string* why) {
  auto differs = [&](const std::string& what) {
    if (why) *why = what;
    return false;
  };
  if (j.server.kind != kind_of(given.kind))
    return differs("it protects a " + j.server.kind + " server, not a " + kind_of(given.kind) +
                   " one");
  std::optional<fs::path> data_dir;
  switch (given.kind) {
    case server::TargetKind::kManaged: {
      if (!same_path(recorded(j, "workdir"), given.workdir))
        return differs("it protects the managed cluster of another workdir");
      if (recorded(j, "pg_version") != (given.pg_version ? std::to_string(*given.pg_version) : ""))
        return differs(recorded(j, "pg_version").empty()
                           ? std::string("it protects the workdir's default managed cluster")
                           : "it protects the managed cluster of PostgreSQL " +
                                 recorded(j, "pg_version"));
      data_dir = server::ManagedCluster(managed_options(given)).data_dir();
      break;
    }
    case server::TargetKind::kPgctl:
      data_dir = given.data_dir;
      break;
    case server::TargetKind::kCommand:
      if (!given.data_dir.empty()) data_dir = given.data_dir;
      if (pg::conninfo_without_secrets(given.conninfo) !=
          pg::conninfo_without_secrets(j.server.conninfo))
        return differs("it protects the server at " + j.server.conninfo);
      if (recorded(j, "reload_command") != given.reload_command ||
          recorded(j, "restart_command") != given.restart_command)
        return differs("its server has other reload or restart commands");
      break;
  }
  if (j.server.data_dir.has_value() != data_dir.has_value() ||
      (data_dir && !same_path(*j.server.data_dir, *data_dir)))
    return differs("it protects the data directory " +
                   (j.server.data_dir ? j.server.data_dir->string() : std::string("(none)")));
  return true;
}

std::string target_options_for(const Journal& j) {
  std::vector<std::string> args;
  if (j.server.kind == "pgctl") {
    args = {"--data-dir", j.server.data_dir ? j.server.data_dir->string() : ""};
  } else if (j.server.kind == "command") {
    args = {"--conninfo", j.server.conninfo};
    if (j.server.data_dir) args.insert(args.end(), {"--data-dir", j.server.data_dir->string()});
    if (!recorded(j, "reload_command").empty())
      args.insert(args.end(), {"--reload-command", recorded(j, "reload_command")});
    if (!recorded(j, "restart_command").empty())
      args.insert(args.end(), {"--restart-command", recorded(j, "restart_command")});
  }
  return args.empty() ? std::string() : printable(shell_quote(args));
}

std::string command_for(const Journal& j, const std::string& verb) {
  const std::string version = j.server.kind == "managed" ? recorded(j, "pg_version") : "";
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
        j.server.kind == "managed"
            ? " (run `" + command_for(j, "recover") + "` with the --workdir the journal belongs to)"
            : ": `" + command_for(j, "recover") + "` (or `" + command_for(j, "restore") + "`)"));
  }
  switch (given.kind) {
    case server::TargetKind::kManaged:
      // Not open_target: that would start the cluster, and recovery must first put the
      // original file back.
      return std::make_unique<server::ManagedCluster>(managed_options(given));
    case server::TargetKind::kPgctl: {
      server::TargetSpec spec = given;
      spec.allow_changes = true;  // putting the original back is not a change
      return std::make_unique<server::PgctlServer>(spec);
    }
    case server::TargetKind::kCommand: {
      server::TargetSpec spec = given;
      spec.allow_changes = true;
      return std::make_unique<server::CommandServer>(spec);
    }
  }
  throw RuntimeError("unknown server kind");
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
