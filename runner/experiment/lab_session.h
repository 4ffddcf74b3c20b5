#pragma once
// The one measuring seam (ARCHITECTURE.md "Data flow: every command measures through one
// seam"). A LabSession owns everything a measurement needs on one server: the target, the
// permission check, the data set (template + clone per run), the interrupt guard, the applier
// and the ONE restore policy. Its clients (`run`, `bench`, lessons, and bisect and attribution
// through the one adapter, experiment/lab_measurer.h) only say what to measure:
//
//   experiment::LabSession lab(server, catalog, workload, params, options, progress);
//   lab.prepare();                                        // load the template (once)
//   results::StageResult r = lab.measure({"tiny-cache", settings}, load);
//   ...
//   lab.finish();   // restore the original configuration, verified; also done by the
//                   // destructor after an error, and after Ctrl-C (apply::Interrupted)
//
// measure() applies the configuration on top of the server's ORIGINAL one (the applier
// journals first, restarts only when a postmaster-context value differs), then for each
// repeat resets the data from the template, snapshots evidence at the start and the end of the
// measured window and runs the workload. A configuration the server rejects, or a run that
// fails (server restarted under it, clients refused), gives a StageResult with `error` set.

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apply/applier.h"
#include "apply/interrupt.h"
#include "common/progress.h"
#include "driver/driver.h"
#include "evidence/evidence.h"
#include "experiment/lab.h"
#include "experiment/measured_window.h"
#include "experiment/pooler_path.h"
#include "experiment/trial.h"
#include "knobs/catalog.h"
#include "results/model.h"
#include "results/switchback.h"
#include "server/server_control.h"
#include "server/target.h"
#include "workload/dataset.h"
#include "workload/workload.h"

namespace pgslow::experiment {

class SwitchbackControl;

struct LabOptions {
  // The target as specified, recorded in the journal so another process can recover it.
  std::optional<server::TargetSpec> target;
  std::filesystem::path workdir;  // where the journal lives
  // false (bench): the session never changes the configuration, so it needs no permission;
  // measure() refuses a configuration with settings.
  bool changes_configuration = true;
  // false (bench --no-reset): run on the database the server's conninfo names, as it is.
  bool reset_data = true;
  std::string command = "pgslow run";  // for the journal: who changed the server
  // A workshop mystery: the journal is sealed and names no setting (apply::Journal::hidden).
  bool hide_settings = false;
  // The pooler the workload's clients go through (docs/pooler.md); unset: directly.
  std::optional<server::PoolerSpec> pooler;
  // A server pgslow does not own (not the managed cluster) keeps none of the databases the
  // session made (the clone, and the template when it loaded it) unless this is set (run
  // --keep-data): the next run on it loads them again.
  bool keep_data = false;
};

class LabSession final : public Lab {
 public:
  LabSession(server::ServerControl& server, const knobs::Catalog& catalog,
             const workload::Workload& workload, workload::WorkloadParams params,
             LabOptions options, Progress& progress);
  // Restores a configuration still changed (after an error or an interrupt), errors logged.
  ~LabSession() override;
  LabSession(const LabSession&) = delete;
  LabSession& operator=(const LabSession&) = delete;

  // Loads the workload's template when it is missing or stale (a matching one is reused).
  void prepare() override;

  // Lab::measure, live. A configuration that fails validation throws InputError. A server
  // that restarted or stopped during a run fails the stage (`error` names what happened); one
  // that does not accept connections when measure() begins throws RuntimeError (the command
  // ends, and the restore starts the server again with its original configuration). The
  // StageResult's error carries the server log excerpt.
  results::StageResult measure(const Trial& trial) override;

  // Lab::measure_switchback, live: ALTER SYSTEM + reload per block, journaled, on one data
  // reset. Reload-only configurations: one that needs a restart fails the stage.
  results::StageResult measure_switchback(const Trial& reference, const Trial& trial,
                                          const results::SwitchbackDesign& design,
                                          const std::string& why) override;

  // Leaves `configuration` applied as a kept degradation (like `pgslow apply`: only `pgslow
  // restore`, or a mystery's reveal, undoes it); finish() then changes nothing.
  void keep(const Configuration& configuration) override;
  // The one restore policy: puts the original configuration back and verifies it. A failure
  // names `pgslow recover` and propagates (exit 1); the journal stays for recovery. Notes
  // "configuration restored" when something had changed. Safe to call twice.
  void finish() override;
  // The same on the way out of an error: never throws; a failure is logged with what repairs
  // it. Returns whether the original configuration is back.
  bool restore_after_error() noexcept override;

  // The server's envelope when the session began (a configuration's own envelope starts from it).
  const server::Envelope& original_envelope() const override { return original_envelope_; }
  // Restarts the applier actually made over the session.
  int restarts() const { return restarts_; }
  std::uint64_t data_bytes() override;
  // How prepare() chose to reset the data ("template copy (FILE_COPY)", ...); "" when the
  // session resets none (bench --no-reset).
  std::string reset_method() const override;

 private:
  // One run. `switchback`: the run switches configurations as it says (measure_switchback).
  results::Measurement measure_once(const Trial& trial, results::StageResult& stage,
                                    RunEvidence& out, SwitchbackControl* switchback = nullptr);
  // measure_once, with a failed run (RuntimeError) recorded as the stage's error: nullopt.
  std::optional<results::Measurement> measure_or_fail(const Trial& trial,
                                                      results::StageResult& stage, RunEvidence& out,
                                                      SwitchbackControl* switchback = nullptr);
  // A stage's result before anything ran: its name and load (defaults filled in); throws when
  // interrupted or when the server does not accept connections.
  results::StageResult begin_stage(const Trial& trial);
  // Applies `configuration` for a run; false when the server rejected it (`stage.error`
  // then says why).
  bool apply_for_run(const Configuration& configuration, results::StageResult& stage,
                     std::uintmax_t log_offset);
  // The configuration's envelope, in the pass that suits it: a larger memory limit before the
  // settings (a restart with more shared_buffers then starts inside it), a smaller one after
  // (a restart with less shared_buffers gives back the memory first). false when the host
  // refused it (`stage.error` says why).
  bool set_envelope_for_run(const Configuration& configuration, results::StageResult& stage,
                            bool before_settings);
  // Puts the run's own envelope back (finish, restore_after_error): a run that ends, or is
  // interrupted, never leaves a stage's smaller limit on the server.
  void restore_envelope();
  bool envelope_grows(const server::Envelope& to) const;
  // Whether the session has settings of its own to put back.
  bool settings_to_restore() const;
  // Calls `envelope` (the session's envelope back) and, when there are any, `settings` (the
  // settings back) in the order that keeps a restart inside its limit: a larger envelope first,
  // so a restart back to more shared_buffers starts inside it; a smaller one after. finish()
  // and restore_after_error() differ only in what a failure of either does.
  void in_restore_order(const std::function<void()>& envelope,
                        const std::function<void()>& settings);

  // LabOptions::keep_data: the workload's databases go once the session is done with them.
  void drop_data();

  server::ServerControl& server_;
  const knobs::Catalog& catalog_;
  const workload::Workload& workload_;
  workload::WorkloadParams params_;
  LabOptions options_;
  Progress& progress_;
  apply::InterruptGuard guard_;
  workload::Dataset dataset_;
  PoolerPath pooler_;
  std::unique_ptr<apply::Applier> applier_;
  bool kept_ = false;  // keep() left a degradation on purpose: no restore on the way out
  bool prepared_ = false;
  bool loaded_template_ = false;  // this session loaded it (it was missing or stale)
  bool data_dropped_ = false;
  server::Envelope original_envelope_;  // the server's when the session began
  int restarts_ = 0;
  std::uint64_t data_bytes_ = 0;
};

}  // namespace pgslow::experiment
