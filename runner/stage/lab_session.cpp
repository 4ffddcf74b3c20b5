#include "stage/lab_session.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "apply/server_state.h"
#include "common/strings.h"
#include "driver/driver.h"
#include "evidence/evidence.h"
#include "pg/connection.h"
#include "report/summary.h"
#include "server/server_log.h"

namespace pgslow::stage {

namespace fs = std::filesystem;

namespace {

std::uintmax_t log_offset_now(const std::optional<fs::path>& log) {
  return log ? server::log_size(*log) : 0;
}

// The server log lines written since `offset`, the last `max_lines` of them: the stage's
// excerpt in the results folder.
std::string log_since(const std::optional<fs::path>& log, std::uintmax_t offset,
                      std::size_t max_lines = 200) {
  if (!log) return {};
  std::vector<std::string> lines;
  try {
    lines = split(server::read_log_since(*log, offset), '\n');
  } catch (const std::exception& e) {
    return fmt::format("(the server log could not be read: {})\n", e.what());
  }
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::string out;
  std::size_t first = lines.size() > max_lines ? lines.size() - max_lines : 0;
  if (first > 0) out += fmt::format("... {} earlier lines left out\n", first);
  for (std::size_t i = first; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

// What a stage's report says when work other than the server and pgslow's clients took the
// CPU during its runs: the worst run's shares.
std::string disturbance_note(const std::vector<evidence::CpuShares>& runs, int of) {
  const auto worst = std::max_element(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
    return a.disturbance() < b.disturbance();
  });
  return fmt::format(
      "the machine was disturbed: work other than the server and pgslow's clients used up to "
      "{:.0f}% of its CPU during {} of {} run{} of this stage (other programs {:.0f}%, pgslow's "
      "dashboard and evidence {:.0f}%); its figures may be slower than the configuration alone "
      "explains",
      worst->disturbance() * 100, runs.size(), of, of == 1 ? "" : "s", worst->other_programs * 100,
      worst->pgslow_other * 100);
}

constexpr std::string_view kPostmasterStartSql = "SELECT pg_postmaster_start_time()::text";

// After a run: throws RuntimeError when the server stopped or restarted since `started_at`
// (pg_postmaster_start_time() read through `probe` before the run). The clients reconnect after
// a restart and count the lost transactions as failed: the figure then measures the outage and
// a cold cache, not the configuration, so the stage fails. The probe's own session answers
// even when the clients took every connection slot.
void require_same_server(const server::ServerControl& server, std::optional<pg::Connection>& probe,
                         const std::optional<std::string>& started_at) {
  if (!probe || !started_at) return;  // nothing to compare with: the next measure() checks
  try {
    if (probe->query_value(kPostmasterStartSql) == started_at) return;
  } catch (const pg::Error& e) {
    spdlog::debug("the evidence connection broke: {}", e.what());
  }
  std::optional<std::string> now;
  try {
    pg::Connection conn = pg::Connection::open(server.conninfo());
    now = conn.query_value(kPostmasterStartSql);
  } catch (const pg::Error& e) {
    throw RuntimeError(
        fmt::format("{} stopped during the measurement ({}); the stage's figure is not valid",
                    server.describe(), e.server_message().empty() ? e.what() : e.server_message()));
  }
  if (now == started_at) return;  // only the probe's session ended
  throw RuntimeError(fmt::format(
      "{} restarted during the measurement (up since {}, before since {}); the stage's figure "
      "includes the restart and is not valid",
      server.describe(), now.value_or("?"), *started_at));
}

// Before a measurement: a server that stopped under an earlier one cannot be measured; the
// restore (the caller's way out) starts it again with its original configuration.
void require_running(const server::ServerControl& server) {
  if (apply::server_accepts_connections(server)) return;
  throw RuntimeError(
      fmt::format("{} does not accept connections (it stopped during the run); "
                  "nothing more can be measured",
                  server.describe()));
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
      dataset_(server.conninfo(), workload, params_) {
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
}

void LabSession::prepare() {
  if (!options_.reset_data) return;
  if (dataset_.load(progress_)) progress_.note("data loaded into the template");
  apply::InterruptGuard::throw_if_interrupted();
}

std::uint64_t LabSession::data_bytes() {
  if (data_bytes_ == 0 && options_.reset_data) data_bytes_ = dataset_.data_bytes();
  return data_bytes_;
}

void LabSession::finish() {
  if (applier_ == nullptr || !applier_->has_changes() || kept_) return;
  try {
    applier_->restore();
  } catch (const apply::Interrupted&) {
    throw;
  } catch (const std::exception& e) {
    throw RuntimeError(fmt::format(
        "restoring the original configuration of {} failed: {}; run `pgslow recover` to repair "
        "it (the journal keeps what to put back)",
        server_.describe(), e.what()));
  }
  progress_.note("configuration restored");
  // A signal that arrived while restoring still ends the command with 130/143, never 0.
  apply::InterruptGuard::throw_if_interrupted();
}

bool LabSession::restore_after_error() noexcept {
  if (applier_ == nullptr || !applier_->has_changes() || kept_) return true;
  try {
    applier_->restore();
    progress_.note("configuration restored");
    return true;
  } catch (const std::exception& e) {
    spdlog::error("restoring the configuration failed: {}; `pgslow recover` repairs it", e.what());
    return false;
  }
}

report::Measurement LabSession::measure_once(const report::LoadSettings& load,
                                             report::StageResult& stage,
                                             std::map<std::string, double>& evidence,
                                             double& window_s,
                                             std::optional<evidence::CpuShares>& disturbance) {
  const MeasureOptions& mo = options_.measure;
  workload::ResetResult reset;
  if (options_.reset_data) {
    reset = dataset_.reset();
    stage.reset_seconds += reset.seconds;
  } else {
    reset.conninfo = server_.conninfo();
  }

  driver::DriverOptions d;
  d.clients = load.clients > 0 ? load.clients : params_.clients;
  d.workers = load.workers > 0 ? load.workers : mo.workers;
  d.warmup_s = mo.warmup_s;
  d.duration_s = mo.duration_s;
  d.rate = load.rate;
  d.pool_size = load.pool_size;
  d.connect_per_transaction = load.connect_per_transaction;
  d.max_tries = mo.max_tries;
  d.allow_partial = mo.allow_partial;
  d.protocol = mo.protocol;
  d.seed = mo.schedule_seed;
  workload::WorkloadParams params = params_;
  params.clients = d.clients;

  // Evidence covers the measured window only: snapshots at the end of the warm-up and at the
  // end of the run. pgslow's own connections (the probe and the lock-wait sampler) are opened
  // BEFORE the clients, so clients taking every connection slot cannot starve them; evidence
  // that still cannot be read (the server went away) is left out, never fatal to the run.
  std::optional<pg::Connection> probe;
  const std::string database = options_.reset_data ? dataset_.clone_name() : std::string();
  if (!database.empty()) progress_.measuring(stage.name, database);
  evidence::LockWaitSampler lock_waits(reset.conninfo, database);
  try {
    probe = pg::Connection::open(reset.conninfo);
    lock_waits.open();
  } catch (const pg::Error& e) {
    spdlog::warn("evidence connection failed: {}; the stage's evidence is left out", e.what());
  }
  // When the server started, to tell after the run whether it restarted under the workload.
  std::optional<std::string> started_at;
  if (probe) {
    try {
      started_at = probe->query_value(kPostmasterStartSql);
    } catch (const pg::Error& e) {
      spdlog::debug("cannot read the server's start time: {}", e.what());
    }
  }
  evidence::SnapshotOptions snap_options;
  snap_options.database = database;
  snap_options.data_dir = server_.data_dir();
  snap_options.log_file = server_.log_file();
  snap_options.lock_waits = &lock_waits;
  std::optional<evidence::Snapshot> before;
  std::optional<evidence::Snapshot> after;
  std::string evidence_error;
  auto snapshot = [&](std::optional<evidence::Snapshot>& into) {
    if (!probe) return;
    try {
      into = evidence::take_snapshot(*probe, snap_options);
    } catch (const std::exception& e) {
      evidence_error = e.what();
    }
  };
  // Who else used the CPU while the clock ran (a local server only: its /proc figures).
  const std::optional<int> server_pid =
      snap_options.data_dir ? evidence::postmaster_pid_of(*snap_options.data_dir) : std::nullopt;
  std::optional<evidence::CpuTimes> cpu_before;
  std::optional<evidence::CpuTimes> cpu_after;
  d.on_measure_start = [&] {
    lock_waits.start();
    snapshot(before);
    if (server_pid) cpu_before = evidence::read_cpu_times(server_pid);
  };
  d.on_measure_end = [&] {
    if (server_pid) cpu_after = evidence::read_cpu_times(server_pid);
    snapshot(after);
    lock_waits.stop();
  };
  // The server's memory per idle connection, read from /proc while the clients sit connected
  // before the clock starts (a local server only: its postmaster's children).
  std::optional<evidence::BackendMemory> idle_memory;
  if (server_pid) {
    d.on_connected = [&](const std::vector<int>& pids) {
      idle_memory = evidence::backend_memory(pids, *server_pid);
    };
  }

  // Test-only fault injection (docs/journal.md): a workload running on a changed server.
  if (applier_ != nullptr && applier_->has_changes()) apply::crash_point(apply::phase::kWorkload);
  report::Measurement m = driver::run_workload(workload_, params, reset.conninfo, d, progress_,
                                               apply::InterruptGuard::stop_flag());
  lock_waits.stop();
  require_same_server(server_, probe, started_at);
  if (idle_memory) {
    m.idle_connections_measured = idle_memory->backends;
    m.idle_connection_pss_bytes =
        static_cast<double>(idle_memory->pss_bytes) / idle_memory->backends;
  }
  // A failed check throws RuntimeError: the stage fails with the offending rows named.
  if (mo.check_data) workload::check_data(workload_, reset.conninfo, params);
  evidence.clear();
  window_s = 0;
  disturbance = std::nullopt;
  if (cpu_before && cpu_after) {
    if (auto shares = evidence::cpu_shares(*cpu_before, *cpu_after)) {
      disturbance = *shares;
      m.server_cpu_s = shares->server_s;
      m.client_cpu_s = shares->clients_s;
    }
  }
  if (!evidence_error.empty()) stage.warnings.push_back("evidence incomplete: " + evidence_error);
  if (!before || !after) return m;  // stopped before the measured window, or no probe
  evidence = evidence::delta(*before, *after);
  window_s = static_cast<double>(after->taken_at_us - before->taken_at_us) / 1e6;
  // The client's side of the evidence (docs/evidence.md): same keys as the catalog's `watch`.
  evidence["tps"] = m.tps;
  evidence["latency_p99"] = m.latency.p99_us;
  if (load.rate > 0) evidence["schedule_lag"] = m.schedule_lag.p99_us;
  if (load.pool_size > 0) evidence["pool_wait"] = m.pool_wait.p99_us;
  evidence["connections_refused"] = m.connections_refused;
  return m;
}

report::StageResult LabSession::measure(const Configuration& configuration,
                                        const report::LoadSettings& load,
                                        std::optional<int> repeats) {
  apply::InterruptGuard::throw_if_interrupted();
  require_running(server_);
  report::StageResult stage;
  stage.name = configuration.name;
  stage.load = load;
  if (stage.load.clients == 0) stage.load.clients = params_.clients;
  if (stage.load.workers == 0) stage.load.workers = options_.measure.workers;
  const std::uintmax_t log_offset = log_offset_now(server_.log_file());
  if (applier_ == nullptr) {
    if (!configuration.settings.empty())
      throw RuntimeError("internal: a read-only lab session was asked to change the configuration");
  } else {
    try {
      apply::ApplyLabel label{configuration.name, configuration.presets, options_.command};
      apply::ApplyResult applied =
          applier_->apply(configuration.settings, apply::Operation::kRun, label);
      ++applies_;
      if (applied.restarted) ++restarts_;
      stage.changes = applied.knob_changes();
      stage.skipped = applied.skipped;
      stage.warnings = applied.warnings;
    } catch (const apply::Interrupted&) {
      throw;
    } catch (const InputError&) {
      throw;
    } catch (const RuntimeError& e) {
      // The server rejected the configuration; the applier put the original back.
      stage.error = fmt::format("the server rejected this configuration: {}", e.what());
      stage.log_excerpt = log_since(server_.log_file(), log_offset);
      return stage;
    }
  }

  const int n = repeats.value_or(options_.measure.repeats);
  std::vector<std::map<std::string, double>> evidence_per_repeat;
  std::vector<double> window_per_repeat;
  std::vector<evidence::CpuShares> disturbed;  // the runs that other work disturbed
  for (int i = 0; i < n; ++i) {
    if (n > 1) progress_.note(fmt::format("  repeat {} of {}", i + 1, n));
    std::map<std::string, double> evidence;
    double window_s = 0;
    std::optional<evidence::CpuShares> cpu;
    try {
      stage.repeats.push_back(measure_once(stage.load, stage, evidence, window_s, cpu));
      if (cpu && cpu->disturbance() > evidence::kDisturbedShare) disturbed.push_back(*cpu);
      evidence_per_repeat.push_back(std::move(evidence));
      window_per_repeat.push_back(window_s);
    } catch (const apply::Interrupted&) {
      throw;
    } catch (const InputError&) {
      throw;
    } catch (const RuntimeError& e) {
      // The run failed: the server restarted or stopped under it, clients were refused, ...
      stage.error = e.what();
      break;
    }
    if (apply::InterruptGuard::interrupted()) {
      // The driver stopped early: what was measured is returned; the caller ends the command.
      stage.error = "interrupted: the measurement stopped early";
      break;
    }
  }
  // The median repeat (report::median_repeat, the one rule) stands for the stage: its evidence
  // and its evidence window, so per-transaction figures divide by the repeat they describe.
  if (const report::Measurement* median = report::median_repeat(stage)) {
    const auto index = static_cast<std::size_t>(median - stage.repeats.data());
    stage.evidence = evidence_per_repeat[index];
    stage.evidence_seconds = window_per_repeat[index];
  }
  if (!disturbed.empty()) stage.warnings.push_back(disturbance_note(disturbed, n));
  stage.log_excerpt = log_since(server_.log_file(), log_offset);
  return stage;
}

}  // namespace pgslow::stage
