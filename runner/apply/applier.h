#pragma once
// Apply, verify and always restore. The scenario runner and bisect call apply() once per
// stage; each stage starts from the ORIGINAL configuration (the journal's bytes are written
// back, then the stage's full settings are set with ALTER SYSTEM), so stages never leak into
// each other, and the server restarts only when a postmaster-context value actually differs
// from what is running (PostgreSQL's own pending_restart after a reload tells).
//
//   Applier applier(server, workdir, catalog);
//   for (stage : plan) { auto r = applier.apply(stage.settings, Operation::kRun, {stage.name}); ...
//   } applier.restore();   // also on error (the destructor restores a run left changed)

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "apply/journal.h"
#include "apply/server_lock.h"
#include "knobs/catalog.h"
#include "knobs/validate.h"
#include "pg/connection.h"
#include "results/model.h"
#include "server/server_control.h"
#include "server/target.h"

namespace pgslow::apply {

// One knob the apply changed.
struct KnobApplied {
  std::string name;              // the server's spelling
  std::string requested;         // as written in the preset or scenario
  std::string original_value;    // before pgslow's first change ("128MB")
  std::string previous_value;    // before this apply (the previous stage's value)
  std::string new_value;         // in effect now, read back from pg_settings
  std::string apply_by;          // "reload" or "restart"
  bool needs_reconnect = false;  // only new sessions see it (context backend)
};

struct ApplyResult {
  std::vector<KnobApplied> applied;
  std::vector<results::SkippedKnob> skipped;  // the server lacks the knob (version)
  std::vector<std::string> warnings;          // legal but risky values (catalog pitfalls)
  bool reloaded = false;
  bool restarted = false;
  double seconds = 0;  // wall time of the whole apply

  // For results::StageResult::changes: old value = the original (baseline) value.
  std::vector<results::KnobChange> knob_changes() const;
  bool needs_reconnect() const;
};

// Labels for the journal and messages.
struct ApplyLabel {
  std::string stage;                 // "tiny-cache", "stage 3: planner"
  std::vector<std::string> presets;  // the presets the settings came from
  std::string command;               // the pgslow command line ("pgslow apply tiny-cache")
};

struct StageChange;  // one knob of a stage as apply() changes it (applier.cpp)

class Applier {
 public:
  // `spec`: how `server` was opened, recorded in the journal so that recovery can reopen a
  // pgctl or command target from another process (the managed cluster needs none).
  Applier(server::ServerControl& server, std::filesystem::path workdir,
          const knobs::Catalog& catalog, std::optional<server::TargetSpec> spec = std::nullopt);
  // A run (Operation::kRun) that is still applied is restored here, errors logged, so an
  // exception anywhere in the runner cannot leave the server degraded. A kept apply stays.
  ~Applier();
  Applier(const Applier&) = delete;
  Applier& operator=(const Applier&) = delete;

  // Validates (any error: InputError listing every problem, nothing changed), journals the
  // original configuration before the first change, applies, reloads or restarts, and reads
  // every value back. On a failure after the first change the original configuration is put
  // back before the error propagates; a server that does not come back after a restart is
  // repaired from the data directory and the error quotes its log. Interrupted (SIGINT or
  // SIGTERM, see InterruptGuard) between steps likewise restores, then propagates.
  ApplyResult apply(const std::vector<knobs::Setting>& settings, Operation op,
                    const ApplyLabel& label = {});
  // A finished `pgslow apply`: the journal records a kept degradation (only restore undoes it).
  void keep();
  // Puts the original configuration back, verifies it and deletes the journal. A no-op when
  // nothing was changed. Someone else's value of one of pgslow's knobs stops it (RuntimeError)
  // unless `force` (restore_original).
  void restore(bool force = false);

  // A workshop mystery: the journal this applier writes is sealed and names no setting in its
  // messages (Journal::hidden).
  void hide_settings() { hidden_ = true; }

  // Whether a journal exists for this applier (the server is not at its original config).
  bool has_changes() const { return journal_.has_value(); }
  const std::optional<Journal>& journal() const { return journal_; }

  std::chrono::seconds restart_timeout{120};

 private:
  // The journal of this applier, opened on the first apply: a kept one of this workdir (for
  // `pgslow apply` only), else a new one with the server's original settings.
  Journal& open_journal(const knobs::ServerSettings& current, Operation op, ApplyResult& result);
  // Saves `j` before anything changes; a first save that fails leaves no journal behind.
  void save_before_change(Journal& j);
  // The stage's values set by the target's own command, or with ALTER SYSTEM, a reload and
  // (for a postmaster-context knob of pgslow's) a restart; returns pg_settings after it.
  knobs::ServerSettings set_by_target(pg::Connection& conn, Journal& j,
                                      const std::vector<StageChange>& changes,
                                      const knobs::ServerSettings& current, ApplyResult& result);
  knobs::ServerSettings set_by_alter_system(pg::Connection& conn, Journal& j,
                                            const std::vector<StageChange>& changes,
                                            ApplyResult& result);
  // A server that does not come back from the restart is repaired from its data directory,
  // then RuntimeError says so.
  void restart_or_put_back(Journal& j);
  // A failed apply: the original goes back (errors logged, the journal kept for recovery).
  void put_back_after_failure() noexcept;

  // After a change: a fresh session must connect, else (session_preload_libraries naming a
  // library that is not there) the original goes back through `conn` and RuntimeError names
  // the knob and the server's refusal.
  void require_new_sessions(pg::Connection& conn, Journal& j,
                            const std::vector<std::string>& names);

  server::ServerControl& server_;
  std::filesystem::path workdir_;
  // Held from the first change until the original configuration is back (server_lock.h).
  std::optional<ServerLock> server_lock_;
  const knobs::Catalog& catalog_;
  std::optional<server::TargetSpec> spec_;
  std::optional<Journal> journal_;
  bool journal_on_disk_ = false;  // journal_ has been saved at least once
  bool hidden_ = false;
};

// Refuses (InputError, before anything is touched) to change a server pgslow was not allowed
// to change: the managed cluster always may be; any other needs allow_changes.
void require_permission(const server::ServerControl& server);

// What the journal records about `server` (its conninfo without secrets, how to reopen it).
ServerRecord describe_server(const server::ServerControl& server,
                             const std::optional<server::TargetSpec>& spec = std::nullopt);

}  // namespace pgslow::apply
