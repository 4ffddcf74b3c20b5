#pragma once
// Putting the original configuration back, from a journal: used by Applier::restore, by
// recovery after an interrupted run, and by `pgslow restore` for a kept apply.
//
// Restore puts back exactly the parameters pgslow changed (docs/journal.md, "How the original
// comes back"): changes others made meanwhile stay, and are named; a parameter pgslow changed
// that someone else changed too stops the restore (nothing touched) unless forced.

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "apply/journal.h"
#include "pg/connection.h"
#include "server/server_control.h"

namespace pgslow::apply {

struct RestoreOutcome {
  bool file_written = false;  // postgresql.auto.conf had to be written back
  bool started = false;       // the server was down and was started
  bool reloaded = false;
  bool restarted = false;
  // "shared_buffers back to 128MB (restart)": one line per parameter that changed back.
  std::vector<std::string> changes;
  // Changes someone else made since pgslow's first change, kept as they are: one line each.
  std::vector<std::string> kept;
  // With force: the other people's values of pgslow's own knobs that were replaced.
  std::vector<std::string> overridden;
};

// What putting the original configuration files back means right now.
struct ResetPlan {
  // Parameters pgslow did not touch whose postgresql.auto.conf entry changed since the
  // original: someone else's, kept ("maintenance_work_mem = '77MB' (was not set)").
  std::vector<std::string> foreign;
  // Parameters pgslow changed that someone else changed too (name and the three values).
  std::vector<std::string> conflicts;
  std::vector<std::string> conflict_names;
};

// Restores the original configuration recorded in `journal` on `server`: puts back exactly
// the entries of the parameters pgslow changed (the original bytes of postgresql.auto.conf
// when nobody else changed it; for a server reached only by connection, ALTER SYSTEM SET or
// RESET of exactly those names), starts the server if it is down, reloads, restarts when one
// of pgslow's postmaster-context values waits for it, verifies pgslow's parameters, and only
// then removes the journal. Someone else's change to a parameter pgslow changed stops it
// before anything is touched (RuntimeError saying what to do) unless `force`, which puts the
// original back and names the value it replaced. Throws RuntimeError (journal kept) when the
// server cannot be brought back or a value differs.
RestoreOutcome restore_original(server::ServerControl& server, const std::filesystem::path& workdir,
                                Journal& journal,
                                std::chrono::seconds timeout = std::chrono::seconds(120),
                                bool force = false);

// Makes the configuration files the original again for pgslow's parameters, without verifying
// or touching the journal (the first half of restore_original; also what each stage starts
// from). Returns whether a file or parameter had to change; fills `plan` when given.
bool reset_to_original_files(pg::Connection* conn, const Journal& journal, bool force,
                             ResetPlan* plan = nullptr);

}  // namespace pgslow::apply
