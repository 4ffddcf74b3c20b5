#pragma once
// Repairing what an interrupted pgslow left behind. A journal whose owner is gone (kill -9,
// power loss, a crash) and whose change was not a kept `pgslow apply` is restored before any
// other command on that workdir does anything; a kept apply is only reported.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "apply/journal.h"
#include "apply/restore.h"
#include "apply/workdir_lock.h"
#include "server/server_control.h"

namespace pgslow::apply {

// What a workdir's journal means right now.
enum class JournalCondition {
  kNone,         // no journal: the server has its original configuration (as far as pgslow knows)
  kInUse,        // its owner is alive and working (a run in progress)
  kInterrupted,  // its owner is gone mid-change: recovery restores it
  kKept,         // a finished `pgslow apply`: kept until `pgslow restore`
};

struct WorkdirJournal {
  JournalCondition condition = JournalCondition::kNone;
  std::optional<Journal> journal;
};

// Reads the journal of `workdir` and decides what it means (owner alive or not, kept or not).
// A journal owned by this very process counts as in use.
WorkdirJournal inspect_journal(const std::filesystem::path& workdir);

// Opens the server a journal protects: the managed cluster of the recorded workdir, or the
// recorded target.
std::unique_ptr<server::ServerControl> open_recorded_server(
    const ServerRecord& record, const std::optional<std::filesystem::path>& pg_bin);

// Restores the journal's original configuration on its server (the caller holds the workdir
// lock) and removes the journal; returns what changed back.
RestoreOutcome restore_from_journal(const std::filesystem::path& workdir, Journal& journal,
                                    const std::optional<std::filesystem::path>& pg_bin);

// One line about a journal for messages: "`pgslow apply tiny-cache` (pid 123, 2026-...):
// shared_buffers=128kB".
std::string describe_journal(const Journal& journal);

}  // namespace pgslow::apply
