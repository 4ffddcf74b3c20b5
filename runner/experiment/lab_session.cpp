#include "experiment/lab_session.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "apply/server_state.h"
#include "common/clock.h"
#include "common/reflink.h"
#include "driver/driver.h"
#include "evidence/evidence.h"
#include "experiment/lab_server.h"
#include "experiment/measured_window.h"
#include "experiment/switchback_control.h"
#include "pg/connection.h"
#include "results/stage_notes.h"
#include "results/summary.h"
#include "server/server_log.h"
#include "server/target_kind.h"

namespace pgslow::experiment {

namespace fs = std::filesystem;

namespace {

std::uintmax_t log_offset_now(const std::optional<fs::path>& log) {
  return log ? server::log_size(*log) : 0;
}

// The server log lines written since `offset`: the stage's excerpt (none without a log).
std::string log_since(const std::optional<fs::path>& log, std::uintmax_t offset) {
  return log ? server::log_excerpt_since(*log, offset) : std::string();
}

// The worst of the runs that other work disturbed (evidence::kDisturbedShare), of a stage's `of`
// runs, for its note (results/stage_notes.h).
std::string disturbance_note(const std::vector<evidence::CpuShares>& disturbed, int of) {
  const auto worst = std::max_element(
      disturbed.begin(), disturbed.end(),
      [](const auto& a, const auto& b) { return a.disturbance() < b.disturbance(); });
  return results::disturbance_note(
      {worst->disturbance(), worst->other_programs, worst->pgslow_other, disturbed.size(), of});
}

}  // namespace

LabSession::LabSession(server::ServerControl& server, const knobs::Catalog& catalog,
                       const workload::Workload& workload, workload::WorkloadParams params,
                       LabOptions options, Progress& progress)
    : server_(server),
      catalog_(catalog),
      workload_(workload),
      params_(std::move(params)),
      options_(std::move(options)),
      progress_(progress),
      dataset_(server.conninfo(), workload, params_),
      pooler_(options_.pooler, server, options_.workdir),
      original_envelope_(server.current_envelope()) {
  if (options_.changes_configuration) {
    apply::require_permission(server_);
    applier_ =
        std::make_unique<apply::Applier>(server_, options_.workdir, catalog_, options_.target);
    if (options_.hide_settings) applier_->hide_settings();
  }
}

void LabSession::keep(const Configuration& configuration) {
  if (applier_ == nullptr) throw InputError("this session does not change the configuration");
  applier_->apply(configuration.settings, apply::Operation::kApply,
                  {configuration.name, configuration.presets, options_.command});
  applier_->keep();
  kept_ = true;
}

LabSession::~LabSession() {
  restore_after_error();
  drop_data();
}

void LabSession::drop_data() {
  if (data_dropped_ || !options_.reset_data || options_.keep_data || !prepared_ ||
      server_.kind() == server::TargetKind::kManaged)
    return;
  data_dropped_ = true;
  // Measured results matter more than the cleanup: a drop that fails (the server gone, a
  // session still on the clone) is a warning, never an error that would lose the report.
  try {
    // No pooler connection may hold the clone while it is dropped.
    pooler_.stop();
    // A template that was up to date before (`pgslow load`, an earlier --keep-data) stays:
    // the server is left as found.
    dataset_.drop(loaded_template_);
  } catch (const std::exception& e) {
    spdlog::warn("the workload's databases {} and {} may stay on {}: dropping them failed: {}",
                 dataset_.clone_name(), dataset_.template_name(), server_.describe(), e.what());
    return;
  }
  progress_.note(
      loaded_template_
          ? fmt::format("dropped the workload's databases {} and {} from {} (--keep-data keeps "
                        "them for the next run)",
                        dataset_.clone_name(), dataset_.template_name(), server_.describe())
          : fmt::format("dropped the workload's clone {} from {} (its template {} was there "
                        "before this run and stays)",
                        dataset_.clone_name(), server_.describe(), dataset_.template_name()));
}

void LabSession::prepare() {
  if (!options_.reset_data) return;
  dataset_.set_reset_method(choose_reset_method(server_, options_.workdir, progress_));
  prepared_ = true;  // from here on, the databases may exist and are dropped at the end
  // Set before the load: a load that fails or is interrupted half-way leaves a template this
  // session made, which goes at the end too.
  loaded_template_ = !dataset_.template_ready();
  if (dataset_.load(progress_)) progress_.note("data loaded into the template");
  apply::InterruptGuard::throw_if_interrupted();
}

std::uint64_t LabSession::data_bytes() {
  if (data_bytes_ == 0 && options_.reset_data) data_bytes_ = dataset_.data_bytes();
  return data_bytes_;
}

std::string LabSession::reset_method() const {
  return options_.reset_data ? workload::reset_method_name(dataset_.reset_method()) : "";
}

bool LabSession::envelope_grows(const server::Envelope& to) const {
  const server::Envelope now = server_.current_envelope();
  // No limit (0) or an unlimited one is the largest.
  auto memory = [](std::uint64_t b) { return b == 0 ? server::Envelope::kUnlimitedMemory : b; };
  return memory(to.memory_bytes) >= memory(now.memory_bytes);
}

void LabSession::restore_envelope() {
  if (server_.current_envelope() == original_envelope_) return;
  server_.set_envelope(original_envelope_);
  progress_.note("the server's envelope is back to " + (original_envelope_.empty()
                                                            ? std::string("none")
                                                            : original_envelope_.describe()));
}

bool LabSession::settings_to_restore() const {
  return applier_ != nullptr && applier_->has_changes() && !kept_;
}

void LabSession::in_restore_order(const std::function<void()>& envelope,
                                  const std::function<void()>& settings) {
  const bool envelope_first = envelope_grows(original_envelope_);
  if (envelope_first) envelope();
  if (settings_to_restore()) settings();
  if (!envelope_first) envelope();
}

void LabSession::finish() {
  const bool restoring = settings_to_restore();
  in_restore_order([this] { restore_envelope(); },
                   [this] {
                     try {
                       applier_->restore();
                     } catch (const apply::Interrupted&) {
                       throw;
                     } catch (const std::exception& e) {
                       throw RuntimeError(fmt::format(
                           "restoring the original configuration of {} failed: {}; run `pgslow "
                           "recover` to repair it (the journal keeps what to put back)",
                           server_.describe(), e.what()));
                     }
                     progress_.note("configuration restored");
                   });
  drop_data();
  // A signal that arrived while restoring still ends the command with 130/143, never 0.
  if (restoring) apply::InterruptGuard::throw_if_interrupted();
}

bool LabSession::restore_after_error() noexcept {
  bool ok = true;
  try {
    in_restore_order(
        [this] {
          // The envelope is pgslow's own, not the server's configuration: put back even after a
          // failed restore, and never a reason for `pgslow recover` (the next start writes the
          // options' limits again, docs/envelope.md).
          try {
            restore_envelope();
          } catch (const std::exception& e) {
            spdlog::error("putting the server's envelope back failed: {}", e.what());
          }
        },
        [&] {
          try {
            applier_->restore();
            progress_.note("configuration restored");
          } catch (const std::exception& e) {
            spdlog::error("restoring the configuration failed: {}; `pgslow recover` repairs it",
                          e.what());
            ok = false;
          }
        });
  } catch (const std::exception& e) {
    spdlog::error("putting the configuration back failed: {}", e.what());
    return false;
  }
  return ok;
}

results::Measurement LabSession::measure_once(const Trial& trial, results::StageResult& stage,
                                              RunEvidence& out, SwitchbackControl* switchback) {
  const Timing& mo = trial.timing;
  const results::LoadSettings& load = trial.load;
  workload::ResetResult reset;
  if (options_.reset_data) {
    pooler_.hold_during_reset(dataset_.clone_name());
    try {
      reset = dataset_.reset();
    } catch (...) {
      pooler_.resume_after_reset(dataset_.clone_name());
      throw;
    }
    pooler_.resume_after_reset(dataset_.clone_name());
    stage.reset_seconds += reset.seconds;
  } else {
    reset.conninfo = server_.conninfo();
  }

  driver::DriverOptions d = driver_options(trial, params_.clients);

  // Evidence covers the measured window only (measured_window.h): snapshots at the end of the
  // warm-up and at the end of the run.
  const std::string database = options_.reset_data ? dataset_.clone_name() : std::string();
  if (!database.empty()) progress_.measuring(stage.name, database);
  MeasuredWindow window(server_, pooler_, reset.conninfo, database, mo.wait_sampling);
  window.hook(d, switchback);

  driver::BlockTallies tallies;
  if (switchback != nullptr) {
    const results::SwitchbackDesign& design = switchback->run().design();
    d.max_blocks = 2 * design.max_pairs + 2;
    // Longer than the longest schedule: the control ends the window when the run is over.
    d.duration_s = design.block_s * d.max_blocks + 1;
    d.blocks = &tallies;
    d.on_poll = [switchback](double elapsed_s, const driver::BlockReader& blocks) {
      return switchback->poll(elapsed_s, blocks);
    };
    if (switchback->switches_clients()) {
      // Every client either configuration runs connects before the start; those the one in
      // place does not want stand by (driver.h).
      d.clients = std::max(switchback->clients[0], switchback->clients[1]);
      d.active_clients = [switchback] { return switchback->active_clients(); };
    }
  }
  workload::WorkloadParams params = params_;
  params.clients = d.clients;

  // Test-only fault injection (docs/journal.md): a workload running on a changed server.
  if (applier_ != nullptr && applier_->has_changes()) apply::crash_point(apply::phase::kWorkload);
  // The clients go through the pooler when there is one; pgslow's own sessions never do.
  const std::string client_conninfo =
      pooler_.client_conninfo(reset.conninfo, database, load, d.pool_size);
  // The stage's PgBouncer settings are knob lines beside the server's (once per stage).
  for (auto& change : pooler_.knob_changes(load)) {
    if (std::find(stage.changes.begin(), stage.changes.end(), change) == stage.changes.end())
      stage.changes.push_back(std::move(change));
  }
  if (d.protocol == driver::Protocol::kPrepared) {
    // Found before the run: the pooler breaks named statements. The run falls back to unnamed
    // ones and says so, rather than fail every statement and look like a slow server.
    if (auto why = pooler_.prepared_statements_problem(client_conninfo)) {
      d.protocol = driver::Protocol::kExtended;
      stage.warnings.push_back(*why);
      progress_.note(*why);
    }
  }
  results::Measurement m;
  try {
    m = driver::run_workload(workload_, params, client_conninfo, d, progress_,
                             apply::InterruptGuard::stop_flag());
  } catch (const std::exception&) {
    if (auto why = pooler_.died()) throw RuntimeError(*why);
    throw;
  }
  if (auto why = pooler_.died()) throw RuntimeError(*why);
  window.stop();
  if (switchback != nullptr) {
    if (switchback->failure()) std::rethrow_exception(switchback->failure());
    switchback->finish(tallies);
  }
  window.require_same_server();
  // A failed check throws RuntimeError: the stage fails with the offending rows named.
  if (mo.check_data) workload::check_data(workload_, reset.conninfo, params);
  window.collect(m, d, stage, out);
  return m;
}

std::optional<results::Measurement> LabSession::measure_or_fail(const Trial& trial,
                                                                results::StageResult& stage,
                                                                RunEvidence& out,
                                                                SwitchbackControl* switchback) {
  try {
    return measure_once(trial, stage, out, switchback);
  } catch (const apply::Interrupted&) {
    throw;
  } catch (const InputError&) {
    throw;
  } catch (const RuntimeError& e) {
    // The run failed: the server restarted or stopped under it, clients were refused, ...
    fail_stage(stage, results::StageFailure::kRunFailed, e.what());
    return std::nullopt;
  }
}

results::StageResult LabSession::begin_stage(const Trial& trial) {
  apply::InterruptGuard::throw_if_interrupted();
  require_running(server_);
  results::StageResult stage;
  stage.name = trial.configuration.name;
  stage.load = recorded_load(trial, params_.clients);
  return stage;
}

bool LabSession::set_envelope_for_run(const Configuration& configuration,
                                      results::StageResult& stage, bool before_settings) {
  if (!configuration.envelope) return true;
  stage.envelope = configuration.envelope->describe();
  if (envelope_grows(*configuration.envelope) != before_settings) return true;
  try {
    server_.set_envelope(*configuration.envelope);
    return true;
  } catch (const RuntimeError& e) {
    // The host refused the limit (v1 cannot reclaim below what the server holds): the stage
    // is not measured in an envelope it did not get.
    fail_stage(stage, results::StageFailure::kRejected, e.what());
    return false;
  }
}

bool LabSession::apply_for_run(const Configuration& configuration, results::StageResult& stage,
                               std::uintmax_t log_offset) {
  if (applier_ == nullptr) {
    if (!configuration.settings.empty())
      throw RuntimeError("internal: a read-only lab session was asked to change the configuration");
    return true;
  }
  try {
    apply::ApplyLabel label{configuration.name, configuration.presets, options_.command};
    apply::ApplyResult applied =
        applier_->apply(configuration.settings, apply::Operation::kRun, label);
    if (applied.restarted) ++restarts_;
    stage.changes = applied.knob_changes();
    stage.skipped = applied.skipped;
    stage.warnings = applied.warnings;
    return true;
  } catch (const apply::Interrupted&) {
    throw;
  } catch (const InputError&) {
    throw;
  } catch (const RuntimeError& e) {
    // The server rejected the configuration; the applier put the original back.
    fail_stage(stage, results::StageFailure::kRejected, e.what());
    stage.log_excerpt = log_since(server_.log_file(), log_offset);
    return false;
  }
}

results::StageResult LabSession::measure(const Trial& trial) {
  const Configuration& configuration = trial.configuration;
  results::StageResult stage = begin_stage(trial);
  server_.keep_log_bounded();  // before the stage's offset, so its excerpt is exact
  const std::uintmax_t log_offset = log_offset_now(server_.log_file());
  if (!set_envelope_for_run(configuration, stage, true)) return stage;
  if (!apply_for_run(configuration, stage, log_offset)) return stage;
  if (!set_envelope_for_run(configuration, stage, false)) return stage;

  const int n = trial.timing.repeats;
  std::vector<RunEvidence> per_repeat;
  std::vector<evidence::CpuShares> disturbed;  // the runs that other work disturbed
  for (int i = 0; i < n; ++i) {
    if (n > 1) progress_.note(fmt::format("  repeat {} of {}", i + 1, n));
    RunEvidence run;
    auto m = measure_or_fail(trial, stage, run);
    if (!m) break;
    stage.repeats.push_back(std::move(*m));
    if (run.cpu && run.cpu->disturbance() > evidence::kDisturbedShare)
      disturbed.push_back(*run.cpu);
    per_repeat.push_back(std::move(run));
    if (apply::InterruptGuard::interrupted()) {
      // The driver stopped early: what was measured is returned; the caller ends the command.
      mark_interrupted(stage);
      break;
    }
  }
  // The median repeat (results::median_repeat, the one rule) stands for the stage: its evidence
  // and its evidence window, so per-transaction figures divide by the repeat they describe.
  if (const results::Measurement* median = results::median_repeat(stage)) {
    const auto index = static_cast<std::size_t>(median - stage.repeats.data());
    stage.evidence = per_repeat[index].evidence;
    stage.evidence_seconds = per_repeat[index].window_s;
    stage.waits = per_repeat[index].waits;
  }
  if (!disturbed.empty()) stage.warnings.push_back(disturbance_note(disturbed, n));
  if (auto note = results::driver_bound_note(stage.repeats, trial.timing.workers))
    stage.warnings.push_back(*note);
  stage.log_excerpt = log_since(server_.log_file(), log_offset);
  return stage;
}

results::StageResult LabSession::measure_switchback(const Trial& reference, const Trial& trial,
                                                    const results::SwitchbackDesign& design,
                                                    const std::string& why) {
  const Configuration& stage_configuration = trial.configuration;
  const Configuration& reference_configuration = reference.configuration;
  results::StageResult stage = begin_stage(trial);
  server_.keep_log_bounded();
  const std::uintmax_t log_offset = log_offset_now(server_.log_file());
  // The stage's configuration first: a value the server rejects fails the stage before the
  // run, and the stage's changes are those the table reports. Its envelope is the reference's
  // (a stage of its own envelope gets separate runs, scenario/plan.cpp).
  if (!set_envelope_for_run(stage_configuration, stage, true)) return stage;
  const auto started = std::chrono::steady_clock::now();
  if (!apply_for_run(stage_configuration, stage, log_offset)) return stage;
  const auto stage_applied = std::chrono::steady_clock::now();
  if (!set_envelope_for_run(stage_configuration, stage, false)) return stage;
  results::StageResult scratch;
  const auto reverted = std::chrono::steady_clock::now();
  if (!apply_for_run(reference_configuration, scratch, log_offset)) {
    stage.error = scratch.error;
    stage.failure = scratch.failure;
    stage.log_excerpt = scratch.log_excerpt;
    return stage;
  }
  // A target whose apply takes seconds (an HA manager's store, a cloud API) would spend the
  // blocks switching: measured on the two applies before the run (the faster of them, so one
  // slow fsync on a busy disk refuses nothing), refused before it starts.
  const double apply_s =
      std::min(std::chrono::duration<double>(stage_applied - started).count(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - reverted).count());
  // The managed cluster applies by ALTER SYSTEM and a reload: never slow by design, and a busy
  // machine's one slow fsync must not fail its stage.
  if (server_.kind() != server::TargetKind::kManaged &&
      apply_s > kSlowApplyShare * design.block_s) {
    fail_stage(
        stage, results::StageFailure::kStoppedEarly,
        fmt::format(
            "the configuration took {:.1f} s to apply, more than {:.0f}% of a switchback block "
            "({:g} s): its switches would eat the blocks. Measure it by separate runs (--design "
            "isolated, or measure.design: isolated)",
            apply_s, kSlowApplyShare * 100, design.block_s));
    return stage;
  }
  // A stage of PgBouncer's pool switches the pool too (its load differs from the reference's
  // in nothing else, scenario::load_switch_refusal); the run starts in the reference's block.
  const bool switches_server =
      !knobs::same_settings(stage_configuration.settings, reference_configuration.settings);
  const bool switches_pooler = !(trial.load == reference.load);
  const std::string database = options_.reset_data ? dataset_.clone_name() : std::string();
  std::optional<std::string> unsettled;
  SwitchbackControl control(design, [&](bool to_stage) {
    const Configuration& c = to_stage ? stage_configuration : reference_configuration;
    if (switches_server) {
      apply::ApplyResult applied = applier_->apply(c.settings, apply::Operation::kRun,
                                                   {c.name, c.presets, options_.command});
      if (applied.restarted) {
        ++restarts_;
        throw RuntimeError("the configuration needed a restart in the middle of a switchback run");
      }
    }
    if (switches_pooler) {
      auto late =
          pooler_.switch_load(to_stage ? trial.load : reference.load, database, design.settle_s);
      if (late && !unsettled) unsettled = std::move(late);
    }
  });
  control.clients[0] = driver_options(reference, params_.clients).clients;
  control.clients[1] = driver_options(trial, params_.clients).clients;
  // The stage's evidence and waits are its kept blocks' (the control's); of the whole run's,
  // only who used the CPU.
  RunEvidence whole_run;
  Trial first_block = trial;
  first_block.load = reference.load;
  const std::optional<results::Measurement> whole =
      measure_or_fail(first_block, stage, whole_run, &control);
  if (unsettled) stage.warnings.push_back(*unsettled);
  if (apply::InterruptGuard::interrupted() && stage.error.empty()) mark_interrupted(stage);

  results::Switchback result = control.run().result();
  // The window closed before the planned blocks were measured, with nobody interrupting: the
  // switches came late (an apply slower than the one measured before the run).
  if (result.stopped == "interrupted" && stage.error.empty())
    fail_stage(stage, results::StageFailure::kStoppedEarly,
               fmt::format("the switchback run measured {} of its {} blocks before its window "
                           "closed: switching the configuration took longer than the blocks "
                           "allow. Measure it by separate runs (--design isolated, or "
                           "measure.design: isolated)",
                           result.blocks.size(), 2 * design.max_pairs + 1));
  result.why = why;
  result.reference_evidence = control.evidence(0);
  result.reference_waits = control.waits(0);
  const driver::BlockTallies& t = control.tallies();
  // The stage's blocks taken together are its one measurement.
  results::Measurement m = results::blocks_measurement(result.blocks, true);
  m.failed = t.failed[1];
  m.latency = t.latency[1];
  if (whole) {
    // Connecting is not split by block: every connection the run opened (its clients at the
    // start, and those that stood by and connected again at a switch), and the idle memory of
    // a connection as the run's clients measured it right after they connected.
    m.connect_time = whole->connect_time;
    m.idle_connection_pss_bytes = whole->idle_connection_pss_bytes;
    m.idle_connections_measured = whole->idle_connections_measured;
  }
  results::set_switchback_result(stage, std::move(result), std::move(m));
  stage.evidence = control.evidence(1);
  stage.waits = control.waits(1);
  if (whole_run.cpu && whole_run.cpu->disturbance() > evidence::kDisturbedShare)
    stage.warnings.push_back(disturbance_note({*whole_run.cpu}, 1));
  stage.log_excerpt = log_since(server_.log_file(), log_offset);
  return stage;
}

}  // namespace pgslow::experiment
