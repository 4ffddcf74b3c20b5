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
#include "server/target.h"

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

// Whether `journal` protects the server the user named with `given`: the managed cluster of
// the same workdir, the same data directory, or the same connection and commands (a command
// target). pgslow never runs a command or writes a path taken from a journal unless it
// matches; `why` (when given) says what differs. One function on purpose: it is the whole
// rule.
bool journal_matches_target(const Journal& journal, const server::TargetSpec& given,
                            std::string* why = nullptr);

// The command-line options that name the journal's server ("--data-dir /srv/pg"), for
// messages; empty for the managed cluster (the workdir names it).
std::string target_options_for(const Journal& journal);

// The whole command line that names the journal's server for `verb` ("recover", "restore"):
// "pgslow --pg-version 18 recover" for a versioned managed cluster (--pg-version goes before
// the subcommand), "pgslow restore --data-dir /srv/pg" for a data directory.
std::string command_for(const Journal& journal, const std::string& verb);

// Opens the server `given` names, after checking that the journal protects it (RuntimeError
// saying which options name the journal's server otherwise). The managed cluster is not
// started (recovery must first put the original file back).
std::unique_ptr<server::ServerControl> open_journal_server(const Journal& journal,
                                                           const server::TargetSpec& given);

// Restores the journal's original configuration on the server `given` names (the caller holds
// the workdir lock) and removes the journal; returns what changed back. `force`: see
// restore_original.
RestoreOutcome restore_from_journal(const std::filesystem::path& workdir, Journal& journal,
                                    const server::TargetSpec& given, bool force = false);

// One line about a journal for messages: "`pgslow apply tiny-cache` (pid 123, 2026-...):
// shared_buffers=128kB".
std::string describe_journal(const Journal& journal);

}  // namespace pgslow::apply
