#pragma once
// Putting the original configuration back, from a journal: used by Applier::restore, by
// recovery after an interrupted run, and by `pgslow restore` for a kept apply.

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
};

// Restores the original configuration recorded in `journal` on `server`: writes the original
// bytes of postgresql.auto.conf (a local server) or re-sets exactly the touched parameters
// (a server reached by connection), starts the server if it is down, reloads, restarts when a
// postmaster-context value differs from the original, verifies every server-wide parameter
// against the journal, and only then removes the journal. Throws RuntimeError (journal kept,
// state "restoring") when the server cannot be brought back or a value differs.
RestoreOutcome restore_original(server::ServerControl& server, const std::filesystem::path& workdir,
                                Journal& journal,
                                std::chrono::seconds timeout = std::chrono::seconds(120));

// Makes the configuration files the original again without verifying or touching the journal
// (the first half of restore_original; also what each stage starts from). Returns whether a
// file or parameter had to change.
bool reset_to_original_files(pg::Connection* conn, const Journal& journal);

}  // namespace pgslow::apply
