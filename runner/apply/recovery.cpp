#include "apply/recovery.h"

#include <fmt/format.h>

#include "apply/applier.h"
#include "common/errors.h"
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

std::unique_ptr<server::ServerControl> open_recorded_server(const ServerRecord& record,
                                                            const std::optional<fs::path>& pg_bin) {
  server::TargetSpec spec = recorded_target(record);
  switch (spec.kind) {
    case server::TargetKind::kManaged: {
      if (spec.workdir.empty())
        throw RuntimeError("the journal does not say which workdir holds the managed cluster");
      // Not open_target: that would start the cluster, and recovery must first put the
      // original file back.
      server::ManagedOptions options;
      options.workdir = spec.workdir;
      options.pg_bin = pg_bin;
      options.pg_version = spec.pg_version;
      return std::make_unique<server::ManagedCluster>(std::move(options));
    }
    case server::TargetKind::kPgctl:
      if (!spec.pg_bin) spec.pg_bin = pg_bin;
      return std::make_unique<server::PgctlServer>(spec);
    case server::TargetKind::kCommand:
      return std::make_unique<server::CommandServer>(spec);
  }
  throw RuntimeError("unknown server kind in the journal: " + record.kind);
}

RestoreOutcome restore_from_journal(const fs::path& workdir, Journal& journal,
                                    const std::optional<fs::path>& pg_bin) {
  std::unique_ptr<server::ServerControl> server = open_recorded_server(journal.server, pg_bin);
  return restore_original(*server, workdir, journal);
}

std::string describe_journal(const Journal& j) {
  std::string who = j.command.empty() ? std::string("pgslow") : "`" + j.command + "`";
  return fmt::format("{} (pid {}, {}): {}", who, j.owner.pid, j.created_at, j.settings_summary());
}

}  // namespace pgslow::apply
