#include "experiment/measured_window.h"

#include <spdlog/spdlog.h>

#include "experiment/lab_server.h"
#include "experiment/switchback_control.h"
#include "results/axes.h"

namespace pgslow::experiment {

results::WaitProfile wait_profile(const evidence::WaitCounts& counts) {
  results::WaitProfile w;
  w.samples = counts.samples;
  w.interval_ms = static_cast<double>(kWaitInterval.count());
  w.backends = counts.backends;
  return w;
}

MeasuredWindow::MeasuredWindow(server::ServerControl& server, PoolerPath& pooler,
                               const std::string& conninfo, const std::string& database,
                               bool wait_sampling)
    : server_(server),
      pooler_(pooler),
      database_(database),
      wait_sampling_(wait_sampling),
      data_dir_(server.data_dir()),
      server_pid_(data_dir_ ? evidence::postmaster_pid_of(*data_dir_) : std::nullopt),
      lock_waits_(conninfo, database),
      wait_sampler_(conninfo, database, kWaitInterval, server_pid_) {
  try {
    probe_ = pg::Connection::open(conninfo);
    // The wait sampler leaves pgslow's own connections out by this name.
    evidence::name_evidence_connection(*probe_);
    lock_waits_.open();
    if (wait_sampling_) wait_sampler_.open();
  } catch (const pg::Error& e) {
    spdlog::warn("evidence connection failed: {}; the stage's evidence is left out", e.what());
  }
  out_of_memory_kills_ = server_.out_of_memory_kills().value_or(0);
  if (probe_) {
    try {
      started_at_ = probe_->query_value(kPostmasterStartSql);
    } catch (const pg::Error& e) {
      spdlog::debug("cannot read the server's start time: {}", e.what());
    }
  }
  snap_options_.database = database;
  snap_options_.data_dir = data_dir_;
  snap_options_.log_file = server_.log_file();
  snap_options_.lock_waits = &lock_waits_;
  if (wait_sampling_) snap_options_.waits = &wait_sampler_;
}

void MeasuredWindow::snapshot(std::optional<evidence::Snapshot>& into) {
  if (!probe_) return;
  try {
    into = evidence::take_snapshot(*probe_, snap_options_);
  } catch (const std::exception& e) {
    evidence_error_ = e.what();
  }
}

void MeasuredWindow::hook(driver::DriverOptions& d, SwitchbackControl* switchback) {
  d.on_measure_start = [this] {
    pooler_before_ = pooler_.stats(database_);
    if (server_pid_) cpu_before_ = evidence::read_cpu_times(server_pid_);
    lock_waits_.start();
    if (wait_sampling_) wait_sampler_.start();
    snapshot(before_);
  };
  d.on_measure_end = [this] {
    if (server_pid_) cpu_after_ = evidence::read_cpu_times(server_pid_);
    pooler_after_ = pooler_.stats(database_);
    snapshot(after_);
    lock_waits_.stop();
    wait_sampler_.stop();
  };
  if (server_pid_) {
    d.on_connected = [this](const std::vector<int>& pids) {
      idle_memory_ = evidence::backend_memory(pids, *server_pid_);
    };
  }
  if (switchback == nullptr) return;
  switchback->read_cpu = [this]() -> std::optional<evidence::CpuTimes> {
    if (!server_pid_) return std::nullopt;
    return evidence::read_cpu_times(server_pid_);
  };
  switchback->snapshot = [this]() -> std::optional<evidence::Snapshot> {
    std::optional<evidence::Snapshot> s;
    snapshot(s);
    // Each block's own pooler wait (a switchback of PgBouncer's pool tests it per block).
    if (s)
      if (auto pooler = pooler_.stats(database_)) add_pooler_counters(*pooler, *s);
    return s;
  };
}

void MeasuredWindow::stop() {
  lock_waits_.stop();
  wait_sampler_.stop();
}

void MeasuredWindow::require_same_server() {
  experiment::require_same_server(server_, probe_, started_at_, out_of_memory_kills_);
}

void MeasuredWindow::collect(results::Measurement& m, const driver::DriverOptions& d,
                             results::StageResult& stage, RunEvidence& out) {
  if (idle_memory_) {
    m.idle_connections_measured = idle_memory_->backends;
    m.idle_connection_pss_bytes =
        static_cast<double>(idle_memory_->pss_bytes) / idle_memory_->backends;
  }
  out = RunEvidence{};
  if (cpu_before_ && cpu_after_) {
    if (auto shares = evidence::cpu_shares(*cpu_before_, *cpu_after_)) {
      out.cpu = *shares;
      m.server_cpu_s = shares->server_s;
      m.client_cpu_s = shares->clients_s;
      m.neighbour_cpu = shares->neighbours;
    }
  }
  if (!evidence_error_.empty()) stage.warnings.push_back("evidence incomplete: " + evidence_error_);
  if (!before_ || !after_) return;  // stopped before the measured window, or no probe
  out.evidence = evidence::delta(*before_, *after_);
  if (before_->waits && after_->waits)
    out.waits = wait_profile(evidence::wait_delta(*before_->waits, *after_->waits));
  out.window_s = evidence::window_seconds(*before_, *after_);
  // The client's side of the evidence (docs/evidence.md): same keys as the catalog's `watch`.
  out.evidence["tps"] = m.tps;
  out.evidence["latency_p99"] = m.latency.p99_us;
  if (d.rate > 0) out.evidence["schedule_lag"] = m.schedule_lag.p99_us;
  if (d.pool_size > 0) out.evidence["pool_wait"] = m.pool_wait.p99_us;
  out.evidence["connections_refused"] = m.connections_refused;
  if (pooler_before_ && pooler_after_)
    add_pooler_evidence(*pooler_before_, *pooler_after_, out.evidence);
  // The cost axes' counters of this run alone (every repeat is one sample of them), the
  // pooler's wait included; the window may be a little longer than the measured run, so its
  // transactions are TPS x window.
  m.per_tx = results::axis_counters(out.evidence, m.tps * out.window_s);
}

}  // namespace pgslow::experiment
